package results

// The harness's own figures, as bench perf measures them (package perf):
// its overhead against redis-benchmark, its footprint at scale, and
// handoff latency against the PING round trip.

// Overhead compares lockimpl's lock+unlock rate on the uncontended
// profile with redis-benchmark driving the same two scripts at the same
// concurrency on the same server, in alternating rounds so drift in the
// machine's load hits both.
type Overhead struct {
	Owners    int
	Rounds    []OverheadRound
	Lockbench float64 // median cycles/s
	GoRedis   float64 // median cycles/s: the ceiling of any Go client here
	Baseline  float64 // median cycles/s
	// Ratio is the median of the rounds' lockbench/redis-benchmark ratios:
	// each round's two runs are seconds apart, so a machine whose load
	// drifts skews a round's ratio less than it skews the rates.
	Ratio, RatioMin, RatioMax float64
	// GoRedisRatio is the median of the rounds' lockbench/bare go-redis.
	GoRedisRatio float64
}

// OverheadRound is one lockbench run, one bare go-redis run and one
// redis-benchmark pair.
type OverheadRound struct {
	Lockbench float64 // cycles/s
	GoRedis   float64 // cycles/s
	Baseline  Baseline
}

// OverheadTarget is the ratio the harness must reach.
const OverheadTarget = 0.9

// Scale is the harness's footprint with many owners.
type Scale struct {
	Result *Result
	// GoroutinesEarly and GoroutinesLate are the most goroutines seen in
	// the first and the last tenth of the measured series; HeapEarly and
	// HeapLate the most Go heap bytes.
	GoroutinesEarly, GoroutinesLate int
	HeapEarly, HeapLate             int64
}

// Grew reports goroutine growth: more than 5% (and 20) between the early
// and the late part of the run, a leak's signature.
func (s Scale) Grew() bool {
	return float64(s.GoroutinesLate) > float64(s.GoroutinesEarly)*1.05 && s.GoroutinesLate-s.GoroutinesEarly > 20
}

// HandoffFigure is handoff latency under contention against the PING round
// trip of the same run.
type HandoffFigure struct {
	Result    *Result
	HandoffUs float64 // p50
	PingUs    float64 // p50
	Ratio     float64
}

// HandoffTarget bounds Ratio: pub/sub wake-up makes a handoff a few round
// trips (unlock, message, acquire), nowhere near the lease TTL.
const HandoffTarget = 10.0
