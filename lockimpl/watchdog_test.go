package lockimpl_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
)

// watch is a short watchdog timeout, so that tests see several renewals.
const watch = time.Second

// observe checks cond continuously for d: a property that must hold over
// time (the test is about duration), not a sleep before an assertion.
func observe(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if !cond() {
			t.Fatalf("%s stopped holding after %v", what, d-time.Until(end))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWatchdogKeepsLockAlive(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{WatchdogTimeout: watch})
	for _, l := range []*lockimpl.Lock{
		c.NewOwner().Lock("reentrant"),
		c.NewOwner().FairLock("fair"),
		c.NewOwner().ReadWriteLock("rw").WriteLock(),
		c.NewOwner().ReadWriteLock("ro").ReadLock(),
	} {
		lock(t, l)
		f.wantPTTL(l.Name(), 0, watch)
	}
	if n := c.WatchdogLen(); n != 4 {
		t.Fatalf("watchdog renews %d holds, want 4", n)
	}
	// Three watchdog timeouts: without renewal every key would be gone.
	observe(t, 3*watch, "every lock", func() bool {
		return f.pttl("reentrant") > 0 && f.pttl("fair") > 0 && f.pttl("rw") > 0 && f.pttl("ro") > 0
	})
	if keys := f.keys("{ro}:*:rwlock_timeout:1"); len(keys) != 1 {
		t.Errorf("read hold's timeout key not kept alive: %v", keys)
	}
}

func TestWatchdogStopsAfterUnlock(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{WatchdogTimeout: watch})
	l := c.NewOwner().Lock("L")
	h := lock(t, l)
	reenter(t, h)
	lost := h.Lost()
	unlock(t, h)
	if c.WatchdogLen() != 1 {
		t.Error("a partial unlock stopped the renewal")
	}
	unlock(t, h)
	if c.WatchdogLen() != 0 {
		t.Error("the watchdog still renews a released hold")
	}
	if testkit.Closed(lost) {
		t.Error("releasing a hold closed its Lost channel")
	}
	if next := lock(t, l); next.Lost() == lost {
		t.Error("a new hold of the same lock got the old hold's Lost channel")
	}
}

// TestClosedClientLockExpires: a client that stops (closed or crashed)
// stops renewing; its lock expires within the watchdog timeout, and a
// waiting peer then gets it.
func TestClosedClientLockExpires(t *testing.T) {
	f := setup(t)
	dying := f.client(lockimpl.Options{WatchdogTimeout: watch})
	lock(t, dying.NewOwner().Lock("L"))
	observe(t, watch, "the renewed lock", func() bool { return f.pttl("L") > 0 })
	dying.Close()
	// Renewals every watch/3 would keep it forever; stopped, it is gone
	// within watch. The bound allows a loaded machine 2 more.
	waiter := f.client(lockimpl.Options{WatchdogTimeout: watch}).NewOwner().Lock("L")
	if _, err := waiter.TryLock(bg, lockimpl.TryLockOptions{Wait: 3 * watch}); err != nil {
		t.Fatalf("waiter TryLock: %v: the dead client's lock did not expire", err)
	}
}

// TestLockLeaseNeverRenewed: a fixed lease expires even with a watchdog
// running much faster, and the holder's Lost closes.
func TestLockLeaseNeverRenewed(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{WatchdogTimeout: 300 * time.Millisecond})
	h := lock(t, c.NewOwner().Lock("L"), lockimpl.LockOptions{Lease: 900 * time.Millisecond})
	if c.WatchdogLen() != 0 {
		t.Error("a fixed-lease hold was given to the watchdog")
	}
	testkit.Eventually(t, "the leased lock to expire", func() bool { return f.pttl("L") < 0 })
	testkit.WaitClosed(t, "Lost after the lease ran out", h.Lost())
}

// TestLostCheckedAfterFreeze: a holder waking from a freeze (GC pause)
// before its deadline timer has run still learns from Lost that the lease
// is over, because Lost consults the deadline itself.
func TestLostCheckedAfterFreeze(t *testing.T) {
	f := setup(t)
	h := lock(t, f.client(lockimpl.Options{WatchdogTimeout: watch}).NewOwner().Lock("L"), lockimpl.LockOptions{Lease: 300 * time.Millisecond})
	h.FreezeDeadlineTimer()
	testkit.Eventually(t, "the leased lock to expire", func() bool { return f.pttl("L") < 0 })
	if !testkit.Closed(h.Lost()) {
		t.Fatal("Lost still open after the lease expired in Redis")
	}
}

// TestFailedUnlockStopsRenewal: an unlock that never reached Redis (here:
// its context was already over) must not leave the watchdog renewing the
// lock forever for an owner that has let go. As in Redisson, renewal stops,
// the key expires within the lease, and the hold ends as lost. A re-entered
// hold keeps being renewed until its outermost unlock fails too.
func TestFailedUnlockStopsRenewal(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{WatchdogTimeout: watch})
	h := lock(t, c.NewOwner().Lock("L"))
	reenter(t, h)
	gone, cancel := context.WithCancel(bg)
	cancel()
	if err := h.Unlock(gone); err == nil {
		t.Fatal("an unlock with a cancelled context succeeded")
	}
	if testkit.Closed(h.Lost()) || c.WatchdogLen() != 1 {
		t.Fatalf("one failed unlock of two acquisitions ended the hold (lost %v, renewed %d)", testkit.Closed(h.Lost()), c.WatchdogLen())
	}
	lost := h.Lost()
	if err := h.Unlock(gone); err == nil {
		t.Fatal("an unlock with a cancelled context succeeded")
	}
	testkit.WaitClosed(t, "Lost after the last unlock failed", lost)
	if n := c.WatchdogLen(); n != 0 {
		t.Errorf("watchdog still renews %d holds", n)
	}
	testkit.Eventually(t, "the abandoned lock to expire", func() bool { return f.pttl("L") < 0 })
}

// TestReadRenewalOwnKeysOnly: the watchdog renews this owner's read holds,
// never another reader's (a crashed Redisson reader's holds still expire;
// the 4.4.0 "zombie renewal" fix).
func TestReadRenewalOwnKeysOnly(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{WatchdogTimeout: watch})
	r := c.NewOwner().ReadWriteLock("L").ReadLock()
	lock(t, r)
	// A reader of another (dead) client, as Redisson would have written it.
	f.raw.HSet(bg, "L", "dead:7", 1)
	foreign := "{L}:dead:7:rwlock_timeout:1"
	f.raw.Set(bg, foreign, 1, 2*watch)
	testkit.Eventually(t, "the dead reader's hold to expire", func() bool { return f.pttl(foreign) < 0 })
	observe(t, watch, "our read hold", func() bool {
		return f.pttl("L") > 0 && f.pttl(lockimpl.ReadTimeoutPrefix("L", r.Owner().ID())+":1") > 0
	})
}

func TestLostWhenRenewalFindsHoldGone(t *testing.T) {
	f := setup(t)
	lost := lock(t, f.client(lockimpl.Options{WatchdogTimeout: watch}).NewOwner().Lock("L")).Lost()
	if testkit.Closed(lost) {
		t.Fatal("Lost closed while held")
	}
	f.raw.Del(bg, "L") // an operator's DEL, or Redis losing the key
	testkit.WaitClosed(t, "Lost after the key vanished", lost)
}

// TestLostWhenRedisPaused: renewals cannot reach a paused Redis; Lost
// closes once the last renewal's send time plus the TTL has passed, not
// before.
func TestLostWhenRedisPaused(t *testing.T) {
	f := setup(t)
	h := lock(t, f.client(lockimpl.Options{WatchdogTimeout: watch}).NewOwner().Lock("L"))
	node := f.env.Primary()
	if err := node.Pause(bg); err != nil {
		t.Fatal(err)
	}
	defer node.Resume(bg)
	paused := time.Now()
	testkit.WaitClosed(t, "Lost while Redis is paused", h.Lost())
	// The last renewal was sent at most watch/3 before the pause, so the
	// deadline is at least 2/3 watch after it, and at most watch after it.
	took := time.Since(paused)
	if took < watch/2 {
		t.Errorf("Lost closed %v after the pause: before the lease could have expired", took)
	}
	if took > watch+time.Second {
		t.Errorf("Lost closed %v after the pause: later than the lease (%v) allows", took, watch)
	}
	t.Logf("Lost closed %v after Redis was paused (watchdog timeout %v)", took, watch)
}

// TestLostReadWriteSharedTTL: the read-write hash's TTL is shared; another
// client's read renewal (Redisson's too) sets it to that client's
// watchdog timeout. When that client dies, the hash expires under our
// longer read lease: Lost must close, though our own lease runs on.
func TestLostReadWriteSharedTTL(t *testing.T) {
	f := setup(t)
	ours := lock(t, f.client(lockimpl.Options{WatchdogTimeout: watch}).NewOwner().ReadWriteLock("L").ReadLock(), lockimpl.LockOptions{Lease: time.Minute})
	// Short against our minute, yet long enough that a loaded host's
	// scheduling delay does not outlast it: a renewal later than its lease
	// ends the other reader's hold instead of shortening the hash.
	const shortWatch = 2 * time.Second
	short := f.client(lockimpl.Options{WatchdogTimeout: shortWatch})
	lock(t, short.NewOwner().ReadWriteLock("L").ReadLock())
	testkit.Eventually(t, "the other reader's renewal to shorten the hash", func() bool { return f.pttl("L") <= shortWatch })
	short.Close()
	testkit.WaitClosed(t, "our read hold's Lost after the shared hash expired", ours.Lost())
}

// TestLostWriteShortenedByOwnRead: this owner's own read renewal shortens
// the hash its long write lease lives in (as in Redisson); the write
// hold's Lost follows the hash, not the write lease.
func TestLostWriteShortenedByOwnRead(t *testing.T) {
	f := setup(t)
	rw := f.client(lockimpl.Options{WatchdogTimeout: watch}).NewOwner().ReadWriteLock("L")
	write := lock(t, rw.WriteLock(), lockimpl.LockOptions{Lease: time.Minute})
	read := lock(t, rw.ReadLock())
	testkit.Eventually(t, "the read renewal to shorten the hash", func() bool { return f.pttl("L") <= watch })
	unlock(t, read)
	// Nothing renews the hash now, so it expires long before the write
	// lease's minute.
	testkit.Eventually(t, "hash expired", func() bool { return f.pttl("L") < 0 })
	testkit.WaitClosed(t, "the write hold's Lost", write.Lost())
}

// TestWatchdogAfterRestart: a Redis restarted with AOF keeps the lock but
// not the script cache; the watchdog's renewals meet NOSCRIPT, resend the
// scripts and keep the hold alive.
func TestWatchdogAfterRestart(t *testing.T) {
	f := setup(t, redisenv.Config{AppendOnly: true, AppendFsync: "always"})
	const w = 1500 * time.Millisecond
	h := lock(t, f.client(lockimpl.Options{WatchdogTimeout: w}).NewOwner().Lock("L"))
	if err := f.env.Primary().Restart(bg); err != nil {
		t.Fatal(err)
	}
	observe(t, 2*w, "the lock across the restart", func() bool { return f.pttl("L") > 0 && !testkit.Closed(h.Lost()) })
}

// TestLostUnlockRetried: a last unlock that never reached Redis (its
// context was over) is re-sent in the background with its latch, so the
// lock is released and a waiter woken long before the minute-long lease
// would have run out.
func TestLostUnlockRetried(t *testing.T) {
	f := setup(t)
	opts := lockimpl.Options{WatchdogTimeout: time.Minute}
	h := lock(t, f.client(opts).NewOwner().Lock("L"))
	waiter := f.client(opts).NewOwner().Lock("L")
	got := make(chan error, 1)
	go func() {
		held, err := waiter.TryLock(bg, lockimpl.TryLockOptions{Wait: testkit.Patience})
		if err == nil {
			err = held.Unlock(bg)
		}
		got <- err
	}()
	gone, cancel := context.WithCancel(bg)
	cancel()
	if err := h.Unlock(gone); err == nil {
		t.Fatal("an unlock with a cancelled context succeeded")
	}
	start := time.Now()
	recvOK(t, got, testkit.Patience, "the waiter to get the lock the retried unlock released")
	t.Logf("the waiter acquired %v after the lost unlock (the lease was %v)", time.Since(start).Round(time.Millisecond), opts.WatchdogTimeout)
}

// TestResentUnlockSparesANewHold: an unlock whose outcome is unknown is
// re-sent in the background, and the unlock script knows the owner, not
// the hold. Here the lost unlock's hold has expired meanwhile (the key is
// gone) and the same owner takes the lock again at once: the re-sent
// unlock must land before that acquisition, not release it after, or
// another owner would take the lock while this one holds it.
func TestResentUnlockSparesANewHold(t *testing.T) {
	f := setup(t)
	opts := lockimpl.Options{WatchdogTimeout: time.Minute}
	l := f.client(opts).NewOwner().Lock("L")
	h := lock(t, l)
	gone, cancel := context.WithCancel(bg)
	cancel()
	if err := h.Unlock(gone); err == nil {
		t.Fatal("an unlock with a cancelled context succeeded")
	}
	if err := f.raw.Del(bg, "L").Err(); err != nil { // the lost hold expires
		t.Fatal(err)
	}
	again := lock(t, l)
	defer again.Unlock(bg)
	other, err := f.client(opts).NewOwner().Lock("L").TryLock(bg, lockimpl.TryLockOptions{Wait: time.Second})
	if err == nil {
		other.Unlock(bg)
		t.Fatal("another owner took the lock while this owner held it again: the re-sent unlock released the new hold")
	}
	if !errors.Is(err, lockimpl.ErrNotAcquired) {
		t.Fatal(err)
	}
	if held, err := l.IsHeldByOwner(bg); err != nil || !held {
		t.Errorf("the new hold: held %v, %v", held, err)
	}
}

// TestReenterRacingLossLeavesNoOrphan: a re-entry whose reply comes back
// after its hold was declared lost (every reply of the holder's client
// delayed past the watchdog timeout, so renewals come back too late) must
// not land in a new hold that nobody holds. It fails with ErrNotHeld, the
// hold is lost, the re-entry is given back and nothing renews the lock
// any more: another owner gets it once the key expires, and the same owner
// can take it again.
func TestReenterRacingLossLeavesNoOrphan(t *testing.T) {
	for _, kind := range []string{"reentrant", "fair", "read"} {
		t.Run(kind, func(t *testing.T) {
			f := setup(t)
			tp := faults.NewEmbedded()
			t.Cleanup(func() { tp.Close() })
			proxy, err := tp.NewProxy("holder", f.env.Addr())
			if err != nil {
				t.Fatal(err)
			}
			rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ReadTimeout: 10 * time.Second, MaxRetries: -1})
			t.Cleanup(func() { rdb.Close() })
			slow, err := lockimpl.NewClient(bg, rdb, testOptions(lockimpl.Options{WatchdogTimeout: watch}))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { slow.Close() })
			other := f.client(lockimpl.Options{WatchdogTimeout: watch})
			pick := func(o *lockimpl.Owner) *lockimpl.Lock {
				switch kind {
				case "fair":
					return o.FairLock("race")
				case "read":
					return o.ReadWriteLock("race").ReadLock()
				}
				return o.Lock("race")
			}
			exclusive := func(o *lockimpl.Owner) *lockimpl.Lock {
				if kind == "read" {
					return o.ReadWriteLock("race").WriteLock()
				}
				return pick(o)
			}
			owner := slow.NewOwner()
			h := lock(t, pick(owner))

			// Every reply from Redis now takes 1.5 watchdog timeouts: the
			// hold's deadline passes before the re-entry's reply arrives.
			if err := proxy.AddToxic(faults.Toxic{Name: "late", Type: "latency", Stream: "downstream",
				Attributes: map[string]int64{"latency": (watch * 3 / 2).Milliseconds()}}); err != nil {
				t.Fatal(err)
			}
			err = h.Reenter(testkit.Context(t))
			if err == nil {
				t.Fatalf("Reenter answered after the hold's deadline = nil (count %d, lost %v); want ErrNotHeld", h.Count(), testkit.Closed(h.Lost()))
			}
			if !errors.Is(err, lockimpl.ErrNotHeld) || !strings.HasPrefix(err.Error(), "lockimpl: re-enter ") {
				t.Fatalf("Reenter = %v, want ErrNotHeld from re-enter", err)
			}
			if !testkit.Closed(h.Lost()) || h.Count() != 0 {
				t.Errorf("after the failed re-entry: lost %v, count %d; want lost, 0", testkit.Closed(h.Lost()), h.Count())
			}
			if err := proxy.RemoveToxic(bg, "late"); err != nil {
				t.Fatal(err)
			}
			// Nothing renews the lock: another owner gets it within its TTL.
			got, err := exclusive(other.NewOwner()).TryLock(testkit.Context(t), lockimpl.TryLockOptions{Wait: 5 * watch})
			if err != nil {
				t.Fatalf("another owner after the lost hold: %v (the lock is still renewed: %d holds in the watchdog)", err, slow.WatchdogLen())
			}
			if n := slow.WatchdogLen(); n != 0 {
				t.Errorf("%d holds still renewed by the holder's client", n)
			}
			unlock(t, got)
			// And the owner itself is not refused with ErrHeld.
			again, err := pick(owner).TryLock(testkit.Context(t), lockimpl.TryLockOptions{Wait: 5 * watch})
			if err != nil {
				t.Fatalf("the same owner again: %v", err)
			}
			unlock(t, again)
			f.wantAbsent("race")
		})
	}
}
