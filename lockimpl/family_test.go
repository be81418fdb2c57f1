package lockimpl_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/lockimpl/protocol"
)

// TestFencedTokens: every acquisition of a fenced lock, re-entries
// included, increments redisson_lock_token:{L} and returns the new value
// (Redisson's testTokenIncrease: 1..5); the counter never expires and
// survives the lock; a refused attempt leaves it alone; the hash, TTL and
// unlock message are the reentrant lock's.
func TestFencedTokens(t *testing.T) {
	f := setup(t)
	c1, c2 := f.client(lockimpl.Options{}), f.client(lockimpl.Options{})
	a, b := c1.NewOwner(), c2.NewOwner()
	l := a.FencedLock("fl")
	rec := f.record(false, "redisson_lock__channel:{fl}")
	full := lockimpl.DefaultWatchdogTimeout

	h := lock(t, l)
	for n := 1; n <= 5; n++ {
		if n > 1 {
			reenter(t, h)
		}
		if h.Token() != int64(n) {
			t.Errorf("acquisition %d: Hold.Token = %d, want %d", n, h.Token(), n)
		}
		f.wantHash("fl", map[string]string{a.ID(): strconv.Itoa(n)})
		f.wantPTTL("fl", full-5*time.Second, full)
		if s := f.str("redisson_lock_token:{fl}"); s != strconv.Itoa(n) {
			t.Errorf("acquisition %d: token key %q, want %d", n, s, n)
		}
		if tok, err := l.Token(bg); err != nil || tok != int64(n) {
			t.Errorf("Lock.Token = %d, %v; want %d", tok, err, n)
		}
	}
	if d := f.pttl("redisson_lock_token:{fl}"); d != -time.Millisecond {
		t.Errorf("token key PTTL %v, want -1 ms (no expiry)", d)
	}
	if got, err := tryOnce(b.FencedLock("fl")); got != nil || err != nil {
		t.Fatalf("other owner's attempt on a held fenced lock = %v, %v; want refused", got, err)
	}
	if s := f.str("redisson_lock_token:{fl}"); s != "5" {
		t.Errorf("a refused attempt moved the token to %q", s)
	}
	for range 5 {
		unlock(t, h)
	}
	f.wantAbsent("fl")
	if got := rec.sync(f); !slices.Equal(got, []string{"redisson_lock__channel:{fl}=0"}) {
		t.Errorf("unlocks published %v, want one 0 on the lock channel", got)
	}
	if s := f.str("redisson_lock_token:{fl}"); s != "5" {
		t.Errorf("token key after release %q, want 5 (kept)", s)
	}
	hb := lock(t, b.FencedLock("fl"))
	if hb.Token() != 6 {
		t.Errorf("next holder's token %d, want 6", hb.Token())
	}
	unlock(t, hb)
	if _, err := a.Lock("fl").Token(bg); !errors.Is(err, lockimpl.ErrInvalidOptions) {
		t.Errorf("Token of a reentrant lock: %v, want ErrInvalidOptions", err)
	}
}

// TestFencedWaiterWoken: a waiter on a fenced lock is woken by the
// holder's unlock message and gets the next token.
func TestFencedWaiterWoken(t *testing.T) {
	f := setup(t)
	c1, c2 := f.client(lockimpl.Options{}), f.client(lockimpl.Options{})
	h := lock(t, c1.NewOwner().FencedLock("fw"))
	w := lockAsync(c2.NewOwner().FencedLock("fw"))
	f.waitSubscribed(c2, "redisson_lock__channel:{fw}", false, 1)
	unlock(t, h)
	// The lease is the 30 s watchdog: only the message wakes it sooner.
	recvOK(t, w.err, 10*time.Second, "fenced waiter")
	if w.h.Token() != 2 {
		t.Errorf("waiter's token %d, want 2", w.h.Token())
	}
	unlock(t, w.h)
}

// TestSpinLock: a spin lock's waiter never subscribes and its unlocks
// publish nothing; the waiter still takes the lock soon after it is
// released, by polling; the data is the reentrant lock's.
func TestSpinLock(t *testing.T) {
	f := setup(t)
	c1, c2 := f.client(lockimpl.Options{}), f.client(lockimpl.Options{SpinMaxDelay: 20 * time.Millisecond})
	a, b := c1.NewOwner(), c2.NewOwner()
	rec := f.record(true, "*")
	h := lock(t, a.SpinLock("sp"))
	reenter(t, h)
	f.wantHash("sp", map[string]string{a.ID(): "2"})
	w := lockAsync(b.SpinLock("sp"))
	// The waiter polls: its attempts are counted by the server.
	calls := func() int {
		info, err := f.raw.Info(bg, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(info) {
			if strings.HasPrefix(line, "cmdstat_evalsha:calls=") {
				n, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(line, ",")[0], "cmdstat_evalsha:calls="))
				return n
			}
		}
		return 0
	}
	before := calls()
	testkit.Eventually(t, "the spin waiter polls", func() bool { return calls() >= before+3 })
	if n := c2.SubscriptionRefs(lockimpl.LockChannel("sp")); n != 0 {
		t.Errorf("spin waiter holds %d subscriptions", n)
	}
	unlock(t, h)
	unlock(t, h)
	recvOK(t, w.err, 10*time.Second, "spin waiter")
	f.wantHash("sp", map[string]string{b.ID(): "1"})
	unlock(t, w.h)
	f.wantAbsent("sp")
	if got := rec.sync(f); len(got) != 0 {
		t.Errorf("spin lock traffic published %v, want nothing", got)
	}
	// A bounded wait gives up on time.
	h = lock(t, a.SpinLock("sp"))
	start := time.Now()
	got, err := b.SpinLock("sp").TryLock(bg, lockimpl.TryLockOptions{Wait: 100 * time.Millisecond})
	if got != nil || !errors.Is(err, lockimpl.ErrNotAcquired) {
		t.Errorf("bounded spin wait on a held lock = %v, %v; want ErrNotAcquired", got, err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("bounded spin wait gave up after %v, before its 100ms", d)
	}
	unlock(t, h)
}

// TestNonReentrant: the holder asking again, by Lock or Reenter, gets
// ErrNonReentrant at once and the state is unchanged; at the script level
// the acquire replies Redisson's NON_REENTRANT_REACQUIRE error; others are
// refused with the PTTL; the unlock is the reentrant lock's.
func TestNonReentrant(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	a, b := c.NewOwner(), c.NewOwner()
	l := a.NonReentrantLock("nr")
	rec := f.record(false, "redisson_lock__channel:{nr}")
	h := lock(t, l)
	want := map[string]string{a.ID(): "1"}
	f.wantHash("nr", want)
	if _, err := l.TryLock(bg, lockimpl.TryLockOptions{}); !errors.Is(err, lockimpl.ErrNonReentrant) {
		t.Errorf("holder's second TryLock: %v, want ErrNonReentrant", err)
	}
	if err := h.Reenter(bg); !errors.Is(err, lockimpl.ErrNonReentrant) {
		t.Errorf("Reenter: %v, want ErrNonReentrant", err)
	}
	acq, _, err := protocol.Calls(lockimpl.NonReentrant, "nr", a.ID(), lockimpl.DefaultWatchdogTimeout, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := acq.Run(bg, f.raw).Err(); err == nil || !strings.Contains(err.Error(), "NON_REENTRANT_REACQUIRE") {
		t.Errorf("script re-acquire by the holder: %v, want the NON_REENTRANT_REACQUIRE error", err)
	}
	f.wantHash("nr", want)
	if got, err := tryOnce(b.NonReentrantLock("nr")); got != nil || err != nil {
		t.Errorf("other owner's attempt = %v, %v; want refused", got, err)
	}
	if h.Count() != 1 {
		t.Errorf("Count %d, want 1", h.Count())
	}
	unlock(t, h)
	f.wantAbsent("nr")
	if got := rec.sync(f); !slices.Equal(got, []string{"redisson_lock__channel:{nr}=0"}) {
		t.Errorf("unlock published %v, want one 0", got)
	}
}

// TestNonReentrantFair: the non-reentrant fair lock queues waiters as the
// fair lock does, notifies the head on its own channel, and refuses its
// holder's second acquisition without touching the queue.
func TestNonReentrantFair(t *testing.T) {
	f := setup(t)
	c1, c2 := f.client(lockimpl.Options{}), f.client(lockimpl.Options{})
	a, b := c1.NewOwner(), c2.NewOwner()
	l := a.NonReentrantFairLock("nf")
	h := lock(t, l)
	f.wantHash("nf", map[string]string{a.ID(): "1"})
	w := lockAsync(b.NonReentrantFairLock("nf"))
	testkit.Eventually(t, "b queued", func() bool { return slices.Equal(f.list("redisson_lock_queue:{nf}"), []string{b.ID()}) })
	rec := f.record(false, "redisson_lock__channel:{nf}:"+b.ID())
	if err := h.Reenter(bg); !errors.Is(err, lockimpl.ErrNonReentrant) {
		t.Errorf("Reenter: %v, want ErrNonReentrant", err)
	}
	if _, err := l.Lock(bg, lockimpl.LockOptions{}); !errors.Is(err, lockimpl.ErrNonReentrant) {
		t.Errorf("holder's second Lock: %v, want ErrNonReentrant", err)
	}
	f.wantHash("nf", map[string]string{a.ID(): "1"})
	if q := f.list("redisson_lock_queue:{nf}"); !slices.Equal(q, []string{b.ID()}) {
		t.Errorf("queue %v after refused re-entry, want [b]", q)
	}
	unlock(t, h)
	recvOK(t, w.err, 10*time.Second, "queued waiter")
	if got := rec.sync(f); !slices.Equal(got, []string{"redisson_lock__channel:{nf}:" + b.ID() + "=0"}) {
		t.Errorf("unlock published %v, want 0 on the head's channel", got)
	}
	f.wantHash("nf", map[string]string{b.ID(): "1"})
	f.wantAbsent("redisson_lock_queue:{nf}", "redisson_lock_timeout:{nf}")
	unlock(t, w.h)
}

// TestMultiLock: a multi-lock takes locks of several kinds and names all
// or none: while another owner holds one part, a bounded attempt fails and
// leaves every other part free; once it is free, Lock takes all; Lost
// closes when any part is lost; Unlock releases all.
func TestMultiLock(t *testing.T) {
	f := setup(t)
	c1, c2 := f.client(lockimpl.Options{}), f.client(lockimpl.Options{})
	a, b := c1.NewOwner(), c2.NewOwner()
	m, err := a.NewMultiLock(a.Lock("m3"), a.FairLock("m1"), a.FencedLock("m2"), a.ReadWriteLock("m4").WriteLock())
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{m.Locks()[0].Name(), m.Locks()[3].Name()}; !slices.Equal(got, []string{"m1", "m4"}) {
		t.Errorf("take order starts %v, want by name", got)
	}
	hb := lock(t, b.FencedLock("m2"))
	start := time.Now()
	if mh, err := m.TryLock(bg, lockimpl.TryLockOptions{Wait: 200 * time.Millisecond}); mh != nil || !errors.Is(err, lockimpl.ErrNotAcquired) {
		t.Fatalf("multi-lock with one part held elsewhere = %v, %v; want ErrNotAcquired", mh, err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("gave up after %v, before its wait", d)
	}
	f.wantAbsent("m1", "m3", "m4")
	got := make(chan error, 1)
	var mh *lockimpl.MultiHold
	go func() {
		var err error
		mh, err = m.Lock(bg, lockimpl.LockOptions{})
		got <- err
	}()
	unlock(t, hb)
	recvOK(t, got, 10*time.Second, "multi-lock")
	f.wantHash("m1", map[string]string{a.ID(): "1"})
	f.wantHash("m2", map[string]string{a.ID(): "1"})
	f.wantHash("m3", map[string]string{a.ID(): "1"})
	f.wantHash("m4", map[string]string{"mode": "write", a.ID() + ":write": "1"})
	if tok := mh.Holds()[1].Token(); tok != 2 {
		t.Errorf("fenced part's token %d, want 2", tok)
	}
	select {
	case <-mh.Lost():
		t.Fatal("Lost closed while every part is held")
	default:
	}
	if ok, err := b.Lock("m3").ForceUnlock(bg); !ok || err != nil {
		t.Fatalf("force unlock: %v, %v", ok, err)
	}
	// The watchdog round (every 10 s) finds m3 gone.
	testkit.WaitClosed(t, "multi-hold Lost after a part was force-unlocked", mh.Lost())
	if err := mh.Unlock(bg); !errors.Is(err, lockimpl.ErrNotHeld) {
		t.Errorf("Unlock with a lost part: %v, want ErrNotHeld among the errors", err)
	}
	f.wantAbsent("m1", "m2", "m3", "m4")

	if _, err := a.NewMultiLock(a.Lock("x"), b.Lock("y")); !errors.Is(err, lockimpl.ErrInvalidOptions) {
		t.Errorf("multi-lock across owners: %v, want ErrInvalidOptions", err)
	}
	if _, err := a.NewMultiLock(a.Lock("x"), a.Lock("x")); !errors.Is(err, lockimpl.ErrInvalidOptions) {
		t.Errorf("multi-lock with a repeated lock: %v, want ErrInvalidOptions", err)
	}
	if _, err := a.NewMultiLock(); !errors.Is(err, lockimpl.ErrInvalidOptions) {
		t.Errorf("empty multi-lock: %v, want ErrInvalidOptions", err)
	}
}

// TestLostEveryKind: Lost closes for a hold of every kind whose fixed
// lease runs out, and the key is gone by then or soon after.
func TestLostEveryKind(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	a := c.NewOwner()
	locks := []*lockimpl.Lock{
		a.Lock("lk-reentrant"), a.FairLock("lk-fair"), a.ReadWriteLock("lk-read").ReadLock(), a.ReadWriteLock("lk-write").WriteLock(),
		a.FencedLock("lk-fenced"), a.SpinLock("lk-spin"), a.NonReentrantLock("lk-nr"), a.NonReentrantFairLock("lk-nrfair"),
	}
	for _, l := range locks {
		h := lock(t, l, lockimpl.LockOptions{Lease: 200 * time.Millisecond})
		testkit.WaitClosed(t, l.Kind().String()+" hold's Lost after its lease", h.Lost())
		testkit.Eventually(t, l.Name()+" expired", func() bool { return f.raw.Exists(bg, l.Name()).Val() == 0 })
		if err := h.Unlock(bg); !errors.Is(err, lockimpl.ErrNotHeld) {
			t.Errorf("%s: unlock after loss: %v, want ErrNotHeld", l.Kind(), err)
		}
	}
}
