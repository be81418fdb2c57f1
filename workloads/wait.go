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

// A Go timer on Linux fires up to milliseconds late when the process is
// idle (the scheduler polls with millisecond timeouts) and on time when it
// is busy, so a hold of a timer alone lasts longer at low load than at
// high. A waiter sleeps on its timer until a stretch before the deadline
// and then waits for the run's one spinner to wake it: a goroutine that,
// while any wait is in its last stretch, looks at the clock, wakes the
// waits whose deadline came and yields the processor between looks. One
// spinner serves every owner, so precision costs at most one CPU however
// many owners wait; the stretch follows how late the process's timers have
// fired lately, so a busy process spins little. A waiter is known to the
// spinner from the start of its wait, so that one whose timer fires late
// (as timers do while the spinner keeps a processor busy) is still woken
// on time when another wait keeps the spinner running.

// waitClock is what a run's waiters share: the stretch before a deadline
// at which they stop sleeping, and the spinner that wakes them.
type waitClock struct {
	slack   atomic.Int64 // ns
	decayed atomic.Int64 // when the stretch last came down, unix ns

	mu       sync.Mutex
	due      dueHeap      // spun waits, earliest deadline first
	armed    int          // of them, those in their last stretch
	spinning bool         // the spinner runs
	spun     atomic.Int64 // ns the spinner ran, in all
}

// due is one spun wait.
type due struct {
	at    time.Time
	wake  chan struct{} // the waiter's, 1 buffered: sent when at came
	i     int           // index in the heap, -1 once woken
	armed bool          // in its last stretch: the spinner runs for it
}

type dueHeap []*due

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].i = i; h[j].i = j }
func (h *dueHeap) Push(x any)        { d := x.(*due); d.i = len(*h); *h = append(*h, d) }
func (h *dueHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	d.i = -1
	return d
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

func newWaitClock() *waitClock {
	c := &waitClock{}
	c.slack.Store(int64(initialSlack))
	return c
}

// await adds d to the spun waits; armed, it is in its last stretch and
// the spinner runs until it is woken.
func (c *waitClock) await(d *due, armed bool) {
	c.mu.Lock()
	heap.Push(&c.due, d)
	c.armLocked(d, armed)
}

// arm tells the spinner that d is in its last stretch, and reports false
// when the spinner woke it already.
func (c *waitClock) arm(d *due) bool {
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
func (c *waitClock) armLocked(d *due, armed bool) {
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
func (c *waitClock) cancel(d *due) {
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
func (c *waitClock) disarmLocked(d *due) {
	d.i = -1
	if d.armed {
		d.armed = false
		c.armed--
	}
}

// spin wakes each wait when its deadline comes, armed or not, until no
// wait is in its last stretch.
func (c *waitClock) spin() {
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
func (c *waitClock) stretch(d time.Duration) time.Duration {
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
func (c *waitClock) observe(late time.Duration, now time.Time) {
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

// waitEnd is how a wait ended.
type waitEnd uint8

const (
	waited   waitEnd = iota // the deadline came
	waitLost                // lost became ready
	waitCut                 // ctx ended
)

// waitResult is how a wait ended, and when.
type waitResult struct {
	end waitEnd
	at  time.Time
}

// waiter is one worker's precise wait: its timer and its run's clock.
// Holds, think times and open-loop pacing all wait through it.
type waiter struct {
	clock *waitClock
	timer *time.Timer
	due   due                   // its entry while in the last stretch
	rec   *results.WaitRecorder // where measured waits are recorded
}

func newWaiter(c *waitClock, rec *results.WaitRecorder) waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return waiter{clock: c, timer: t, due: due{i: -1}, rec: rec}
}

// until waits until deadline, or until lost is ready (nil: never) or ctx
// ends, whichever comes first.
func (w *waiter) until(ctx context.Context, lost <-chan struct{}, deadline time.Time) waitResult {
	now := time.Now()
	d := deadline.Sub(now)
	if d <= 0 {
		return waitResult{end: waited, at: now}
	}
	spin := w.clock.stretch(d)
	if spin == 0 {
		return w.sleep(ctx, lost, deadline)
	}
	if w.due.wake == nil {
		w.due.wake = make(chan struct{}, 1) // on first use: owners that never wait need none
	}
	w.due.at = deadline
	if d <= spin {
		w.clock.await(&w.due, true)
		return w.woken(ctx, lost)
	}
	w.clock.await(&w.due, false)
	wake := deadline.Add(-spin)
	w.timer.Reset(time.Until(wake))
	select {
	case <-w.timer.C:
		now := time.Now()
		w.clock.observe(now.Sub(wake), now)
		if !now.Before(deadline) {
			w.clock.cancel(&w.due)
			return waitResult{end: waited, at: now}
		}
		if !w.clock.arm(&w.due) {
			<-w.due.wake
			return waitResult{end: waited, at: time.Now()}
		}
		return w.woken(ctx, lost)
	case <-w.due.wake:
		// The timer was late, and the spinner, running for other waits,
		// found this one's deadline come.
		now := time.Now()
		w.timer.Stop()
		w.clock.observe(now.Sub(wake), now)
		return waitResult{end: waited, at: now}
	case <-lost:
		w.timer.Stop()
		w.clock.cancel(&w.due)
		return waitResult{end: waitLost, at: time.Now()}
	case <-ctx.Done():
		w.timer.Stop()
		w.clock.cancel(&w.due)
		return waitResult{end: waitCut, at: time.Now()}
	}
}

// woken waits for the spinner to wake the armed wait, or until lost is
// ready or ctx ends.
func (w *waiter) woken(ctx context.Context, lost <-chan struct{}) waitResult {
	select {
	case <-w.due.wake:
		return waitResult{end: waited, at: time.Now()}
	case <-lost:
		w.clock.cancel(&w.due)
		return waitResult{end: waitLost, at: time.Now()}
	case <-ctx.Done():
		w.clock.cancel(&w.due)
		return waitResult{end: waitCut, at: time.Now()}
	}
}

// sleep waits on the timer alone until deadline, or until lost is ready or
// ctx ends: a wait long enough that its timer's lateness is within bound.
func (w *waiter) sleep(ctx context.Context, lost <-chan struct{}, deadline time.Time) waitResult {
	w.timer.Reset(time.Until(deadline))
	select {
	case <-w.timer.C:
		return waitResult{end: waited, at: time.Now()}
	case <-lost:
		w.timer.Stop()
		return waitResult{end: waitLost, at: time.Now()}
	case <-ctx.Done():
		w.timer.Stop()
		return waitResult{end: waitCut, at: time.Now()}
	}
}

// record files a wait of kind k that began at begin and was asked to last
// asked, unless it ended early or measured is false (warmup).
func (w *waiter) record(k results.WaitKind, begin time.Time, asked time.Duration, r waitResult, measured bool) {
	if r.end != waited || !measured || w.rec == nil {
		return
	}
	w.rec.Record(k, asked, r.at.Sub(begin))
}

// waits is a run's waiting: the clock its waiters share and where they
// record, one recorder per results shard so that owners contend for it no
// more than for their shard.
type waits struct {
	clock     *waitClock
	recs      []*results.WaitRecorder
	sectioned atomic.Bool  // some holds ran in the implementation's process
	spunWarm  atomic.Int64 // ns spun by the warmup's end
}

func newWaits(shards int) *waits {
	w := &waits{clock: newWaitClock(), recs: make([]*results.WaitRecorder, max(shards, 1))}
	for i := range w.recs {
		w.recs[i] = &results.WaitRecorder{}
	}
	return w
}

// warmEnded notes the spin so far, which the warmup spent.
func (w *waits) warmEnded() { w.spunWarm.Store(w.clock.spun.Load()) }

// rec is where owner i records.
func (w *waits) rec(i int) *results.WaitRecorder { return w.recs[i%len(w.recs)] }

// result is what the run's waits achieved, with the spinning's share of
// the load generator's CPU over the measured time when cpu has it.
func (w *waits) result(cpu *results.CPU, measuredS float64) *results.Waits {
	all := &results.WaitRecorder{}
	for _, r := range w.recs {
		all.Merge(r)
	}
	res := all.Waits()
	res.SpinS = time.Duration(w.clock.spun.Load() - w.spunWarm.Load()).Seconds()
	if cpu != nil && cpu.Load > 0 && measuredS > 0 {
		res.SpinShare = res.SpinS / (cpu.Load * measuredS)
	}
	if w.sectioned.Load() {
		res.HoldNote = results.HoldInImpl
	}
	return res
}
