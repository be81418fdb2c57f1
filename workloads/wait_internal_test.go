package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/results"
)

// TestWaitStretch: the spun part of a wait follows its length and the
// clock's slack.
func TestWaitStretch(t *testing.T) {
	c := newWaitClock()
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
	c := newWaitClock()
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

// waitCase is a waiter on a fresh clock whose slack is given.
func waitCase(slack time.Duration) (*waiter, *results.WaitRecorder) {
	c := newWaitClock()
	c.slack.Store(int64(slack))
	rec := &results.WaitRecorder{}
	w := newWaiter(c, rec)
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
		t.Run(tc.name, func(t *testing.T) {
			w, _ := waitCase(tc.slack) // an hour: more than observe allows, so the wait spins whole
			if got := w.clock.stretch(tc.d); tc.slack == time.Hour && got != tc.d {
				t.Fatalf("stretch(%v) = %v, want it spun whole", tc.d, got)
			}
			deadline := time.Now().Add(tc.d)
			r := w.until(tc.ctx, tc.lost, deadline)
			if r.end != tc.want {
				t.Fatalf("ended %d, want %d", r.end, tc.want)
			}
			if r.end == waited && r.at.Before(deadline) {
				t.Errorf("returned at %v, before the deadline %v", r.at, deadline)
			}
		})
	}
}

// TestWaitSpinner: one spinner wakes many waits, each at or after its
// deadline, and stops when none is left.
func TestWaitSpinner(t *testing.T) {
	c := newWaitClock()
	c.slack.Store(int64(maxSlack))
	var wg sync.WaitGroup
	for i := range 16 {
		w := newWaiter(c, nil)
		wg.Go(func() {
			deadline := time.Now().Add(time.Duration(i) * 100 * time.Microsecond)
			if r := w.until(context.Background(), nil, deadline); r.end != waited || r.at.Before(deadline) {
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
	c := newWaitClock()
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
	w.clock.await(&w.due, true)
	testkit.Eventually(t, "the spinner woke the wait", func() bool { return len(w.due.wake) == 1 })
	w.clock.cancel(&w.due)
	if len(w.due.wake) != 0 {
		t.Fatal("a wake-up was left behind")
	}
	lost := make(chan struct{})
	close(lost)
	w.clock.slack.Store(int64(time.Hour)) // the spinner's wait, whole
	if r := w.until(context.Background(), lost, time.Now().Add(200*time.Millisecond)); r.end != waitLost {
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
	go func() { done <- w.until(context.Background(), lost, time.Now().Add(time.Hour)) }()
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
// they were asked, at 1 and at 64 owners holding at once, with the plain
// timer and with the precise waiter: p50_err_µs and p99_err_µs are
// achieved − asked, spin_cores the spinner's time over the benchmark's, and
// cpu_cores the process's CPU over the benchmark. Holds last exactly
// hold, or, under precise-exp, are drawn from an exponential of mean hold
// as the profiles draw them: fixed holds started together keep the owners
// in step, so that all of them come due at once.
func BenchmarkHoldPrecision(b *testing.B) {
	for _, how := range []string{"timer", "precise", "precise-exp"} {
		for _, owners := range []int{1, 64} {
			for _, hold := range []time.Duration{50 * time.Microsecond, 100 * time.Microsecond, 200 * time.Microsecond, time.Millisecond, 10 * time.Millisecond} {
				b.Run(fmt.Sprintf("%s/owners=%d/hold=%v", how, owners, hold), func(b *testing.B) {
					benchHolds(b, how, owners, hold)
				})
			}
		}
	}
}

func benchHolds(b *testing.B, how string, owners int, hold time.Duration) {
	clock := newWaitClock()
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
				if how == "precise-exp" {
					hold = time.Duration(rng.ExpFloat64() * float64(hold))
				}
				begin := time.Now()
				deadline := begin.Add(hold)
				if how == "timer" {
					rec.Record(results.WaitHold, hold, timerWait(w.timer, deadline).Sub(begin))
					continue
				}
				r := w.until(context.Background(), nil, deadline)
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
	b.ReportMetric(time.Duration(clock.spun.Load()).Seconds()/wall, "spin_cores")
	if cpu := processCPU(); cpu > 0 {
		b.ReportMetric((cpu-cpu0)/wall, "cpu_cores")
	}
}
