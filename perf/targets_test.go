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
// as much as the rounds'; with fewer than MinPairs pairs nothing is
// judged.
func TestAPVsPlainTarget(t *testing.T) {
	// cell has one round per figure pair, the first three in the
	// matrix's rounds and the rest as pairs after them.
	cell := func(impl string, rounds ...[2]float64) results.LineupCell {
		c := results.LineupCell{Profile: "uncontended", Owners: 8, Impl: impl}
		for i, r := range rounds {
			lr := results.LineupRound{Round: i, OpsPerSec: r[0], AcquireP99: r[1]}
			if i < 3 {
				c.Rounds = append(c.Rounds, lr)
			} else {
				c.PairRounds = append(c.PairRounds, lr)
			}
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
	// scaled is plain's rounds with ops/s and p99 times f and g, except
	// where a round's factor is overridden.
	plainRounds := [][2]float64{{1000, 100}, {1100, 120}, {900, 90}, {1050, 110}, {950, 95}, {1000, 105}}
	scaled := func(f, g float64, over map[int][2]float64) [][2]float64 {
		var rs [][2]float64
		for i, r := range plainRounds {
			k := [2]float64{f, g}
			if o, ok := over[i]; ok {
				k = o
			}
			rs = append(rs, [2]float64{r[0] * k[0], r[1] * k[1]})
		}
		return rs
	}
	plain := cell("lockimpl", plainRounds...)
	for _, tc := range []struct {
		name string
		ap   [][2]float64
		met  bool
		says string
	}{
		{"faster", scaled(1.5, 0.8, nil), true, "1.50..1.50×"},
		// Below in five pairs, above in one of those run after the rounds.
		{"slower within the spread", scaled(0.95, 1, map[int][2]float64{4: {1.02, 1}}), true, "ops/s 0.95..0.95× plain's"},
		// Each ap round is above some plain round, as the rounds of two
		// that do not differ overlap, but below its own pair's plain run.
		{"slower in every pair", scaled(0.95, 1, nil), false, "worse in every pair: uncontended at 8 owners ops/s 0.95× (6 pairs 0.95..0.95)"},
		{"p99 worse in every pair", scaled(1, 1.1, map[int][2]float64{5: {1, 1.01}}), false, "acquire p99 1.10× (6 pairs 1.01..1.10)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := judge(plain, cell(perf.PipelinedName, tc.ap...))
			if !ok || c.Met != tc.met || !strings.Contains(c.Value, tc.says) || !strings.Contains(c.Value, "6 pairs each") {
				t.Errorf("target %+v (present %v), want met %v saying %q and 6 pairs each", c, ok, tc.met, tc.says)
			}
		})
	}
	if c, ok := judge(plain); ok {
		t.Errorf("target judged with no lockimpl+ap cell: %+v", c)
	}
	// Three pairs, all worse: too few to tell a loss from chance, and too
	// few to call the target met.
	few := plain
	few.PairRounds = nil
	ap := cell(perf.PipelinedName, scaled(0.7, 1.3, nil)[:3]...)
	if c, ok := judge(few, ap); !ok || c.Met || strings.Contains(c.Value, "worse in every pair") || !strings.Contains(c.Value, "not judged: 1 cell with fewer than the 6 pairs") {
		t.Errorf("with 3 pairs: target %+v (present %v), want missed as not judged, naming no loss", c, ok)
	}
}
