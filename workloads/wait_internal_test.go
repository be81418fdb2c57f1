package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/results"
)

// TestWaitStretch: the spun part of a wait follows its length and the
// clock's slack.
func TestWaitStretch(t *testing.T) {
	c := newSpinClock()
	c.slack.Store(int64(time.Millisecond))
	for _, tc := range []struct {
		d, want time.Duration
	}{
		{-time.Second, 0},
		{0, 0},
		{50 * time.Microsecond, 50 * time.Microsecond},                 // within the slack: spun whole
		{time.Millisecond, time.Millisecond},                           // at the slack
		{10 * time.Millisecond, time.Millisecond},                      // slept, then the slack spun
		{maxSlack * 50, time.Millisecond},                              // the timer's lateness is still past the bound
		{time.Duration(float64(maxSlack) / results.WaitBoundShare), 0}, // within the bound: slept whole
		{time.Hour, 0},
	} {
		if got := c.stretch(tc.d); got != tc.want {
			t.Errorf("stretch(%v) = %v, want %v", tc.d, got, tc.want)
		}
	}
}

// TestWaitObserve: a clock starts at the worst slack; a late timer sets it at once, within its bounds;
// punctual ones pull it down gradually, at most once per decayEvery
// however many there are, and not below minSlack.
func TestWaitObserve(t *testing.T) {
	c := newSpinClock()
	if got := time.Duration(c.slack.Load()); got != maxSlack {
		t.Errorf("a new clock's slack = %v, want the worst, %v", got, maxSlack)
	}
	c.slack.Store(int64(minSlack))
	at := time.Unix(1000, 0) // the clock the observations are made at
	c.observe(2*time.Millisecond, at)
	if got, want := time.Duration(c.slack.Load()), 2*time.Millisecond+slackMargin; got != want {
		t.Errorf("after a 2ms lateness slack = %v, want %v", got, want)
	}
	c.observe(time.Hour, at)
	if got := time.Duration(c.slack.Load()); got != maxSlack {
		t.Errorf("after an hour's lateness slack = %v, want the bound %v", got, maxSlack)
	}
	at = at.Add(decayEvery)
	c.observe(0, at)
	stepped := time.Duration(c.slack.Load())
	if stepped >= maxSlack || stepped < maxSlack-maxSlack/slackDecay {
		t.Errorf("one punctual timer took slack from %v to %v, want a step of at most 1/%d", maxSlack, stepped, slackDecay)
	}
	for range 100 {
		c.observe(0, at.Add(decayEvery/2))
	}
	if got := time.Duration(c.slack.Load()); got != stepped {
		t.Errorf("a hundred punctual timers within %v took slack from %v to %v, want no further step", decayEvery, stepped, got)
	}
	for range 10 * slackDecay {
		at = at.Add(decayEvery)
		c.observe(0, at)
	}
	if got := time.Duration(c.slack.Load()); got != minSlack {
		t.Errorf("after many punctual timers slack = %v, want the floor %v", got, minSlack)
	}
}

// waitCase is a waiter on a fresh spinner whose slack is given.
func waitCase(slack time.Duration) (*waiter, *results.WaitRecorder) {
	c := newSpinClock()
	c.slack.Store(int64(slack))
	rec := &results.WaitRecorder{}
	w := newWaiter(&waitClock{spin: c}, rec)
	return &w, rec
}

// TestWaitEnds: a wait ends at its deadline, or early when lost is ready
// or ctx ends, in its sleeping stretch or its spinning one; a deadline
// passed returns at once.
func TestWaitEnds(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		lost  <-chan struct{}
		d     time.Duration
		slack time.Duration
		want  waitEnd
	}{
		{"deadline passed", context.Background(), nil, -time.Second, maxSlack, waited},
		{"zero", context.Background(), nil, 0, maxSlack, waited},
		{"spun whole", context.Background(), nil, 100 * time.Microsecond, maxSlack, waited},
		{"slept then spun", context.Background(), nil, 5 * time.Millisecond, minSlack, waited},
		{"lost while sleeping", context.Background(), closed, time.Hour, minSlack, waitLost},
		{"lost while spinning", context.Background(), closed, 200 * time.Millisecond, time.Hour, waitLost},
		{"cut while sleeping", cancelled, nil, time.Hour, minSlack, waitCut},
		{"cut while spinning", cancelled, nil, 200 * time.Millisecond, time.Hour, waitCut},
	} {
		t.Run("spinner/"+tc.name, func(t *testing.T) {
			w, _ := waitCase(tc.slack) // an hour: more than observe allows, so the wait spins whole
			if got := w.clock.spin.stretch(tc.d); tc.slack == time.Hour && got != tc.d {
				t.Fatalf("stretch(%v) = %v, want it spun whole", tc.d, got)
			}
			deadline := time.Now().Add(tc.d)
			r := w.until(tc.ctx, tc.lost, deadline, true)
			if r.end != tc.want {
				t.Fatalf("ended %d, want %d", r.end, tc.want)
			}
			if r.end == waited && r.at.Before(deadline) {
				t.Errorf("returned at %v, before the deadline %v", r.at, deadline)
			}
		})
		// The same on the high-resolution clock, its tail spun where the spinner's
		// stretch is (slack an hour: tails on, within maxTail).
		t.Run("timer/"+tc.name, func(t *testing.T) {
			c := hrWaitClock(t)
			c.kicks.Store(true)
			c.hostIdle(idleForSpin)
			if tc.slack != time.Hour {
				c.hostIdle(0)
			}
			w := newWaiter(c, nil)
			deadline := time.Now().Add(tc.d)
			r := w.until(tc.ctx, tc.lost, deadline, true)
			if r.end != tc.want {
				t.Fatalf("ended %d, want %d", r.end, tc.want)
			}
			if r.end == waited && r.at.Before(deadline) {
				t.Errorf("returned at %v, before the deadline %v", r.at, deadline)
			}
		})
	}
}

// hrWaitClock is a fresh run's clock on the high-resolution clock, closed when t
// ends; t skips where the system has no timerfd.
func hrWaitClock(t testing.TB) *waitClock {
	t.Helper()
	c := newWaitClock(false)
	if c.hr == nil {
		t.Skipf("no timerfd here: %v", c.hrErr)
	}
	t.Cleanup(c.close)
	return c
}

// TestHRClockKicks: the clock keeps its timerfd armed for the earliest
// wait, whatever order they came in, and drops each wait once its
// deadline came, never before.
func TestHRClockKicks(t *testing.T) {
	c := hrWaitClock(t)
	start := time.Now()
	far := &due{at: start.Add(time.Hour)}
	c.hr.add(far)
	armed := func() time.Time {
		c.hr.mu.Lock()
		defer c.hr.mu.Unlock()
		return c.hr.setFor
	}
	if got := armed(); !got.Equal(far.at) {
		t.Fatalf("armed for %v, want the only wait's deadline %v", got, far.at)
	}
	var ds []*due
	for _, i := range []int{7, 3, 12, 0, 9, 5, 15, 1} {
		d := &due{at: start.Add(time.Duration(i+5) * 2 * time.Millisecond)}
		c.hr.add(d)
		ds = append(ds, d)
		if got, want := armed(), slices.MinFunc(ds, func(a, b *due) int { return a.at.Compare(b.at) }).at; got.After(want) {
			t.Errorf("after adding the wait at +%dms: armed for %v, after the earliest wait at %v", (i+5)*2, got, want)
		}
	}
	testkit.Eventually(t, "the clock dropped every wait but the hour-long one", func() bool {
		c.hr.mu.Lock()
		defer c.hr.mu.Unlock()
		return len(c.hr.due) == 1 && c.hr.due[0] == far
	})
	if got := armed(); !got.Equal(far.at) {
		t.Errorf("armed for %v once the others came, want the hour-long wait's %v", got, far.at)
	}
	c.hr.cancel(far)
	if n := len(c.hr.due); n != 0 || far.i != -1 {
		t.Errorf("%d waits left on the clock (the cancelled one at index %d), want none", n, far.i)
	}
	// A wait is never dropped before its time: the loop drops only what
	// came due, so one far in the future outlives a kick for an earlier one.
	soon, later := &due{at: time.Now().Add(2 * time.Millisecond)}, &due{at: time.Now().Add(time.Hour)}
	c.hr.add(later)
	c.hr.add(soon)
	testkit.Eventually(t, "the clock dropped the due wait", func() bool {
		c.hr.mu.Lock()
		defer c.hr.mu.Unlock()
		return soon.i == -1
	})
	if later.i < 0 {
		t.Error("the clock dropped a wait an hour before its time")
	}
	c.hr.cancel(later)
}

// TestHRClockCancel: a wait taken off before its time leaves the clock,
// and once none is left the clock kicks for none: a cancelled deadline
// passes with nothing to drop, and the clock stays armed for what remains.
func TestHRClockCancel(t *testing.T) {
	c := hrWaitClock(t)
	gone := &due{at: time.Now().Add(5 * time.Millisecond)}
	c.hr.add(gone)
	c.hr.cancel(gone)
	c.hr.cancel(gone) // twice is harmless
	if gone.i != -1 || len(c.hr.due) != 0 {
		t.Errorf("cancelled wait at index %d, %d on the clock; want it off", gone.i, len(c.hr.due))
	}
	after := &due{at: time.Now().Add(20 * time.Millisecond)}
	c.hr.add(after)
	testkit.Eventually(t, "the clock dropped the wait after the cancelled one", func() bool {
		c.hr.mu.Lock()
		defer c.hr.mu.Unlock()
		return after.i == -1 && len(c.hr.due) == 0
	})
}

// TestHRClockClose: closing the clock under a wait ends its goroutine,
// and the wait, woken early, still lasts until its deadline (on a Go
// timer); a wait after the close sleeps there too.
func TestHRClockClose(t *testing.T) {
	c := newWaitClock(false)
	if c.hr == nil {
		t.Skipf("no timerfd here: %v", c.hrErr)
	}
	c.kicks.Store(true)
	w := newWaiter(c, nil)
	deadline := time.Now().Add(50 * time.Millisecond)
	done := make(chan waitResult)
	go func() { done <- w.until(context.Background(), nil, deadline, false) }()
	testkit.Eventually(t, "the wait is on the clock", func() bool {
		c.hr.mu.Lock()
		defer c.hr.mu.Unlock()
		return len(c.hr.due) == 1
	})
	c.close()
	late := &due{at: time.Now()}
	c.hr.add(late)
	if late.i != -1 {
		t.Error("a closed clock took a wait")
	}
	if r := <-done; r.end != waited || r.at.Before(deadline) {
		t.Errorf("wait under a closing clock: %+v, want it to last until %v", r, deadline)
	}
	select {
	case <-c.hr.done:
	default:
		t.Error("the clock's goroutine still runs after close")
	}
	deadline = time.Now().Add(10 * time.Millisecond)
	if r := w.until(context.Background(), nil, deadline, false); r.end != waited || r.at.Before(deadline) {
		t.Errorf("wait on a closed clock: %+v, want it to last until %v", r, deadline)
	}
	c.close() // twice is harmless
}

// TestWaitTail: a hold spins its tail only while the host has an idle
// core, the timers are late (the clock kicks) and no other hold spins;
// think times and pacing never spin.
func TestWaitTail(t *testing.T) {
	for _, tc := range []struct {
		name               string
		idle               float64
		hold, kicks, other bool
		spun               bool
	}{
		{"hold, idle core", idleForSpin, true, true, false, true},
		{"hold, busy host", idleForSpin - 0.1, true, true, false, false},
		{"hold, timers on time", idleForSpin, true, false, false, false},
		{"hold, another spinning", idleForSpin, true, true, true, false},
		{"think, idle core", 2, false, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hrWaitClock(t)
			c.hostIdle(tc.idle)
			c.kicks.Store(tc.kicks)
			c.spinner.Store(tc.other)
			c.late.Store(int64(maxTail)) // a wait shorter than the tail spins whole, whatever the wake-ups do
			w := newWaiter(c, nil)
			for _, d := range []time.Duration{maxTail / 2, time.Millisecond} {
				deadline := time.Now().Add(d)
				if r := w.until(context.Background(), nil, deadline, tc.hold); r.end != waited || r.at.Before(deadline) {
					t.Fatalf("wait: %+v, want it to last until %v", r, deadline)
				}
			}
			if spun := c.spun() > 0; spun != tc.spun {
				t.Errorf("spun %v, want spinning %v", c.spun(), tc.spun)
			}
			if c.spinner.Load() != tc.other {
				t.Errorf("tail spin claimed %v after the waits, want %v", c.spinner.Load(), tc.other)
			}
		})
	}
}

// TestWaitKicks: the clock starts to kick once most of a block of Go
// timers fired late, not on a few late ones; while it kicks, a few waits
// in every probeEvery go unkicked, and it stops once most of those are on
// time, or once the kicked waits are as late as they are; and it kicks
// none while the host has no idle core for the waiters.
func TestWaitKicks(t *testing.T) {
	c := &waitClock{}
	block := func(late, of int) {
		for i := range of {
			if i < late {
				c.unkicked(kickAbove + time.Microsecond)
			} else {
				c.unkicked(kickAbove)
			}
		}
	}
	block(kickOn-1, kickBlock)
	if c.kicks.Load() {
		t.Fatalf("kicks after %d late timers of %d", kickOn-1, kickBlock)
	}
	if c.kicked() {
		t.Fatal("a wait kicked while the clock does not kick")
	}
	block(kickOn, kickBlock)
	if !c.kicks.Load() {
		t.Fatalf("no kicks after %d late timers of %d", kickOn, kickBlock)
	}
	c.hostIdle(idleForKick - 0.1)
	if c.kicked() {
		t.Error("a wait kicked on a host with no core for it")
	}
	c.hostIdle(idleForKick)
	unkicked, waits := 0, 4*probeEvery+probeWindow-1 // four whole probe windows
	for range waits {
		if !c.kicked() {
			unkicked++
			c.unkicked(time.Millisecond) // the probes find the timers late: kicks stay on
		}
	}
	if want := 4 * probeWindow; unkicked != want || !c.kicks.Load() {
		t.Errorf("%d of %d waits unkicked, kicks %v; want %d, and kicks on", unkicked, waits, c.kicks.Load(), want)
	}
	for range probeEvery {
		if !c.kicked() {
			c.unkicked(kickAbove / 2)
		}
	}
	if c.kicks.Load() {
		t.Error("still kicks after a probe window found the timers on time")
	}
	// A host too busy to run the waiters on time: the kicked waits are
	// late as often as the probes, and the kicks stop.
	block(kickBlock, kickBlock)
	for range probeEvery {
		if c.kicked() {
			c.kickedN.Add(1)
			c.kickedLate.Add(1)
		} else {
			c.unkicked(time.Millisecond)
		}
	}
	if c.kicks.Load() {
		t.Error("still kicks though the kicked waits were as late as the probes")
	}
}

// TestWaitTailLead: the tail follows the clock's lateness up by three
// steps and down by one, within its bounds, and is 0 while the host has no
// idle core or the timers are on time.
func TestWaitTailLead(t *testing.T) {
	c := &waitClock{}
	c.hostIdle(idleForSpin)
	c.kicks.Store(true)
	if got := c.tail(); got != tailMargin {
		t.Errorf("a new clock's tail = %v, want the margin %v", got, tailMargin)
	}
	c.woke(time.Millisecond)
	if got, want := time.Duration(c.late.Load()), tailUp*tailStep; got != want {
		t.Errorf("after a late wake-up the lateness estimate = %v, want %v", got, want)
	}
	c.woke(0)
	if got, want := time.Duration(c.late.Load()), (tailUp-1)*tailStep; got != want {
		t.Errorf("after a punctual one = %v, want %v", got, want)
	}
	for range 1000 {
		c.woke(time.Second)
	}
	if got := c.tail(); got != maxTail {
		t.Errorf("after many late wake-ups tail = %v, want the bound %v", got, maxTail)
	}
	for range 1000 {
		c.woke(0)
	}
	if got := time.Duration(c.late.Load()); got != 0 {
		t.Errorf("after many punctual wake-ups the estimate = %v, want 0", got)
	}
	c.hostIdle(0.5)
	if got := c.tail(); got != 0 {
		t.Errorf("tail on a busy host = %v, want 0", got)
	}
	c.hostIdle(idleForSpin)
	c.kicks.Store(false)
	if got := c.tail(); got != 0 {
		t.Errorf("tail with the timers on time = %v, want 0", got)
	}
}

// TestWaitsHostSampled: the tails a run spun count as idle in the host's
// sample, so that spinning does not switch itself off; other work does.
func TestWaitsHostSampled(t *testing.T) {
	w := newWaits(1, false)
	defer w.clock.close()
	at := time.Unix(1000, 0)
	w.hostSampled(0.2, at)
	if w.clock.tails.Load() {
		t.Fatal("tails on with 0.2 of a core idle")
	}
	at = at.Add(time.Second)
	w.clock.tailNs.Add(int64(900 * time.Millisecond)) // 0.9 cores spun in that second
	w.hostSampled(0.2, at)
	if !w.clock.tails.Load() {
		t.Error("tails off though 0.9 of the busy core was this run's own spinning")
	}
	at = at.Add(time.Second)
	w.hostSampled(0.2, at) // no spin this time: the host is busy with other work
	if w.clock.tails.Load() {
		t.Error("tails on though other work took the host")
	}
}

// TestWaitsResult: the waits' result names the clock and puts what the
// waits took into the run's CPU, beside lockbench's driving.
func TestWaitsResult(t *testing.T) {
	for _, spin := range []bool{false, true} {
		w := newWaits(1, spin)
		if !spin && w.clock.hr == nil {
			t.Skipf("no timerfd here: %v", w.clock.hrErr)
		}
		w.clock.tailNs.Add(int64(2 * time.Second))
		cpu := &results.CPU{Load: 1.5, Helper: 0.5, LoadLimit: 2}
		res := w.result(cpu, 10)
		want := results.WaitClockTimer
		if spin {
			want = results.WaitClockSpin
		}
		if res.Clock != want {
			t.Errorf("spin %v: clock %q, want %q", spin, res.Clock, want)
		}
		if res.SpinS != 2 || cpu.Waits < 0.2 || cpu.Waits > 0.21 || res.SpinShare != 0.2 || res.CPUShare < 0.2 {
			t.Errorf("spin %v: spun %vs, CPU.Waits %v, shares %v %v; want 2s spun, 0.2 cores, 20%% of lockbench's own 1 core",
				spin, res.SpinS, cpu.Waits, res.SpinShare, res.CPUShare)
		}
		if d := cpu.Driving(); d < 0.79 || d > 0.8 {
			t.Errorf("spin %v: driving %v cores, want lockbench's own 1 less the waits' 0.2", spin, d)
		}
	}
}

// TestWaitSpinner: one spinner wakes many waits, each at or after its
// deadline, and stops when none is left.
func TestWaitSpinner(t *testing.T) {
	c := newSpinClock()
	c.slack.Store(int64(maxSlack))
	var wg sync.WaitGroup
	for i := range 16 {
		w := newWaiter(&waitClock{spin: c}, nil)
		wg.Go(func() {
			deadline := time.Now().Add(time.Duration(i) * 100 * time.Microsecond)
			if r := w.until(context.Background(), nil, deadline, false); r.end != waited || r.at.Before(deadline) {
				t.Errorf("wait %d: %+v, want woken at or after %v", i, r, deadline)
			}
		})
	}
	wg.Wait()
	testkit.Eventually(t, "the spinner stopped", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return !c.spinning && len(c.due) == 0
	})
	if c.spun.Load() <= 0 {
		t.Error("no spin counted")
	}
}

// TestWaitSpinnerWakesLateTimers: while the spinner runs for a wait in
// its last stretch, it wakes another whose timer has not fired (as a timer
// may not, late) at its deadline, and it stops once no wait is in its last
// stretch, though waits still asleep remain.
func TestWaitSpinnerWakesLateTimers(t *testing.T) {
	c := newSpinClock()
	keep := &due{wake: make(chan struct{}, 1), at: time.Now().Add(time.Hour)}
	c.await(keep, true)
	asleep := &due{wake: make(chan struct{}, 1), at: time.Now().Add(5 * time.Millisecond)}
	c.await(asleep, false)
	later := &due{wake: make(chan struct{}, 1), at: time.Now().Add(time.Hour)}
	c.await(later, false)
	select {
	case <-asleep.wake:
		if now := time.Now(); now.Before(asleep.at) {
			t.Errorf("woken %v before its deadline", asleep.at.Sub(now))
		}
	case <-time.After(time.Minute):
		t.Fatal("the spinner did not wake a wait whose timer never fired")
	}
	c.cancel(keep)
	testkit.Eventually(t, "the spinner stopped with no wait in its last stretch", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return !c.spinning
	})
	c.mu.Lock()
	left := len(c.due)
	c.mu.Unlock()
	if left != 1 {
		t.Errorf("%d waits left, want the one still asleep", left)
	}
	c.cancel(later)
}

// TestWaitCancelWoken: a wait cancelled after the spinner woke it leaves
// no wake-up behind for the next.
func TestWaitCancelWoken(t *testing.T) {
	w, _ := waitCase(maxSlack)
	w.due.wake = make(chan struct{}, 1)
	w.due.at = time.Now()
	w.clock.spin.await(&w.due, true)
	testkit.Eventually(t, "the spinner woke the wait", func() bool { return len(w.due.wake) == 1 })
	w.clock.spin.cancel(&w.due)
	if len(w.due.wake) != 0 {
		t.Fatal("a wake-up was left behind")
	}
	lost := make(chan struct{})
	close(lost)
	w.clock.spin.slack.Store(int64(time.Hour)) // the spinner's wait, whole
	if r := w.until(context.Background(), lost, time.Now().Add(200*time.Millisecond), true); r.end != waitLost {
		t.Errorf("next wait ended %d, want lost", r.end)
	}
}

// TestWaitLostWakes: a hold asleep on its timer wakes when lost becomes
// ready later, not at its deadline.
func TestWaitLostWakes(t *testing.T) {
	w, _ := waitCase(minSlack)
	lost := make(chan struct{})
	go func() { time.Sleep(10 * time.Millisecond); close(lost) }()
	done := make(chan waitResult)
	go func() { done <- w.until(context.Background(), lost, time.Now().Add(time.Hour), true) }()
	select {
	case r := <-done:
		if r.end != waitLost {
			t.Fatalf("ended %d, want lost", r.end)
		}
	case <-time.After(time.Minute):
		t.Fatal("a lost hold kept waiting")
	}
}

// TestWaitRecord: only measured waits that ran to their deadline are
// recorded.
func TestWaitRecord(t *testing.T) {
	w, rec := waitCase(maxSlack)
	begin := time.Now()
	w.record(results.WaitHold, begin, time.Millisecond, waitResult{end: waited, at: begin.Add(time.Millisecond + 10*time.Microsecond)}, true)
	w.record(results.WaitHold, begin, time.Millisecond, waitResult{end: waited, at: begin.Add(time.Second)}, false)       // warmup
	w.record(results.WaitHold, begin, time.Millisecond, waitResult{end: waitLost, at: begin.Add(time.Microsecond)}, true) // lost
	w.record(results.WaitThink, begin, time.Millisecond, waitResult{end: waitCut, at: begin.Add(time.Microsecond)}, true) // cut
	got := rec.Waits()
	if got.Hold == nil || got.Hold.Count != 1 || got.Hold.Max < 9.9 || got.Hold.Max > 10.1 || got.Hold.AskedMean != 1000 {
		t.Errorf("hold = %+v, want one wait 10µs over 1000µs", got.Hold)
	}
	if got.Think != nil || got.Start != nil {
		t.Errorf("think %+v, start %+v: want none", got.Think, got.Start)
	}
}

// timerWait is the plain timer the waiter replaced, for comparison.
func timerWait(t *time.Timer, deadline time.Time) time.Time {
	t.Reset(time.Until(deadline))
	<-t.C
	return time.Now()
}

// BenchmarkHoldPrecision measures how long holds last against how long
// they were asked, at 1 and at 64 owners holding at once, waiting as a run
// can: "go" on a Go timer alone (what a Go program gets), "timer" on the
// run's high-resolution clock (its Go timer kicked by a timerfd),
// "timer-tail" the same with the last stretch spun (a run does that only
// while the host has an idle core), and "spin" on the
// spinner (--spin-waits). p50_err_µs and p99_err_µs are achieved − asked,
// spin_cores the time spun over the benchmark's, and cpu_cores the
// process's CPU over the benchmark. Holds last exactly hold, or, under
// the -exp variants, are drawn from an exponential of mean hold as the
// profiles draw them: fixed holds started together keep the owners in
// step, so that all of them come due at once.
func BenchmarkHoldPrecision(b *testing.B) {
	for _, how := range []string{"go", "timer", "timer-tail", "spin", "timer-exp", "timer-tail-exp", "spin-exp"} {
		for _, owners := range []int{1, 64} {
			for _, hold := range []time.Duration{50 * time.Microsecond, 200 * time.Microsecond, time.Millisecond, 10 * time.Millisecond} {
				b.Run(fmt.Sprintf("%s/owners=%d/hold=%v", how, owners, hold), func(b *testing.B) {
					benchHolds(b, how, owners, hold)
				})
			}
		}
	}
}

func benchHolds(b *testing.B, how string, owners int, hold time.Duration) {
	clock := newWaitClock(strings.HasPrefix(how, "spin"))
	defer clock.close()
	if clock.spin == nil && clock.hr == nil && how != "go" {
		b.Skipf("no timerfd here: %v", clock.hrErr)
	}
	clock.hostIdle(idleForKick) // a core free enough to kick on, not to spin
	if strings.HasPrefix(how, "timer-tail") {
		clock.hostIdle(idleForSpin)
	}
	exp := strings.HasSuffix(how, "-exp")
	rec := &results.WaitRecorder{}
	var wg sync.WaitGroup
	per := max(b.N/owners, 1)
	cpu0, t0 := processCPU(), time.Now()
	b.ResetTimer()
	for i := range owners {
		w := newWaiter(clock, rec)
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for range per {
				hold := hold
				if exp {
					hold = time.Duration(rng.ExpFloat64() * float64(hold))
				}
				begin := time.Now()
				deadline := begin.Add(hold)
				if how == "go" {
					rec.Record(results.WaitHold, hold, timerWait(w.goTimer(time.Hour), deadline).Sub(begin))
					continue
				}
				r := w.until(context.Background(), nil, deadline, true)
				w.record(results.WaitHold, begin, hold, r, true)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	wall := time.Since(t0).Seconds()
	got := rec.Waits()
	b.ReportMetric(got.Hold.P50, "p50_err_µs")
	b.ReportMetric(got.Hold.P99, "p99_err_µs")
	b.ReportMetric(clock.spun().Seconds()/wall, "spin_cores")
	if cpu := processCPU(); cpu > 0 {
		b.ReportMetric((cpu-cpu0)/wall, "cpu_cores")
	}
}
