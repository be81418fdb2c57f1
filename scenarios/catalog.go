package scenarios

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/results"
)

// All is the catalogue, in the order chaos list shows and --all runs.
func All() []*Scenario { return catalog }

// catalog lists the scenarios; each lives in its own file, with its plan
// and its body.
var catalog = []*Scenario{
	watchdogKeepaliveScenario,
	watchdogLossScenario,
	leaseExpiryScenario,
	latencyScenario,
	partitionHealScenario,
	resetStormScenario,
	redisRestartScenario,
	redisPauseScenario,
	failoverScenario,
	clusterFailoverScenario,
	slotMigrationScenario,
	fairClockSkewScenario,
	nodeClockJumpScenario,
	clientFreezeScenario,
	nodeRestartScenario,
}

func noFaults(Timing, *rand.Rand) []Planned { return nil }

// faultStart is when the holder-targeted faults begin: the holder has
// acquired by then.
const faultStart = 500 * time.Millisecond

// killAt is halfway between the watchdog's first and second renewals
// (clients are made just before the plan starts): the holders learn of a
// loss no sooner than a sixth of the timeout later.
func killAt(t Timing) time.Duration { return t.Watchdog / 2 }

// notified wraps a fault to close ch once its injection is over (done or
// failed: a failure is recorded and checked), so that actors can start
// after it, not after a guessed delay, and never wait for ever.
type notified struct {
	faults.Fault
	ch chan struct{}
}

func notify(f faults.Fault, ch chan struct{}) faults.Fault { return &notified{f, ch} }

func (n *notified) Inject(ctx context.Context) (func(context.Context) error, error) {
	defer close(n.ch)
	return n.Fault.Inject(ctx)
}

// rate is the mean ops/s of the series points ending in (from, to].
func rate(series []results.Point, from, to float64) float64 {
	var ops int64
	var secs float64
	prev := 0.0
	for _, pt := range series {
		if pt.T > from && pt.T <= to {
			ops += pt.Ops
			secs += pt.T - max(prev, from)
		}
		prev = pt.T
	}
	if secs <= 0 {
		return 0
	}
	return float64(ops) / secs
}

// bestSecond is the highest rate of any whole interval of the series
// (about a second each) from from on. "Throughput recovers" is judged by
// it against the rate before the fault: one good second shows the clients
// are not stuck, a host that other work slows for some seconds cannot fail
// it, and a stall, which has no good second, still does.
func bestSecond(series []results.Point, from float64) float64 {
	best, prev := 0.0, 0.0
	for _, pt := range series {
		if d := pt.T - prev; prev >= from && d >= 0.9 {
			best = max(best, float64(pt.Ops)/d)
		}
		prev = pt.T
	}
	return best
}

func violations(res *results.Result) string {
	if res.Safety.Sections == 0 {
		return "no critical section checked"
	}
	s := results.Count(res.Safety.Violations, "violation")
	if res.Safety.Incomplete != "" {
		s += " (incomplete: " + res.Safety.Incomplete + ")"
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func secs(base, t time.Time) float64 {
	if t.IsZero() {
		return -1
	}
	return t.Sub(base).Seconds()
}
