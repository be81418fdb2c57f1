package redisenv_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
		{"beside an image under auto", redisenv.Config{Server: "valkey", Image: "redis:7.4"},
			[]string{`--server "valkey": beside --image redis:7.4 it is ambiguous`, "drop one of them"}},
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

// TestServerBinaryChecked: a --server that exists but is no server is
// refused before anything starts, each case saying what is wrong with it:
// a directory and a file that is not executable are not "missing", and a
// program that does not answer --version as a server does would start and
// exit (or never listen).
func TestServerBinaryChecked(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	silent := write("silent", "#!/bin/sh\nexit 0\n", 0o755)
	other := write("other", "#!/bin/sh\necho 'other-tool 1.0'\n", 0o755)
	failing := write("failing", "#!/bin/sh\nexit 3\n", 0o755)
	plain := write("plain", "not a program\n", 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	lookalike := write("lookalike", "#!/bin/sh\necho 'Redis server v=7.0.15 sha=00000000:0 malloc=libc bits=64'\n", 0o755)
	for _, tc := range []struct {
		server string
		want   string
	}{
		{dir, dir + " is a directory; name a server"},
		{plain, plain + " is not executable (mode -rw-r--r--)"},
		{fifo, fifo + " is not a regular file but a named pipe"},
		{silent, silent + ` answered --version with nothing, where a server answers "Redis server v=…" or "Valkey server v=…"`},
		{other, other + ` answered --version with "other-tool 1.0"`},
		{failing, failing + " failed to answer --version (exit status 3)"},
		{filepath.Join(dir, "absent"), "no such binary"},
	} {
		err := redisenv.Config{Backend: redisenv.BackendLocal, Server: tc.server}.Validate()
		requireConfigError(t, tc.server, err, `--server "`+tc.server+`": `+tc.want)
	}
	// $REDIS_SERVER is checked alike, and named.
	t.Setenv(redisenv.EnvServer, dir)
	requireConfigError(t, "$REDIS_SERVER", redisenv.Config{Backend: redisenv.BackendLocal, Server: "redis"}.Validate(),
		dir+" (from $REDIS_SERVER) is a directory")
	if _, err := redisenv.FindServer("redis"); !errors.Is(err, redisenv.ErrNotAServer) {
		t.Errorf("FindServer with $REDIS_SERVER a directory: %v, want ErrNotAServer", err)
	}
	// A program that answers as a server does passes the check (whether
	// it then serves is the start's to find out).
	if err := (redisenv.Config{Backend: redisenv.BackendLocal, Server: lookalike}).Validate(); err != nil {
		t.Errorf("a binary answering as redis-server: %v", err)
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
