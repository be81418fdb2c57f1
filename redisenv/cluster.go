package redisenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Slots is the number of hash slots of Redis Cluster.
const Slots = 16384

// SlotRange is an inclusive range of hash slots.
type SlotRange struct{ From, To int }

// Shard is one primary of a cluster, the slots it serves and its replicas,
// as the cluster itself sees them now.
type Shard struct {
	ID       string // the primary's cluster node ID
	Primary  Node
	Replicas []Node
	Slots    []SlotRange
}

// SlotCount is how many slots the shard serves.
func (s Shard) SlotCount() int {
	n := 0
	for _, r := range s.Slots {
		n += r.To - r.From + 1
	}
	return n
}

// Owns reports whether the shard serves slot.
func (s Shard) Owns(slot int) bool {
	for _, r := range s.Slots {
		if slot >= r.From && slot <= r.To {
			return true
		}
	}
	return false
}

// freeClusterPort finds a loopback port p such that p and its cluster bus
// port p+10000 are both free.
func freeClusterPort() (int, error) {
	for range 100 {
		p, err := freePort()
		if err != nil {
			return 0, err
		}
		if p+10000 > 65535 {
			p = 20000 + p%(65535-30000) // fold the ephemeral range below 55535
		}
		ok := true
		for _, q := range []int{p, p + 10000} {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(q)))
			if err != nil {
				ok = false
				break
			}
			_ = l.Close()
		}
		if ok {
			return p, nil
		}
	}
	return 0, errors.New("redisenv: no free port pair (p, p+10000) for a cluster node")
}

// startLocalCluster starts Shards×(1+Replicas) cluster-enabled servers,
// assigns the slots evenly to the primaries, joins the nodes, attaches
// each primary's replicas, and waits until every node reports
// cluster_state:ok and sees the whole cluster.
func (e *Env) startLocalCluster(ctx context.Context, cfg Config, bin, dir string) error {
	replicas := max(cfg.Replicas, 0)
	var primaries []*localNode
	var reps [][]*localNode
	for i := range cfg.Shards {
		p, err := e.startLocalNode(ctx, cfg, bin, dir, fmt.Sprintf("shard%d-primary", i+1), nil)
		if err != nil {
			return err
		}
		primaries = append(primaries, p)
		e.nodes = append(e.nodes, p)
	}
	for i := range cfg.Shards {
		var rs []*localNode
		for j := range replicas {
			r, err := e.startLocalNode(ctx, cfg, bin, dir, fmt.Sprintf("shard%d-replica%d", i+1, j+1), nil)
			if err != nil {
				return err
			}
			rs = append(rs, r)
			e.nodes = append(e.nodes, r)
		}
		reps = append(reps, rs)
	}
	seeds := make([]string, len(primaries))
	for i, p := range primaries {
		seeds[i] = p.Addr()
	}
	_, password := cfg.serverPassword()
	e.opts = &redis.UniversalOptions{Addrs: seeds, IsClusterMode: true, Password: password}

	// Local nodes are met where this process dials them: 127.0.0.1.
	plan := planCluster(primaries, reps, (*localNode).Addr, password)
	return createCluster(ctx, plan, cfg.StartTimeout, nil)
}

// clusterPlan says how to join started nodes into a cluster.
type clusterPlan struct {
	all    []string // every node, dialable from here
	meet   []string // ip:port of each node of all, as the other nodes reach it (CLUSTER MEET)
	shards []planShard
	// password is what the nodes require (requirepass), or "".
	password string
}

type planShard struct {
	primary  string   // dialable from here
	replicas []string // dialable from here
}

// planCluster lays out primaries with their replicas (replicas[i] are
// primaries[i]'s); meet is a node's address as the other nodes reach it.
func planCluster[N Node](primaries []N, replicas [][]N, meet func(N) string, password string) clusterPlan {
	plan := clusterPlan{password: password}
	for i, p := range primaries {
		sh := planShard{primary: p.Addr()}
		for _, r := range replicas[i] {
			sh.replicas = append(sh.replicas, r.Addr())
		}
		plan.shards = append(plan.shards, sh)
	}
	add := func(n N) {
		plan.all = append(plan.all, n.Addr())
		plan.meet = append(plan.meet, meet(n))
	}
	for i, p := range primaries {
		add(p)
		for _, r := range replicas[i] {
			add(r)
		}
	}
	return plan
}

// createCluster does what redis-cli --cluster create does, without
// redis-cli and with a fixed primary-replica layout: it splits the slots
// evenly, makes the nodes meet, attaches the replicas, and waits for a
// consistent cluster. The nodes meet by plan.meet; dial, when not nil,
// reaches nodes whose addresses as the cluster knows them differ from the
// ones this process dials (containers).
func createCluster(ctx context.Context, plan clusterPlan, timeout time.Duration, dial func(ctx context.Context, network, addr string) (net.Conn, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := func(addr string) *redis.Client {
		return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: 2, Dialer: dial, Password: plan.password})
	}
	ids := map[string]string{} // dialable addr -> node id
	for _, a := range plan.all {
		c := client(a)
		id, err := c.Do(ctx, "CLUSTER", "MYID").Text()
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("redisenv: cluster: CLUSTER MYID at %s: %w", a, err)
		}
		ids[a] = id
	}
	// Distinct config epochs before the nodes meet, as redis-cli gives
	// them: left at 0, the nodes settle their collision by bumping epochs
	// after the cluster is up, and a replica that missed its primary's
	// bump asks for a failover with a stale epoch that every primary
	// refuses, for as long as it asks.
	for i, a := range plan.all {
		c := client(a)
		err := c.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err()
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("redisenv: cluster: SET-CONFIG-EPOCH at %s (a node must be fresh to join a new cluster): %w", a, err)
		}
	}
	n := len(plan.shards)
	for i, sh := range plan.shards {
		from, to := i*Slots/n, (i+1)*Slots/n-1
		c := client(sh.primary)
		err := addSlots(ctx, c, from, to)
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("redisenv: cluster: assign slots %d-%d to %s: %w", from, to, sh.primary, err)
		}
	}
	first := client(plan.all[0])
	defer first.Close()
	for i, a := range plan.all[1:] {
		host, port, err := net.SplitHostPort(plan.meet[i+1])
		if err != nil {
			return fmt.Errorf("redisenv: cluster: MEET %s: address %q: %w", a, plan.meet[i+1], err)
		}
		if err := first.Do(ctx, "CLUSTER", "MEET", host, port).Err(); err != nil {
			return fmt.Errorf("redisenv: cluster: MEET %s at %s: %w", a, plan.meet[i+1], err)
		}
	}
	// A replica can only follow a primary it knows.
	if err := waitEveryNode(ctx, plan.all, client, "know every node", func(c *redis.Client) (bool, string) {
		s, err := c.ClusterNodes(ctx).Result()
		if err != nil {
			return false, err.Error()
		}
		lines := strings.Count(strings.TrimSpace(s), "\n") + 1
		return lines == len(plan.all) && !strings.Contains(s, "handshake"), fmt.Sprintf("%d of %d nodes known", lines, len(plan.all))
	}); err != nil {
		return err
	}
	for _, sh := range plan.shards {
		for _, r := range sh.replicas {
			c := client(r)
			err := c.Do(ctx, "CLUSTER", "REPLICATE", ids[sh.primary]).Err()
			_ = c.Close()
			if err != nil {
				return fmt.Errorf("redisenv: cluster: REPLICATE %s to %s: %w", r, sh.primary, err)
			}
		}
	}
	want := len(plan.all)
	return waitEveryNode(ctx, plan.all, client, "agree on a healthy cluster", func(c *redis.Client) (bool, string) {
		info, err := c.ClusterInfo(ctx).Result()
		if err != nil {
			return false, err.Error()
		}
		if st := infoField(info, "cluster_state"); st != "ok" {
			return false, "cluster_state:" + st
		}
		if k := infoField(info, "cluster_known_nodes"); k != strconv.Itoa(want) {
			return false, "cluster_known_nodes:" + k
		}
		nodes, err := c.ClusterNodes(ctx).Result()
		if err != nil {
			return false, err.Error()
		}
		views := parseClusterNodes(nodes)
		replicas := 0
		for _, v := range views {
			if v.replicaOf != "" {
				replicas++
			}
			if v.fail() {
				return false, "node " + v.addr + " flagged " + v.flags
			}
		}
		if replicas != want-n {
			return false, fmt.Sprintf("%d of %d replicas attached", replicas, want-n)
		}
		repl, err := c.Info(ctx, "replication").Result()
		if err != nil {
			return false, err.Error()
		}
		if infoField(repl, "role") == "slave" && infoField(repl, "master_link_status") != "up" {
			return false, "replica link to its primary is " + infoField(repl, "master_link_status")
		}
		return true, ""
	})
}

// addSlots assigns slots from..to: ADDSLOTSRANGE where the server has it
// (Redis 7), else one ADDSLOTS with every slot.
func addSlots(ctx context.Context, c *redis.Client, from, to int) error {
	err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", from, to).Err()
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "unknown subcommand") {
		return err
	}
	args := []any{"CLUSTER", "ADDSLOTS"}
	for s := from; s <= to; s++ {
		args = append(args, s)
	}
	return c.Do(ctx, args...).Err()
}

// waitEveryNode polls every node until ok says yes for all, or ctx ends;
// the error names the first node that never agreed and what it said.
func waitEveryNode(ctx context.Context, addrs []string, client func(string) *redis.Client, what string, ok func(*redis.Client) (bool, string)) error {
	cs := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		cs[i] = client(a)
		defer cs[i].Close()
	}
	for {
		lagging, why := "", ""
		for i, c := range cs {
			if good, w := ok(c); !good {
				lagging, why = addrs[i], w
				break
			}
		}
		if lagging == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisenv: cluster: nodes did not %s: %s: %s (%w)", what, lagging, why, ctx.Err())
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// nodeView is one line of CLUSTER NODES.
type nodeView struct {
	id, addr, flags, replicaOf string
	slots                      []SlotRange
}

func (v nodeView) has(flag string) bool { return slices.Contains(strings.Split(v.flags, ","), flag) }
func (v nodeView) fail() bool           { return v.has("fail") || v.has("fail?") }
func (v nodeView) primary() bool        { return v.has("master") }

// parseClusterNodes reads CLUSTER NODES. Slot entries being migrated
// ("[slot->-id]") are not ownership and are skipped.
func parseClusterNodes(s string) []nodeView {
	var out []nodeView
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		v := nodeView{id: f[0], flags: f[2]}
		v.addr, _, _ = strings.Cut(f[1], "@")
		if i := strings.IndexByte(v.addr, ','); i >= 0 { // "ip:port@bus,hostname"
			v.addr = v.addr[:i]
		}
		if f[3] != "-" {
			v.replicaOf = f[3]
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue
			}
			a, b, isRange := strings.Cut(r, "-")
			from, err1 := strconv.Atoi(a)
			to := from
			var err2 error
			if isRange {
				to, err2 = strconv.Atoi(b)
			}
			if err1 == nil && err2 == nil {
				v.slots = append(v.slots, SlotRange{from, to})
			}
		}
		out = append(out, v)
	}
	return out
}

// ErrNotCluster is returned by the cluster operations of an Env that is
// not a Redis Cluster.
var ErrNotCluster = errors.New("redisenv: not a Redis Cluster (use --topology cluster, or a comma list of cluster seeds)")

// clusterView asks the nodes of e, in turn, for CLUSTER NODES, and returns
// the first answer from a node that is not failed in its own view.
func (e *Env) clusterView(ctx context.Context) ([]nodeView, error) {
	if e.topology != TopologyCluster {
		return nil, ErrNotCluster
	}
	var lastErr error
	for _, n := range e.Nodes() {
		c := e.nodeClient(n.Addr())
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		s, err := c.ClusterNodes(cctx).Result()
		cancel()
		_ = c.Close()
		if err != nil {
			lastErr = err
			continue
		}
		views := parseClusterNodes(s)
		self := slices.IndexFunc(views, func(v nodeView) bool { return v.has("myself") })
		if self >= 0 && views[self].fail() {
			continue
		}
		return views, nil
	}
	return nil, fmt.Errorf("redisenv: cluster: no node answered CLUSTER NODES: %v", lastErr)
}

// nodeClient is a one-connection, no-retry client to one node of e.
func (e *Env) nodeClient(addr string) *redis.Client {
	e.mu.Lock()
	dial := e.opts.Dialer
	tls := e.opts.TLSConfig
	user, pass := e.opts.Username, e.opts.Password
	e.mu.Unlock()
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: 2, PoolSize: 1,
		Dialer: dial, TLSConfig: tls, Username: user, Password: pass})
}

// nodeByAddr returns e's handle for the node the cluster knows as addr,
// or an unmanaged handle when e did not start it.
func (e *Env) nodeByAddr(addr string) Node {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, n := range e.nodes {
		if n.Addr() == addr {
			return n
		}
		if c, ok := n.(interface{ clusterAddr() string }); ok && c.clusterAddr() == addr {
			return n
		}
	}
	return externalNode{addr: addr}
}

// Shards returns the cluster's shards as the cluster sees them now, in
// slot order: after a failover the promoted replica is its shard's
// primary, and a failed node is left out.
func (e *Env) Shards(ctx context.Context) ([]Shard, error) {
	views, err := e.clusterView(ctx)
	if err != nil {
		return nil, err
	}
	var shards []Shard
	byID := map[string]int{}
	for _, v := range views {
		if v.primary() && len(v.slots) > 0 && !v.fail() {
			byID[v.id] = len(shards)
			shards = append(shards, Shard{ID: v.id, Primary: e.nodeByAddr(v.addr), Slots: v.slots})
		}
	}
	for _, v := range views {
		if i, ok := byID[v.replicaOf]; ok && !v.fail() {
			shards[i].Replicas = append(shards[i].Replicas, e.nodeByAddr(v.addr))
		}
	}
	slices.SortFunc(shards, func(a, b Shard) int { return a.Slots[0].From - b.Slots[0].From })
	return shards, nil
}

// ShardOf returns the shard serving slot now.
func (e *Env) ShardOf(ctx context.Context, slot int) (Shard, error) {
	shards, err := e.Shards(ctx)
	if err != nil {
		return Shard{}, err
	}
	for _, s := range shards {
		if s.Owns(slot) {
			return s, nil
		}
	}
	return Shard{}, fmt.Errorf("redisenv: cluster: no live primary serves slot %d", slot)
}

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

// KeySlot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of the
// key, or of its hash tag (the text between the first "{" and the next
// "}", when not empty), modulo 16384.
func KeySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key)) % Slots
}

// crc16 is CRC-16/XMODEM (poly 0x1021, init 0), the one Redis Cluster uses.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
