package lockimpl_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/lockimpl/protocol"
)

func TestIdentity(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	if len(c.ID()) != 36 || strings.Count(c.ID(), "-") != 4 {
		t.Errorf("client id %q is not a UUID", c.ID())
	}
	a, b := c.NewOwner(), c.NewOwner()
	if a.ID() != c.ID()+":1" || b.ID() != c.ID()+":2" {
		t.Errorf("owner ids %q, %q; want %s:1 and :2", a.ID(), b.ID(), c.ID())
	}
	if c2 := f.client(lockimpl.Options{}); c2.ID() == c.ID() {
		t.Error("two clients share a UUID")
	}
	if c.PublishCommand() != "PUBLISH" {
		t.Errorf("publish command on a single node = %s, want PUBLISH", c.PublishCommand())
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{lockimpl.LockChannel("myLock"), "redisson_lock__channel:{myLock}"},
		{lockimpl.LockChannel("{a}b"), "redisson_lock__channel:{a}b"},
		{lockimpl.RWLockChannel("myLock"), "redisson_rwlock:{myLock}"},
		{lockimpl.FairQueueKey("myLock"), "redisson_lock_queue:{myLock}"},
		{lockimpl.FairTimeoutKey("myLock"), "redisson_lock_timeout:{myLock}"},
		{lockimpl.ReadTimeoutPrefix("myLock", "u:1"), "{myLock}:u:1:rwlock_timeout"},
		{lockimpl.ReadTimeoutPrefix("{a}b", "u:1"), "{a}b:u:1:rwlock_timeout"},
		{lockimpl.UnlockLatchKey("myLock", "ab12"), "redisson_unlock_latch:{myLock}:ab12"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestReentrantSeed follows seed 003's lock x3 / unlock x3 walkthrough
// (V-003-02): the count goes up and down, each step resets the PTTL to the
// lease, the last unlock deletes the key and publishes "0".
func TestReentrantSeed(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	a := c.NewOwner()
	l := a.Lock("myLock")
	rec := f.record(false, "redisson_lock__channel:{myLock}")
	full := lockimpl.DefaultWatchdogTimeout

	var h *lockimpl.Hold
	for n := 1; n <= 3; n++ {
		if n == 1 {
			h = lock(t, l)
		} else {
			reenter(t, h)
		}
		if h.Count() != n {
			t.Errorf("Hold.Count = %d, want %d", h.Count(), n)
		}
		f.wantHash("myLock", map[string]string{a.ID(): itoa(n)})
		f.wantPTTL("myLock", full-5*time.Second, full)
		if hc, _ := l.HoldCount(bg); hc != n {
			t.Errorf("HoldCount = %d, want %d", hc, n)
		}
	}
	for n := 2; n >= 1; n-- {
		unlock(t, h)
		f.wantHash("myLock", map[string]string{a.ID(): itoa(n)})
		f.wantPTTL("myLock", full-5*time.Second, full)
	}
	if got := rec.sync(f); len(got) != 0 {
		t.Errorf("partial unlocks published %v", got)
	}
	unlock(t, h)
	f.wantAbsent("myLock")
	if got := rec.sync(f); !slices.Equal(got, []string{"redisson_lock__channel:{myLock}=0"}) {
		t.Errorf("final unlock published %v, want one 0 on the lock channel", got)
	}
	// Each unlock left a latch; the client deletes them once answered.
	testkit.Eventually(t, "latch keys deleted", func() bool { return len(f.keys("redisson_unlock_latch:*")) == 0 })
	if err := h.Unlock(bg); !errors.Is(err, lockimpl.ErrNotHeld) {
		t.Errorf("unlock of a released lock: %v, want ErrNotHeld", err)
	}
	if err := h.Reenter(bg); !errors.Is(err, lockimpl.ErrNotHeld) {
		t.Errorf("re-entry of a released hold: %v, want ErrNotHeld", err)
	}
	if h.Count() != 0 {
		t.Errorf("Count of a released hold = %d, want 0", h.Count())
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

// TestReentrantExclusion: other owners, of the same client or another, are
// refused while the state stays as it was; their unlock is ErrNotHeld and
// changes nothing (V-003-03, V-003-04).
func TestReentrantExclusion(t *testing.T) {
	f := setup(t)
	c1, c2 := f.client(lockimpl.Options{}), f.client(lockimpl.Options{})
	a := c1.NewOwner()
	lock(t, a.Lock("L"))
	want := map[string]string{a.ID(): "1"}
	for _, other := range []*lockimpl.Owner{c1.NewOwner(), c2.NewOwner()} {
		h, err := other.Lock("L").TryLock(bg, lockimpl.TryLockOptions{})
		if h != nil || !errors.Is(err, lockimpl.ErrNotAcquired) {
			t.Fatalf("%s TryLock of a held lock = %v, %v; want ErrNotAcquired", other.ID(), h, err)
		}
		if held, _ := other.Lock("L").IsHeldByOwner(bg); held {
			t.Error("IsHeldByOwner true for a non-holder")
		}
		f.wantHash("L", want)
	}
	if locked, _ := c2.NewOwner().Lock("L").IsLocked(bg); !locked {
		t.Error("IsLocked = false while held")
	}
	ttl, err := c2.NewOwner().Lock("L").RemainTTL(bg)
	if err != nil || ttl <= 0 || ttl > lockimpl.DefaultWatchdogTimeout {
		t.Errorf("RemainTTL = %v, %v", ttl, err)
	}
	if ttl, _ := a.Lock("nope").RemainTTL(bg); ttl != 0 {
		t.Errorf("RemainTTL of a missing lock = %v, want 0", ttl)
	}
}

// TestPartialUnlockKeepsLease: a lock taken with a fixed lease keeps that
// lease on partial unlock, not the watchdog timeout (Redisson #5623).
func TestPartialUnlockKeepsLease(t *testing.T) {
	f := setup(t)
	a := f.client(lockimpl.Options{}).NewOwner()
	l := a.Lock("L")
	lease := 10 * time.Second
	h := lock(t, l, lockimpl.LockOptions{Lease: lease})
	reenter(t, h) // with the hold's lease
	f.wantHash("L", map[string]string{a.ID(): "2"})
	f.wantPTTL("L", lease-3*time.Second, lease)
	unlock(t, h)
	f.wantHash("L", map[string]string{a.ID(): "1"})
	f.wantPTTL("L", lease-3*time.Second, lease)
}

// TestWaiterWokenByUnlock: a waiter acquires right after the unlock, long
// before the holder's TTL would end, and one subscription serves every
// waiting owner of a client.
func TestWaiterWokenByUnlock(t *testing.T) {
	f := setup(t)
	holderC, waitC := f.client(lockimpl.Options{}), f.client(lockimpl.Options{})
	holder := lock(t, holderC.NewOwner().Lock("L")) // TTL 30 s
	channel := lockimpl.LockChannel("L")
	const waiters = 3
	acquired := make(chan *lockimpl.Hold, waiters)
	errs := make(chan error, waiters)
	for range waiters {
		l := waitC.NewOwner().Lock("L")
		go func() {
			h, err := l.Lock(bg, lockimpl.LockOptions{})
			if err != nil {
				errs <- err
				return
			}
			acquired <- h
		}()
	}
	// The three owners share one subscription: Redis sees one subscriber.
	f.waitSubscribed(waitC, channel, false, waiters)

	// Hand the lock down the chain; each handoff must come from the
	// message, far sooner than the 30 s TTL.
	start := time.Now()
	if err := holder.Unlock(bg); err != nil {
		t.Fatal(err)
	}
	for range waiters {
		select {
		case h := <-acquired:
			unlock(t, h)
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(testkit.Patience):
			t.Fatal("a waiter was not woken by the unlock")
		}
	}
	took := time.Since(start)
	if took > lockimpl.DefaultWatchdogTimeout/3 {
		t.Errorf("three handoffs took %v: waiters waited for TTLs, not messages", took)
	}
	t.Logf("three pub/sub handoffs took %v (the holder's TTL was %v)", took, lockimpl.DefaultWatchdogTimeout)
	testkit.Eventually(t, "subscription released", func() bool { return waitC.SubscriptionRefs(channel) == 0 })
	// Unused, it is unsubscribed after a grace period.
	testkit.Eventually(t, "channel unsubscribed", func() bool {
		n, err := f.raw.PubSubNumSub(bg, channel).Result()
		return err == nil && n[channel] == 0
	})
}

func TestTryLockWait(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	lock(t, c.NewOwner().Lock("L"))
	other := c.NewOwner().Lock("L")
	wait := 300 * time.Millisecond
	start := time.Now()
	h, err := other.TryLock(bg, lockimpl.TryLockOptions{Wait: wait})
	took := time.Since(start)
	if h != nil || !errors.Is(err, lockimpl.ErrNotAcquired) {
		t.Fatalf("TryLock = %v, %v; want ErrNotAcquired", h, err)
	}
	if took < wait || took > wait+2*time.Second {
		t.Errorf("TryLock(%v) returned after %v", wait, took)
	}
	if n := c.SubscriptionRefs(lockimpl.LockChannel("L")); n != 0 {
		t.Errorf("TryLock left %d subscription users", n)
	}
}

// TestContextErrors: a blocked Lock ends with an error that wraps the
// context's, so a timeout is told apart from contention.
func TestContextErrors(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	lock(t, c.NewOwner().Lock("L"))
	ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
	defer cancel()
	_, err := c.NewOwner().Lock("L").Lock(ctx, lockimpl.LockOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock with an expiring context: %v, want DeadlineExceeded", err)
	}
	cctx, ccancel := context.WithCancel(bg)
	ccancel()
	if h, err := c.NewOwner().Lock("L").TryLock(cctx, lockimpl.TryLockOptions{Wait: time.Second}); h != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("TryLock with a cancelled context: %v, %v", h, err)
	}

	// The deadline passing inside network I/O (Redis paused) must still
	// read as the context's doing, not as some network error.
	if err := f.env.Primary().Pause(bg); err != nil {
		t.Fatal(err)
	}
	defer f.env.Primary().Resume(bg)
	pctx, pcancel := context.WithTimeout(bg, 300*time.Millisecond)
	defer pcancel()
	if _, err := c.NewOwner().Lock("P").Lock(pctx, lockimpl.LockOptions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock against a paused Redis: %v, want it to wrap DeadlineExceeded", err)
	}
}

// TestFailedSubscribesDoNotPoisonChannel: many waiters giving up at once,
// some while their SUBSCRIBE is still being written, must not leave the
// channel unusable for the next waiter.
func TestFailedSubscribesDoNotPoisonChannel(t *testing.T) {
	f := setup(t)
	holderC, c := f.client(lockimpl.Options{}), f.client(lockimpl.Options{})
	holder := lock(t, holderC.NewOwner().Lock("L"))
	for i := range 100 {
		ctx, cancel := context.WithTimeout(bg, time.Duration(i%5)*time.Millisecond)
		_, _ = c.NewOwner().Lock("L").Lock(ctx, lockimpl.LockOptions{})
		cancel()
	}
	got := make(chan bool, 1)
	go func() {
		h, _ := c.NewOwner().Lock("L").TryLock(bg, lockimpl.TryLockOptions{Wait: testkit.Patience})
		got <- h != nil
	}()
	f.waitSubscribed(c, lockimpl.LockChannel("L"), false, 1)
	unlock(t, holder)
	if !<-got {
		t.Fatal("a waiter after many abandoned ones never acquired")
	}
}

// TestResubscribeWakesWaiters: when the pub/sub connection drops, unlock
// messages sent meanwhile are lost; go-redis resubscribes, and the
// resubscription wakes the waiters to retry instead of sleeping a TTL.
func TestResubscribeWakesWaiters(t *testing.T) {
	f := setup(t)
	holderC, c := f.client(lockimpl.Options{}), f.client(lockimpl.Options{})
	lock(t, holderC.NewOwner().Lock("L")) // TTL 30 s
	got := make(chan error, 1)
	held := make(chan *lockimpl.Hold, 1)
	go func() {
		h, err := c.NewOwner().Lock("L").Lock(bg, lockimpl.LockOptions{})
		held <- h
		got <- err
	}()
	channel := lockimpl.LockChannel("L")
	f.waitSubscribed(c, channel, false, 1)
	// The holder's lock vanishes without a message (an operator's DEL),
	// and the waiter's subscription connection is cut.
	f.raw.Del(bg, "L")
	if err := f.raw.Do(bg, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	recvOK(t, got, lockimpl.DefaultWatchdogTimeout/3, "waiter slept through the resubscription")
	unlock(t, <-held)
}

// TestInteropReentrant: a hold written as Redisson writes it is honoured:
// its owner re-enters and unlocks, others are refused.
func TestInteropReentrant(t *testing.T) {
	f := setup(t)
	const javaID = "6e3d30b7-83b1-433a-9335-5e8b9916d3ac"
	// Redisson thread 1 of that client took the lock twice.
	if err := f.raw.HSet(bg, "shared", javaID+":1", 2).Err(); err != nil {
		t.Fatal(err)
	}
	f.raw.PExpire(bg, "shared", 30*time.Second)

	same := f.client(lockimpl.Options{ID: javaID}).NewOwner() // owner id javaID:1
	if same.ID() != javaID+":1" {
		t.Fatalf("owner id %s", same.ID())
	}
	other := f.client(lockimpl.Options{}).NewOwner()
	if h, _ := tryOnce(other.Lock("shared")); h != nil {
		t.Fatal("another owner acquired a lock Redisson holds")
	}
	h := lock(t, same.Lock("shared"))
	f.wantHash("shared", map[string]string{javaID + ":1": "3"})
	// The owner knows of one acquisition; its unlock gives back what Redis
	// counts under its identity (see TestOrphanedAcquisitionReleased).
	unlock(t, h)
	f.wantAbsent("shared")
	if h, _ := tryOnce(other.Lock("shared")); h == nil {
		t.Error("lock not free after its owner unlocked it")
	}
}

// TestUnlockLatch: re-sending an unlock with the same latch (what a retry
// after a lost reply does) answers as the first send did and changes nothing.
func TestUnlockLatch(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	a := c.NewOwner()
	reenter(t, lock(t, a.Lock("L")))
	latch := lockimpl.UnlockLatchKey("L", "0123456789abcdef0123456789abcdef")
	keys := []string{"L", lockimpl.LockChannel("L"), latch}
	for i := range 2 {
		n, err := lockimpl.ReentrantUnlockScript.Run(bg, f.raw, keys, "0", 30000, a.ID(), "PUBLISH", 20000).Int64()
		if err != nil || n != 0 {
			t.Fatalf("send %d: %d, %v; want 0", i+1, n, err)
		}
		f.wantHash("L", map[string]string{a.ID(): "1"})
	}
	if v := f.str(latch); v != "0" {
		t.Errorf("latch = %q, want 0", v)
	}
	f.wantPTTL(latch, 15*time.Second, 20*time.Second)
}

// TestScriptsSurviveRestart: after Redis restarts (its script cache
// empty), EVALSHA meets NOSCRIPT and the scripts are sent again.
func TestScriptsSurviveRestart(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	l := c.NewOwner().Lock("L")
	unlock(t, lock(t, l))
	if err := f.env.Primary().Restart(bg); err != nil {
		t.Fatal(err)
	}
	// The pools' connections died with the server; go-redis redials.
	var h *lockimpl.Hold
	testkit.Eventually(t, "lock after restart", func() bool {
		var err error
		h, err = l.Lock(bg, lockimpl.LockOptions{})
		return err == nil
	})
	unlock(t, h)
}

func TestClosedClient(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	lost := lock(t, c.NewOwner().Lock("L")).Lost()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if !testkit.Closed(lost) {
		t.Error("Close left a hold's Lost open: renewals stopped, the hold will expire")
	}
	if _, err := c.NewOwner().Lock("M").Lock(bg, lockimpl.LockOptions{}); !errors.Is(err, lockimpl.ErrClosed) {
		t.Errorf("Lock after Close: %v, want ErrClosed", err)
	}
	// Closing does not release: the lock survives until its TTL.
	if locked, _ := f.client(lockimpl.Options{}).NewOwner().Lock("L").IsLocked(bg); !locked {
		t.Error("Close released the lock")
	}
}

// TestShardedPublish: with SPUBLISH (what Redisson uses on a Redis 7
// Cluster; standalone Redis 7 accepts it too) unlocks travel as sharded
// messages and waiters, subscribed with SSUBSCRIBE, are woken by them.
func TestShardedPublish(t *testing.T) {
	f := setup(t)
	opts := lockimpl.Options{PublishMode: lockimpl.PublishSharded}
	holderC, waiterC := f.client(opts), f.client(opts)
	if waiterC.PublishCommand() != "SPUBLISH" {
		t.Fatalf("publish command %s, want SPUBLISH", waiterC.PublishCommand())
	}
	holder := lock(t, holderC.NewOwner().Lock("L"))
	got := make(chan error, 1)
	held := make(chan *lockimpl.Hold, 1)
	go func() {
		h, err := waiterC.NewOwner().Lock("L").Lock(bg, lockimpl.LockOptions{})
		held <- h
		got <- err
	}()
	channel := lockimpl.LockChannel("L")
	f.waitSubscribed(waiterC, channel, true, 1)
	unlock(t, holder)
	recvOK(t, got, lockimpl.DefaultWatchdogTimeout/3, "waiter not woken by the sharded unlock message")
	unlock(t, <-held)
}

// TestOrphanedAcquisitionReleased: an acquisition applied in Redis whose
// reply never arrived leaves Redis counting one more re-entry than the
// owner knows of. The owner's last unlock must free the lock and stop the
// watchdog, not leave it renewed forever for nobody (which stalled every
// waiter in the reset-storm scenario).
func TestOrphanedAcquisitionReleased(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{WatchdogTimeout: watch})
	o := c.NewOwner()
	l := o.Lock("L")
	// The lost reply: the acquire script ran for this owner's field.
	acq, _, err := protocol.Calls(lockimpl.Reentrant, "L", o.ID(), lockimpl.DefaultWatchdogTimeout, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := acq.Run(bg, f.raw).Err(); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	h := lock(t, l) // a re-entry, as far as Redis counts
	f.wantHash("L", map[string]string{o.ID(): "2"})
	unlock(t, h)
	f.wantAbsent("L")
	if n := c.WatchdogLen(); n != 0 {
		t.Errorf("watchdog still renews %d holds", n)
	}
}
