package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/results/resultstest"
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

// TestWorkerSummary: a worker's own result says, in its header, the share
// of the run it drove (its workload line is the whole run's), and below
// its safety line that it checked its own critical sections only.
func TestWorkerSummary(t *testing.T) {
	for _, g := range []*results.Guard{nil, {Mode: "plain", Occupancy: true, Sections: 388}} {
		r := resultstest.Run()
		r.Meta.Workload = "mutex · 2 clients × 2 owners · 16 locks"
		r.Worker = &results.Worker{RunID: "job-1", Index: 1, Workers: 2, FirstOwner: 2, Owners: 2, Clients: 1, TotalOwners: 4}
		r.Guard = g
		var b strings.Builder
		if err := WriteSummary(&b, r); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		t.Log(out)
		if !strings.Contains(out, "  mutex · 2 clients × 2 owners · 16 locks\n  worker 1 of 2 of run job-1: drove 1 client × 2 owners (owners 2..3 of the run's 4)") {
			t.Errorf("guard %v: the header does not name the worker's share", g)
		}
		safety := labelled(summaryBlocks(r), "safety")
		if len(safety) < 2 || !strings.HasPrefix(safety[0], "OK") || !strings.HasPrefix(safety[1], "worker 1's own critical sections only") {
			t.Errorf("guard %v: safety lines %q; want OK, then that only worker 1's own sections were checked", g, safety)
		}
		if judged := strings.Contains(safety[len(safety)-1], "guarded store's to judge"); judged != (g != nil) {
			t.Errorf("guard %v: safety lines %q; say who judges across workers", g, safety)
		}
	}
	// A merged result, and one of a single machine, say neither.
	merged := resultstest.Run()
	merged.Worker = &results.Worker{RunID: "job-1", Workers: 2, Owners: 2}
	merged.Spread = &results.Spread{RunID: "job-1", Workers: 2}
	for _, r := range []*results.Result{resultstest.Run(), merged} {
		if workerShare(r) != "" || workerSafetyNote(r) != "" {
			t.Errorf("%s: a worker's share or safety note on a result that is no lone worker's", r.Stem())
		}
	}
}

// TestSummaryPrintsEveryMergeNote: the summary of a merged result, as
// bench collect and bench run --spawn-local print it, carries every note
// of the merge: the reason a verdict reads as it does may be one.
func TestSummaryPrintsEveryMergeNote(t *testing.T) {
	r := resultstest.Run()
	r.MergeNotes = []string{"guard: runs used different counters (a, b); lost updates not merged: give every machine the same --guard-url and --guard-key", "server differs"}
	var b strings.Builder
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	notes := labelled(summaryBlocks(r), "note")
	if !slices.Equal(notes, r.MergeNotes) {
		t.Errorf("notes %q, want every merge note %q", notes, r.MergeNotes)
	}
	var m strings.Builder
	if err := WriteMerged(&m, r, 2, "x.json"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(m.String(), "server differs"); n != 1 {
		t.Errorf("bench merge's summary prints a note %d times, want once:\n%s", n, m.String())
	}
}
