package workloads

import (
	"container/heap"
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/results"
)

// With Config.SpinWaits, every wait is exact at the host's expense: a
// waiter sleeps on its Go timer until a stretch before the deadline and
// then waits for the run's one spinner to wake it: a goroutine that,
// while any wait is in its last stretch, looks at the clock, wakes the
// waits whose deadline came and yields the processor between looks. One
// spinner serves every owner, so precision costs at most one CPU however
// many owners wait; the stretch follows how late the process's timers have
// fired lately, so a busy process spins little. A waiter is known to the
// spinner from the start of its wait, so that one whose timer fires late
// (as timers do while the spinner keeps a processor busy) is still woken
// on time when another wait keeps the spinner running.

// spinClock is what a run's spinning waiters share: the stretch before a
// deadline at which they stop sleeping, and the spinner that wakes them.
type spinClock struct {
	slack   atomic.Int64 // ns
	decayed atomic.Int64 // when the stretch last came down, unix ns

	mu       sync.Mutex
	due      dueHeap      // spun waits, earliest deadline first
	armed    int          // of them, those in their last stretch
	spinning bool         // the spinner runs
	spun     atomic.Int64 // ns the spinner ran, in all
}

// The spin stretch's bounds. Below minSlack a timer's wake-up alone (the
// goroutine made runnable, then scheduled) can miss; maxSlack is above the
// lateness of an idle process's timers, beyond which the wait is late
// whatever it does. The stretch starts there, at the worst, so that a
// run's first waits are not late before a late timer has raised it.
const (
	minSlack     = 50 * time.Microsecond
	maxSlack     = 3 * time.Millisecond
	initialSlack = maxSlack
	// slackDecay: a lateness under the stretch pulls it 1/slackDecay of
	// the way down, at most once per decayEvery; one above sets it, so it
	// tracks the worst of the last slackDecay × decayEvery or so. Paced by
	// time, not by waits, so that many owners' punctual timers do not wear
	// it down between two late ones.
	slackDecay = 32
	decayEvery = 100 * time.Millisecond
	// slackMargin is added to an observed lateness that sets the stretch.
	slackMargin = 20 * time.Microsecond
)

func newSpinClock() *spinClock {
	c := &spinClock{}
	c.slack.Store(int64(initialSlack))
	return c
}

// await adds d to the spun waits; armed, it is in its last stretch and
// the spinner runs until it is woken.
func (c *spinClock) await(d *due, armed bool) {
	c.mu.Lock()
	heap.Push(&c.due, d)
	c.armLocked(d, armed)
}

// arm tells the spinner that d is in its last stretch, and reports false
// when the spinner woke it already.
func (c *spinClock) arm(d *due) bool {
	c.mu.Lock()
	if d.i < 0 {
		c.mu.Unlock()
		return false
	}
	c.armLocked(d, true)
	return true
}

// armLocked arms d if armed, starting the spinner if it is not running,
// and unlocks c.mu.
func (c *spinClock) armLocked(d *due, armed bool) {
	start := false
	if armed {
		d.armed = true
		c.armed++
		start = !c.spinning
		c.spinning = true
	}
	c.mu.Unlock()
	if start {
		go c.spin()
	}
}

// cancel takes d out of the waits, or, when the spinner woke it already,
// takes the wake-up from its channel, so that the next wait starts clean.
func (c *spinClock) cancel(d *due) {
	c.mu.Lock()
	woken := d.i < 0
	if !woken {
		heap.Remove(&c.due, d.i)
		c.disarmLocked(d)
	}
	c.mu.Unlock()
	if woken {
		<-d.wake
	}
}

// disarmLocked marks d, out of the heap, as no longer waited for.
func (c *spinClock) disarmLocked(d *due) {
	d.i = -1
	if d.armed {
		d.armed = false
		c.armed--
	}
}

// spin wakes each wait when its deadline comes, armed or not, until no
// wait is in its last stretch.
func (c *spinClock) spin() {
	last := time.Now()
	for {
		c.mu.Lock()
		now := time.Now()
		for len(c.due) > 0 && !now.Before(c.due[0].at) {
			d := heap.Pop(&c.due).(*due)
			c.disarmLocked(d)
			d.wake <- struct{}{}
		}
		c.spun.Add(int64(now.Sub(last)))
		last = now
		if c.armed == 0 {
			c.spinning = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		runtime.Gosched()
	}
}

// stretch is how much of a wait of d is spun: all of it when d is within
// the slack, none when the timer's lateness fits within the bound a wait
// of d may stray by (results.WaitBoundShare of it), else the slack.
func (c *spinClock) stretch(d time.Duration) time.Duration {
	s := time.Duration(c.slack.Load())
	switch {
	case d <= 0:
		return 0
	case float64(d)*results.WaitBoundShare >= float64(maxSlack):
		return 0
	case d <= s:
		return d
	}
	return s
}

// observe notes that a timer set for a time fired late by late, at now.
func (c *spinClock) observe(late time.Duration, now time.Time) {
	s := time.Duration(c.slack.Load())
	switch {
	case late+slackMargin > s:
		s = late + slackMargin
	default:
		last := c.decayed.Load()
		if now.UnixNano()-last < int64(decayEvery) || !c.decayed.CompareAndSwap(last, now.UnixNano()) {
			return
		}
		s -= (s - late - slackMargin) / slackDecay
	}
	c.slack.Store(int64(min(max(s, minSlack), maxSlack)))
}

// spinUntil is until on the spinner: d, the time left, is positive.
func (w *waiter) spinUntil(ctx context.Context, lost <-chan struct{}, deadline time.Time, d time.Duration) waitResult {
	c := w.clock.spin
	spin := c.stretch(d)
	if spin == 0 {
		return w.sleep(ctx, lost, deadline)
	}
	if w.due.wake == nil {
		w.due.wake = make(chan struct{}, 1) // on first use: owners that never wait need none
	}
	w.due.at = deadline
	if d <= spin {
		c.await(&w.due, true)
		return w.spinWoken(ctx, lost)
	}
	c.await(&w.due, false)
	wake := deadline.Add(-spin)
	timer := w.goTimer(time.Until(wake))
	select {
	case <-timer.C:
		now := time.Now()
		c.observe(now.Sub(wake), now)
		if !now.Before(deadline) {
			c.cancel(&w.due)
			return waitResult{end: waited, at: now}
		}
		if !c.arm(&w.due) {
			<-w.due.wake
			return waitResult{end: waited, at: time.Now()}
		}
		return w.spinWoken(ctx, lost)
	case <-w.due.wake:
		// The timer was late, and the spinner, running for other waits,
		// found this one's deadline come.
		now := time.Now()
		timer.Stop()
		c.observe(now.Sub(wake), now)
		return waitResult{end: waited, at: now}
	case <-lost:
		timer.Stop()
		c.cancel(&w.due)
		return waitResult{end: waitLost, at: time.Now()}
	case <-ctx.Done():
		timer.Stop()
		c.cancel(&w.due)
		return waitResult{end: waitCut, at: time.Now()}
	}
}

// spinWoken waits for the spinner to wake the armed wait, or until lost
// is ready or ctx ends.
func (w *waiter) spinWoken(ctx context.Context, lost <-chan struct{}) waitResult {
	c := w.clock.spin
	select {
	case <-w.due.wake:
		return waitResult{end: waited, at: time.Now()}
	case <-lost:
		c.cancel(&w.due)
		return waitResult{end: waitLost, at: time.Now()}
	case <-ctx.Done():
		c.cancel(&w.due)
		return waitResult{end: waitCut, at: time.Now()}
	}
}
