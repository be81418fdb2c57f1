package results

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Waits is how long the run's waits lasted against how long the profile
// asked: holds, think times and, in open loop, the waits for each
// operation's slot. A timer that fires late makes a hold longer than the
// profile says, and the figures then describe another load.
type Waits struct {
	Hold  *WaitError `json:"hold,omitempty"`
	Think *WaitError `json:"think,omitempty"`
	// Start is how late operations began after their worker waited for
	// their slot in the open-loop schedule; a worker already behind its
	// schedule does not wait, and its lateness is latency, not counted here.
	Start *WaitError `json:"start,omitempty"`
	// HoldNote is HoldInImpl when holds ran in the implementation's
	// process (Redisson's JVM): Hold is then by that process's own times,
	// and the CPU its precision cost is not in SpinS.
	HoldNote string `json:"hold_note,omitempty"`
	// Clock is how the waits were timed: WaitClockTimer, WaitClockSpin
	// or WaitClockGo; ClockNote says why Go timers served.
	Clock     string `json:"clock,omitempty"`
	ClockNote string `json:"clock_note,omitempty"`
	// SpinS is the time spent spinning to waits' deadlines over the
	// measured time, in seconds: the CPU the precision cost, at most (a
	// spin yields to other goroutines between its looks at the clock).
	SpinS float64 `json:"spin_s"`
	// TimerS is the time the high-resolution clock spent kicking the
	// runtime awake over the measured time, in seconds: what the waits
	// cost beside the spin, at least (the wake-ups themselves are the
	// runtime's).
	TimerS float64 `json:"timer_s,omitempty"`
	// KickedShare is the share of the waits that slept under the
	// high-resolution clock that it kicked (the rest fired on their Go
	// timers alone: the process was busy enough, or the host had no core
	// to spare); waits long enough for a Go timer alone are not counted.
	KickedShare float64 `json:"kicked_share,omitempty"`
	// SpinShare is SpinS, and CPUShare SpinS + TimerS, as a share of
	// lockbench's own CPU time over the measured time; 0 where that was
	// not measured.
	SpinShare float64 `json:"spin_cpu_share,omitempty"`
	CPUShare  float64 `json:"cpu_share,omitempty"`
}

// The clocks waits are timed by (Waits.Clock).
const (
	// WaitClockTimer: waits sleep on Go timers, and a high-resolution
	// timer in the runtime's poller kicks the runtime awake at their
	// deadlines while the timers would be late; holds spin at most their
	// last tens of microseconds, and only while the host has an idle core.
	WaitClockTimer = "timer"
	// WaitClockSpin: every wait spins its last stretch (--spin-waits),
	// exact at the host's expense.
	WaitClockSpin = "spin"
	// WaitClockGo: Go's timers alone, where no high-resolution timer could
	// be had; an idle process's fire up to a millisecond late.
	WaitClockGo = "go"
)

// CPUS is what the waits took of lockbench's CPU over the measured time,
// in seconds: the spin and the high-resolution clock's kicks.
func (w *Waits) CPUS() float64 {
	if w == nil {
		return 0
	}
	return w.SpinS + w.TimerS
}

// HoldInImpl is Waits.HoldNote for holds the implementation ran.
const HoldInImpl = "held in the implementation's process, measured by its times"

// WaitError is the distribution of achieved − asked over one kind of
// wait, in microseconds (Count waits), and the mean asked. Waits cut
// short (the hold was lost, the run ended) are not in it.
type WaitError struct {
	Latency
	AskedMean float64 `json:"asked_mean_us"`
}

// The bound past which achieved waits stray from asked: the median error
// above WaitP50Bound, or the 99th percentile above WaitP99Bound, each
// plus WaitBoundShare of the mean asked (a long wait may be off by more).
const (
	WaitP50Bound   = 20 * time.Microsecond
	WaitP99Bound   = 100 * time.Microsecond
	WaitBoundShare = 0.01
)

// Strays reports whether e is past the bound (see WaitP50Bound).
func (e *WaitError) Strays() bool {
	if e == nil || e.Count == 0 {
		return false
	}
	slack := WaitBoundShare * e.AskedMean
	return e.P50 > us(WaitP50Bound)+slack || e.P99 > us(WaitP99Bound)+slack
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// WaitKind names one kind of wait.
type WaitKind uint8

// The kinds of wait.
const (
	WaitHold  WaitKind = iota // the critical section
	WaitThink                 // between operations, closed loop
	WaitStart                 // for the next slot, open loop
	numWaitKinds
)

// WaitRecorder gathers waits, asked against achieved. It is safe for
// concurrent use; a run keeps a few and merges them at its end.
type WaitRecorder struct {
	mu    sync.Mutex
	h     [numWaitKinds]*hdr.Histogram // achieved − asked, ns
	asked [numWaitKinds]int64          // sum of asked, ns
}

// Wait errors are kept from 1 ns to a minute at 2 significant digits (1%):
// a tenth of the memory of a latency histogram, and finer than the bound.
const (
	waitHighest = int64(time.Minute)
	waitDigits  = 2
)

// Record adds one wait of kind k that was asked to last asked and lasted
// achieved.
func (r *WaitRecorder) Record(k WaitKind, asked, achieved time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.h[k]
	if h == nil {
		h = hdr.New(1, waitHighest, waitDigits)
		r.h[k] = h
	}
	_ = h.RecordValue(min(max(int64(achieved-asked), 0), waitHighest))
	r.asked[k] += int64(asked)
}

// Merge adds from's waits into r.
func (r *WaitRecorder) Merge(from *WaitRecorder) {
	from.mu.Lock()
	defer from.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, h := range from.h {
		if h == nil {
			continue
		}
		if r.h[k] == nil {
			r.h[k] = hdr.New(1, waitHighest, waitDigits)
		}
		r.h[k].Merge(h)
		r.asked[k] += from.asked[k]
	}
}

// Waits summarizes what r gathered; the spin is left to the caller, who
// knows what spun and the CPU.
func (r *WaitRecorder) Waits() *Waits {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := &Waits{}
	for k, dst := range [numWaitKinds]**WaitError{&w.Hold, &w.Think, &w.Start} {
		h := r.h[k]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		*dst = &WaitError{Latency: Summarize(h), AskedMean: roundUs(float64(r.asked[k]) / float64(h.TotalCount()) / 1e3)}
	}
	return w
}

// Straying lists the kinds of wait whose error is past the bound, by their
// JSON names.
func (w *Waits) Straying() []string {
	if w == nil {
		return nil
	}
	var out []string
	for _, k := range []struct {
		name string
		e    *WaitError
	}{{"hold", w.Hold}, {"think", w.Think}, {"start", w.Start}} {
		if k.e.Strays() {
			out = append(out, k.name)
		}
	}
	return out
}

// worst combines w and v, two machines' waits: per kind the one whose 99th
// percentile strays further (their histograms are not kept), the spin and
// the timers' CPU added up; the shares of CPU are dropped, as each
// machine's CPU was its own.
func (w *Waits) worst(v *Waits) *Waits {
	switch {
	case v == nil:
		return w
	case w == nil:
		c := *v
		c.SpinShare, c.CPUShare = 0, 0
		return &c
	}
	c := *w
	c.SpinShare, c.CPUShare = 0, 0
	for _, k := range []struct{ dst, from **WaitError }{{&c.Hold, &v.Hold}, {&c.Think, &v.Think}, {&c.Start, &v.Start}} {
		if *k.from != nil && (*k.dst == nil || (*k.from).P99 > (*k.dst).P99) {
			*k.dst = *k.from
		}
	}
	c.SpinS += v.SpinS
	c.TimerS += v.TimerS
	if c.HoldNote == "" {
		c.HoldNote = v.HoldNote
	}
	if c.Clock != v.Clock {
		c.Clock, c.ClockNote = mixedClocks(c.Clock, v.Clock), ""
	}
	return &c
}

// mixedClocks names the clocks of merged waits: the one, or, where they
// differ, the one that spins every wait (whose cost then shows), else Go
// timers (the least precise).
func mixedClocks(a, b string) string {
	switch {
	case a == WaitClockSpin || b == WaitClockSpin:
		return WaitClockSpin
	case a == WaitClockGo || b == WaitClockGo:
		return WaitClockGo
	}
	return a
}
