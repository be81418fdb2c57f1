package workloads

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/results"
)

// A Go timer on Linux fires up to milliseconds late when the process is
// idle (the scheduler polls with millisecond timeouts) and on time when it
// is busy, so a hold of a timer alone lasts longer at low load than at
// high. A waiter sleeps on its timer until a stretch before the deadline
// and spins from there, looking at the clock and yielding the processor
// between looks; the stretch follows how late the process's timers have
// fired lately, so a busy process spins little.

// waitClock is what a run's waiters share: the stretch before a deadline
// at which they stop sleeping.
type waitClock struct {
	slack atomic.Int64 // ns
	// spinners is how many waits spin now, at most maxSpinners: a spinner
	// holds a CPU from everything else on the host (Redis too), and past
	// the CPUs there are, more spinners only delay each other. A wait
	// that finds no room sleeps to its deadline instead; with the others
	// spinning, the process is busy and its timers fire closer to time.
	spinners    atomic.Int32
	maxSpinners int32
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
	// the way down; one above sets it, so it tracks the recent worst.
	slackDecay = 32
	// slackMargin is added to an observed lateness that sets the stretch.
	slackMargin = 20 * time.Microsecond
)

func newWaitClock() *waitClock {
	c := &waitClock{maxSpinners: int32(defaultSpinners())}
	c.slack.Store(int64(initialSlack))
	return c
}

// defaultSpinners is half the CPUs the process may use, at least one: the
// other half stays for the lock client and, on a shared host, Redis.
func defaultSpinners() int { return max(1, runtime.GOMAXPROCS(0)/2) }

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

// observe notes that a timer set for a time fired late by late.
func (c *waitClock) observe(late time.Duration) {
	s := time.Duration(c.slack.Load())
	switch {
	case late+slackMargin > s:
		s = late + slackMargin
	default:
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

// waitResult is how a wait ended, when, and how much of it was spun.
type waitResult struct {
	end  waitEnd
	at   time.Time
	spun time.Duration
}

// waiter is one worker's precise wait: its timer and its run's clock.
// Holds, think times and open-loop pacing all wait through it.
type waiter struct {
	clock *waitClock
	timer *time.Timer
	rec   *results.WaitRecorder // where measured waits are recorded
}

func newWaiter(c *waitClock, rec *results.WaitRecorder) waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return waiter{clock: c, timer: t, rec: rec}
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
	if w.clock.spinners.Add(1) > w.clock.maxSpinners {
		w.clock.spinners.Add(-1)
		return w.sleep(ctx, lost, deadline)
	}
	defer w.clock.spinners.Add(-1)
	from := now
	for now.Before(deadline) {
		select {
		case <-lost:
			return waitResult{end: waitLost, at: time.Now(), spun: time.Since(from)}
		case <-ctx.Done():
			return waitResult{end: waitCut, at: time.Now(), spun: time.Since(from)}
		default:
		}
		runtime.Gosched()
		now = time.Now()
	}
	return waitResult{end: waited, at: now, spun: now.Sub(from)}
}

// sleep waits on the timer alone until wake, or until lost is ready or
// ctx ends, and tells the clock how late the timer fired.
func (w *waiter) sleep(ctx context.Context, lost <-chan struct{}, wake time.Time) waitResult {
	w.timer.Reset(time.Until(wake))
	select {
	case <-w.timer.C:
		now := time.Now()
		w.clock.observe(now.Sub(wake))
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
	w.rec.Record(k, asked, r.at.Sub(begin), r.spun)
}

// waits is a run's waiting: the clock its waiters share and where they
// record, one recorder per results shard so that owners contend for it no
// more than for their shard.
type waits struct {
	clock     *waitClock
	recs      []*results.WaitRecorder
	sectioned atomic.Bool // some holds ran in the implementation's process
}

func newWaits(shards int) *waits {
	w := &waits{clock: newWaitClock(), recs: make([]*results.WaitRecorder, max(shards, 1))}
	for i := range w.recs {
		w.recs[i] = &results.WaitRecorder{}
	}
	return w
}

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
	if cpu != nil && cpu.Load > 0 && measuredS > 0 {
		res.SpinShare = res.SpinS / (cpu.Load * measuredS)
	}
	if w.sectioned.Load() {
		res.HoldNote = results.HoldInImpl
	}
	return res
}
