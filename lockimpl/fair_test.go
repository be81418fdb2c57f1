package lockimpl_test

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
)

// fixedClock is a client clock the test moves by hand.
type fixedClock struct{ ms atomic.Int64 }

func (c *fixedClock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

// TestFairQueueSeed follows seed 003's fair-lock walkthrough (V-003-F1..F8)
// with clocks the test controls: queue order, deadlines computed from the
// client's clock, handoff to the head only, the waiters behind moved
// earlier when the head takes the lock.
func TestFairQueueSeed(t *testing.T) {
	f := setup(t)
	const t0 = 1_700_000_000_000 // ms since epoch
	wait := lockimpl.DefaultFairWaitTimeout
	waitMs := float64(wait.Milliseconds())
	clk := clockAt(t0)
	newOwner := func() *lockimpl.Owner {
		return f.client(lockimpl.Options{Clock: clk.now}).NewOwner()
	}
	a, b, c := newOwner(), newOwner(), newOwner()
	queue, deadlines := lockimpl.FairQueueKey("myLock"), lockimpl.FairTimeoutKey("myLock")

	// F1: A takes the free lock; no queue is created.
	aHold := lock(t, a.FairLock("myLock"))
	f.wantHash("myLock", map[string]string{a.ID(): "1"})
	f.wantAbsent(queue, deadlines)

	// F2/F3: B then C wait; their deadlines follow the client clock.
	acquired := make(chan string, 2)
	errs := make(chan error, 2)
	start := func(o *lockimpl.Owner) {
		go func() {
			h, err := o.FairLock("myLock").Lock(bg, lockimpl.LockOptions{})
			if err != nil {
				errs <- err
				return
			}
			acquired <- o.ID()
			if err := h.Unlock(bg); err != nil {
				errs <- err
			}
		}()
	}
	start(b)
	testkit.Eventually(t, "B queued", func() bool { return len(f.list(queue)) == 1 })
	lockTTL := float64(f.pttl("myLock").Milliseconds())
	clk.ms.Store(t0 + 25_000)
	start(c)
	testkit.Eventually(t, "C queued", func() bool { return len(f.list(queue)) == 2 })
	if got := f.list(queue); !slices.Equal(got, []string{b.ID(), c.ID()}) {
		t.Fatalf("queue = %v, want [B C]", got)
	}
	z := f.zset(deadlines)
	// B: the lock's PTTL when it queued + wait + t0 (PTTL read just after,
	// so it can only be a little lower).
	if sb := z[b.ID()]; sb < t0+waitMs+lockTTL || sb > t0+waitMs+lockTTL+2000 {
		t.Errorf("B's deadline %v, want t0 + %v + PTTL %v", sb-t0, waitMs, lockTTL)
	}
	// C queued behind B: B's deadline + wait, exactly (V-003-F3).
	if z[c.ID()] != z[b.ID()]+waitMs {
		t.Errorf("C's deadline %v, want B's %v + %v", z[c.ID()], z[b.ID()], waitMs)
	}

	// A's unlock notifies only the head (B); B's only C; C's nobody.
	rec := f.record(true, lockimpl.LockChannel("myLock")+":*")
	unlock(t, aHold)
	var order []string
	for range 2 {
		select {
		case id := <-acquired:
			order = append(order, id)
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(testkit.Patience):
			t.Fatal("a queued waiter never acquired")
		}
	}
	if !slices.Equal(order, []string{b.ID(), c.ID()}) {
		t.Errorf("acquisition order %v, want FIFO [B C]", order)
	}
	testkit.Eventually(t, "lock released", func() bool { n, _ := f.raw.Exists(bg, "myLock").Result(); return n == 0 })
	ch := lockimpl.LockChannel("myLock")
	want := []string{ch + ":" + b.ID() + "=0", ch + ":" + c.ID() + "=0"}
	if got := rec.sync(f); !slices.Equal(got, want) {
		t.Errorf("notifications %v, want only the head each time: %v", got, want)
	}
	f.wantAbsent(queue, deadlines)
}

// TestFairHeadTakesMovesOthersEarlier is V-003-F8: when the head takes the
// lock, the waiters behind it have their deadlines moved wait ms earlier.
// The queue is written by hand, as a Redisson peer would leave it.
func TestFairHeadTakesMovesOthersEarlier(t *testing.T) {
	f := setup(t)
	const now = 1_700_000_000_000
	clk := clockAt(now)
	cl := f.client(lockimpl.Options{Clock: clk.now})
	head, next := cl.NewOwner(), cl.NewOwner()
	queue, deadlines := lockimpl.FairQueueKey("L"), lockimpl.FairTimeoutKey("L")
	f.raw.RPush(bg, queue, head.ID(), next.ID())
	f.raw.ZAdd(bg, deadlines, zm(head.ID(), now+100_000), zm(next.ID(), now+400_000))

	// The second in line cannot jump the queue although the lock is free.
	if h, _ := tryOnce(next.FairLock("L")); h != nil {
		t.Fatal("the second waiter took the lock ahead of the head")
	}
	if h, err := tryOnce(head.FairLock("L")); h == nil || err != nil {
		t.Fatalf("head TryLock = %v, %v", h, err)
	}
	f.wantHash("L", map[string]string{head.ID(): "1"})
	if got := f.list(queue); !slices.Equal(got, []string{next.ID()}) {
		t.Errorf("queue = %v, want [next]", got)
	}
	wait := float64(lockimpl.DefaultFairWaitTimeout.Milliseconds())
	if got := f.zset(deadlines)[next.ID()]; got != now+400_000-wait {
		t.Errorf("next's deadline %v, want %v (moved earlier by the wait)", got, now+400_000-wait)
	}
}

// TestFairStaleWaiterPurged is V-003-F6: a waiter whose deadline passed
// (it gave up or died) is dropped from the head of the queue by the next
// script, judged by the client's clock.
func TestFairStaleWaiterPurged(t *testing.T) {
	f := setup(t)
	const now = 1_700_000_000_000
	clk := clockAt(now)
	cl := f.client(lockimpl.Options{Clock: clk.now})
	o := cl.NewOwner()
	queue, deadlines := lockimpl.FairQueueKey("L"), lockimpl.FairTimeoutKey("L")
	f.raw.RPush(bg, queue, "dead:1", "dead:2")
	f.raw.ZAdd(bg, deadlines, zm("dead:1", now-1), zm("dead:2", now+50_000))

	// dead:1 is purged, dead:2 is not yet due: o still waits behind it.
	if h, _ := tryOnce(o.FairLock("L")); h != nil {
		t.Fatal("acquired past a waiter that is not yet due")
	}
	if got := f.list(queue); !slices.Equal(got, []string{"dead:2"}) {
		t.Fatalf("queue = %v, want [dead:2]", got)
	}
	// Once the client clock passes dead:2's deadline, it goes too.
	clk.ms.Store(now + 50_000)
	if h, err := tryOnce(o.FairLock("L")); h == nil || err != nil {
		t.Fatalf("TryLock after the deadline = %v, %v", h, err)
	}
	f.wantAbsent(queue, deadlines)
}

// TestFairTryLockTimeoutLeavesQueue: a waiter that gives up leaves the
// queue and the deadlines behind it move earlier (acquireFailed).
func TestFairTryLockTimeoutLeavesQueue(t *testing.T) {
	f := setup(t)
	cl := f.client(lockimpl.Options{})
	holder, quitter := cl.NewOwner(), cl.NewOwner()
	lock(t, holder.FairLock("L"))
	queue, deadlines := lockimpl.FairQueueKey("L"), lockimpl.FairTimeoutKey("L")
	// The quitter is queued with another waiter behind it.
	f.raw.RPush(bg, queue, quitter.ID(), "behind:1")
	f.raw.ZAdd(bg, deadlines, zm(quitter.ID(), 8_000_000_000_000), zm("behind:1", 9_000_000_000_000))

	wait := 200 * time.Millisecond
	if h, err := quitter.FairLock("L").TryLock(bg, lockimpl.TryLockOptions{Wait: wait}); h != nil || !errors.Is(err, lockimpl.ErrNotAcquired) {
		t.Fatalf("TryLock = %v, %v; want ErrNotAcquired", h, err)
	}
	if got := f.list(queue); !slices.Equal(got, []string{"behind:1"}) {
		t.Errorf("queue after giving up = %v, want [behind:1]", got)
	}
	z := f.zset(deadlines)
	if _, in := z[quitter.ID()]; in {
		t.Error("the quitter is still in the deadline set")
	}
	if z["behind:1"] != 9_000_000_000_000-float64(wait.Milliseconds()) {
		t.Errorf("behind:1's deadline %v, want moved %v earlier", z["behind:1"], wait)
	}
}

// TestFairLeaveNotifiesNewHead: a head that gives up while the lock is
// free hands the turn on at once; otherwise the next waiter would sleep
// until the leaver's deadline.
func TestFairLeaveNotifiesNewHead(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	leaver, next := c.NewOwner(), c.NewOwner()
	queue, deadlines := lockimpl.FairQueueKey("L"), lockimpl.FairTimeoutKey("L")
	far := float64(time.Now().Add(time.Hour).UnixMilli())
	f.raw.RPush(bg, queue, leaver.ID())
	f.raw.ZAdd(bg, deadlines, zm(leaver.ID(), far))

	got := lockAsync(next.FairLock("L"))
	testkit.Eventually(t, "next queued behind the leaver", func() bool { return len(f.list(queue)) == 2 })
	f.waitSubscribed(c, lockimpl.LockChannel("L")+":"+next.ID(), false, 1)
	leaver.FairLock("L").LeaveQueue()
	recvOK(t, got.err, testkit.Patience, "the new head to be told its turn came")
	f.wantHash("L", map[string]string{next.ID(): "1"})
}

// TestPurgeFairQueue: waiters whose deadline passed leave the queue
// wherever they stand (not only at its head), those still due stay, and
// the keys go once nobody waits; the lock hash is never touched.
func TestPurgeFairQueue(t *testing.T) {
	f := setup(t)
	const now = 1_700_000_000_000
	queue, deadlines := lockimpl.FairQueueKey("L"), lockimpl.FairTimeoutKey("L")
	f.raw.HSet(bg, "L", "holder:1", 1)
	f.raw.RPush(bg, queue, "alive:1", "dead:1", "dead:2")
	f.raw.ZAdd(bg, deadlines, zm("alive:1", now+5_000), zm("dead:1", now-1), zm("dead:2", now))

	left, err := lockimpl.PurgeFairQueue(bg, f.raw, "L", time.UnixMilli(now))
	if err != nil || left != 1 {
		t.Fatalf("PurgeFairQueue = %d, %v; want 1 waiter left", left, err)
	}
	if got := f.list(queue); !slices.Equal(got, []string{"alive:1"}) {
		t.Errorf("queue = %v, want [alive:1]", got)
	}
	if got := f.zset(deadlines); len(got) != 1 || got["alive:1"] != now+5_000 {
		t.Errorf("deadlines = %v, want alive:1's only", got)
	}
	if left, err := lockimpl.PurgeFairQueue(bg, f.raw, "L", time.UnixMilli(now+5_000)); err != nil || left != 0 {
		t.Fatalf("second purge = %d, %v; want none left", left, err)
	}
	f.wantAbsent(queue, deadlines)
	f.wantHash("L", map[string]string{"holder:1": "1"})
}

// TestFairLeaseTimeout is Redisson's RedissonFairLockTest.testLeaseTimeout,
// scaled: 8 tasks, each submitted 100 ms after the one before is in line,
// take the fair lock with a 300 ms lease and a wait of 8 s, and never
// unlock. Every lease runs out with no
// message sent, so a queued waiter's only wake-up is its bound: each must
// look again when a lease can have expired, and all 8 acquire, in order,
// long before their wait runs out.
func TestFairLeaseTimeout(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	const tasks = 8
	lease, wait := 300*time.Millisecond, 8*time.Second
	type got struct {
		task int
		at   time.Duration
		err  error
	}
	const name = "lease-timeout"
	queue := lockimpl.FairQueueKey(name)
	results := make(chan got, tasks)
	var returned [tasks]atomic.Bool
	start := time.Now()
	for i := range tasks {
		o := c.NewOwner()
		go func() {
			_, err := o.FairLock(name).TryLock(bg, lockimpl.TryLockOptions{Wait: wait, Lease: lease})
			returned[i].Store(true)
			results <- got{i, time.Since(start), err}
		}()
		// The next task is submitted once this one holds the lock or is in
		// line, so the order is the submission order even when a loaded
		// host delays a task's first call past the next one's.
		testkit.Eventually(t, "task queued or holding", func() bool {
			if returned[i].Load() || slices.Contains(f.list(queue), o.ID()) {
				return true
			}
			_, holds := f.hash(name)[o.ID()]
			return holds
		})
		time.Sleep(100 * time.Millisecond) // the submission pace of Redisson's test, not a wait for an event
	}
	var order []int
	for range tasks {
		r := <-results
		if r.err != nil {
			t.Errorf("task %d after %v: %v", r.task, r.at.Round(time.Millisecond), r.err)
			continue
		}
		order = append(order, r.task)
		t.Logf("task %d acquired after %v", r.task, r.at.Round(time.Millisecond))
	}
	if !slices.IsSorted(order) || len(order) != tasks {
		t.Errorf("acquisition order %v, want all %d in submission order", order, tasks)
	}
	// Eight leases back to back take 2.4 s; a waiter sleeping past a free
	// lock takes until its 8 s wait runs out.
	if took := time.Since(start); took > wait/2 {
		t.Errorf("all %d took %v: waiters slept past free locks", tasks, took.Round(time.Millisecond))
	}
}
