package redisenv_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

func TestKeySlotMatchesServer(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyCluster, Replicas: redisenv.NoReplicas, Shards: 1})
	rdb := env.NewClient()
	defer rdb.Close()
	keys := []string{"", "a", "lock", "lock-17", "{lock}", "{lock}:x", "redisson_lock__channel:{lock}", "a{b}c", "a{}b", "{}{x}", "a{b", "}{b}", "héllo", "{user1000}.following"}
	for i := range 50 {
		keys = append(keys, fmt.Sprintf("bench:key:%d", i))
	}
	ctx := context.Background()
	for _, k := range keys {
		want, err := rdb.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := redisenv.KeySlot(k); got != int(want) {
			t.Errorf("KeySlot(%q) = %d, server says %d", k, got, want)
		}
	}
}

func TestLocalClusterStartsHealthyAndCleansUp(t *testing.T) {
	before := redisChildren(t)
	ctx := context.Background()
	env, err := redisenv.Start(ctx, redisenv.Config{Backend: redisenv.BackendLocal, Topology: redisenv.TopologyCluster, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if env.Topology() != redisenv.TopologyCluster {
		t.Errorf("topology %s, want cluster", env.Topology())
	}
	nodes := env.Nodes()
	if len(nodes) != 6 {
		t.Fatalf("3×1 cluster has %d nodes, want 6", len(nodes))
	}
	shards := wantShards3x1(t, env)
	for i, s := range shards {
		if want := fmt.Sprintf("shard%d-primary", i+1); s.Primary.Name() != want {
			t.Errorf("shard %d primary is %s, want %s", i, s.Primary.Name(), want)
		}
		if s.Primary.PID() == 0 {
			t.Errorf("shard %d primary has no process handle", i)
		}
	}
	if !strings.Contains(env.String(), "cluster of 6 nodes") {
		t.Errorf("String() = %q, want it to describe the cluster", env.String())
	}

	// The primaries have distinct epochs, and every node knows them
	// alike: no collision is left to be settled by bumping epochs behind
	// a replica's back (a replica with a stale epoch loses every election).
	var first map[string]string
	for _, n := range nodes {
		c := redis.NewClient(&redis.Options{Addr: n.Addr()})
		view, err := c.ClusterNodes(ctx).Result()
		_ = c.Close()
		if err != nil {
			t.Fatal(err)
		}
		epochs := map[string]string{} // primary id -> config epoch
		for _, line := range strings.Split(strings.TrimSpace(view), "\n") {
			// id addr flags primary-id ping pong config-epoch link slots...
			if f := strings.Fields(line); len(f) > 6 && strings.Contains(f[2], "master") {
				epochs[f[0]] = f[6]
			}
		}
		seen := map[string]bool{}
		for _, e := range epochs {
			if e == "0" || seen[e] {
				t.Errorf("%s's view: primaries' config epochs %v; each needs a distinct non-zero one", n.Name(), epochs)
			}
			seen[e] = true
		}
		if first == nil {
			first = epochs
		} else if fmt.Sprint(epochs) != fmt.Sprint(first) {
			t.Errorf("%s sees the primaries' epochs as %v, %s as %v", n.Name(), epochs, nodes[0].Name(), first)
		}
	}
	if len(first) != 3 {
		t.Errorf("%d primaries' epochs seen, want 3: %v", len(first), first)
	}

	// A cluster client routes keys to all three shards.
	rdb := env.NewClient()
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		t.Fatalf("NewClient gave %T, want *redis.ClusterClient", rdb)
	}
	for i := range 30 {
		if err := rdb.Set(ctx, fmt.Sprintf("k%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range shards {
		c := redis.NewClient(&redis.Options{Addr: s.Primary.Addr()})
		n, err := c.DBSize(ctx).Result()
		_ = c.Close()
		if err != nil || n == 0 {
			t.Errorf("primary %s holds %d keys (%v); 30 keys should spread over every shard", s.Primary.Name(), n, err)
		}
	}
	_ = rdb.Close()

	var pids []int
	for _, n := range nodes {
		pids = append(pids, n.PID())
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		redisenvtest.WaitProcessGone(t, pid, gone)
	}
	for pid := range redisChildren(t) {
		if !before[pid] {
			t.Errorf("redis-server %d outlived Close", pid)
		}
	}
}

func TestClusterFailoverKillAndForce(t *testing.T) {
	clusterFailoverKillAndForce(t, redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyCluster}))
}

// TestClusterFailoverLostElection: a forced failover whose election
// cannot be won (the other primaries are paused, so nobody votes) is
// abandoned by Redis after 5 s and never retried by it; ClusterFailover
// asks again and the replica is promoted once the voters are back. The
// old primary stays up, so no automatic failover could do it instead.
func TestClusterFailoverLostElection(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyCluster})
	ctx := context.Background()
	shards, err := env.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) != 3 {
		t.Fatalf("%d shards, want 3", len(shards))
	}
	target, voters := shards[0], []redisenv.Node{shards[1].Primary, shards[2].Primary}
	for _, v := range voters {
		if err := v.Pause(ctx); err != nil {
			t.Fatal(err)
		}
	}
	resumed := make(chan struct{})
	resume := func() {
		for _, v := range voters {
			if err := v.Resume(ctx); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() {
		select {
		case <-resumed:
		default:
			resume()
		}
	}()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- env.ClusterFailover(ctx, target.Replicas[0], redisenv.FailoverForce) }()
	// Past Redis's 5 s limit the first election is lost for good.
	select {
	case err := <-done:
		t.Fatalf("failover returned %v after %v with every voter paused", err, time.Since(start))
	case <-time.After(7 * time.Second):
	}
	resume()
	close(resumed)
	if err := <-done; err != nil {
		t.Fatalf("failover after the voters came back: %v", err)
	}
	after, err := env.ShardOf(ctx, target.Slots[0].From)
	if err != nil {
		t.Fatal(err)
	}
	if after.Primary.Addr() != target.Replicas[0].Addr() {
		t.Errorf("slot %d served by %s, want the promoted replica %s", target.Slots[0].From, after.Primary.Addr(), target.Replicas[0].Addr())
	}
}

// TestContainerClusterFailover: the same failover on a cluster of
// containers: the killed node's container restarts and rejoins.
func TestContainerClusterFailover(t *testing.T) {
	cfg := redisenvtest.ContainerConfig(t, redisenv.Config{Topology: redisenv.TopologyCluster})
	env, err := redisenv.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	clusterFailoverKillAndForce(t, env)
}

// clusterFailoverKillAndForce kills the primary serving a key, forces its
// replica's takeover, restarts the old primary (it rejoins as a replica)
// and fails back gracefully.
func clusterFailoverKillAndForce(t *testing.T, env *redisenv.Env) {
	ctx := context.Background()
	rdb := env.NewClient()
	defer rdb.Close()
	const key = "failover-key"
	slot := redisenv.KeySlot(key)
	if err := rdb.Set(ctx, key, "v1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	before, err := env.ShardOf(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	// Replication is asynchronous: wait until the replica has the key, so
	// that the check after the failover tests routing, not luck.
	rep := redis.NewClient(&redis.Options{Addr: before.Replicas[0].Addr()})
	defer rep.Close()
	waitFor(t, 10*time.Second, "the replica has the key", func() bool {
		n, err := rep.Do(ctx, "DBSIZE").Int()
		return err == nil && n == 1
	})

	if err := before.Primary.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.ClusterFailover(ctx, before.Replicas[0], redisenv.FailoverForce); err != nil {
		t.Fatal(err)
	}
	after, err := env.ShardOf(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	if after.Primary.Addr() != before.Replicas[0].Addr() {
		t.Fatalf("slot %d served by %s after failover, want the promoted %s", slot, after.Primary.Name(), before.Replicas[0].Name())
	}
	// The cluster client finds the new primary (MOVED or a reload).
	waitFor(t, 15*time.Second, "the client reads the key from the new primary", func() bool {
		v, err := rdb.Get(ctx, key).Result()
		return err == nil && v == "v1"
	})

	// The old primary comes back as a replica of the promoted one.
	if err := before.Primary.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := env.ShardOf(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Replicas) != 1 || again.Replicas[0].Addr() != before.Primary.Addr() {
		t.Errorf("after restart shard replicas %v, want the old primary %s", names(again.Replicas), before.Primary.Name())
	}
	// A graceful failover back, with the primary alive.
	if err := env.ClusterFailover(ctx, before.Primary, redisenv.FailoverGraceful); err != nil {
		t.Fatal(err)
	}
	back, err := env.ShardOf(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	if back.Primary.Addr() != before.Primary.Addr() {
		t.Errorf("graceful failover: primary %s, want %s", back.Primary.Name(), before.Primary.Name())
	}
}

func TestMigrateSlotMovesKeys(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyCluster, Replicas: redisenv.NoReplicas})
	ctx := context.Background()
	const tag = "{mig}"
	slot, src, dst := slotToMove(t, env, tag, 250) // more than one MIGRATE batch
	rdb := redisenvtest.Raw(t, env)
	from, err := env.MigrateSlot(ctx, slot, dst.Primary, redisenv.MigrateOptions{Hold: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if from.Addr() != src.Primary.Addr() {
		t.Errorf("MigrateSlot says it came from %s, want %s", from.Name(), src.Primary.Name())
	}
	now, err := env.ShardOf(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	if now.ID != dst.ID {
		t.Fatalf("slot %d still served by %s", slot, now.Primary.Name())
	}
	dc := redis.NewClient(&redis.Options{Addr: dst.Primary.Addr()})
	defer dc.Close()
	if n, err := dc.ClusterCountKeysInSlot(ctx, slot).Result(); err != nil || n != 250 {
		t.Errorf("target holds %d keys of slot %d (%v), want 250", n, slot, err)
	}
	if ttl, err := rdb.TTL(ctx, tag+":7").Result(); err != nil || ttl < 59*time.Minute {
		t.Errorf("a migrated key's TTL is %v (%v), want it kept", ttl, err)
	}
	if v, err := rdb.Get(ctx, tag+":249").Int(); err != nil || v != 249 {
		t.Errorf("read through the cluster client after the move: %d, %v", v, err)
	}
}

func TestClusterConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  redisenv.Config
		flag string
	}{
		{redisenv.Config{Shards: 3}, "--shards"},
		{redisenv.Config{Replicas: 2, Topology: redisenv.TopologyReplica}, "--replicas"},
		{redisenv.Config{Topology: redisenv.TopologyCluster, Shards: redisenv.MaxShards + 1}, "--shards"},
		{redisenv.Config{Topology: redisenv.TopologyCluster, Shards: -1}, "--shards"},
		{redisenv.Config{Topology: redisenv.TopologyCluster, Replicas: redisenv.MaxReplicas + 1}, "--replicas"},
	} {
		err := c.cfg.Validate()
		var ce *redisenv.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("Validate(%+v) = %v, want a ConfigError naming %s", c.cfg, err, c.flag)
		}
	}
	ctx := context.Background()
	_, err := redisenv.Start(ctx, redisenv.Config{Topology: redisenv.TopologyCluster, URL: "redis://127.0.0.1:1/0"})
	if err == nil || !strings.Contains(err.Error(), "seeds") {
		t.Errorf("cluster topology with a single-server URL: %v, want an error asking for seeds", err)
	}
	env := redisenvtest.Start(t)
	if _, err := env.Shards(ctx); !errors.Is(err, redisenv.ErrNotCluster) {
		t.Errorf("Shards on a single server: %v, want ErrNotCluster", err)
	}
}

func TestExternalClusterBySeeds(t *testing.T) {
	local := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyCluster, Replicas: redisenv.NoReplicas})
	var seeds []string
	for _, n := range local.Nodes() {
		seeds = append(seeds, n.Addr())
	}
	ctx := context.Background()
	env, err := redisenv.Start(ctx, redisenv.Config{URL: strings.Join(seeds, ",")})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if env.Backend() != redisenv.BackendExternal || env.Topology() != redisenv.TopologyCluster {
		t.Fatalf("seed list gave %s/%s, want external/cluster", env.Backend(), env.Topology())
	}
	shards, err := env.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) != 3 {
		t.Fatalf("external view has %d shards, want 3", len(shards))
	}
	if err := shards[0].Primary.Kill(ctx); !errors.Is(err, redisenv.ErrNotManaged) {
		t.Errorf("Kill on an external cluster node: %v, want ErrNotManaged", err)
	}
}

// wantShards3x1 fails t unless env's cluster has 3 shards of one replica
// each, serving every slot, whose nodes are the ones env started (the
// cluster's addresses map back to them, not to unmanaged handles).
func wantShards3x1(t *testing.T, env *redisenv.Env) []redisenv.Shard {
	t.Helper()
	shards, err := env.Shards(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) != 3 {
		t.Fatalf("%d shards, want 3: %+v", len(shards), shards)
	}
	total := 0
	for i, s := range shards {
		total += s.SlotCount()
		if len(s.Replicas) != 1 {
			t.Errorf("shard %d has %d replicas, want 1", i+1, len(s.Replicas))
		}
		if name := s.Primary.Name(); !strings.HasSuffix(name, "-primary") {
			t.Errorf("shard %d primary is %q (%s), want a started shard primary", i+1, name, s.Primary.Addr())
		}
		for _, r := range s.Replicas {
			if name := r.Name(); !strings.Contains(name, "-replica") {
				t.Errorf("shard %d replica is %q (%s), want a started replica", i+1, name, r.Addr())
			}
		}
	}
	if total != redisenv.Slots {
		t.Errorf("shards serve %d slots, want %d", total, redisenv.Slots)
	}
	return shards
}

func names(ns []redisenv.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name())
	}
	return out
}

// waitFor polls cond until it holds or d passes, then fails t.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting until %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// slotToMove writes n keys under tag and returns their slot, the shard
// serving it and another shard to move it to.
func slotToMove(t *testing.T, env *redisenv.Env, tag string, n int) (slot int, src, dst redisenv.Shard) {
	t.Helper()
	ctx := context.Background()
	rdb := redisenvtest.Raw(t, env)
	for i := range n {
		if err := rdb.Set(ctx, fmt.Sprintf("%s:%d", tag, i), i, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	slot = redisenv.KeySlot(tag)
	src, err := env.ShardOf(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	shards, err := env.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shards {
		if s.ID != src.ID {
			return slot, src, s
		}
	}
	t.Fatalf("no shard but %s to move slot %d to", src.Primary.Name(), slot)
	return
}
