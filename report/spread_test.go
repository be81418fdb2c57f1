package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestSpreadBlocks: a spread run shows a row per worker (a missing one
// marked), the start skew, and, without a guarded store, that overlaps
// between workers went unjudged.
func TestSpreadBlocks(t *testing.T) {
	s := &results.Spread{RunID: "job-1", Workers: 3, SkewUs: 412.5, UncertaintyUs: 60, WindowS: 29.5, Rows: []results.WorkerRow{
		{Index: 0, Host: "a", Ops: 100, OpsPerSec: 10, AcquireP99: 900, CPU: &results.CPU{}},
		{Index: 1, Host: "b", Ops: 90, OpsPerSec: 9, AcquireP99: 1200, SkewUs: 412.5},
		{Index: 2, Missing: true},
	}}
	for _, g := range []*results.Guard{nil, {Mode: "plain", Occupancy: true}} {
		bl := spreadBlocks(s, g, true)
		got := labelled(bl, "workers")
		if len(got) == 0 || !strings.Contains(got[0], "3 workers of run job-1") || !strings.Contains(got[0], "412.5µs") || !strings.Contains(got[0], "29.5s") {
			t.Errorf("workers line %q; want the run, its skew and the common window", got)
		}
		if unjudged := slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, "unjudged") }); unjudged != (g == nil) {
			t.Errorf("guard %v: lines %q; want the unjudged note only without a store", g, got)
		}
		var tab *table
		for _, b := range bl {
			if x, ok := b.(table); ok {
				tab = &x
			}
		}
		if tab == nil || len(tab.rows) != 3 || !strings.HasPrefix(tab.rows[2][len(tab.rows[2])-1].text, "MISSING") || tab.rows[1][5].text != "+412.5µs" {
			t.Fatalf("table %+v; want 3 rows, worker 2 missing, worker 1 started 412.5µs after", tab)
		}
	}
	if spreadBlocks(nil, nil, true) != nil {
		t.Error("a run of one machine has no workers' blocks")
	}
}
