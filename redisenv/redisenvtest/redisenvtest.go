// Package redisenvtest hands tests a fresh, isolated, real Redis: a
// redis-server child process of its own, stopped and removed by t.Cleanup.
// Every package that talks to Redis tests through it.
package redisenvtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
)

// Start returns a running local Redis for t (single topology unless cfg
// says otherwise; cfg's Backend must be empty or local), on the server
// this run of the tests is about (Server) unless cfg names one. It fails t, with
// the install command, when redis-server is missing: tests never fall back
// to a fake Redis. When t fails, the server's log tail is logged.
func Start(t testing.TB, cfg ...redisenv.Config) *redisenv.Env {
	t.Helper()
	var c redisenv.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	if c.Topology == redisenv.TopologyCluster {
		Long(t, "a Redis Cluster")
	}
	if c.Backend == "" {
		c.Backend = redisenv.BackendLocal
	}
	if c.Server == "" {
		c.Server = Server()
	}
	if c.Logf == nil {
		c.Logf = t.Logf
	}
	if c.Dir == "" {
		c.Dir = t.TempDir() // removed by the testing package even if a process dies mid-test
	}
	env, err := redisenv.Start(context.Background(), c)
	if errors.Is(err, redisenv.ErrServerNotFound) {
		t.Fatalf("%v", err)
	}
	if err != nil {
		t.Fatalf("redisenvtest: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range env.Nodes() {
				t.Logf("redis %s log tail:\n%s", n.Name(), n.LogTail(20))
			}
		}
		if err := env.Close(); err != nil {
			t.Errorf("redisenvtest: close: %v", err)
		}
	})
	return env
}

// Client returns a client to a fresh Redis of t's own, closed by t.Cleanup.
func Client(t testing.TB, cfg ...redisenv.Config) redis.UniversalClient {
	t.Helper()
	env := Start(t, cfg...)
	rdb := env.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// Raw is a client of env's for inspecting Redis, closed when t ends.
func Raw(t testing.TB, env *redisenv.Env) redis.UniversalClient {
	t.Helper()
	rdb := env.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// ProcessAlive reports whether pid is a live (not zombie) redis-server or valkey-server. A
// recycled pid running something else counts as gone.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// Fields after the ")" that closes the command name: state is first.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X' {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && (strings.Contains(string(cmdline), "redis") || strings.Contains(string(cmdline), "valkey"))
}

// WaitProcessGone fails t unless pid is gone within timeout. It waits on
// the process table, not on a fixed sleep.
func WaitProcessGone(t testing.TB, pid int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for ProcessAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server pid %d still alive %v later: orphaned", pid, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Long skips t under go test -short (make test-short): what needs
// containers, a Redis Cluster or a chaos scenario takes seconds to
// minutes, and the quick loop leaves it to make test.
func Long(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s takes long; make test runs it", what)
	}
}

// ACLUser gives env's server the ACL user user, with password and every
// permission, and then disables its default user, so that from then on
// only user's credentials work (env.NewClient's included).
func ACLUser(t testing.TB, env *redisenv.Env, user, password string) {
	t.Helper()
	rdb := env.NewClient()
	defer rdb.Close()
	for _, args := range [][]any{
		{"ACL", "SETUSER", user, "on", ">" + password, "~*", "&*", "+@all"},
		{"ACL", "SETUSER", "default", "off"},
	} {
		if err := rdb.Do(context.Background(), args...).Err(); err != nil {
			t.Fatalf("redisenvtest: %v", err)
		}
	}
}
