package perf_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/results"
)

// TestAPVsPlainTarget: lockimpl+ap meets the target where it is at least
// plain lockimpl, or below it only within the pairs' spread (some pair
// not below); a cell worse in every pair, in ops/s or in acquire p99,
// misses it and is named. The pairs run after the matrix's rounds count
// as much as the rounds'.
func TestAPVsPlainTarget(t *testing.T) {
	cell := func(profile, impl string, rounds ...[2]float64) results.LineupCell {
		c := results.LineupCell{Profile: profile, Owners: 8, Impl: impl}
		for i, r := range rounds {
			c.Rounds = append(c.Rounds, results.LineupRound{Round: i, OpsPerSec: r[0], AcquireP99: r[1]})
		}
		c.Median = c.Rounds[0]
		return c
	}
	judge := func(cells ...results.LineupCell) (results.TargetCheck, bool) {
		m := &results.Lineup{Cells: cells}
		perf.Ratios(m)
		for _, c := range perf.Targets(m) {
			if c.Target == perf.APVsPlainTarget {
				return c, true
			}
		}
		return results.TargetCheck{}, false
	}
	plain := cell("uncontended", "lockimpl", [2]float64{1000, 100}, [2]float64{1100, 120}, [2]float64{900, 90})
	for _, tc := range []struct {
		name string
		ap   results.LineupCell
		met  bool
		says string
	}{
		{"faster", cell("uncontended", perf.PipelinedName, [2]float64{1500, 80}, [2]float64{1600, 90}, [2]float64{1400, 70}), true, "1.50..1.50×"},
		{"slower within the spread", cell("uncontended", perf.PipelinedName, [2]float64{950, 100}, [2]float64{1120, 120}, [2]float64{880, 90}), true, "0.98"},
		// Each ap round is above some plain round, as the rounds of two
		// that do not differ overlap, but below its own pair's plain run.
		{"slower in every pair", cell("uncontended", perf.PipelinedName, [2]float64{950, 100}, [2]float64{1000, 120}, [2]float64{880, 90}), false, "ops/s 0.95× (3 pairs 0.91..0.98)"},
		{"slower beyond the spread", cell("uncontended", perf.PipelinedName, [2]float64{700, 100}, [2]float64{800, 120}, [2]float64{600, 90}), false, "uncontended at 8 owners ops/s 0.70×"},
		{"p99 worse beyond the spread", cell("uncontended", perf.PipelinedName, [2]float64{1000, 300}, [2]float64{1100, 250}, [2]float64{900, 280}), false, "acquire p99 3.00×"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := judge(plain, tc.ap)
			if !ok || c.Met != tc.met || !strings.Contains(c.Value, tc.says) {
				t.Errorf("target %+v (present %v), want met %v saying %q", c, ok, tc.met, tc.says)
			}
		})
	}
	if c, ok := judge(plain); ok {
		t.Errorf("target judged with no lockimpl+ap cell: %+v", c)
	}
	// Worse in every round of the matrix, but not in a pair run after
	// it: within the spread; worse there too, a miss over 4 pairs.
	ap := cell("uncontended", perf.PipelinedName, [2]float64{950, 100}, [2]float64{1000, 120}, [2]float64{880, 90})
	for _, tc := range []struct {
		pairAP float64
		met    bool
		says   string
	}{{1010, true, "4 pairs each"}, {990, false, "ops/s 0.96× (4 pairs 0.91..0.99)"}} {
		p, a := plain, ap
		p.PairRounds = []results.LineupRound{{Round: 3, OpsPerSec: 1000, AcquireP99: 100}}
		a.PairRounds = []results.LineupRound{{Round: 3, OpsPerSec: tc.pairAP, AcquireP99: 100}}
		if c, ok := judge(p, a); !ok || c.Met != tc.met || !strings.Contains(c.Value, tc.says) {
			t.Errorf("with a pair round of ap at %v: target %+v (present %v), want met %v saying %q", tc.pairAP, c, ok, tc.met, tc.says)
		}
	}
}
