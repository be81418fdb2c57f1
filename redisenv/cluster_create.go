package redisenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

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
