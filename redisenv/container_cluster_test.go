package redisenv_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// TestContainerCluster starts the default cluster (3 shards, 1 replica
// each) in containers, where a Docker engine answers: the shards view maps
// the nodes' in-network addresses back to the started containers, and a
// cluster client reaches every shard through the published ports.
func TestContainerCluster(t *testing.T) {
	cfg := redisenvtest.ContainerConfig(t, redisenv.Config{Topology: redisenv.TopologyCluster})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env, err := redisenv.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if env.Backend() != redisenv.BackendContainer || env.Topology() != redisenv.TopologyCluster {
		t.Fatalf("started %s/%s, want container/cluster", env.Backend(), env.Topology())
	}
	if n := len(env.Nodes()); n != 6 {
		t.Fatalf("3×1 cluster has %d nodes, want 6", n)
	}

	wantShards3x1(t, env)

	rdb := env.NewClient()
	defer rdb.Close()
	for i := range 30 {
		if err := rdb.Set(ctx, fmt.Sprintf("container-cluster:%d", i), i, 0).Err(); err != nil {
			t.Fatalf("SET key %d: %v", i, err)
		}
	}
	for i := range 30 {
		got, err := rdb.Get(ctx, fmt.Sprintf("container-cluster:%d", i)).Int()
		if err != nil {
			t.Fatalf("GET key %d: %v", i, err)
		}
		if got != i {
			t.Errorf("key %d = %d, want %d", i, got, i)
		}
	}
	if err := rdb.Close(); err != nil {
		t.Errorf("client Close: %v", err)
	}
	if err := env.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
