package workloads

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/results"
)

// Holds, think times and open-loop pacing wait through a waiter, and how
// they wait is paid for by the host that Redis shares. A waiter sleeps on
// its Go timer. While the process is busy the runtime checks its timers as
// it schedules and they fire within microseconds; while it is idle they
// wait in epoll_wait, whose timeout counts whole milliseconds, and fire up
// to a millisecond late, so a hold would last longer at low load than at
// high. The clock watches how late the timers fire, and while they are
// late the run's high-resolution clock (hrClock: a timerfd in the runtime's
// poller) kicks the runtime awake at each deadline, at no CPU cost while it
// sleeps; a busy run pays nothing for it. Then a hold, and one hold at a
// time, may spin its last few tens of microseconds, to be on time where
// the wake-up alone is late, and only while the host has an idle core to
// spin on: think times and open-loop pacing never spin (their lateness is
// recorded, and open loop charges it as latency). A wait long enough that
// a Go timer's lateness is within its bound sleeps on its timer alone.
// With Config.SpinWaits every wait spins its last stretch instead
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
	// idleForKick is the idle CPU the host must have had for the clock to
	// kick: a waiter woken on time needs a core to run on, and on a host
	// without one it is late, kicked or not.
	idleForKick = 0.5
	// kickAbove is the lateness above which a Go timer fired late: a busy
	// process's timers fire well within it, an idle one's up to a
	// millisecond after.
	kickAbove = 50 * time.Microsecond
	// While the clock does not kick, it starts to once kickOn of a block of
	// kickBlock waits fired late: a busy process's timers are rarely late
	// three times in four, an idle one's always are.
	kickBlock = 16
	kickOn    = 12
	// While it kicks, probeWindow waits in every probeEvery go unkicked to
	// see whether the kicks are still needed: rarely enough that the late
	// ones stay well beyond the 99th percentile. It goes on kicking only
	// while more than half of them fired late, and a quarter more of them
	// than of the kicked waits since the last window: a host too busy to
	// run the waiters on time makes them late kicked or not, and then the
	// kicks only cost.
	probeEvery  = 2048
	probeWindow = 8
)

// waitClock is what a run's waiters share: the high-resolution clock, or
// with SpinWaits the spinner, and whether and how far holds spin.
type waitClock struct {
	hr   *hrClock   // nil: Go timers (no timerfd here) or the spinner
	spin *spinClock // with SpinWaits
	// hrErr is why hr is nil without SpinWaits.
	hrErr error

	late    atomic.Int64  // ns: the kicked wake-ups' lateness, tracked to its 75th percentile
	tails   atomic.Bool   // the host has an idle core: holds may spin their tails
	tailNs  atomic.Int64  // ns spun in tails, in all
	kicks   atomic.Bool   // the Go timers are late: hr kicks the runtime at each deadline
	noCore  atomic.Bool   // the host has too little idle CPU for kicks to help
	waits   atomic.Uint64 // the waits so far, to place the probe windows
	probing atomic.Int32  // unkicked waits left in the probe window
	seen    atomic.Int32  // unkicked waits in the block or window so far
	lateN   atomic.Int32  // of them, those that fired late
	// The kicked waits since the last probe window, and those late.
	kickedN, kickedLate atomic.Int64
	// The waits the clock timed, and those it kicked, in all.
	timed, kickedAll atomic.Int64
	spinner          atomic.Bool // a hold has claimed the tail spin
}

// newWaitClock is a run's clock: the spinner with spin, else the
// high-resolution clock (Go timers alone where none can be had). Close it
// when the run ends.
func newWaitClock(spin bool) *waitClock {
	c := &waitClock{}
	if spin {
		c.spin = newSpinClock()
		return c
	}
	c.hr, c.hrErr = newHRClock()
	return c
}

// close stops the clock.
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

// timerCPU is the CPU the clock spent kicking the runtime awake.
func (c *waitClock) timerCPU() time.Duration {
	if c.hr == nil {
		return 0
	}
	return c.hr.cpu()
}

// tail is how long before its deadline a hold stops sleeping and spins: 0
// while the host has no idle core or the clock needs no kicks (the timers
// are on time).
func (c *waitClock) tail() time.Duration {
	if !c.tails.Load() || !c.kicks.Load() {
		return 0
	}
	return min(time.Duration(c.late.Load())+tailMargin, maxTail)
}

// kicked reports whether a wait should have the clock kick the runtime at
// its deadline: while the timers are late, all but the probes.
func (c *waitClock) kicked() bool {
	if !c.kicks.Load() || c.noCore.Load() {
		return false
	}
	if c.waits.Add(1)%probeEvery == 0 {
		c.seen.Store(0)
		c.lateN.Store(0)
		c.probing.Store(probeWindow)
	}
	return c.probing.Load() <= 0 || c.probing.Add(-1) < 0
}

// unkicked notes how late a Go timer fired on its own, and at the end of a
// block (or probe window) whether the clock should kick from now on.
func (c *waitClock) unkicked(late time.Duration) {
	l := c.lateN.Load()
	if late > kickAbove {
		l = c.lateN.Add(1)
	}
	n := c.seen.Add(1)
	on := c.kicks.Load()
	switch {
	case on && n >= probeWindow:
		probed := float64(l) / float64(n)
		kicked := float64(c.kickedLate.Load()) / float64(max(c.kickedN.Load(), 1))
		on = probed > 0.5 && probed > kicked+0.25
		c.kickedN.Store(0)
		c.kickedLate.Store(0)
	case !on && n >= kickBlock:
		on = l >= kickOn
	default:
		return
	}
	c.seen.Store(0)
	c.lateN.Store(0)
	c.kicks.Store(on)
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
// the last sample, counting this run's tail spin as idle (it yields to any
// work): holds spin their tails only while a whole core is, and the clock
// kicks only while half of one is.
func (c *waitClock) hostIdle(cores float64) {
	c.tails.Store(cores >= idleForSpin)
	c.noCore.Store(cores < idleForKick)
}

// longWait reports whether a wait of d may sleep on a Go timer: its
// lateness, up to maxSlack, is within the bound a wait of d may stray by.
func longWait(d time.Duration) bool {
	return float64(d)*results.WaitBoundShare >= float64(maxSlack)
}

// due is one wait on a clock: the high-resolution clock's or the spinner's.
type due struct {
	at    time.Time
	wake  chan struct{} // the spinner's waiter's, 1 buffered: sent when at came
	i     int           // index in the heap, -1 once off it
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
	kick := c.kicked()
	var tail time.Duration
	if hold && kick {
		// One hold at a time spins: the spin's cost stays within a core,
		// and its time spun within the CPU it took.
		if tl := c.tail(); tl > 0 && c.spinner.CompareAndSwap(false, true) {
			defer c.spinner.Store(false)
			tail = tl
		}
	}
	if d <= tail {
		return w.spinTail(ctx, lost, deadline)
	}
	c.timed.Add(1)
	if kick {
		c.kickedAll.Add(1)
	}
	wake := deadline.Add(-tail)
	t := w.goTimer(wake.Sub(now))
	if kick {
		// The kick comes no earlier than the timer is due, which is a
		// little after wake: one that came before would find nothing to
		// fire, and the runtime would sleep on, a millisecond at a time.
		w.due.at = time.Now().Add(wake.Sub(now))
		c.hr.add(&w.due)
	}
	select {
	case <-t.C:
	case <-lost:
		t.Stop()
		c.hr.cancel(&w.due)
		return waitResult{end: waitLost, at: time.Now()}
	case <-ctx.Done():
		t.Stop()
		c.hr.cancel(&w.due)
		return waitResult{end: waitCut, at: time.Now()}
	}
	now = time.Now()
	if kick {
		c.hr.cancel(&w.due)
		c.woke(now.Sub(wake))
		c.kickedN.Add(1)
		if now.Sub(wake) > kickAbove {
			c.kickedLate.Add(1)
		}
	} else {
		c.unkicked(now.Sub(wake))
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
	// By the warmup's end: the time spun, the clock's CPU, and the waits
	// it timed and kicked.
	spunWarm, timerWarm, timedWarm, kickedWarm atomic.Int64
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
	w.timedWarm.Store(w.clock.timed.Load())
	w.kickedWarm.Store(w.clock.kickedAll.Load())
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
	if timed := w.clock.timed.Load() - w.timedWarm.Load(); timed > 0 {
		res.KickedShare = float64(w.clock.kickedAll.Load()-w.kickedWarm.Load()) / float64(timed)
	}
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
