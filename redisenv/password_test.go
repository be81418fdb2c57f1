package redisenv_test

import (
	"context"
	"testing"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// TestLocalRequirepass: servers started with a requirepass in ServerArgs
// start (the readiness probe authenticates), their replicas sync (they get
// masterauth), and the Env's clients, Promote and MigrateSlot
// authenticate; a client without the password is refused.
func TestLocalRequirepass(t *testing.T) {
	ctx := context.Background()
	args := []string{`requirepass "pw with space"`}

	t.Run("replica", func(t *testing.T) {
		t.Parallel()
		env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyReplica, ServerArgs: args})
		rdb := env.NewClient()
		defer rdb.Close()
		if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatalf("SET with the Env's client: %v", err)
		}
		// Replication is asynchronous: the replica acknowledges the write
		// (which it can only get once it authenticated to its primary).
		if n, err := rdb.Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n != 1 {
			t.Fatalf("WAIT for the replica: %d replicas, %v", n, err)
		}
		if err := env.Promote(ctx); err != nil {
			t.Fatalf("Promote: %v", err)
		}
		promoted := env.NewClient()
		defer promoted.Close()
		if v, err := promoted.Get(ctx, "k").Result(); err != nil || v != "v" {
			t.Errorf("GET on the promoted replica: %q, %v; want the replicated value", v, err)
		}
		if err := startExternal(t, "redis://"+env.Addr()); err == nil {
			t.Error("a client without the password was let in")
		}
	})

	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyCluster, Shards: 2, ServerArgs: args})
		if err := env.WaitHealthy(ctx); err != nil {
			t.Fatalf("WaitHealthy: %v", err)
		}
		const tag = "{pw}"
		slot, _, dst := slotToMove(t, env, tag, 3)
		// The source's MIGRATE authenticates to the target.
		if _, err := env.MigrateSlot(ctx, slot, dst.Primary, redisenv.MigrateOptions{}); err != nil {
			t.Fatalf("MigrateSlot: %v", err)
		}
		rdb := redisenvtest.Raw(t, env)
		if v, err := rdb.Get(ctx, tag+":2").Int(); err != nil || v != 2 {
			t.Errorf("a migrated key: %d, %v", v, err)
		}
	})
}
