package perf_test

import (
	"math"
	"testing"

	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/results"
)

// TestPlainRatios: each lockimpl+ap cell gets its ops/s, acquire p99 and
// handoff p50 over plain lockimpl's on the same workload, pair by pair
// over the matrix's rounds and the pair rounds after them, with the
// pairs' range, and apart only where every pair is on one side; cells
// without a plain twin and other implementations get none.
func TestPlainRatios(t *testing.T) {
	rounds := func(ops []float64, p99 ...float64) []results.LineupRound {
		var rs []results.LineupRound
		for i := range ops {
			rs = append(rs, results.LineupRound{Round: i, OpsPerSec: ops[i], AcquireP99: p99[i]})
		}
		return rs
	}
	handoffs := func(rs []results.LineupRound, p50 float64) []results.LineupRound {
		for i := range rs {
			rs[i].HandoffP50 = p50
		}
		return rs
	}
	m := &results.Lineup{Cells: []results.LineupCell{
		{Profile: "uncontended", Owners: 32, Impl: "lockimpl", Rounds: rounds([]float64{1000, 1100, 1050}, 100, 110, 90)},
		{Profile: "uncontended", Owners: 32, Impl: perf.PipelinedName, Rounds: rounds([]float64{900, 1000, 950}, 120, 130, 125)},
		{Profile: "mutex", Owners: 8, Impl: "lockimpl", Rounds: handoffs(rounds([]float64{1000, 1000, 1000}, 100, 100, 100), 200),
			PairRounds: handoffs([]results.LineupRound{{Round: 3, OpsPerSec: 1000, AcquireP99: 100}}, 200)},
		{Profile: "mutex", Owners: 8, Impl: perf.PipelinedName, Rounds: handoffs(rounds([]float64{990, 1010, 1100}, 95, 105, 100), 220),
			PairRounds: handoffs([]results.LineupRound{{Round: 3, OpsPerSec: 1200, AcquireP99: 90}}, 220)},
		{Profile: "rw90", Owners: 32, Impl: perf.PipelinedName, Rounds: rounds([]float64{1000}, 100)},
	}}
	perf.PlainRatios(m)
	un := m.Cell("uncontended", 32, perf.PipelinedName).VsPlain
	// Round ratios 0.9, 0.909, 0.905: ap's best (1000) is plain's worst,
	// so the ranges touch, but ap is below in every pair: apart. p99 1.2,
	// 1.18, 1.39: apart.
	switch {
	case un == nil:
		t.Fatal("no VsPlain on uncontended")
	case un.Ops.Rounds != 3 || un.Ops.Min != 0.9 || un.Ops.Max < 0.909 || un.Ops.Max > 0.91 || un.Ops.Median < 0.904 || un.Ops.Median > 0.906 || !un.Ops.Apart:
		t.Errorf("uncontended ops %+v: want 3 pairs, 0.9..0.909, median 0.905, below in every pair", un.Ops)
	case un.AcquireP99.Median != 1.2 || !un.AcquireP99.Apart:
		t.Errorf("uncontended p99 %+v: want median 1.2, above in every pair", un.AcquireP99)
	case un.Ops.Below() || un.AcquireP99.Above() || len(un.Lost()) > 0:
		t.Errorf("uncontended %+v: 3 pairs judged a loss; want too few to judge (%d)", un, results.MinPairs)
	}
	// Ops ratios 0.99, 1.01, 1.1 and the pair round's 1.2; p99 0.95,
	// 1.05, 1 and 0.9; handoff 1.1 in every pair.
	mu := m.Cell("mutex", 8, perf.PipelinedName).VsPlain
	switch {
	case mu == nil:
		t.Fatal("no VsPlain on mutex")
	case mu.Ops.Rounds != 4 || math.Abs(mu.Ops.Median-1.055) > 1e-9 || mu.Ops.Apart || mu.AcquireP99.Median != 0.975 || mu.AcquireP99.Apart:
		t.Errorf("mutex %+v: want 4 pairs, ops median 1.055 and p99 0.975, neither apart", mu)
	case mu.HandoffP50.Rounds != 4 || math.Abs(mu.HandoffP50.Median-1.1) > 1e-9 || !mu.HandoffP50.Apart:
		t.Errorf("mutex handoff %+v: want 4 pairs at 1.1, above in every pair", mu.HandoffP50)
	}
	for _, c := range []*results.LineupCell{m.Cell("rw90", 32, perf.PipelinedName), m.Cell("uncontended", 32, "lockimpl")} {
		if c.VsPlain != nil {
			t.Errorf("%s on %s: VsPlain %+v, want none", c.Impl, c.Profile, c.VsPlain)
		}
	}
}
