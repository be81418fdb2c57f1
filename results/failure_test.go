package results_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/results"
)

// TestCollectorStalledAndUnreleased: an acquisition the run's stall bound
// cut is a failure whose wait is in the acquire histogram; a hold whose
// unlock never came back is a failure, an unreleased hold, and still a
// critical section for the safety check.
func TestCollectorStalledAndUnreleased(t *testing.T) {
	c := results.NewCollector(base, 1, 0)
	c.Shard(0).Record(sec(0, 0, results.Exclusive, 1*ms, 2*ms), nil, nil)
	stuck := results.Op{Start: 10 * ms, Called: 10 * ms, Released: 10 * ms, Done: 2010 * ms, Owner: 1, Lock: 0, Err: results.ErrStalled}
	c.Shard(0).Record(stuck, nil, nil)
	unreleased := sec(2, 0, results.Exclusive, 3*ms, 4*ms)
	unreleased.Done = 2010 * ms
	unreleased.Err, unreleased.Flags = results.ErrStalled, results.ReleaseFailed
	c.Shard(0).Record(unreleased, nil, nil)
	r := c.Finish(base.Add(3*time.Second), false, 1, results.Analysis{Labels: labels})

	th := r.Throughput
	if th.Attempts != 3 || th.Ops != 1 || th.Failed != 2 || th.Unreleased != 1 {
		t.Errorf("attempts/ops/failed/unreleased = %d/%d/%d/%d, want 3/1/2/1", th.Attempts, th.Ops, th.Failed, th.Unreleased)
	}
	if r.Errors["stalled"] != 2 {
		t.Errorf("errors %v, want 2 stalled", r.Errors)
	}
	if l := r.Latency["acquire_exclusive"]; l.Count != 3 || l.Max < 1.99e6 {
		t.Errorf("acquire %+v: want the stalled acquisition's 2 s wait among 3 values", l)
	}
	if r.Safety.Sections != 2 {
		t.Errorf("safety checked %d sections, want 2 (the unreleased hold too)", r.Safety.Sections)
	}
}

// TestCollectorErrorMessages: the first distinct messages are kept
// verbatim with their counts, gathered over the shards, first seen first;
// past the limit they are only counted.
func TestCollectorErrorMessages(t *testing.T) {
	c := results.NewCollector(base, 2, 0)
	readonly := "READONLY You can't write against a read only replica."
	c.Shard(1).NoteError(results.ErrConn, "dial tcp 127.0.0.1:6379: connect: connection refused", 500*ms)
	for i := range 3 {
		c.Shard(i).NoteError(results.ErrRedis, readonly, int64(100+i)*ms)
	}
	for i := range 12 {
		c.Shard(0).NoteError(results.ErrOther, fmt.Sprintf("odd reply %d", i), 900*ms)
	}
	r := c.Finish(base.Add(time.Second), false, 1, results.Analysis{Labels: labels})
	if len(r.ErrorMessages) != 8 {
		t.Fatalf("%d messages kept, want 8: %+v", len(r.ErrorMessages), r.ErrorMessages)
	}
	first := r.ErrorMessages[0]
	if first.Message != readonly || first.Class != "redis" || first.Count != 3 || first.First != 0.1 {
		t.Errorf("first message %+v, want READONLY ×3 from 0.1s", first)
	}
	if m := r.ErrorMessages[1]; m.Class != "conn" || !strings.Contains(m.Message, "refused") {
		t.Errorf("second message %+v, want the refused connection", m)
	}
	// Shard 0 kept 7 of its 12 odd replies besides READONLY (8 per shard);
	// the merge keeps 6 of those 7 in the last places.
	if r.ErrorMessagesDropped != 5+1 {
		t.Errorf("dropped %d, want 6", r.ErrorMessagesDropped)
	}
}

// TestReadFileUpgradesV1: a v1 result counted failed operations as
// throughput; read back, its throughput is its successes.
func TestReadFileUpgradesV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.json")
	v1 := `{"schema": "lockbench.result/v1", "measured_s": 10, "meta": {"profile": "rw90"},
	  "throughput": {"ops": 1000, "ops_per_s": 100, "acquisitions": {"read": 600}},
	  "errors": {"timeout": 0, "ctx": 0, "conn": 400, "other": 0},
	  "series": [{"t_s": 1, "ops": 100, "ops_per_s": 100, "errors": 40}],
	  "latency_us": {}, "fairness": {}, "safety": {"sections": 600}}`
	if err := os.WriteFile(path, []byte(v1), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	th := r.Throughput
	if !r.FromV1() || r.Schema != results.Schema || th.Attempts != 1000 || th.Ops != 600 || th.Failed != 400 || th.OpsPerSec != 60 || th.SuccessRatio != 0.6 {
		t.Errorf("upgraded throughput %+v (from v1 %v)", th, r.FromV1())
	}
	if p := r.Series[0]; p.Ops != 60 || p.Attempts != 100 || p.OpsPerSec != 60 {
		t.Errorf("upgraded series point %+v", p)
	}
	if kind := results.KindOf("lockbench.result/v1"); kind != results.KindResult {
		t.Errorf("KindOf(v1) = %q", kind)
	}
}

// TestSweepFailedPoint: a point whose Redis stalled (or whose operations
// all failed) breaks the SLO, and its curve names no knee: a failure is
// not saturation. Its percentiles print as a dash when it acquired
// nothing.
func TestSweepFailedPoint(t *testing.T) {
	s := &results.Sweep{Schema: results.SweepSchema, Axis: results.AxisConcurrency, SLOP99Us: 10_000, MaxErrorRate: 0.01, Points: []results.SweepPoint{
		point("", 1, 3000, 500), point("", 2, 5800, 900), point("", 4, 11656, 0),
	}}
	dead := &s.Points[2]
	dead.Ops, dead.Errors, dead.Attempts = 0, 46000, 46000
	dead.Failure = "no operation succeeded: all 46,000 attempts failed (conn 46,000)"
	s.Analyze()
	c := s.Capacity[0]
	if s.Points[2].MeetsSLO {
		t.Error("a point with no success meets the SLO")
	}
	if c.Knee != nil || c.Failed == nil || c.Failed.X != 4 {
		t.Errorf("knee %+v, failed %+v: want no knee and the failed point at x=4", c.Knee, c.Failed)
	}
	if got := s.Points[2].Percentile(s.Points[2].P99Us); got != "-" {
		t.Errorf("p99 of a point with no acquisition prints %q, want -", got)
	}
	// Too many failures also fail a point's SLO, whatever its p99.
	flaky := point("", 8, 4000, 100)
	flaky.Errors = flaky.Ops / 10
	if flaky.Judge(10_000, 0.01); flaky.MeetsSLO {
		t.Error("a point with 9% failed operations meets the SLO")
	}
}

// TestSweepOnePoint: one point is no curve: no "still rose", no knee.
func TestSweepOnePoint(t *testing.T) {
	s := &results.Sweep{Schema: results.SweepSchema, Axis: results.AxisConcurrency, SLOP99Us: 10_000, MaxErrorRate: 0.01, CurrentX: 8,
		Points: []results.SweepPoint{point("", 8, 5000, 900)}}
	s.Analyze()
	c := s.Capacity[0]
	if c.Points != 1 || c.Knee != nil {
		t.Errorf("one point: %d points, knee %+v; want 1 and none", c.Points, c.Knee)
	}
	// The current setting was swept, not interpolated.
	if c.Current == nil || c.Current.X != 8 || c.Current.Interpolated {
		t.Errorf("current %+v: want the swept point at 8", c.Current)
	}
}

// TestSweptCurrentWithNoSuccess: a swept current setting is called swept
// even when none of its operations succeeded (it was still measured).
func TestSweptCurrentWithNoSuccess(t *testing.T) {
	s := &results.Sweep{Schema: results.SweepSchema, Axis: results.AxisConcurrency, SLOP99Us: 10_000, MaxErrorRate: 0.01, CurrentX: 4, Points: []results.SweepPoint{
		point("", 2, 2000, 500), point("", 4, 0, 0), point("", 8, 5000, 900),
	}}
	s.Points[1].Ops, s.Points[1].Errors = 0, 500
	s.Analyze()
	if cur := s.Capacity[0].Current; cur == nil || cur.X != 4 || cur.Interpolated {
		t.Errorf("current %+v: want the swept point at 4, not interpolated", cur)
	}
}

// TestMergeRefusesTheSameRunTwice: the same run given twice (same host,
// start and owners) would count its operations twice.
func TestMergeRefusesTheSameRunTwice(t *testing.T) {
	a, ha := collect(t, hostA)
	b, hb := collect(t, hostA)
	_, err := results.Merge([]*results.Result{a, b}, []map[string]*hdr.Histogram{ha, hb})
	if err == nil || !strings.Contains(err.Error(), "are the same run") {
		t.Fatalf("Merge of one run twice: %v", err)
	}
}

// TestMergeNotesRunsThatNeverOverlapped: runs measured at different times
// add up to a load Redis never saw; the merge says so.
func TestMergeNotesRunsThatNeverOverlapped(t *testing.T) {
	later := hostB
	later.start = hostA.start.Add(time.Hour)
	m, _, _ := mergeOf(t, hostA, later)
	if !strings.Contains(strings.Join(m.MergeNotes, "\n"), "did not overlap in time") {
		t.Errorf("notes %q lack the overlap note", m.MergeNotes)
	}
	m, _, _ = mergeOf(t, hostA, hostB)
	if strings.Contains(strings.Join(m.MergeNotes, "\n"), "did not overlap") {
		t.Errorf("overlapping runs noted as not overlapping: %q", m.MergeNotes)
	}
}

// TestFailuresSeeADeadServer: seconds in which nothing succeeded and
// calls failed fail the run even when the failures are few (each slow,
// as dials to a dead server are); seconds of lock timeouts alone do not.
func TestFailuresSeeADeadServer(t *testing.T) {
	r := &results.Result{Measured: 4, Throughput: results.Throughput{Attempts: 4024, Ops: 4000, Failed: 24}, Errors: map[string]int64{"conn": 24},
		Series: []results.Point{{T: 1, Ops: 2000, Attempts: 2000}, {T: 2, Ops: 2000, Attempts: 2008, Errors: 8}, {T: 3, Attempts: 8, Errors: 8}, {T: 4, Attempts: 8, Errors: 8}}}
	if f := r.Failures(); len(f) != 1 || f[0].Kind != results.FailDeadTime || !strings.Contains(f[0].Text, "for 2.0s from t=2.0s") {
		t.Errorf("Failures() = %q, want the two dead seconds named", f)
	}
	r.Series[2].Timeouts, r.Series[3].Timeouts = 8, 8
	if f := r.Failures(); len(f) != 0 {
		t.Errorf("seconds of lock timeouts only: Failures() = %q", f)
	}
}

// TestFailuresSeeStoreOverlaps: the guarded store's overlaps fail a run
// where the store is the witness between processes (merged machines), in
// the one safety failure beside the checker's own; within one process
// the checker is the verdict. A run that asked for the store's witness
// and did not get all of it fails on that.
func TestFailuresSeeStoreOverlaps(t *testing.T) {
	kinds := func(r *results.Result) (ks []results.FailureKind) {
		for _, f := range r.Failures() {
			ks = append(ks, f.Kind)
		}
		return ks
	}
	for _, c := range []struct {
		name   string
		safety results.Safety
		want   []results.FailureKind
	}{
		{"merged, overlaps", results.Safety{Witness: results.WitnessStore, StoreOverlaps: 3}, []results.FailureKind{results.FailSafety}},
		{"merged, overlaps and violations", results.Safety{Witness: results.WitnessStore, StoreOverlaps: 3, Violations: 2}, []results.FailureKind{results.FailSafety}},
		{"merged, none", results.Safety{Witness: results.WitnessStore}, nil},
		{"merged, not counted", results.Safety{Incomplete: results.MergeIncomplete}, nil},
		{"one process, violations", results.Safety{Violations: 1}, []results.FailureKind{results.FailSafety}},
		{"evidence missing", results.Safety{Unwitnessed: "the guarded store witnessed 1 of 2 sections"}, []results.FailureKind{results.FailUnwitnessed}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.safety.Sections = 100
			r := &results.Result{Measured: 1, Throughput: results.Throughput{Attempts: 100, Ops: 100}, Safety: c.safety,
				Guard: &results.Guard{Mode: "plain", Accepted: 10, Final: 10, Occupancy: true, Overlaps: 3}}
			if got := kinds(r); !slices.Equal(got, c.want) {
				t.Errorf("failure kinds %v; want %v (%q)", got, c.want, r.Failures())
			}
		})
	}
}

// TestFailuresSeeViolationsAndLostUpdates: a run that measured well but
// broke mutual exclusion or lost guarded updates has failed; its figures
// are not a result.
func TestFailuresSeeViolationsAndLostUpdates(t *testing.T) {
	r := &results.Result{Measured: 1, Throughput: results.Throughput{Attempts: 100, Ops: 100}}
	if f := r.Failures(); len(f) != 0 {
		t.Fatalf("a clean run: Failures() = %q", f)
	}
	r.Safety.Violations = 2
	r.Guard = &results.Guard{Mode: "plain", Accepted: 10, Final: 7, Lost: 3}
	var kinds []results.FailureKind
	for _, f := range r.Failures() {
		kinds = append(kinds, f.Kind)
	}
	if want := []results.FailureKind{results.FailSafety, results.FailLostUpdates}; !slices.Equal(kinds, want) {
		t.Errorf("failure kinds %v; want %v", kinds, want)
	}
	p := results.PointFrom(r)
	if p.Judge(0, 0.01); p.Failure == "" || p.MeetsSLO {
		t.Errorf("a sweep point with violations: failure %q, meets SLO %v; want it failed", p.Failure, p.MeetsSLO)
	}
}
