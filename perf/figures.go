package perf

import "github.com/lockbench/lockbench/results"

// The harness's own figures: its footprint at scale, and handoff latency
// against the PING round trip. Its overhead against redis-benchmark and
// bare go-redis is a small Lineup (OverheadGroups).

// Scale is the harness's footprint with many owners.
type Scale struct {
	Result *results.Result
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
	Result    *results.Result
	HandoffUs float64 // p50
	PingUs    float64 // p50
	Ratio     float64
}

// HandoffTarget bounds Ratio: pub/sub wake-up makes a handoff a few round
// trips (unlock, message, acquire), nowhere near the lease TTL.
const HandoffTarget = 10.0
