package perf_test

import (
	"testing"

	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/results"
)

// TestPlainRatios: each lockimpl+ap cell gets its ops/s and acquire p99
// over plain lockimpl's on the same workload, round by round, with the
// rounds' range, and apart only where the two sides' rounds do not
// overlap; cells without a plain twin and other implementations get none.
func TestPlainRatios(t *testing.T) {
	rounds := func(ops []float64, p99 ...float64) []results.LineupRound {
		var rs []results.LineupRound
		for i := range ops {
			rs = append(rs, results.LineupRound{Round: i, OpsPerSec: ops[i], AcquireP99: p99[i]})
		}
		return rs
	}
	m := &results.Lineup{Cells: []results.LineupCell{
		{Profile: "uncontended", Owners: 32, Impl: "lockimpl", Rounds: rounds([]float64{1000, 1100, 1050}, 100, 110, 90)},
		{Profile: "uncontended", Owners: 32, Impl: perf.PipelinedName, Rounds: rounds([]float64{900, 1000, 950}, 120, 130, 125)},
		{Profile: "mutex", Owners: 8, Impl: "lockimpl", Rounds: rounds([]float64{1000, 1000, 1000}, 100, 100, 100)},
		{Profile: "mutex", Owners: 8, Impl: perf.PipelinedName, Rounds: rounds([]float64{990, 1010, 1100}, 95, 105, 100)},
		{Profile: "rw90", Owners: 32, Impl: perf.PipelinedName, Rounds: rounds([]float64{1000}, 100)},
	}}
	perf.PlainRatios(m)
	un := m.Cell("uncontended", 32, perf.PipelinedName).VsPlain
	// Round ratios 0.9, 0.909, 0.905: ap's best (1000) is plain's worst,
	// so the ranges touch: not apart. p99 1.2, 1.18, 1.39: ap's best
	// (120) above plain's worst (110): apart.
	switch {
	case un == nil:
		t.Fatal("no VsPlain on uncontended")
	case un.Ops.Rounds != 3 || un.Ops.Min != 0.9 || un.Ops.Max < 0.909 || un.Ops.Max > 0.91 || un.Ops.Median < 0.904 || un.Ops.Median > 0.906 || un.Ops.Apart:
		t.Errorf("uncontended ops %+v: want 3 rounds, 0.9..0.909, median 0.905, not apart", un.Ops)
	case un.AcquireP99.Median != 1.2 || !un.AcquireP99.Apart:
		t.Errorf("uncontended p99 %+v: want median 1.2, apart", un.AcquireP99)
	}
	if mu := m.Cell("mutex", 8, perf.PipelinedName).VsPlain; mu == nil || mu.Ops.Median != 1.01 || mu.Ops.Apart || mu.AcquireP99.Median != 1 || mu.AcquireP99.Apart {
		t.Errorf("mutex %+v: want ops median 1.01 and p99 1, neither apart", mu)
	}
	for _, c := range []*results.LineupCell{m.Cell("rw90", 32, perf.PipelinedName), m.Cell("uncontended", 32, "lockimpl")} {
		if c.VsPlain != nil {
			t.Errorf("%s on %s: VsPlain %+v, want none", c.Impl, c.Profile, c.VsPlain)
		}
	}
}
