package lockimpl_test

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
)

// waitCalls is how many WAIT commands the server has run.
func waitCalls(t *testing.T, rdb redis.UniversalClient) int {
	t.Helper()
	return commandCalls(t, rdb, "wait")
}

// commandCalls is how many times the server has run the command name
// (lower case), from INFO COMMANDSTATS.
func commandCalls(t *testing.T, rdb redis.UniversalClient, name string) int {
	t.Helper()
	info, err := rdb.Info(bg, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+name+":calls="); ok {
			n, _ := strconv.Atoi(strings.Split(rest, ",")[0])
			return n
		}
	}
	return 0
}

// TestReplicaSync: on a primary with a replica, every acquisition is
// followed by a WAIT; when the replica cannot acknowledge (frozen), the
// acquisition is given back and fails with ErrReplicaSync, for the
// reentrant and the fair lock alike; with SkipReplicaSync no WAIT is sent
// and the acquisition stands.
func TestReplicaSync(t *testing.T) {
	f := setup(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	c := f.client(lockimpl.Options{ReplicaSyncTimeout: 300 * time.Millisecond})
	skip := f.client(lockimpl.Options{SkipReplicaSync: true})
	a := c.NewOwner()

	before := waitCalls(t, f.raw)
	h := lock(t, a.Lock("rs"))
	reenter(t, h)
	// The first acquisition sends its script's source (EVAL): one WAIT each.
	if n := waitCalls(t, f.raw) - before; n != 2 {
		t.Errorf("%d WAITs for an acquisition and a re-entry, want 2", n)
	}
	unlock(t, h)
	unlock(t, h)

	resume := f.freezeReplica()
	for _, l := range []*lockimpl.Lock{a.Lock("rs"), a.FairLock("rsf"), a.FencedLock("rsx")} {
		start := time.Now()
		got, err := l.TryLock(bg, lockimpl.TryLockOptions{Wait: time.Second})
		if got != nil || !errors.Is(err, lockimpl.ErrReplicaSync) {
			t.Fatalf("%s with the replica frozen = %v, %v; want ErrReplicaSync", l, got, err)
		}
		if !strings.Contains(err.Error(), "Options.SkipReplicaSync") {
			t.Errorf("error %q does not say how to turn the check off", err)
		}
		if n := strings.Count(err.Error(), "lockimpl:"); n != 1 {
			t.Errorf("error %q says lockimpl %d times", err, n)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("%s failed after %v, before the 300ms WAIT", l, d)
		}
		f.wantAbsent(l.Name())
	}
	// Given back: another owner takes it at once.
	before = waitCalls(t, f.raw)
	hs := lock(t, skip.NewOwner().Lock("rs"))
	if n := waitCalls(t, f.raw) - before; n != 0 {
		t.Errorf("SkipReplicaSync sent %d WAITs", n)
	}
	unlock(t, hs)
	resume()
	// Once the replica is back, acquisitions are acknowledged again.
	testkit.Eventually(t, "an acknowledged acquisition after resume", func() bool {
		h, err := a.Lock("rs").TryLock(bg, lockimpl.TryLockOptions{})
		if err != nil {
			return false
		}
		unlock(t, h)
		return true
	})
}

// TestReplicaSyncWithoutReplicas: a primary without replicas gets no WAIT.
func TestReplicaSyncWithoutReplicas(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	before := waitCalls(t, f.raw)
	h := lock(t, c.NewOwner().Lock("nr"))
	unlock(t, h)
	if n := waitCalls(t, f.raw) - before; n != 0 {
		t.Errorf("%d WAITs without replicas, want 0", n)
	}
}

// TestReplicaSyncBoundedWithoutCachedScript: with the replica frozen, an
// acquisition whose script the primary does not have cached (first use, or
// after a restart, failover or SCRIPT FLUSH) fails with ErrReplicaSync
// within ReplicaSyncTimeout plus round trips, not after a WAIT for the
// refused EVALSHA and another for the EVAL. Each WAIT blocks for its whole
// timeout in the server, so two of them take twice the timeout on any host;
// the bound below leaves half a timeout for round trips.
func TestReplicaSyncBoundedWithoutCachedScript(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	f := setup(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	used := f.client(lockimpl.Options{ReplicaSyncTimeout: timeout})
	fresh := f.client(lockimpl.Options{ReplicaSyncTimeout: timeout})
	// used has run the acquire script: it knows the server has it.
	unlock(t, lock(t, used.NewOwner().Lock("warm")))

	if err := f.raw.ScriptFlush(bg).Err(); err != nil {
		t.Fatal(err)
	}
	f.freezeReplica()
	for _, c := range []struct {
		what   string
		client *lockimpl.Client
	}{{"after SCRIPT FLUSH", used}, {"on first use", fresh}} {
		l := c.client.NewOwner().Lock("uncached")
		start := time.Now()
		got, err := l.TryLock(bg, lockimpl.TryLockOptions{})
		took := time.Since(start)
		if got != nil || !errors.Is(err, lockimpl.ErrReplicaSync) {
			t.Fatalf("%s with the replica frozen = %v, %v; want ErrReplicaSync", c.what, got, err)
		}
		if took < timeout || took > timeout*3/2 {
			t.Errorf("%s: ErrReplicaSync after %v, want within [%v, %v]", c.what, took, timeout, timeout*3/2)
		}
		f.wantAbsent(l.Name())
	}
}

// connectedReplicas is the primary's connected_slaves.
func connectedReplicas(t *testing.T, rdb redis.UniversalClient) int {
	t.Helper()
	info, err := rdb.Info(bg, "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return -1
}

// TestMinReplicaAcks: with the replica's link down the default check
// counts no replica, sends no WAIT, and the primary holds the lock alone
// (a failover would lose it). MinReplicaAcks 1 waits for one replica all
// the same: the acquisition is given back and fails with ErrReplicaSync,
// until the replica is back.
func TestMinReplicaAcks(t *testing.T) {
	f := setup(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	strict := f.client(lockimpl.Options{MinReplicaAcks: 1, ReplicaSyncTimeout: 300 * time.Millisecond})
	plain := f.client(lockimpl.Options{ReplicaSyncTimeout: 300 * time.Millisecond})
	h := lock(t, strict.NewOwner().Lock("ma"))
	unlock(t, h)

	replica := f.env.Replica()
	if err := replica.Kill(bg); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the primary to count no replica", func() bool { return connectedReplicas(t, f.raw) == 0 })
	// The default check learns the count within a second of a failed WAIT.
	testkit.Eventually(t, "the default check to take the lock on the primary alone", func() bool {
		h, err := plain.NewOwner().Lock("ma").TryLock(bg, lockimpl.TryLockOptions{})
		if err != nil {
			return false
		}
		unlock(t, h)
		return true
	})
	before := waitCalls(t, f.raw)
	got, err := strict.NewOwner().Lock("ma").TryLock(bg, lockimpl.TryLockOptions{})
	if got != nil || !errors.Is(err, lockimpl.ErrReplicaSync) || !strings.Contains(err.Error(), "MinReplicaAcks") {
		t.Fatalf("MinReplicaAcks 1 with no replica = %v, %v; want ErrReplicaSync naming MinReplicaAcks", got, err)
	}
	if n := waitCalls(t, f.raw) - before; n != 1 {
		t.Errorf("%d WAITs, want 1 although no replica is connected", n)
	}
	f.wantAbsent("ma")

	if err := replica.Restart(bg); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "an acknowledged acquisition with the replica back", func() bool {
		h, err := strict.NewOwner().Lock("ma").TryLock(bg, lockimpl.TryLockOptions{})
		if err != nil {
			return false
		}
		unlock(t, h)
		return true
	})
}

func TestMinReplicaAcksRefused(t *testing.T) {
	f := setup(t)
	for _, o := range []lockimpl.Options{{MinReplicaAcks: -1}, {MinReplicaAcks: 1, SkipReplicaSync: true}} {
		rdb := f.env.NewClient()
		c, err := lockimpl.NewClient(bg, rdb, o)
		if c != nil || !errors.Is(err, lockimpl.ErrInvalidOptions) || !strings.Contains(err.Error(), "MinReplicaAcks") {
			t.Errorf("NewClient(%+v) = %v, %v; want ErrInvalidOptions naming MinReplicaAcks", o, c, err)
		}
		_ = rdb.Close()
	}
}

// TestReplicaSyncOutlastsReadTimeout: a client whose ReadTimeout is
// shorter than the WAIT still waits the whole ReplicaSyncTimeout for the
// WAIT's answer (not cut short as a broken connection), then gives the
// acquisition back with ErrReplicaSync.
func TestReplicaSyncOutlastsReadTimeout(t *testing.T) {
	f := setup(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	o := f.env.ClientOptions(4)
	o.ReadTimeout = 200 * time.Millisecond
	rdb := redisenv.NewUniversalClient(o)
	t.Cleanup(func() { rdb.Close() })
	c, err := lockimpl.NewClient(bg, rdb, testOptions(lockimpl.Options{MinReplicaAcks: 1, ReplicaSyncTimeout: 600 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	unlock(t, lock(t, c.NewOwner().Lock("rt")))
	if err := f.env.Replica().Kill(bg); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := c.NewOwner().Lock("rt").TryLock(bg, lockimpl.TryLockOptions{})
	if took := time.Since(start); took < 600*time.Millisecond {
		t.Errorf("the acquisition failed after %v, before its WAIT's 600ms: the read deadline cut it", took)
	}
	if got != nil || !errors.Is(err, lockimpl.ErrReplicaSync) {
		t.Fatalf("TryLock with the replica killed = %v, %v; want ErrReplicaSync", got, err)
	}
	f.wantAbsent("rt")
	// The client's own commands keep its short deadline.
	if rt := rdb.(*redis.Client).Options().ReadTimeout; rt != o.ReadTimeout {
		t.Errorf("the client's ReadTimeout became %v", rt)
	}
}

// TestReplicaSyncRefused: a server that refuses the WAIT itself (here an
// ACL without it) fails the acquisition with ErrReplicaSync that says the
// server's reason, not a timeout, and the acquisition is given back.
func TestReplicaSyncRefused(t *testing.T) {
	f := setup(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	if err := f.raw.Do(bg, "ACL", "SETUSER", "nowait", "on", ">nowaitPW", "~*", "&*", "+@all", "-wait").Err(); err != nil {
		t.Fatal(err)
	}
	// A server without WAITAOF refuses to name it.
	_ = f.raw.Do(bg, "ACL", "SETUSER", "nowait", "-waitaof").Err()
	o := f.env.Options()
	o.Username, o.Password = "nowait", "nowaitPW"
	rdb := redis.NewUniversalClient(o)
	t.Cleanup(func() { rdb.Close() })
	c, err := lockimpl.NewClient(bg, rdb, testOptions(lockimpl.Options{ReplicaSyncTimeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	l := c.NewOwner().Lock("refused")
	start := time.Now()
	got, err := l.TryLock(bg, lockimpl.TryLockOptions{})
	if got != nil || !errors.Is(err, lockimpl.ErrReplicaSync) {
		t.Fatalf("TryLock with WAIT refused = %v, %v; want ErrReplicaSync", got, err)
	}
	for _, want := range []string{"refused the replica-sync command", "NOPERM"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// Refused at once: the acquisition did not wait out the 10s timeout.
	if d := time.Since(start); d >= 10*time.Second {
		t.Errorf("failed after %v, as a timeout would", d)
	}
	f.wantAbsent(l.Name())
}

// freezeReplica pauses the replica (SIGSTOP) and returns its resume,
// which runs once, at the latest when the test ends.
func (f *fixture) freezeReplica() (resume func()) {
	f.t.Helper()
	replica := f.env.Replica()
	if err := replica.Pause(bg); err != nil {
		f.t.Fatal(err)
	}
	var once sync.Once
	resume = func() {
		once.Do(func() {
			if err := replica.Resume(bg); err != nil {
				f.t.Error(err)
			}
		})
	}
	f.t.Cleanup(resume)
	return resume
}
