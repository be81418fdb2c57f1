package results_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/results"
)

// workerRuns are hostA's and hostB's runs as workers 0 and 1 of one run:
// their own clocks disagree by 1.5 s, Redis's says worker 1 started 1 ms
// after worker 0.
func workerRuns(t *testing.T) ([]*results.Result, []map[string]*hdr.Histogram) {
	t.Helper()
	redisStart := base.Add(time.Hour)
	var runs []*results.Result
	var hists []map[string]*hdr.Histogram
	for i, m := range []machine{hostA, hostB} {
		r, h := collect(t, m)
		r.Worker = &results.Worker{RunID: "job-7", Index: i, Workers: 2, FirstOwner: 3 * i, Owners: 3,
			RedisStart: redisStart.Add(time.Duration(i) * time.Millisecond), UncertaintyUs: 40 + 10*float64(i)}
		runs, hists = append(runs, r), append(hists, h)
	}
	return runs, hists
}

func TestMergeWorkers(t *testing.T) {
	runs, hists := workerRuns(t)
	m, err := results.MergeWorkers(runs, hists, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Spread
	if s == nil || s.RunID != "job-7" || s.Workers != 2 || len(s.Rows) != 2 {
		t.Fatalf("spread %+v, want run job-7's 2 workers", s)
	}
	// The skew is Redis's, not the hosts' clocks' 1.5 s.
	if s.SkewUs != 1000 || s.UncertaintyUs != 90 {
		t.Errorf("skew %vµs ±%v, want 1000µs ±90 (both starts' errors)", s.SkewUs, s.UncertaintyUs)
	}
	if s.Rows[0].SkewUs != 0 || s.Rows[1].SkewUs != 1000 || s.Rows[1].Host != "beta-2" || s.Rows[0].Ops != runs[0].Throughput.Ops {
		t.Errorf("rows %+v", s.Rows)
	}
	// Both measured 2 s; together they covered 1.999 s.
	if s.WindowS != 1.999 {
		t.Errorf("common window %vs, want 1.999", s.WindowS)
	}
	var want float64
	for _, r := range runs {
		var ops int64
		for _, p := range r.Series {
			ops += p.Ops
		}
		want += float64(ops) / r.Series[len(r.Series)-1].T
	}
	if math.Abs(m.Throughput.OpsPerSec-want) > 0.1 {
		t.Errorf("throughput %v ops/s, want %v over the common window", m.Throughput.OpsPerSec, want)
	}
	if _, ok := m.Fairness.PerOwner["w1/alice"]; !ok {
		t.Errorf("owners %v, want them named by worker (w1/alice)", m.Fairness.PerOwner)
	}
	if m.Partial || len(m.Failures()) == 0 || m.Failures()[0].Kind != results.FailSafety {
		// hostB planted an overlap within its own sections.
		t.Errorf("partial %v, failures %+v; want whole, failing on worker 1's own violation", m.Partial, m.Failures())
	}
	if !strings.Contains(m.Safety.Incomplete, results.MergeIncomplete) {
		t.Errorf("incomplete %q: the clock checker covers no pair across workers", m.Safety.Incomplete)
	}
}

func TestMergeWorkersMissing(t *testing.T) {
	runs, hists := workerRuns(t)
	m, err := results.MergeWorkers(runs[:1], hists[:1], []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Partial || !strings.Contains(m.PartialReason, "worker 1 of 2") {
		t.Errorf("partial %v (%q), want partial naming worker 1", m.Partial, m.PartialReason)
	}
	if got := m.Spread.MissingWorkers(); !slices.Equal(got, []int{1}) || !m.Spread.Rows[1].Missing {
		t.Errorf("missing %v, rows %+v", got, m.Spread.Rows)
	}
	kinds := []results.FailureKind{}
	for _, f := range m.Failures() {
		kinds = append(kinds, f.Kind)
	}
	if !slices.Contains(kinds, results.FailMissingWorker) {
		t.Errorf("failures %v, want %s", kinds, results.FailMissingWorker)
	}
}

func TestMergeWorkersRefuses(t *testing.T) {
	for name, mutate := range map[string]func(rs []*results.Result) []int{
		"another run":     func(rs []*results.Result) []int { rs[1].Worker.RunID = "job-8"; return nil },
		"index twice":     func(rs []*results.Result) []int { rs[1].Worker.Index = 0; return nil },
		"not a worker":    func(rs []*results.Result) []int { rs[1].Worker = nil; return nil },
		"missing but ran": func(rs []*results.Result) []int { return []int{1} },
		"index too high":  func(rs []*results.Result) []int { rs[1].Worker.Index = 2; return nil },
		"other profile":   func(rs []*results.Result) []int { rs[1].Meta.Workload = "other"; return nil },
	} {
		t.Run(name, func(t *testing.T) {
			runs, hists := workerRuns(t)
			missing := mutate(runs)
			if _, err := results.MergeWorkers(runs, hists, missing); err == nil {
				t.Error("merged; want refused")
			}
		})
	}
}

// TestMergeWorkersExcusesADeadWorker: overlaps counted against a missing
// worker's holder (its section stayed open when it died) do not fail the
// merged run; the others still do.
func TestMergeWorkersExcusesADeadWorker(t *testing.T) {
	runs, hists := workerRuns(t)
	for _, r := range runs {
		r.Safety.Violations, r.Safety.Examples = 0, nil
		r.Guard = &results.Guard{Mode: "plain", Store: "redis://g", Occupancy: true, Sections: 10, Accepted: 10, Final: 10}
	}
	// The later reading: 3 overlaps behind w1/x, which died inside, 1 behind w0/y.
	runs[0].Guard.Overlaps, runs[0].Guard.OverlapsBy = 4, map[string]int64{"w1/x": 3, "w0/y": 1}
	runs[1].Guard.Overlaps, runs[1].Guard.OverlapsBy = 2, map[string]int64{"w1/x": 2}
	m, err := results.MergeWorkers(runs[:1], hists[:1], []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if g := m.Guard; g.Overlaps != 4 || g.OverlapsExcused != 3 || g.Unexcused() != 1 {
		t.Errorf("overlaps %d, excused %d, want 4 and 3", g.Overlaps, g.OverlapsExcused)
	}
	var safety []string
	for _, f := range m.Failures() {
		if f.Kind == results.FailSafety {
			safety = append(safety, f.Text)
		}
	}
	if len(safety) != 1 || !strings.HasPrefix(safety[0], "1 overlap ") {
		t.Errorf("safety failures %q, want the one overlap not behind the dead worker", safety)
	}
	// Without a missing worker nothing is excused.
	runs[1].Guard.OverlapsBy = map[string]int64{"w1/x": 3, "w0/y": 1}
	runs[1].Guard.Overlaps = 4
	if m, err := results.MergeWorkers(runs, hists, nil); err != nil || m.Guard.OverlapsExcused != 0 {
		t.Errorf("excused %d (%v), want 0 when every worker reported", m.Guard.OverlapsExcused, err)
	}
}

// TestMergeOfWorkers: bench merge given workers' files merges them as
// collect does, naming a worker whose file was not given.
func TestMergeOfWorkers(t *testing.T) {
	runs, hists := workerRuns(t)
	for _, r := range runs {
		r.Worker.Workers = 3
	}
	m, err := results.Merge(runs, hists)
	if err != nil {
		t.Fatal(err)
	}
	if m.Spread == nil || !slices.Equal(m.Spread.MissingWorkers(), []int{2}) || !m.Partial {
		t.Errorf("spread %+v, partial %v; want workers 0 and 1 merged, 2 missing", m.Spread, m.Partial)
	}
	if _, ok := m.Fairness.PerOwner["w0/alice"]; !ok {
		t.Errorf("owners %v, want them named by worker", m.Fairness.PerOwner)
	}
}

// TestWriteWorkersMergedReplaces: collecting a run again into the same
// directory replaces its earlier merge, whether the merge's name is the
// same (the same workers) or not (an earlier, partial collect started
// from another worker's start): one merged result per run.
func TestWriteWorkersMergedReplaces(t *testing.T) {
	dir := t.TempDir()
	runs, hists := workerRuns(t)
	merges := func() []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}

	partial, err := results.MergeWorkers(runs[1:], hists[1:], []int{0})
	if err != nil {
		t.Fatal(err)
	}
	first, replaced, err := results.WriteWorkersMerged(dir, partial)
	if err != nil || len(replaced) != 0 {
		t.Fatalf("first collect: %v, replaced %v", err, replaced)
	}
	// Another run's merge in the directory stays.
	other, err := results.MergeWorkers(runs[1:], hists[1:], []int{0})
	if err != nil {
		t.Fatal(err)
	}
	other.Spread.RunID = "job-8"
	otherPath, _, err := results.WriteWorkersMerged(dir, other)
	if err != nil {
		t.Fatal(err)
	}

	for range 2 {
		whole, err := results.MergeWorkers(runs, hists, nil)
		if err != nil {
			t.Fatal(err)
		}
		path, replaced, err := results.WriteWorkersMerged(dir, whole)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s, replaced %v; dir %v", filepath.Base(path), replaced, merges())
		if len(replaced) != 1 {
			t.Errorf("replaced %v, want the earlier merge", replaced)
		}
		got := merges()
		if len(got) != 4 || !slices.Contains(got, filepath.Base(path)) || !slices.Contains(got, filepath.Base(otherPath)) {
			t.Errorf("directory holds %v, want this run's merge (json, hlog) and job-8's", got)
		}
		if _, err := os.Stat(first); path != first && err == nil {
			t.Errorf("the partial merge %s is still there", first)
		}
		r, err := results.ReadFile(path)
		if err != nil || len(r.Spread.MissingWorkers()) != 0 {
			t.Errorf("the merge read back: %v, missing %v; want the whole run", err, r.Spread.MissingWorkers())
		}
	}
}

func TestSameRun(t *testing.T) {
	runs, hists := workerRuns(t)
	a, err := results.MergeWorkers(runs, hists, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := results.MergeWorkers(runs[:1], hists[:1], []int{1})
	if err != nil {
		t.Fatal(err)
	}
	c := *b
	s := *b.Spread
	s.RunID = "job-8"
	c.Spread = &s
	for _, tc := range []struct {
		x, y *results.Result
		same bool
	}{
		{a, b, true},             // one spread run, collected twice
		{a, &c, false},           // another run id
		{runs[0], runs[0], true}, // a file given twice
		{runs[0], runs[1], false},
		{a, runs[0], false}, // a merge and one of its workers
	} {
		if got := results.SameRun(tc.x, tc.y); got != tc.same {
			t.Errorf("SameRun(%s, %s) = %v, want %v", tc.x.Stem(), tc.y.Stem(), got, tc.same)
		}
	}
}
