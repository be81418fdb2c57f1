package report_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestMatrixShowsHoldsAsAsked: each cell's row says how much longer than
// asked its holds lasted and, beside it, the CPU lockbench's waits took;
// a Redisson row says its JVM held them; a cell without holds shows a dash.
func TestMatrixShowsHoldsAsAsked(t *testing.T) {
	m := &results.Lineup{Rounds: 1, Cells: []results.LineupCell{
		{Profile: "mutex", Owners: 8, Impl: "lockimpl", Median: results.LineupRound{OpsPerSec: 1000, Holds: 900, HoldErrP50: 0.4, HoldErrP99: 21, SpinShare: 0.37, WaitCPU: 0.42}},
		{Profile: "mutex", Owners: 8, Impl: "lockimpl+ap", Median: results.LineupRound{OpsPerSec: 1000, Holds: 900, HoldErrP50: 31, HoldErrP99: 90, WaitCPU: 0.03}},
		{Profile: "mutex", Owners: 8, Impl: "redisson", Median: results.LineupRound{OpsPerSec: 900, Holds: 800, HoldErrP50: 55, HoldErrP99: 180, HoldInImpl: true}},
		{Profile: "mutex", Owners: 8, Impl: "raw", Median: results.LineupRound{OpsPerSec: 400}},
	}}
	b := lineupMarkdown(t, m)
	row := func(impl string) []string {
		for _, l := range strings.Split(b, "\n") {
			if strings.HasPrefix(l, "| "+impl+" |") {
				return strings.Split(l, "|")
			}
		}
		t.Fatalf("no row for %s:\n%s", impl, b)
		return nil
	}
	var head []string
	for _, l := range strings.Split(b, "\n") {
		if strings.HasPrefix(l, "| impl |") {
			head = strings.Split(l, "|")
			break
		}
	}
	col := func(name string) int {
		for i, h := range head {
			if strings.TrimSpace(h) == name {
				return i
			}
		}
		t.Fatalf("no column %q in %v", name, head)
		return 0
	}
	hold, spin := col("hold − asked"), col("waits' cpu")
	for _, c := range []struct{ impl, hold, spin string }{
		{"lockimpl", "+0.4µs · +21.0µs", "42% (spin 37% of lockbench's)"},
		{"lockimpl+ap", "+31.0µs · +90.0µs", "3%"},
		{"redisson", "+55.0µs · +180.0µs (JVM)", "—"},
		{"raw", "—", "—"},
	} {
		r := row(c.impl)
		if got := strings.TrimSpace(r[hold]); got != c.hold {
			t.Errorf("%s: hold − asked %q, want %q", c.impl, got, c.hold)
		}
		if got := strings.TrimSpace(r[spin]); got != c.spin {
			t.Errorf("%s: waits' cpu %q, want %q", c.impl, got, c.spin)
		}
	}
	if !strings.Contains(b, "hold − asked is how much longer") {
		t.Error("the matrix does not say what hold − asked is")
	}
}
