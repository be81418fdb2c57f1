package redisenv_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// A --server that cannot be what runs is bad input, one line naming the
// flag and the fix, before anything starts.
func TestServerRefused(t *testing.T) {
	t.Setenv(redisenv.EnvValkey, "/nonexistent/valkey-server")
	for _, tc := range []struct {
		name string
		cfg  redisenv.Config
		want []string
	}{
		{"typo", redisenv.Config{Backend: redisenv.BackendLocal, Server: "valkeyy"},
			[]string{`--server "valkeyy": no such binary`, "name a server (redis or valkey)"}},
		{"valkey missing", redisenv.Config{Backend: redisenv.BackendLocal, Server: "valkey"},
			[]string{`looked for "/nonexistent/valkey-server" from $VALKEY_SERVER`, "scripts/install-valkey.sh"}},
		{"beside a URL", redisenv.Config{Backend: redisenv.BackendExternal, URL: "redis://127.0.0.1:1", Server: "redis"},
			[]string{`--server "redis"`, "drop --server"}},
		{"beside an image", redisenv.Config{Backend: redisenv.BackendContainer, Image: "redis:7.4", Server: "redis"},
			[]string{"runs what --image redis:7.4 holds", "--image local"}},
		{"a path in a container", redisenv.Config{Backend: redisenv.BackendContainer, Server: "/usr/bin/redis-server"},
			[]string{"add --image local"}},
	} {
		requireConfigError(t, tc.name, tc.cfg.Validate(), tc.want...)
	}
	// A server named by name picks its own image.
	if err := (redisenv.Config{Backend: redisenv.BackendContainer, Server: "valkey"}).Validate(); err != nil {
		t.Errorf("--redis container --server valkey: %v", err)
	}
}

// ServerBinary reads the binary from the server's own variable.
func TestServerBinary(t *testing.T) {
	t.Setenv(redisenv.EnvServer, "/opt/redis/bin/redis-server")
	t.Setenv(redisenv.EnvValkey, "")
	for in, want := range map[string]string{
		"": "/opt/redis/bin/redis-server", "redis": "/opt/redis/bin/redis-server",
		"valkey": "valkey-server", "/x/valkey-server": "/x/valkey-server",
	} {
		if got := redisenv.ServerBinary(in); got != want {
			t.Errorf("ServerBinary(%q) = %q, want %q", in, got, want)
		}
	}
}

// Each server is named as its INFO names it, on every topology lockbench
// starts: Valkey by valkey_version, not the redis_version it keeps.
func TestServerNamed(t *testing.T) {
	valkey := "valkey"
	if _, err := redisenv.FindServer(valkey); err != nil {
		t.Skip(err)
	}
	for _, topo := range []redisenv.Topology{redisenv.TopologySingle, redisenv.TopologyReplica, redisenv.TopologySentinel, redisenv.TopologyCluster} {
		for _, server := range []string{"redis", valkey} {
			env := redisenvtest.Start(t, redisenv.Config{Topology: topo, Server: server})
			got := env.Server()
			if !strings.HasPrefix(got, server+" ") || server == valkey && got == "valkey "+env.Version() {
				t.Errorf("%s on %s: Server() = %q", server, topo, got)
			}
			if !strings.Contains(env.String(), got) {
				t.Errorf("%s on %s: String() %q does not name %q", server, topo, env.String(), got)
			}
			if err := env.Close(); err != nil {
				t.Error(err)
			}
		}
	}
}
