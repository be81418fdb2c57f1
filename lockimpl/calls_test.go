package lockimpl_test

import (
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/lockimpl/protocol"
)

// TestNewOwnerIDIsShapedAsAnOwners: the baselines' owner ids have a lockimpl
// owner's form, a fresh Java UUID and the thread, so that Redis works on
// arguments of the same size for both.
func TestNewOwnerIDIsShapedAsAnOwners(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}:[0-9]+$`)
	c := setup(t).client(lockimpl.Options{})
	owner := c.NewOwner().ID()
	a, b := protocol.NewOwnerID(1), protocol.NewOwnerID(1)
	for _, id := range []string{owner, a} {
		if !form.MatchString(id) {
			t.Errorf("owner id %q is not a Java UUID and a thread number", id)
		}
	}
	if a == b || a[:36] == owner[:36] {
		t.Errorf("NewOwnerID gave %q and %q beside the client's %q; want a fresh UUID each", a, b, owner)
	}
}

// TestCallsAreWhatLockSends: protocol's calls (the raw baseline's and
// redis-benchmark's) make the same Redis state as Lock, and lockimpl
// owners and waiters see them as peers: a hold by Calls excludes a Lock
// owner, and an unlock by Calls wakes a lockimpl waiter through pub/sub.
func TestCallsAreWhatLockSends(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	owner := c.NewOwner()
	const lease = time.Minute // far longer than the test waits: a wake-up is pub/sub, not expiry

	acq, unl, err := protocol.Calls(lockimpl.Reentrant, "L", owner.ID(), lease, protocol.LatchKey("L", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := acq.Run(bg, f.raw).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("acquire by Calls: %v, want nil reply (acquired)", err)
	}
	f.wantHash("L", map[string]string{owner.ID(): "1"})
	f.wantPTTL("L", lease-5*time.Second, lease)
	if held, err := owner.Lock("L").IsHeldByOwner(bg); err != nil || !held {
		t.Fatalf("IsHeldByOwner after acquire by Calls = %v, %v; want true", held, err)
	}

	waiter := f.client(lockimpl.Options{}).NewOwner()
	got := make(chan error, 1)
	held := make(chan *lockimpl.Hold, 1)
	go func() {
		h, err := waiter.Lock("L").TryLock(bg, lockimpl.TryLockOptions{Wait: testkit.Patience, Lease: lease})
		held <- h
		got <- err
	}()
	f.waitSubscribed(waiter.Client(), lockimpl.LockChannel("L"), false, 1)
	if n, err := unl.Run(bg, f.raw).Int64(); err != nil || n != 1 {
		t.Fatalf("unlock by Calls = %d, %v; want 1 (released)", n, err)
	}
	recvOK(t, got, testkit.Patience, "lockimpl waiter woken by the unlock of Calls")
	f.wantHash("L", map[string]string{waiter.ID(): "1"})

	// Not held by owner any more: a fresh latch replies nil.
	unl.Keys[len(unl.Keys)-1] = protocol.LatchKey("L", "r2")
	if err := unl.Run(bg, f.raw).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("unlock of a lock not held: %v, want nil reply", err)
	}
	unlock(t, <-held)
}

// TestCallsReadWrite: write then read by Calls, with the hash and the
// read hold's timeout key as Redisson writes them.
func TestCallsReadWrite(t *testing.T) {
	f := setup(t)
	const lease = 30 * time.Second
	wAcq, wUnl, err := protocol.Calls(lockimpl.Write, "RW", "w:1", lease, protocol.LatchKey("RW", "a"))
	if err != nil {
		t.Fatal(err)
	}
	rAcq, rUnl, err := protocol.Calls(lockimpl.Read, "RW", "r:1", lease, protocol.LatchKey("RW", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if err := wAcq.Run(bg, f.raw).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("write acquire: %v", err)
	}
	f.wantHash("RW", map[string]string{"mode": "write", "w:1:write": "1"})
	if ttl, err := rAcq.Run(bg, f.raw).Int64(); err != nil || ttl <= 0 {
		t.Fatalf("read acquire under a write hold = %d, %v; want the TTL", ttl, err)
	}
	if n, err := wUnl.Run(bg, f.raw).Int64(); err != nil || n != 1 {
		t.Fatalf("write unlock = %d, %v", n, err)
	}
	if err := rAcq.Run(bg, f.raw).Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("read acquire: %v", err)
	}
	f.wantHash("RW", map[string]string{"mode": "read", "r:1": "1"})
	f.wantPTTL("{RW}:r:1:rwlock_timeout:1", lease-5*time.Second, lease)
	if n, err := rUnl.Run(bg, f.raw).Int64(); err != nil || n != 1 {
		t.Fatalf("read unlock = %d, %v", n, err)
	}
	f.wantAbsent("RW", "{RW}:r:1:rwlock_timeout:1")

	if _, _, err := protocol.Calls(lockimpl.Fair, "F", "o:1", lease, ""); err == nil {
		t.Error("Calls accepted the fair kind")
	}
	if _, _, err := protocol.Calls(lockimpl.Reentrant, "F", "o:1", 0, ""); err == nil {
		t.Error("Calls accepted a zero lease")
	}
}
