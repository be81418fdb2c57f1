package scenarios

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/workloads"
)

var leaseExpiryScenario = &Scenario{
	Name:    "lease-expiry",
	Summary: "fixed lease shorter than the hold: violations detected, counted and timed",
	Description: "Four owners on two clients contend for one lock with a fixed lease of L while each holds it " +
		"for 2.5 L. The lease runs out in the middle of every hold, the next owner takes the lock, and " +
		"holders that do not check carry on. The checker counts the overlaps and sums how long the lock " +
		"had two owners; holders that honour Lost stop at the lease's end instead.",
	Invariant:       "ignore-lost: violations detected, counted and timed; honour-lost: zero violations; redisson (the same owners as real Redisson threads): violations detected, counted and timed",
	ExpectViolation: true,
	Variants: []Variant{
		{Name: "ignore-lost", Plan: noFaults, run: func(r *rig) error { return leaseExpiry(r, false) }},
		{Name: "honour-lost", Plan: noFaults, run: func(r *rig) error { return leaseExpiry(r, true) }},
		{Name: "redisson", Plan: noFaults, run: leaseExpiryRedisson},
	},
}

func leaseExpiry(r *rig, honour bool) error { return leaseExpiryOn(r, honour, nil) }

// leaseExpiryRedisson runs the owners as Redisson threads, one JVM with a
// RedissonClient per client through the client's proxy: they learn of the
// lost lease only when their unlock finds the lock gone.
func leaseExpiryRedisson(r *rig) error {
	jar, err := redisson.FindJar()
	if err != nil {
		return &skipError{why: err.Error(), variant: true}
	}
	r.rep.Redisson = redisson.JarVersion(jar)
	return leaseExpiryOn(r, false, &impls.Redisson{Watchdog: r.t.Watchdog, HoldsPastLease: true})
}

func leaseExpiryOn(r *rig, honour bool, impl workloads.Impl) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	return leaseExpiryRun(r, honour, impl)
}

// leaseExpiryRun is the scenario on a rig already started for two clients.
func leaseExpiryRun(r *rig, honour bool, impl workloads.Impl) error {
	if impl == nil {
		impl = workloads.Lockimpl{OptionsFor: r.lockOptions}
	}
	lease := r.t.pick(2*time.Second, 500*time.Millisecond)
	p := profile("mutex", "clients", "2", "owners", "2", "locks", "1", "hold", (lease * 5 / 2).String(), "think", "10ms",
		"lease", lease.String(), "wait", "0", "warmup", "0", "duration", r.t.pick(30*time.Second, 5*time.Second).String())
	res, err := r.workloadOn(p, !honour, impl)
	if err != nil {
		return err
	}
	r.safetyFigures(res)
	r.figure("unsafe share of the run", 100*res.Safety.UnsafeUs/1e6/max(res.Measured, 1e-9), "%")
	r.figure("acquisitions", float64(res.Throughput.Ops), "")
	r.check("holds outlive their lease", "≥ 1 lost", fmt.Sprint(res.Throughput.Lost, " lost"), res.Throughput.Lost >= 1)
	if honour {
		r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	} else {
		r.check("checker detects, counts and times the violations", "≥ 1 violation with a window", violations(res),
			res.Safety.Violations >= 1 && res.Safety.UnsafeUs > 0)
	}
	return nil
}
