package scenarios

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/results"
)

var latencyScenario = &Scenario{
	Name:    "latency",
	Summary: "50–200 ms latency with jitter on every client: safe, and the cost in throughput and p99 measured",
	Description: "The rw90 workload runs once on a clean network and once with 125 ms ± 75 ms latency added " +
		"to every client's connection in both directions. The lock must stay safe; the report gives the " +
		"throughput and acquire p99 of both runs and their ratio.",
	Invariant: "zero violations in both runs; throughput under latency above zero",
	Variants: []Variant{
		{Name: "baseline", Plan: noFaults, run: func(r *rig) error { return latency(r, false) }},
		{Name: "latency", Plan: latencyPlan, run: func(r *rig) error { return latency(r, true) }},
	},
}

func latencyPlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: 0, For: latencyRun(t) + time.Minute, Kind: "latency", Target: "clients", Detail: "125ms ±75ms both",
		build: func(r *rig) faults.Fault {
			return faults.Latency("clients", r.proxies, 125*time.Millisecond, 75*time.Millisecond, faults.Both)
		}}}
}

func latencyRun(t Timing) time.Duration { return t.pick(20*time.Second, 4*time.Second) }

func latency(r *rig, inject bool) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	p := profile("rw90", "clients", "2", "owners", "4", "locks", "8", "warmup", "0",
		"duration", latencyRun(r.t).String())
	res, err := r.workload(p, false)
	if err != nil {
		return err
	}
	r.figure("throughput", res.Throughput.OpsPerSec, "ops/s")
	r.figure("acquire read p99", res.Latency["acquire_read"].P99/1e3, "ms")
	r.figure("acquire write p99", res.Latency["acquire_write"].P99/1e3, "ms")
	r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	if !inject {
		return nil
	}
	r.check("progress under latency", "> 0 ops/s", fmt.Sprintf("%.0f ops/s", res.Throughput.OpsPerSec), res.Throughput.OpsPerSec > 0)
	if i := slices.IndexFunc(r.rep.Runs, func(s results.RunSummary) bool { return s.Variant == "baseline" }); i >= 0 {
		base := (*r.kept)[i]
		r.figure("throughput vs baseline", res.Throughput.OpsPerSec/max(base.Throughput.OpsPerSec, 1e-9), "×")
		r.figure("write p99 vs baseline", res.Latency["acquire_write"].P99/max(base.Latency["acquire_write"].P99, 1e-9), "×")
	}
	return nil
}
