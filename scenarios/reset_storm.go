package scenarios

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/lockbench/lockbench/faults"
)

var resetStormScenario = &Scenario{
	Name:    "reset-storm",
	Summary: "repeated connection resets: clients recover, goroutines do not grow, zero violations",
	Description: "The rw90 workload runs while bursts of TCP resets (reset_peer) hit every client's " +
		"connections at seeded random times. Every operation in flight fails; the clients must " +
		"reconnect and carry on, the harness and lockimpl must not leak goroutines, and the lock must stay safe.",
	Invariant: "zero violations; no second in which every owner slept; throughput back once a lease has passed after the storm; no goroutine left once the clients close",
	Variants:  []Variant{{Name: "run", Plan: resetPlan, run: resetStorm}},
}

// resetRun is the storm's run; bursts fall in the first resetWindow after
// 1 s, leaving more than a watchdog timeout to recover (a lock whose
// unlock a reset swallowed stays held until its lease runs out).
func resetRun(t Timing) time.Duration    { return t.pick(60*time.Second, 12*time.Second) }
func resetWindow(t Timing) time.Duration { return t.pick(24*time.Second, 4*time.Second) }

// resetPlan draws the burst times from the seed: same seed, same storm.
func resetPlan(t Timing, rng *rand.Rand) []Planned {
	n := 20
	if t.Quick {
		n = 6
	}
	var ats []time.Duration
	for range n {
		ats = append(ats, time.Second+time.Duration(rng.Int64N(int64(resetWindow(t)))).Truncate(time.Millisecond))
	}
	slices.Sort(ats)
	var ps []Planned
	for _, at := range ats {
		ps = append(ps, Planned{At: at, For: 200 * time.Millisecond, Kind: "reset_peer", Target: "clients", Detail: "RST after 0s",
			build: func(r *rig) faults.Fault { return faults.ResetPeer("clients", r.proxies, 0) }})
	}
	return ps
}

func resetStorm(r *rig) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	g0 := runtime.NumGoroutine() // Redis and proxies up, no client yet
	p := profile("rw90", "clients", "2", "owners", "4", "locks", "8", "warmup", "0", "duration", resetRun(r.t).String())
	res, err := r.workload(p, false)
	if err != nil {
		return err
	}
	r.safetyFigures(res)
	r.figure("errors", float64(res.ErrorCount()), "")
	r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	first, last := math.Inf(1), 0.0
	for _, e := range res.Events {
		first, last = min(first, e.Start), max(last, e.End)
	}
	// Before the storm, and after it plus one lease: by then a lock whose
	// unlock a reset swallowed has expired.
	calm := last + r.t.Watchdog.Seconds() + 1
	before, after := rate(res.Series, 0, first), rate(res.Series, calm, math.Inf(1))
	best := bestSecond(res.Series, calm)
	r.figure("ops/s before the storm", before, "ops/s")
	r.figure("ops/s one lease after the storm", after, "ops/s")
	r.check("clients recover after the storm", fmt.Sprintf("a second at ≥ a quarter of %.0f ops/s", before), fmt.Sprintf("best second %.0f ops/s", best), before > 0 && best >= before/4)
	// A second in which no operation finished at all means every owner
	// slept: a lost unlock or wake-up left them waiting out their bound.
	// (The series' last point covers only what was left of the run after
	// its last whole second; a sliver of it can hold nothing.)
	var stalled []string
	prev := 0.0
	for i, pt := range res.Series {
		sliver := i == len(res.Series)-1 && pt.T-prev < 0.5
		if pt.Attempts == 0 && !sliver {
			stalled = append(stalled, fmt.Sprintf("%.0fs", pt.T))
		}
		prev = pt.T
	}
	r.check("no second without a finished operation", "none", fmt.Sprintf("%d %v", len(stalled), stalled), len(stalled) == 0)
	// Every client is closed by now; their goroutines (and the proxies'
	// links for their connections) must all end. Wait for it, boundedly.
	g, deadline := runtime.NumGoroutine(), time.Now().Add(10*time.Second)
	for g > g0+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		g = runtime.NumGoroutine()
	}
	r.figure("goroutines before the clients", float64(g0), "")
	r.figure("goroutines at peak", float64(res.Runtime.GoroutinesMax), "")
	r.figure("goroutines after the clients closed", float64(g), "")
	r.check("no goroutine left behind", fmt.Sprintf("≤ %d (start + 2)", g0+2), fmt.Sprint(g), g <= g0+2)
	return nil
}
