package perf

import (
	"fmt"
	"slices"

	"github.com/lockbench/lockbench/results"
)

// The harness's own figures: its footprint at scale, and handoff latency
// against the PING round trip. Its overhead against redis-benchmark and
// bare go-redis is a small Lineup (OverheadGroups).

// ScalePoint is one point of the scale part: Owners in all, spread evenly
// over Clients lock clients, in open loop at the part's rate or, Closed,
// in closed loop with no hold or think (the uncontended profile): every
// owner in a call at once, the most a run of that many owners holds.
type ScalePoint struct {
	Clients, Owners int
	Closed          bool
}

// Loop names the point's pacing, as reports show it.
func (p ScalePoint) Loop() string {
	if p.Closed {
		return "closed"
	}
	return "open"
}

// PerClient is each client's owners.
func (p ScalePoint) PerClient() int { return p.Owners / max(p.Clients, 1) }

// Check refuses a point whose owners do not split evenly over its clients.
func (p ScalePoint) Check() error {
	if p.Clients < 1 || p.Owners < p.Clients || p.Owners%p.Clients != 0 {
		return fmt.Errorf("%s over %s: the owners must split evenly over at least one client", results.Count(p.Owners, "owner"), results.Count(p.Clients, "client"))
	}
	return nil
}

// ScalePoints are the points open and closed list (owners in all, in
// open and in closed loop), each over clients lock clients, fewest owners
// first, open before closed: where the process's peak RSS cannot be reset
// between points (resetPeakRSS), it only rises, and each point's peak is
// its own only when the larger points come after it.
func ScalePoints(clients int, open, closed []int) ([]ScalePoint, error) {
	var pts []ScalePoint
	for i, list := range [][]int{open, closed} {
		for _, n := range list {
			pt := ScalePoint{Clients: clients, Owners: n, Closed: i == 1}
			if err := pt.Check(); err != nil {
				return nil, err
			}
			pts = append(pts, pt)
		}
	}
	slices.SortStableFunc(pts, func(a, b ScalePoint) int { return a.Owners - b.Owners })
	return slices.Compact(pts), nil
}

// DefaultScaleOwners are the scale part's open-loop points by default: a
// fleet of 100,000 owners (500 pods of 200 threads) and the two decades
// below it; DefaultScaleClosed its closed-loop points.
var (
	DefaultScaleOwners = []int{1_000, 10_000, 100_000}
	DefaultScaleClosed = []int{10_000}
)

// DefaultScaleClients is the lock clients each default point's owners
// share.
const DefaultScaleClients = 10

// DefaultScaleRate is the load every point offers, in operations a second
// across all its owners: the same at every point, so that what grows from
// one point to the next is the owners, not the load.
const DefaultScaleRate = 5_000

// Scale is the harness's footprint at one point of the scale part.
type Scale struct {
	Result *results.Result
	Point  ScalePoint
	Locks  int
	Rate   float64 // offered ops/s across all owners
	// GoroutinesEarly and GoroutinesLate are the most goroutines seen in
	// the first and the last tenth of the measured series; HeapEarly and
	// HeapLate the most Go heap bytes.
	GoroutinesEarly, GoroutinesLate int
	HeapEarly, HeapLate             int64
	// Costs are what the owners cost, component by component, as
	// MeasureScale measured or computed them.
	Costs []results.ScaleCost
}

// Grew reports goroutine growth: more than 5% (and 20) between the early
// and the late part of the run, a leak's signature.
func (s Scale) Grew() bool {
	return float64(s.GoroutinesLate) > float64(s.GoroutinesEarly)*1.05 && s.GoroutinesLate-s.GoroutinesEarly > 20
}

// ScaleTargets bounds the peak RSS of a point, by its owners, in either
// loop: a fleet of 100,000 owners must fit one process on a modest
// machine.
var ScaleTargets = map[int]int64{10_000: 256 << 20, 100_000: 2 << 30}

// Row is the point as reports show it, its result saved at saved.
func (s Scale) Row(saved string) results.ScaleRow {
	r := results.ScaleRow{Owners: s.Point.Owners, Clients: s.Point.Clients, Loop: s.Point.Loop(), Locks: s.Locks, Rate: s.Rate,
		TargetRSSBytes:  ScaleTargets[s.Point.Owners],
		GoroutinesEarly: s.GoroutinesEarly, GoroutinesLate: s.GoroutinesLate, Grew: s.Grew(),
		HeapEarly: s.HeapEarly, HeapLate: s.HeapLate, Costs: s.Costs, Saved: saved}
	if res := s.Result; res != nil {
		r.OpsPerSec, r.PeakRSSBytes, r.Goroutines = res.Throughput.OpsPerSec, res.Runtime.PeakRSSBytes, res.Runtime.GoroutinesMax
		r.Safety, r.Fairness = res.Safety, res.Fairness
		r.Safety.Examples, r.Fairness.PerOwner, r.Fairness.StarvedOwners = nil, nil, nil // in the result file
	}
	return r
}

// HandoffFigure is handoff latency under contention against the PING round
// trip of the same run.
type HandoffFigure struct {
	Result    *results.Result
	HandoffUs float64 // p50
	PingUs    float64 // p50
	Ratio     float64
}

// HandoffTarget bounds Ratio: pub/sub wake-up makes a handoff a few round
// trips (unlock, message, acquire), nowhere near the lease TTL.
const HandoffTarget = 10.0
