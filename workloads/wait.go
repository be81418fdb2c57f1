package workloads

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/results"
)

// Holds, think times and open-loop pacing wait through a waiter, and how
// they wait is paid for by the host that Redis shares. A Go timer on Linux
// fires up to a millisecond late when the process is idle (the runtime
// polls with millisecond timeouts), so a hold of a timer alone lasts longer
// at low load than at high. A waiter sleeps instead on the run's
// high-resolution clock (hrClock: a timer thread on a timerfd), which wakes
// it within the scheduler's wake-up at no CPU cost while it sleeps. A hold,
// and only a hold, may spin its last few tens of microseconds, to be on
// time where the wake-up alone is late, and only while the host has an
// idle core to spin on: think times and open-loop pacing never spin (their
// lateness is recorded, and open loop charges it as latency). A wait long
// enough that a Go timer's lateness is within its bound sleeps on a Go
// timer. With Config.SpinWaits every wait spins its last stretch instead
// (spinClock): exact, at the host's expense.

// The tail spin's bounds: a hold is woken tailLead before its deadline and
// spins the rest, where tailLead follows the clock's wake-ups to about
// their 75th percentile of lateness (so most holds spin a little and few
// wake late), plus tailMargin, within maxTail.
const (
	maxTail    = 50 * time.Microsecond
	tailMargin = 5 * time.Microsecond
	// tailStep is how far one wake-up moves the lateness estimate: up by
	// tailUp steps when later than it, down by one when not, which settles
	// where a wake-up is later a quarter of the time.
	tailStep = time.Microsecond
	tailUp   = 3
	// idleForSpin is the idle CPU, in cores, the host must have had over
	// the last sample for holds to spin their tails: a whole core that
	// neither Redis nor anything else wanted.
	idleForSpin = 1.0
)

// waitClock is what a run's waiters share: the high-resolution clock, or
// with SpinWaits the spinner, and whether and how far holds spin.
type waitClock struct {
	hr   *hrClock   // nil: Go timers (no timerfd here) or the spinner
	spin *spinClock // with SpinWaits
	// hrErr is why hr is nil without SpinWaits.
	hrErr error

	late   atomic.Int64 // ns: the wake-ups' lateness, tracked to its 75th percentile
	tails  atomic.Bool  // the host has an idle core: holds may spin their tails
	tailNs atomic.Int64 // ns spun in tails, in all
}

// newWaitClock is a run's clock: the spinner with spin, else the timer
// thread (Go timers where none can be had). Close it when the run ends.
func newWaitClock(spin bool) *waitClock {
	c := &waitClock{}
	if spin {
		c.spin = newSpinClock()
		return c
	}
	c.hr, c.hrErr = newHRClock()
	return c
}

// close stops the timer thread.
func (c *waitClock) close() {
	if c.hr != nil {
		c.hr.close()
	}
}

// spun is the time spun in all, tails and the spinner's.
func (c *waitClock) spun() time.Duration {
	d := time.Duration(c.tailNs.Load())
	if c.spin != nil {
		d += time.Duration(c.spin.spun.Load())
	}
	return d
}

// timerCPU is the CPU the timer thread has used.
func (c *waitClock) timerCPU() time.Duration {
	if c.hr == nil {
		return 0
	}
	return c.hr.cpu()
}

// tail is how long before its deadline a hold stops sleeping and spins: 0
// while the host has no idle core.
func (c *waitClock) tail() time.Duration {
	if !c.tails.Load() {
		return 0
	}
	return min(time.Duration(c.late.Load())+tailMargin, maxTail)
}

// woke notes that the clock woke a wait late after its time.
func (c *waitClock) woke(late time.Duration) {
	l := time.Duration(c.late.Load())
	switch {
	case late > l:
		l = min(l+tailUp*tailStep, maxTail)
	case l >= tailStep:
		l -= tailStep
	}
	c.late.Store(int64(l))
}

// hostIdle tells the clock how many of the host's cores were idle over
// the last sample, counting this run's tail spins as idle (they yield to
// any work): holds spin their tails only while a whole core is.
func (c *waitClock) hostIdle(cores float64) { c.tails.Store(cores >= idleForSpin) }

// longWait reports whether a wait of d may sleep on a Go timer: its
// lateness, up to maxSlack, is within the bound a wait of d may stray by.
func longWait(d time.Duration) bool {
	return float64(d)*results.WaitBoundShare >= float64(maxSlack)
}

// due is one wait on a clock: the timer thread's or the spinner's.
type due struct {
	at    time.Time
	wake  chan struct{} // the waiter's, 1 buffered: sent when at came
	i     int           // index in the heap, -1 once woken
	armed bool          // the spinner's: in its last stretch, the spinner runs for it
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

// waiter is one worker's precise wait: its Go timer (made on first use:
// most waits never need one), its entry in the run's clock, and where it
// records.
type waiter struct {
	clock *waitClock
	timer *time.Timer
	due   due                   // its entry in the clock while it sleeps there
	rec   *results.WaitRecorder // where measured waits are recorded
}

func newWaiter(c *waitClock, rec *results.WaitRecorder) waiter {
	return waiter{clock: c, due: due{i: -1}, rec: rec}
}

// goTimer is the waiter's Go timer, set to fire after d.
func (w *waiter) goTimer(d time.Duration) *time.Timer {
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	return w.timer
}

// until waits until deadline, or until lost is ready (nil: never) or ctx
// ends, whichever comes first. A hold (hold true) may spin its last
// stretch.
func (w *waiter) until(ctx context.Context, lost <-chan struct{}, deadline time.Time, hold bool) waitResult {
	now := time.Now()
	d := deadline.Sub(now)
	if d <= 0 {
		return waitResult{end: waited, at: now}
	}
	c := w.clock
	if c.spin != nil {
		return w.spinUntil(ctx, lost, deadline, d)
	}
	if c.hr == nil || longWait(d) {
		return w.sleep(ctx, lost, deadline)
	}
	var tail time.Duration
	if hold {
		tail = c.tail()
	}
	if d <= tail {
		return w.spinTail(ctx, lost, deadline)
	}
	if w.due.wake == nil {
		w.due.wake = make(chan struct{}, 1) // on first use: owners that never wait need none
	}
	w.due.at = deadline.Add(-tail)
	c.hr.add(&w.due)
	select {
	case <-w.due.wake:
	case <-lost:
		c.hr.cancel(&w.due)
		return waitResult{end: waitLost, at: time.Now()}
	case <-ctx.Done():
		c.hr.cancel(&w.due)
		return waitResult{end: waitCut, at: time.Now()}
	}
	now = time.Now()
	if late := now.Sub(w.due.at); late >= 0 {
		c.woke(late)
	} else {
		// Woken early: the clock closed under the wait.
		return w.sleep(ctx, lost, deadline)
	}
	if !now.Before(deadline) {
		return waitResult{end: waited, at: now}
	}
	return w.spinTail(ctx, lost, deadline)
}

// spinTail spins to deadline, yielding between looks at the clock, or
// until lost is ready or ctx ends.
func (w *waiter) spinTail(ctx context.Context, lost <-chan struct{}, deadline time.Time) waitResult {
	start := time.Now()
	r := waitResult{end: waited}
	for {
		now := time.Now()
		if !now.Before(deadline) {
			r.at = now
			break
		}
		select {
		case <-lost:
			r = waitResult{end: waitLost, at: now}
		case <-ctx.Done():
			r = waitResult{end: waitCut, at: now}
		default:
			runtime.Gosched()
			continue
		}
		break
	}
	w.clock.tailNs.Add(int64(r.at.Sub(start)))
	return r
}

// sleep waits on the Go timer alone until deadline, or until lost is ready
// or ctx ends: a wait long enough that its timer's lateness is within bound.
func (w *waiter) sleep(ctx context.Context, lost <-chan struct{}, deadline time.Time) waitResult {
	t := w.goTimer(time.Until(deadline))
	select {
	case <-t.C:
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
	sectioned atomic.Bool // some holds ran in the implementation's process
	// By the warmup's end: the time spun and the timer thread's CPU.
	spunWarm, timerWarm atomic.Int64
	// The spin when the host was last sampled, and when (hostSampled).
	spunAt   time.Duration
	sampleAt time.Time
}

func newWaits(shards int, spin bool) *waits {
	w := &waits{clock: newWaitClock(spin), recs: make([]*results.WaitRecorder, max(shards, 1))}
	for i := range w.recs {
		w.recs[i] = &results.WaitRecorder{}
	}
	return w
}

// warmEnded notes what the waits cost so far, which the warmup spent.
func (w *waits) warmEnded() {
	w.spunWarm.Store(int64(w.clock.spun()))
	w.timerWarm.Store(int64(w.clock.timerCPU()))
}

// hostSampled tells the clock how idle the host was since the last
// sample, the tails spun meanwhile counted as idle: they would yield to
// any other work, and would otherwise switch themselves off. Called by
// the run's CPU meter, one sample at a time.
func (w *waits) hostSampled(idle float64, at time.Time) {
	spun := w.clock.spun()
	if dt := at.Sub(w.sampleAt).Seconds(); !w.sampleAt.IsZero() && dt > 0 {
		idle += (spun - w.spunAt).Seconds() / dt
	}
	w.spunAt, w.sampleAt = spun, at
	w.clock.hostIdle(idle)
}

// rec is where owner i records.
func (w *waits) rec(i int) *results.WaitRecorder { return w.recs[i%len(w.recs)] }

// result is what the run's waits achieved and what they cost, and closes
// the clock: the waits' CPU goes into cpu (Waits) when it was measured.
func (w *waits) result(cpu *results.CPU, measuredS float64) *results.Waits {
	timer := w.clock.timerCPU() - time.Duration(w.timerWarm.Load())
	w.clock.close()
	all := &results.WaitRecorder{}
	for _, r := range w.recs {
		all.Merge(r)
	}
	res := all.Waits()
	res.SpinS = (w.clock.spun() - time.Duration(w.spunWarm.Load())).Seconds()
	res.TimerS = max(0, timer.Seconds())
	switch {
	case w.clock.spin != nil:
		res.Clock = results.WaitClockSpin
	case w.clock.hr != nil:
		res.Clock = results.WaitClockTimer
	default:
		res.Clock = results.WaitClockGo
		if w.clock.hrErr != nil {
			res.ClockNote = w.clock.hrErr.Error()
		}
	}
	if cpu != nil && measuredS > 0 {
		cpu.Waits = (res.SpinS + res.TimerS) / measuredS
		if own := cpu.Own(); own > 0 {
			res.SpinShare = min(1, res.SpinS/(own*measuredS))
			res.CPUShare = min(1, (res.SpinS+res.TimerS)/(own*measuredS))
		}
	}
	if w.sectioned.Load() {
		res.HoldNote = results.HoldInImpl
	}
	return res
}
