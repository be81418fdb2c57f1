package harness_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// TestStartGuardNamesItsFlag: what is wrong with the store's URL is the
// user's --guard-url, never the lock's --redis-url, and bad input (exit
// 2) whether the URL does not parse or the server refuses it.
func TestStartGuardNamesItsFlag(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{ServerArgs: []string{"requirepass sesame"}})
	for _, url := range []string{"http://u:pw@h:1", "redis://127.0.0.1:notaport", "redis://:wrongpw@" + env.Addr()} {
		gs, err := harness.StartGuard(context.Background(), guard.Plain, url, "", "")
		if err == nil {
			_ = gs.Close()
			t.Errorf("%s: accepted", url)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "--guard-url") || strings.Contains(msg, "--redis") || strings.Contains(msg, "pw@") {
			t.Errorf("%s: %q; want --guard-url named, no --redis flag, no password", url, msg)
		}
		if code := cli.ExitCode(err); code != cli.ExitUsage {
			t.Errorf("%s: exit %d, want %d", url, code, cli.ExitUsage)
		}
	}
}

// TestStartGuardOnCluster: a Redis Cluster given as --guard-url holds the
// counters: a write lands and the totals count it.
func TestStartGuardOnCluster(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyCluster})
	var seeds []string
	for _, n := range env.Nodes() {
		seeds = append(seeds, n.Addr())
	}
	gs, err := harness.StartGuard(context.Background(), guard.Fenced, strings.Join(seeds, ","), "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	ctx := context.Background()
	for _, name := range []string{"lb:orders", "lb:users"} {
		v, err := gs.Store.Read(ctx, name, 7, "me")
		if err == nil {
			_, err = gs.Store.Write(ctx, name, v, "me", 7)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if tot, err := gs.Store.Totals(ctx); err != nil || tot.Accepted != 2 || tot.Value != 2 {
		t.Errorf("totals %+v, %v; want 2 writes counted", tot, err)
	}
}

// TestStartGuardOnTheRunsServer: a store of its own runs the server it is
// given, so a run on Valkey needs no redis-server.
func TestStartGuardOnTheRunsServer(t *testing.T) {
	if _, err := redisenv.FindServer(redisenv.ServerValkey); err != nil {
		t.Skip(err)
	}
	gs, err := harness.StartGuard(context.Background(), guard.Plain, "", "", redisenv.ServerValkey)
	if err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	rdb := redis.NewClient(&redis.Options{Addr: strings.TrimPrefix(gs.Where, "redis://")})
	defer rdb.Close()
	info, err := redisenv.Probe(context.Background(), rdb)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "valkey" {
		t.Errorf("the store runs %s, want valkey", info.Server())
	}
}
