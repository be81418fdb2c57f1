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
// fired lately, so a busy process spins little.

// waitClock is what a run's waiters share: the stretch before a deadline
// at which they stop sleeping, and the spinner that wakes them.
type waitClock struct {
	slack   atomic.Int64 // ns
	decayed atomic.Int64 // when the stretch last came down, unix ns

	mu       sync.Mutex
	due      dueHeap      // waits in their last stretch, earliest deadline first
	spinning bool         // the spinner runs
	spun     atomic.Int64 // ns the spinner ran, in all
}

// due is one wait in its last stretch.
type due struct {
	at   time.Time
	wake chan struct{} // the waiter's, 1 buffered: sent when at came
	i    int           // index in the heap, -1 once woken
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
// whatever it does.
const (
	minSlack     = 50 * time.Microsecond
	maxSlack     = 3 * time.Millisecond
	initialSlack = 1500 * time.Microsecond
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

// await adds d to the waits in their last stretch, starting the spinner
// if it is not running.
func (c *waitClock) await(d *due) {
	c.mu.Lock()
	heap.Push(&c.due, d)
	start := !c.spinning
	c.spinning = true
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
		d.i = -1
	}
	c.mu.Unlock()
	if woken {
		<-d.wake
	}
}

// spin wakes each wait when its deadline comes, until none is left.
func (c *waitClock) spin() {
	last := time.Now()
	for {
		c.mu.Lock()
		now := time.Now()
		for len(c.due) > 0 && !now.Before(c.due[0].at) {
			heap.Pop(&c.due).(*due).wake <- struct{}{}
		}
		c.spun.Add(int64(now.Sub(last)))
		last = now
		if len(c.due) == 0 {
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
	if d := deadline.Sub(now); d > 0 {
		if spin := w.clock.stretch(d); d > spin {
			r := w.sleep(ctx, lost, deadline.Add(-spin))
			if r.end != waited {
				return r
			}
			now = r.at
		}
	}
	if !now.Before(deadline) {
		return waitResult{end: waited, at: now}
	}
	if w.due.wake == nil {
		w.due.wake = make(chan struct{}, 1) // on first use: owners that never wait need none
	}
	w.due.at = deadline
	w.clock.await(&w.due)
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

// sleep waits on the timer alone until wake, or until lost is ready or
// ctx ends, and tells the clock how late the timer fired.
func (w *waiter) sleep(ctx context.Context, lost <-chan struct{}, wake time.Time) waitResult {
	w.timer.Reset(time.Until(wake))
	select {
	case <-w.timer.C:
		now := time.Now()
		w.clock.observe(now.Sub(wake), now)
		return waitResult{end: waited, at: now}
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
