package redisenv_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// TestEnvURL: another process given Env.URL reaches the Redis as the
// Env's own clients do, on every topology lockbench starts, password
// included: through the Sentinels on the sentinel topology (not taking
// them for cluster seeds), by the seeds on a cluster, else the primary.
func TestEnvURL(t *testing.T) {
	ctx := context.Background()
	args := []string{`requirepass "pw with space"`}
	for _, topo := range []redisenv.Topology{redisenv.TopologySingle, redisenv.TopologySentinel, redisenv.TopologyCluster} {
		t.Run(string(topo), func(t *testing.T) {
			t.Parallel()
			env := redisenvtest.Start(t, redisenv.Config{Topology: topo, Shards: map[bool]int{true: 2}[topo == redisenv.TopologyCluster], ServerArgs: args})
			if topo == redisenv.TopologyCluster {
				if err := env.WaitHealthy(ctx); err != nil {
					t.Fatal(err)
				}
			}
			want := env.Options()
			got, err := redisenv.ParseURL(env.URL())
			if err != nil {
				t.Fatalf("ParseURL(Env.URL()): %v", err)
			}
			if !slices.Equal(got.Addrs, want.Addrs) || got.MasterName != want.MasterName || got.Password != want.Password ||
				got.SentinelPassword != want.SentinelPassword || got.IsClusterMode != (len(want.Addrs) > 1 && want.MasterName == "") {
				t.Errorf("Env.URL() reads back as addrs %v, master %q, password set %v, cluster %v; the Env's clients use addrs %v, master %q, password set %v",
					got.Addrs, got.MasterName, got.Password != "", got.IsClusterMode, want.Addrs, want.MasterName, want.Password != "")
			}
			// A process given the URL connects and writes, as bench's
			// spread workers do.
			ext, err := redisenv.Start(ctx, redisenv.Config{Backend: redisenv.BackendExternal, URL: env.URL()})
			if err != nil {
				t.Fatalf("connecting by Env.URL(): %v", err)
			}
			defer ext.Close()
			if ext.Topology() != topo {
				t.Errorf("reached by its URL, the Redis is %s, want %s", ext.Topology(), topo)
			}
			rdb := ext.NewClient()
			defer rdb.Close()
			if err := rdb.Set(ctx, "{url}k", "v", 0).Err(); err != nil {
				t.Errorf("SET through Env.URL(): %v", err)
			}
		})
	}
}

// TestMadeURLNotBadInput: a URL lockbench made for a Redis it started is
// named as such when it fails, never as a --redis-url the user gave, and
// is no bad input (exit 1, not 2); one from a variable names it.
func TestMadeURLNotBadInput(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal, ServerArgs: []string{"requirepass s3cret"}})
	made := "the URL of the Redis started for the workers"
	for _, url := range []string{"redis://" + env.Addr() + "/0", "redis://127.0.0.1:1/0", "not a url:"} {
		_, err := redisenv.Start(context.Background(), redisenv.Config{Backend: redisenv.BackendExternal, URL: url, URLFrom: made})
		var ce *redisenv.ConfigError
		if err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), made) || strings.Contains(err.Error(), "--redis-url") {
			t.Errorf("%s: %v, want a failure (no bad input) naming %q, not --redis-url", url, err, made)
		}
	}
	_, err := redisenv.Start(context.Background(), redisenv.Config{Backend: redisenv.BackendExternal, URL: "redis://" + env.Addr() + "/0", URLFrom: "$" + redisenv.EnvURL})
	requireConfigError(t, "a URL from $REDIS_URL", err, "$REDIS_URL", "authentication required")
}
