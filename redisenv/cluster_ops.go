package redisenv

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Failover modes of ClusterFailover, as CLUSTER FAILOVER spells them.
const (
	// FailoverGraceful: the primary must be up; the replica catches up
	// with it first, so no acknowledged write is lost.
	FailoverGraceful = ""
	// FailoverForce: no handshake with the primary (it may be dead); the
	// other primaries still vote.
	FailoverForce = "FORCE"
	// FailoverTakeover: no vote either; the replica takes the slots.
	FailoverTakeover = "TAKEOVER"
)

// ClusterFailover makes replica the primary of its shard with CLUSTER
// FAILOVER [FORCE|TAKEOVER], and waits until every live node's view names
// it the owner of the shard's slots, asking again while elections are
// lost. It works on an external cluster too: it is a command, not a
// process fault.
func (e *Env) ClusterFailover(ctx context.Context, replica Node, mode string) error {
	if e.topology != TopologyCluster {
		return ErrNotCluster
	}
	switch mode {
	case FailoverGraceful, FailoverForce, FailoverTakeover:
	default:
		return fmt.Errorf("redisenv: cluster failover mode %q: use %q, %q or %q", mode, FailoverGraceful, FailoverForce, FailoverTakeover)
	}
	c := e.nodeClient(replica.Addr())
	defer c.Close()
	id, err := c.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return fmt.Errorf("redisenv: cluster failover: %s at %s: %w", replica.Name(), replica.Addr(), err)
	}
	args := []any{"CLUSTER", "FAILOVER"}
	if mode != "" {
		args = append(args, mode)
	}
	promoted := func(views []nodeView) string {
		for _, v := range views {
			if v.id == id {
				if v.primary() && len(v.slots) > 0 {
					return ""
				}
				return "it is " + v.flags
			}
		}
		return "it is unknown"
	}
	// Redis abandons a manual failover that has not won its election
	// within 5 s (votes that come late on a loaded host, or primaries
	// that do not answer, are enough) and never retries it: so we ask
	// again each electionWindow, until the whole wait runs out.
	total, cancel := context.WithTimeout(ctx, 2*max(e.startTimeout, 4*DefaultClusterNodeTimeout))
	defer cancel()
	for try := 1; ; try++ {
		err := c.Do(total, args...).Err()
		if err != nil && !(try > 1 && strings.Contains(err.Error(), "to a replica")) {
			// After the first try, "send it to a replica" means it won
			// meanwhile: the wait below sees the others agree.
			return fmt.Errorf("redisenv: cluster failover %s at %s: %w", replica.Name(), replica.Addr(), err)
		}
		wctx, stop := context.WithTimeout(total, electionWindow)
		err = e.waitClusterAgrees(wctx, "promote "+replica.Name(), promoted)
		stop()
		if err == nil || total.Err() != nil {
			return err
		}
	}
}

// electionWindow is how long ClusterFailover waits for one election to
// be won and known before it asks for another: longer than Redis's 5 s
// limit on a manual failover.
const electionWindow = 4 * DefaultClusterNodeTimeout

// waitClusterAgrees polls every reachable node's CLUSTER NODES until check
// returns "" for each of them (and one at least answered).
func (e *Env) waitClusterAgrees(ctx context.Context, what string, check func([]nodeView) string) error {
	var why string
	for {
		agreed, answered := true, 0
		for _, n := range e.Nodes() {
			c := e.nodeClient(n.Addr())
			cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			s, err := c.ClusterNodes(cctx).Result()
			cancel()
			_ = c.Close()
			if err != nil {
				continue // a dead or paused node has no say
			}
			answered++
			if w := check(parseClusterNodes(s)); w != "" {
				agreed, why = false, n.Name()+" says "+w
				break
			}
		}
		if agreed && answered > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisenv: cluster: %s: not agreed (%s): %w", what, why, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitHealthy waits until, in the view of every node that answers, no
// node is failed, every slot is served and every primary serves some: a
// failed primary restarted after a failover has rejoined as a replica.
func (e *Env) WaitHealthy(ctx context.Context) error {
	if e.topology != TopologyCluster {
		return ErrNotCluster
	}
	ctx, cancel := context.WithTimeout(ctx, max(e.startTimeout, 4*DefaultClusterNodeTimeout))
	defer cancel()
	return e.waitClusterAgrees(ctx, "become healthy", func(views []nodeView) string {
		covered := 0
		for _, v := range views {
			if v.fail() {
				return "node " + v.addr + " is " + v.flags
			}
			if v.primary() && len(v.slots) == 0 {
				// A restarted former primary comes back a primary of
				// nothing until gossip makes it its successor's replica.
				return "node " + v.addr + " is a primary without slots"
			}
			if v.primary() {
				for _, r := range v.slots {
					covered += r.To - r.From + 1
				}
			}
		}
		if covered != Slots {
			return fmt.Sprintf("%d of %d slots served", covered, Slots)
		}
		return ""
	})
}

// MigrateOptions shape MigrateSlot.
type MigrateOptions struct {
	// Hold keeps the slot half-moved (MIGRATING at the source, IMPORTING at
	// the target) this long after the keys moved and before ownership
	// changes, so that clients meet ASK redirects and TRYAGAIN.
	Hold time.Duration
	// Batch is how many keys one MIGRATE moves; zero means 100.
	Batch int
	// Timeout is MIGRATE's own timeout; zero means 2 s.
	Timeout time.Duration
}

// MigrateSlot moves slot to the shard of primary to, as redis-cli
// --cluster reshard does: IMPORTING at the target, MIGRATING at the
// source, MIGRATE of its keys in batches, then SETSLOT NODE on the target,
// the source and every other primary. It returns the source shard's
// primary (to move the slot back). Moving a slot to its owner is a no-op.
func (e *Env) MigrateSlot(ctx context.Context, slot int, to Node, o MigrateOptions) (Node, error) {
	if slot < 0 || slot >= Slots {
		return nil, fmt.Errorf("redisenv: migrate slot %d: slots are 0..%d", slot, Slots-1)
	}
	if o.Batch <= 0 {
		o.Batch = 100
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	src, err := e.ShardOf(ctx, slot)
	if err != nil {
		return nil, err
	}
	if src.Primary.Addr() == to.Addr() {
		return src.Primary, nil
	}
	sc, tc := e.nodeClient(src.Primary.Addr()), e.nodeClient(to.Addr())
	defer sc.Close()
	defer tc.Close()
	toID, err := tc.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return nil, fmt.Errorf("redisenv: migrate slot %d: target %s: %w", slot, to.Addr(), err)
	}
	step := func(what string, c *redis.Client, args ...any) error {
		if err := c.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("redisenv: migrate slot %d from %s to %s: %s: %w", slot, src.Primary.Addr(), to.Addr(), what, err)
		}
		return nil
	}
	if err := step("SETSLOT IMPORTING", tc, "CLUSTER", "SETSLOT", slot, "IMPORTING", src.ID); err != nil {
		return nil, err
	}
	if err := step("SETSLOT MIGRATING", sc, "CLUSTER", "SETSLOT", slot, "MIGRATING", toID); err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(e.clusterAddrOf(to))
	if err != nil {
		return nil, fmt.Errorf("redisenv: migrate slot %d: target address: %w", slot, err)
	}
	e.mu.Lock()
	user, pass := e.opts.Username, e.opts.Password
	e.mu.Unlock()
	// moveKeys migrates the slot's keys until none is left at the source,
	// which authenticates to the target as this process does. Errors
	// listing the keys end the loop when strict is false: the keys moved
	// already are where they should be.
	moveKeys := func(strict bool) error {
		for {
			keys, err := sc.ClusterGetKeysInSlot(ctx, slot, o.Batch).Result()
			if err != nil {
				if strict {
					return fmt.Errorf("redisenv: migrate slot %d: GETKEYSINSLOT: %w", slot, err)
				}
				return nil
			}
			if len(keys) == 0 {
				return nil
			}
			args := []any{"MIGRATE", host, port, "", 0, o.Timeout.Milliseconds(), "REPLACE"}
			switch {
			case user != "":
				args = append(args, "AUTH2", user, pass)
			case pass != "":
				args = append(args, "AUTH", pass)
			}
			args = append(args, "KEYS")
			for _, k := range keys {
				args = append(args, k)
			}
			if err := step("MIGRATE", sc, args...); err != nil {
				return err
			}
		}
	}
	if err := moveKeys(true); err != nil {
		return nil, err
	}
	if o.Hold > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(o.Hold):
		}
		// Keys written to the source meanwhile (by scripts whose keys all
		// still lived there) must move too.
		if err := moveKeys(false); err != nil {
			return nil, err
		}
	}
	// The target first, so that the source, once it lets go, redirects to
	// a node that already serves the slot.
	if err := step("SETSLOT NODE at the target", tc, "CLUSTER", "SETSLOT", slot, "NODE", toID); err != nil {
		return nil, err
	}
	if err := step("SETSLOT NODE at the source", sc, "CLUSTER", "SETSLOT", slot, "NODE", toID); err != nil {
		return nil, err
	}
	shards, err := e.Shards(ctx)
	if err == nil {
		for _, s := range shards {
			if s.ID == src.ID || s.ID == toID {
				continue
			}
			c := e.nodeClient(s.Primary.Addr())
			_ = c.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", toID).Err() // gossip spreads it anyway
			_ = c.Close()
		}
	}
	wctx, cancel := context.WithTimeout(ctx, max(e.startTimeout, 4*DefaultClusterNodeTimeout))
	defer cancel()
	err = e.waitClusterAgrees(wctx, fmt.Sprintf("move slot %d", slot), func(views []nodeView) string {
		for _, v := range views {
			if v.id == toID {
				if (Shard{Slots: v.slots}).Owns(slot) {
					return ""
				}
				return fmt.Sprintf("slot %d not yet at %s", slot, v.addr)
			}
		}
		return "target unknown"
	})
	return src.Primary, err
}

// clusterAddrOf is the address other cluster nodes reach n by.
func (e *Env) clusterAddrOf(n Node) string {
	if c, ok := n.(interface{ clusterAddr() string }); ok {
		return c.clusterAddr()
	}
	return n.Addr()
}
