package redisson_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/redisson"
)

// waitCalls is how many WAIT commands the server at addr has run.
func waitCalls(t *testing.T, addr string) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	s, err := c.Info(testkit.Context(t), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(l, "cmdstat_wait:calls="); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}

// lockedOn runs one lock and unlock of name through a driver on servers,
// with checkLockSyncedSlaves on or off, and returns how many WAITs the
// primary at primary ran meanwhile.
func lockedOn(t *testing.T, servers redisson.Servers, skipSync bool, name, primary string) int {
	t.Helper()
	ctx := startCtx(t)
	d, err := redisson.Start(ctx, redisson.Config{Servers: servers, SkipReplicaSync: skipSync})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	before := waitCalls(t, primary)
	r, err := d.Call(ctx, "lock", "o", redisson.KindOf(kind.Reentrant), name, -1, 0)
	if err != nil || r.Value != "1" {
		t.Fatalf("lock in %+v: %q, %v", servers, r.Value, err)
	}
	if _, err := d.Call(ctx, "unlock", "o", redisson.KindOf(kind.Reentrant), name, 0, 0); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	n := waitCalls(t, primary) - before
	t.Logf("%+v skip=%v: %d WAITs", servers, skipSync, n)
	return n
}

// TestModesWaitForReplicas: in master-slave and sentinel mode Redisson
// sends WAIT after a lock whether checkLockSyncedSlaves is on or off (the
// setting only decides whether a WAIT no replica acknowledged fails the
// lock); in single-server mode it never waits, even with a replica behind
// the server.
func TestModesWaitForReplicas(t *testing.T) {
	needJar(t)
	replicated := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	sentinel := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologySentinel})
	var sentinels []string
	for _, s := range sentinel.Sentinels() {
		sentinels = append(sentinels, s.Addr())
	}
	for _, c := range []struct {
		name    string
		servers redisson.Servers
		primary string
		waits   bool
	}{
		{"single", redisson.Servers{Addr: replicated.Primary().Addr()}, replicated.Primary().Addr(), false},
		{"master-slave", redisson.Servers{Addr: replicated.Primary().Addr(), Replicas: []string{replicated.Replica().Addr()}}, replicated.Primary().Addr(), true},
		{"sentinel", redisson.Servers{Sentinels: sentinels, Master: redisenv.SentinelMaster}, sentinel.Primary().Addr(), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, skip := range []bool{false, true} {
				if n := lockedOn(t, c.servers, skip, "modes-"+c.name, c.primary); (n > 0) != c.waits {
					t.Errorf("checkLockSyncedSlaves off: %v: %d WAITs, want waits: %v", skip, n, c.waits)
				}
			}
		})
	}
}

// TestModeCluster: Redisson in cluster mode, seeded with the nodes, locks
// on the shard of the lock's name and waits for its replica, with
// checkLockSyncedSlaves on or off.
func TestModeCluster(t *testing.T) {
	needJar(t)
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyCluster})
	name := "cluster-lock"
	shard, err := env.ShardOf(testkit.Context(t), redisenv.KeySlot(name))
	if err != nil {
		t.Fatal(err)
	}
	servers := redisson.Servers{Cluster: env.Options().Addrs}
	if len(shard.Replicas) == 0 {
		t.Fatal("the lock's shard has no replica to wait for")
	}
	for _, skip := range []bool{false, true} {
		if n := lockedOn(t, servers, skip, name, shard.Primary.Addr()); n == 0 {
			t.Errorf("checkLockSyncedSlaves off: %v: no WAIT on the lock's shard", skip)
		}
	}
}

// TestServersRefused: servers the driver cannot name are refused before
// the JVM starts, as bad input.
func TestServersRefused(t *testing.T) {
	for _, s := range []redisson.Servers{
		{Addr: "a:1", Cluster: []string{"b:1"}},
		{Sentinels: []string{"a:1"}},
		{Replicas: []string{"a:1"}},
		{Addr: "a:1,b:1"},
		{Sentinels: []string{"a:1"}, Master: "m@x"},
	} {
		_, err := redisson.Start(context.Background(), redisson.Config{Servers: s, Jar: "/nonexistent.jar"})
		var ce *redisson.ConfigError
		if !errors.As(err, &ce) || ce.Field != "servers" {
			t.Errorf("%+v: %v, want a ConfigError on servers", s, err)
		}
	}
}

// TestNoSyncedSlaves: with the replica stalled (connected, so counted,
// but acknowledging nothing), checkLockSyncedSlaves on gives the lock
// back and fails it as refused; off, Redisson keeps it.
func TestNoSyncedSlaves(t *testing.T) {
	needJar(t)
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	servers := redisson.Servers{Addr: env.Primary().Addr(), Replicas: []string{env.Replica().Addr()}}
	ctx := startCtx(t)
	on, err := redisson.Start(ctx, redisson.Config{Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	defer on.Close()
	off, err := redisson.Start(ctx, redisson.Config{Servers: servers, SkipReplicaSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if err := env.Replica().Pause(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Replica().Resume(context.WithoutCancel(ctx)) }()
	_, err = on.Call(ctx, "lock", "o", redisson.KindOf(kind.Reentrant), "nosync-on", -1, 0)
	var re *redisson.Error
	if !errors.As(err, &re) || !re.Refused() {
		t.Errorf("checkLockSyncedSlaves on, replica stalled: %v, want a refusal", err)
	}
	rdb := env.NewClient()
	defer rdb.Close()
	if n, _ := rdb.Exists(ctx, "nosync-on").Result(); n != 0 {
		t.Errorf("the refused lock is still in Redis")
	}
	r, err := off.Call(ctx, "lock", "o", redisson.KindOf(kind.Reentrant), "nosync-off", -1, 0)
	if err != nil || r.Value != "1" {
		t.Errorf("checkLockSyncedSlaves off, replica stalled: %q, %v, want the lock", r.Value, err)
	}
}
