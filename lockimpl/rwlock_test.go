package lockimpl_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
)

func timeoutKey(name, owner string, n int) string {
	return lockimpl.ReadTimeoutPrefix(name, owner) + ":" + itoa(n)
}

// TestReadLockSeed follows seed 000's read acquire sequence (V-000-01):
// every read hold gets its own timeout key; a second owner shares.
func TestReadLockSeed(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	a, b := c.NewOwner(), c.NewOwner()
	ra, rb := a.ReadWriteLock("myLock").ReadLock(), b.ReadWriteLock("myLock").ReadLock()
	steps := []struct {
		l    *lockimpl.Lock
		hash map[string]string
		keys []string
	}{
		{ra, map[string]string{"mode": "read", a.ID(): "1"}, []string{timeoutKey("myLock", a.ID(), 1)}},
		{ra, map[string]string{"mode": "read", a.ID(): "2"}, []string{timeoutKey("myLock", a.ID(), 1), timeoutKey("myLock", a.ID(), 2)}},
		{rb, map[string]string{"mode": "read", a.ID(): "2", b.ID(): "1"},
			[]string{timeoutKey("myLock", a.ID(), 1), timeoutKey("myLock", a.ID(), 2), timeoutKey("myLock", b.ID(), 1)}},
	}
	full := lockimpl.DefaultWatchdogTimeout
	holds := map[*lockimpl.Lock]*lockimpl.Hold{}
	for i, s := range steps {
		var err error
		if h := holds[s.l]; h != nil {
			err = h.Reenter(bg)
		} else {
			holds[s.l], err = s.l.Lock(bg, lockimpl.LockOptions{})
		}
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		f.wantHash("myLock", s.hash)
		f.wantPTTL("myLock", full-5*time.Second, full)
		want := slices.Clone(s.keys)
		slices.Sort(want)
		if got := f.keys("{myLock}:*"); !slices.Equal(got, want) {
			t.Fatalf("step %d: timeout keys %v, want %v", i+1, got, want)
		}
		for _, k := range s.keys {
			if f.str(k) != "1" {
				t.Errorf("%s != 1", k)
			}
			f.wantPTTL(k, full-5*time.Second, full)
		}
	}
	if locked, _ := ra.IsLocked(bg); !locked {
		t.Error("read IsLocked false in read mode")
	}
	if locked, _ := a.ReadWriteLock("myLock").WriteLock().IsLocked(bg); locked {
		t.Error("write IsLocked true in read mode")
	}
}

// TestReadWriteCombinations is seed 000's table of the 8 combinations:
// same or different owner, read or write first and second.
func TestReadWriteCombinations(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sameOwner   bool
		first, then string // "read" or "write"
		allowed     bool
	}{
		{"different read-read", false, "read", "read", true},
		{"different read-write", false, "read", "write", false},
		{"different write-read", false, "write", "read", false},
		{"different write-write", false, "write", "write", false},
		{"same read-read", true, "read", "read", true},
		{"same read-write (upgrade)", true, "read", "write", false},
		{"same write-read (downgrade)", true, "write", "read", true},
		{"same write-write", true, "write", "write", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			c := f.client(lockimpl.Options{})
			a := c.NewOwner()
			b := a
			if !tc.sameOwner {
				b = f.client(lockimpl.Options{}).NewOwner()
			}
			pick := func(o *lockimpl.Owner, m string) *lockimpl.Lock {
				if m == "read" {
					return o.ReadWriteLock("myLock").ReadLock()
				}
				return o.ReadWriteLock("myLock").WriteLock()
			}
			first := lock(t, pick(a, tc.first))
			before := f.hash("myLock")
			beforeTTL := f.pttl("myLock")
			var ok bool
			var err error
			if tc.sameOwner && tc.first == tc.then {
				// The same owner's second acquisition is a re-entry.
				err = first.Reenter(bg)
				ok = err == nil
			} else {
				var h *lockimpl.Hold
				h, err = tryOnce(pick(b, tc.then))
				ok = h != nil
			}
			if tc.sameOwner && tc.first == "read" && tc.then == "write" {
				// The upgrade is refused outright: waiting would wait for itself.
				if ok || !errors.Is(err, lockimpl.ErrUpgrade) {
					t.Fatalf("upgrade: %v, %v; want ErrUpgrade", ok, err)
				}
			} else if ok != tc.allowed || err != nil {
				t.Fatalf("second acquire = %v, %v; want %v", ok, err, tc.allowed)
			}
			if !tc.allowed {
				f.wantHash("myLock", before)
				return
			}
			want := map[string]string{"mode": tc.first}
			switch {
			case tc.first == "read" && tc.sameOwner:
				want[a.ID()] = "2"
			case tc.first == "read":
				want[a.ID()], want[b.ID()] = "1", "1"
			case tc.then == "read": // write then own read: mode stays write
				want[a.ID()+":write"], want[a.ID()] = "1", "1"
			default: // write re-entry adds the lease to what is left
				want[a.ID()+":write"] = "2"
				lo := beforeTTL + lockimpl.DefaultWatchdogTimeout - 5*time.Second
				f.wantPTTL("myLock", lo, beforeTTL+lockimpl.DefaultWatchdogTimeout)
			}
			f.wantHash("myLock", want)
		})
	}
}

// TestUpgradeRefusedBlocking: Lock (which would wait forever on itself)
// refuses the upgrade at once.
func TestUpgradeRefusedBlocking(t *testing.T) {
	f := setup(t)
	rw := f.client(lockimpl.Options{}).NewOwner().ReadWriteLock("L")
	read := lock(t, rw.ReadLock())
	if _, err := rw.WriteLock().Lock(bg, lockimpl.LockOptions{}); !errors.Is(err, lockimpl.ErrUpgrade) {
		t.Fatalf("write Lock while holding the read: %v, want ErrUpgrade", err)
	}
	unlock(t, read)
	if _, err := rw.WriteLock().Lock(bg, lockimpl.LockOptions{}); err != nil {
		t.Fatalf("write Lock after releasing the read: %v", err)
	}
}

// TestReadUnlockRecomputesTTL: after a read hold ends, the hash lives as
// long as the longest remaining read hold (seed 004's 25 s / 30 s example,
// seed 000 V-000-09 and seed 002).
func TestReadUnlockRecomputesTTL(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	a, b := c.NewOwner(), c.NewOwner()
	ra, rb := a.ReadWriteLock("L").ReadLock(), b.ReadWriteLock("L").ReadLock()
	short, long := 20*time.Second, 60*time.Second
	ha, err := ra.TryLock(bg, lockimpl.TryLockOptions{Lease: short})
	if err != nil {
		t.Fatal(err)
	}
	reenter(t, ha) // with the hold's lease
	hb, err := rb.TryLock(bg, lockimpl.TryLockOptions{Lease: long})
	if err != nil {
		t.Fatal(err)
	}
	f.wantPTTL("L", long-5*time.Second, long) // max(remaining, lease)
	rec := f.record(false, lockimpl.RWLockChannel("L"))

	// B leaves: the hash now lives as long as A's holds.
	unlock(t, hb)
	f.wantHash("L", map[string]string{"mode": "read", a.ID(): "2"})
	f.wantPTTL("L", short-5*time.Second, short)
	f.wantAbsent(timeoutKey("L", b.ID(), 1))

	// A's newest hold goes first (its key :2), then the last one.
	unlock(t, ha)
	f.wantHash("L", map[string]string{"mode": "read", a.ID(): "1"})
	f.wantAbsent(timeoutKey("L", a.ID(), 2))
	if f.str(timeoutKey("L", a.ID(), 1)) != "1" {
		t.Error("A's first read hold key is gone")
	}
	if got := rec.sync(f); len(got) != 0 {
		t.Errorf("partial read unlocks published %v", got)
	}
	unlock(t, ha)
	f.wantAbsent("L", timeoutKey("L", a.ID(), 1))
	if got := rec.sync(f); !slices.Equal(got, []string{"redisson_rwlock:{L}=0"}) {
		t.Errorf("last read unlock published %v, want one 0", got)
	}
	if err := ha.Unlock(bg); !errors.Is(err, lockimpl.ErrNotHeld) {
		t.Errorf("read unlock of nothing: %v, want ErrNotHeld", err)
	}
}

// TestWriteUnlockSeed is V-000-11 and V-000-10: the write holder also
// reading; releasing its read keeps write mode; releasing the write with a
// read left switches to read mode; the last read unlock deletes the lock.
func TestWriteUnlockSeed(t *testing.T) {
	f := setup(t)
	a := f.client(lockimpl.Options{}).NewOwner()
	w, r := a.ReadWriteLock("myLock").WriteLock(), a.ReadWriteLock("myLock").ReadLock()
	wf := a.ID() + ":write"
	rec := f.record(false, lockimpl.RWLockChannel("myLock"))
	wh := lock(t, w)
	reenter(t, wh)
	lock(t, r)
	f.wantHash("myLock", map[string]string{"mode": "write", wf: "2", a.ID(): "1"})

	unlock(t, wh) // 2 -> 1: TTL reset to the lease
	f.wantHash("myLock", map[string]string{"mode": "write", wf: "1", a.ID(): "1"})
	f.wantPTTL("myLock", lockimpl.DefaultWatchdogTimeout-5*time.Second, lockimpl.DefaultWatchdogTimeout)

	// Another owner cannot read while the mode is write.
	if h, _ := tryOnce(f.client(lockimpl.Options{}).NewOwner().ReadWriteLock("myLock").ReadLock()); h != nil {
		t.Fatal("another owner read during a write hold")
	}
	if got := rec.sync(f); len(got) != 0 {
		t.Errorf("partial write unlock published %v", got)
	}
	unlock(t, wh) // last write hold, a read left: read mode
	f.wantHash("myLock", map[string]string{"mode": "read", a.ID(): "1"})
	if got := rec.sync(f); !slices.Equal(got, []string{"redisson_rwlock:{myLock}=1"}) {
		t.Errorf("write unlock to read mode published %v, want 1 (wake readers)", got)
	}
	if h, _ := tryOnce(f.client(lockimpl.Options{}).NewOwner().ReadWriteLock("myLock").ReadLock()); h == nil {
		t.Error("another owner cannot read after the write hold ended")
	}
}

// TestReadUnlockUnderOwnWrite is V-000-10 / seed 002 scenario 2: releasing
// the read the write holder took leaves the write hold as it was.
func TestReadUnlockUnderOwnWrite(t *testing.T) {
	f := setup(t)
	a := f.client(lockimpl.Options{}).NewOwner()
	w, r := a.ReadWriteLock("L").WriteLock(), a.ReadWriteLock("L").ReadLock()
	wh := lock(t, w)
	rh := lock(t, r)
	unlock(t, rh)
	f.wantHash("L", map[string]string{"mode": "write", a.ID() + ":write": "1"})
	f.wantAbsent(timeoutKey("L", a.ID(), 1))
	if testkit.Closed(rh.Lost()) {
		t.Error("releasing the read hold closed a Lost channel")
	}
	rec := f.record(false, lockimpl.RWLockChannel("L"))
	unlock(t, wh)
	f.wantAbsent("L")
	if got := rec.sync(f); !slices.Equal(got, []string{"redisson_rwlock:{L}=1"}) {
		t.Errorf("write unlock published %v, want one 1", got)
	}
	// The read hold is over, so taking the write again is no upgrade.
	if _, err := w.Lock(bg, lockimpl.LockOptions{}); err != nil {
		t.Fatalf("write Lock after write-read-unlock-unlock: %v", err)
	}
}

// TestWriteUnlockWakesAllReaders: "1" wakes every waiting reader of a
// client at once, not one per message.
func TestWriteUnlockWakesAllReaders(t *testing.T) {
	f := setup(t)
	writer := lock(t, f.client(lockimpl.Options{}).NewOwner().ReadWriteLock("L").WriteLock())
	rc := f.client(lockimpl.Options{})
	const readers = 4
	got := make(chan error, readers)
	held := make(chan *lockimpl.Hold, readers)
	for range readers {
		r := rc.NewOwner().ReadWriteLock("L").ReadLock()
		go func() {
			h, err := r.Lock(bg, lockimpl.LockOptions{})
			got <- err
			if err == nil {
				held <- h
			}
		}()
	}
	testkit.Eventually(t, "readers waiting", func() bool { return rc.SubscriptionRefs(lockimpl.RWLockChannel("L")) == readers })
	unlock(t, writer)
	for range readers {
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(testkit.Patience):
			t.Fatal("not every reader was woken by the write unlock")
		}
	}
	// All four read at once: shared.
	if h := f.hash("L"); len(h) != readers+1 || h["mode"] != "read" {
		t.Errorf("hash after the readers acquired: %v", h)
	}
	for range readers {
		unlock(t, <-held)
	}
}

// TestInteropReadWrite: read holds written as Redisson writes them (with
// their timeout keys) are honoured by their owner and block writers.
func TestInteropReadWrite(t *testing.T) {
	f := setup(t)
	const javaID = "23d25595-6532-4105-a24b-98fea0997bc5"
	owner := javaID + ":1"
	f.raw.HSet(bg, "11_come", "mode", "read", owner, 1)
	f.raw.PExpire(bg, "11_come", 30*time.Second)
	f.raw.Set(bg, "{11_come}:"+owner+":rwlock_timeout:1", 1, 30*time.Second)

	writer := f.client(lockimpl.Options{}).NewOwner().ReadWriteLock("11_come").WriteLock()
	if h, _ := tryOnce(writer); h != nil {
		t.Fatal("a writer got in past a Redisson reader")
	}
	r := lock(t, f.client(lockimpl.Options{ID: javaID}).NewOwner().ReadWriteLock("11_come").ReadLock())
	f.wantHash("11_come", map[string]string{"mode": "read", owner: "2"})
	// The owner knows of one acquisition; its unlock gives back what Redis
	// counts under its identity (see TestOrphanedAcquisitionReleased).
	unlock(t, r)
	f.wantAbsent("11_come", "{11_come}:"+owner+":rwlock_timeout:1")
	if h, _ := tryOnce(writer); h == nil {
		t.Error("writer refused after the reader left")
	}
}

func TestForceUnlock(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	a, b := c.NewOwner(), c.NewOwner()
	ah := lock(t, a.Lock("L"))
	if ok, err := b.Lock("L").ForceUnlock(bg); !ok || err != nil {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	f.wantAbsent("L")
	if ok, _ := b.Lock("L").ForceUnlock(bg); ok {
		t.Error("ForceUnlock of nothing reported true")
	}
	if err := ah.Unlock(bg); !errors.Is(err, lockimpl.ErrNotHeld) {
		t.Errorf("unlock after a force unlock: %v, want ErrNotHeld", err)
	}

	// A read force-unlock does nothing to a write hold, and vice versa.
	rw := a.ReadWriteLock("RW")
	lock(t, rw.WriteLock())
	if ok, _ := b.ReadWriteLock("RW").ReadLock().ForceUnlock(bg); ok {
		t.Error("read ForceUnlock deleted a write hold")
	}
	if ok, _ := b.ReadWriteLock("RW").WriteLock().ForceUnlock(bg); !ok {
		t.Error("write ForceUnlock failed on a write hold")
	}
}
