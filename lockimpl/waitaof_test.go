package lockimpl_test

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
)

// hasCommand reports whether the server knows the command name, asked with
// COMMAND INFO (a nil entry for a command it lacks), not from its version.
func hasCommand(t *testing.T, rdb redis.UniversalClient, name string) bool {
	t.Helper()
	entries, err := rdb.Do(bg, "COMMAND", "INFO", name).Slice()
	if err != nil {
		t.Fatal(err)
	}
	return len(entries) == 1 && entries[0] != nil
}

// appendOnly is the server's appendonly setting.
func appendOnly(t *testing.T, rdb redis.UniversalClient) string {
	t.Helper()
	cfg, err := rdb.ConfigGet(bg, "appendonly").Result()
	if err != nil {
		t.Fatal(err)
	}
	return cfg["appendonly"]
}

// TestReplicaSyncAOF: on a primary with AOF on and a replica with AOF on,
// replica sync sends WAITAOF 1 <replicas> where the server has WAITAOF
// (Redis 7.2+, Valkey) and WAIT where it does not (Redis 7.0), one per
// acquisition; the acquisition stands once the replica acknowledged, and
// with the replica frozen it is given back and fails with ErrReplicaSync.
//
// appendfsync always makes the primary's own fsync part of the write, so
// what an acquisition waits for is the replica alone. That replica reports
// its AOF fsync in its periodic acknowledgement (about once a second), not
// in its answer to the WAITAOF's prompt, so the acquisitions that must
// succeed get a timeout well beyond that.
func TestReplicaSyncAOF(t *testing.T) {
	f := setup(t, redisenv.Config{Topology: redisenv.TopologyReplica, AppendOnly: true, AppendFsync: "always"})
	ro := f.env.Options()
	ro.Addrs = []string{f.env.Replica().Addr()}
	rraw := redisenv.NewUniversalClient(ro)
	t.Cleanup(func() { rraw.Close() })
	// WAITAOF counts the replicas that fsynced their own AOF.
	for _, n := range []struct {
		name string
		rdb  redis.UniversalClient
	}{{"primary", f.raw}, {"replica", rraw}} {
		if got := appendOnly(t, n.rdb); got != "yes" {
			t.Fatalf("the %s has appendonly %q, want yes", n.name, got)
		}
	}
	want, other := "wait", "waitaof"
	if hasCommand(t, f.raw, "waitaof") {
		want, other = "waitaof", "wait"
	}
	calls := func() (int, int) { return commandCalls(t, f.raw, want), commandCalls(t, f.raw, other) }

	// A client whose reads outlast the patient WAIT, on the autopipeliner too.
	po := f.env.ClientOptions(4)
	po.ReadTimeout = 20 * time.Second
	prdb := redisenv.NewUniversalClient(po)
	t.Cleanup(func() { prdb.Close() })
	patient, err := lockimpl.NewClient(bg, prdb, testOptions(lockimpl.Options{ReplicaSyncTimeout: 15 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { patient.Close() })
	quick := f.client(lockimpl.Options{ReplicaSyncTimeout: 300 * time.Millisecond})
	skip := f.client(lockimpl.Options{SkipReplicaSync: true})

	// The replica is ready once it acknowledges a write as asked (its AOF
	// is written after its first sync).
	testkit.Eventually(t, "the replica to acknowledge a write", func() bool {
		if err := f.raw.Set(bg, "aof-warm", "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if want == "waitaof" {
			n, err := f.raw.Do(bg, "WAITAOF", 0, 1, 100).Int64Slice()
			return err == nil && len(n) == 2 && n[1] == 1
		}
		n, err := f.raw.Do(bg, "WAIT", 1, 100).Int64()
		return err == nil && n == 1
	})

	w0, o0 := calls()
	h, err := patient.NewOwner().Lock("aof").TryLock(bg, lockimpl.TryLockOptions{})
	if w, o := calls(); w-w0 != 1 || o-o0 != 0 {
		t.Errorf("an acquisition sent %d %s and %d %s; want one %s", w-w0, want, o-o0, other, want)
	}
	if err != nil {
		t.Fatalf("TryLock with the replica up: %v", err)
	}
	unlock(t, h)

	resume := f.freezeReplica()
	w0, o0 = calls()
	got, err := quick.NewOwner().Lock("aof").TryLock(bg, lockimpl.TryLockOptions{})
	if got != nil || !errors.Is(err, lockimpl.ErrReplicaSync) {
		t.Fatalf("TryLock with the replica frozen = %v, %v; want ErrReplicaSync", got, err)
	}
	if w, o := calls(); w-w0 != 1 || o-o0 != 0 {
		t.Errorf("the refused acquisition sent %d %s and %d %s; want one %s", w-w0, want, o-o0, other, want)
	}
	f.wantAbsent("aof")
	// Given back: another owner takes it at once.
	unlock(t, lock(t, skip.NewOwner().Lock("aof")))
	resume()
	testkit.Eventually(t, "an acknowledged acquisition after resume", func() bool {
		h, err := patient.NewOwner().Lock("aof").TryLock(bg, lockimpl.TryLockOptions{})
		if err != nil {
			return false
		}
		unlock(t, h)
		return true
	})
}
