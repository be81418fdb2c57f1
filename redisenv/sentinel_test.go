package redisenv_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// TestSentinelFailover starts a primary, a replica and three Sentinels,
// kills the primary, and waits for the Sentinels to elect the replica: a
// client made before the failover follows it, and Primary names the new
// primary. Close leaves no process behind.
func TestSentinelFailover(t *testing.T) {
	ctx := testkit.Context(t)
	env := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal, Topology: redisenv.TopologySentinel, SentinelDownAfter: time.Second})
	if env.Topology() != redisenv.TopologySentinel || len(env.Sentinels()) != 3 || len(env.Nodes()) != 2 {
		t.Fatalf("topology %s, %d sentinels, %d nodes; want sentinel, 3, 2", env.Topology(), len(env.Sentinels()), len(env.Nodes()))
	}
	if s := env.String(); !strings.Contains(s, "3 sentinels") || !strings.Contains(s, "quorum 2") {
		t.Errorf("String %q, want the sentinels and their quorum", s)
	}
	if n, known := (redisenv.Config{Backend: redisenv.BackendLocal, Topology: redisenv.TopologySentinel}).PlannedReplicas(); n != 1 || !known {
		t.Errorf("PlannedReplicas %d %v, want 1 known", n, known)
	}
	old, replica := env.Primary(), env.Replica()
	if env.Addr() != old.Addr() {
		t.Errorf("Addr %s, want the primary's %s (not a Sentinel's)", env.Addr(), old.Addr())
	}
	rdb := env.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.Set(ctx, "k", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	pids := []int{old.PID(), replica.PID()}
	for _, s := range env.Sentinels() {
		pids = append(pids, s.PID())
	}

	killed := time.Now()
	if err := old.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	for env.Primary().Addr() != replica.Addr() {
		if time.Since(killed) > testkit.Patience {
			t.Fatalf("the Sentinels did not elect %s within %v of the kill", replica.Addr(), testkit.Patience)
		}
		time.Sleep(50 * time.Millisecond)
	}
	elected := time.Since(killed)
	for {
		err := rdb.Set(ctx, "k", "after", 0).Err()
		if err == nil {
			break
		}
		if time.Since(killed) > testkit.Patience {
			t.Fatalf("the client did not follow the failover: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("elected %v after the kill, client writing again after %v", elected.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	if elected < time.Second {
		t.Errorf("elected %v after the kill, before down-after-milliseconds (1s) could pass", elected)
	}
	if env.Addr() != replica.Addr() || env.Replica().Addr() != old.Addr() {
		t.Errorf("after the failover Addr %s, Replica %s; want %s, %s", env.Addr(), env.Replica().Addr(), replica.Addr(), old.Addr())
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if pid > 0 {
			redisenvtest.WaitProcessGone(t, pid, 15*time.Second)
		}
	}
}

func TestSentinelRefusedOnContainers(t *testing.T) {
	err := redisenv.Config{Backend: redisenv.BackendContainer, Topology: redisenv.TopologySentinel}.Validate()
	var ce *redisenv.ConfigError
	if !errors.As(err, &ce) || ce.Field != "topology" {
		t.Errorf("Validate: %v, want a ConfigError on topology", err)
	}
}
