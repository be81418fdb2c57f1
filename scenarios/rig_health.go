package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
)

// recoverySlack is how long after a fault ends its failures may still
// come: a call sent into a blackhole fails at the clients' 1 s read
// timeout, and reconnecting takes a moment more.
const recoverySlack = 3 * time.Second

// healthChecks fail a variant whose figures the planned faults do not
// explain: a Redis that died, restarted or stalled on its own makes
// operations fail where no fault was injected, and a scenario must not
// pass on a run that measured a broken server rather than the fault.
// The health checks about failed operations, which a mitigation that
// refuses acquisitions fails on purpose when its replica is gone.
const (
	checkSomeSucceeded = "some operation succeeded"
	checkNoFailures    = "no failures outside the fault windows"
)

func (r *rig) healthChecks(res *results.Result, events []results.Event) {
	th := res.Throughput
	r.check(checkSomeSucceeded, "≥ 1 successful operation",
		fmt.Sprintf("%s of %s", results.Commas(th.Ops), results.Count(th.Attempts, "attempt")), th.Ops > 0)
	failed, attempts, at := outsideFaults(res.Series, events, recoverySlack)
	got := "none"
	if failed > 0 {
		got = fmt.Sprintf("%s of %s (%s) at %s", results.Commas(failed), results.Count(attempts, "attempt"),
			results.Percent(float64(failed)/float64(max(attempts, 1))), at)
	}
	// A healthy Redis fails nothing where no fault is: the suite's runs
	// show none, so any is a server trouble the plan does not explain.
	r.check(checkNoFailures, "none (lock timeouts aside)", got, failed == 0)
	stall := "no"
	if res.Stall != nil {
		stall = res.Stall.Reason()
	}
	r.check("Redis answered until the end", "no stall", stall, res.Stall == nil)
}

// outsideFaults counts the failures other than lock timeouts (which are
// contention, not trouble with Redis) and the attempts in the series'
// seconds that no injected fault overlaps, each fault's window widened
// by slack after its end; at says which seconds had failures.
func outsideFaults(series []results.Point, events []results.Event, slack time.Duration) (failed, attempts int64, at string) {
	prev := 0.0
	var secs []string
	for _, pt := range series {
		covered := false
		for _, e := range events {
			if e.Err == "" && e.Start < pt.T && e.End+slack.Seconds() > prev {
				covered = true
				break
			}
		}
		if !covered && !pt.Warmup {
			attempts += pt.Attempts
			if f := pt.Errors - pt.Timeouts; f > 0 {
				failed += f
				secs = append(secs, fmt.Sprintf("%.0fs", pt.T))
			}
		}
		prev = pt.T
	}
	return failed, attempts, strings.Join(secs, ",")
}

// faultRates splits a run's per-second throughput into the seconds that
// overlapped some (injected) fault and the rest; ok is false unless both
// have some seconds.
func faultRates(series []results.Point, events []results.Event) (during, outside float64, ok bool) {
	var inOps, outOps int64
	var inSecs, outSecs float64
	prev := 0.0
	for _, pt := range series {
		hit := false
		for _, e := range events {
			if e.Err == "" && e.Start < pt.T && e.End > prev {
				hit = true
				break
			}
		}
		if hit {
			inOps, inSecs = inOps+pt.Ops, inSecs+pt.T-prev
		} else {
			outOps, outSecs = outOps+pt.Ops, outSecs+pt.T-prev
		}
		prev = pt.T
	}
	if inSecs <= 0 || outSecs <= 0 {
		return 0, 0, false
	}
	return float64(inOps) / inSecs, float64(outOps) / outSecs, true
}
