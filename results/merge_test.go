package results_test

import (
	"bytes"
	"errors"
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

// machine describes one machine's run for the merge tests.
type machine struct {
	host     string
	start    time.Time
	acquire  int64   // acquire latency of every acquisition, ns
	perOwner []int64 // measured acquisitions of owners alice, bob, carol
	timeouts int     // failed acquisitions
	overlap  bool    // alice and bob overlap once on "users": a violation
}

// collect runs m through a Collector: acquisitions spread over two
// one-second intervals on lock "orders", a ping, and the asked-for
// timeouts and violation (on "users").
func collect(t *testing.T, m machine) (*results.Result, map[string]*hdr.Histogram) {
	t.Helper()
	c := results.NewCollector(m.start, 1, 0)
	sh := c.Shard(0)
	var ops []results.Op
	for owner, n := range m.perOwner {
		for k := range n {
			// Owners take turns on "orders", 200 µs apart, each holding 100 µs.
			at := 10*ms + int64(k)*(1900*ms/n) + int64(owner)*200*us
			op := sec(int32(owner), 0, results.Exclusive, at, at+100*us)
			op.Start, op.Called = at-m.acquire, at-m.acquire
			ops = append(ops, op)
		}
	}
	for k := range m.timeouts {
		at := 20*ms + int64(k)*ms
		ops = append(ops, results.Op{Start: at, Called: at, Owner: 2, Lock: 0, Err: results.ErrTimeout})
	}
	if m.overlap {
		ops = append(ops, sec(0, 1, results.Write, 500*ms, 510*ms), sec(1, 1, results.Write, 505*ms, 520*ms))
	}
	slices.SortFunc(ops, func(a, b results.Op) int { return int(a.Called - b.Called) })
	i := 0
	for ; i < len(ops) && ops[i].Called < 1000*ms; i++ {
		sh.Record(ops[i], nil, nil)
	}
	sh.RecordValue(results.Ping, 80*us)
	c.Tick(m.start.Add(time.Second), false, 10)
	for ; i < len(ops); i++ {
		sh.Record(ops[i], nil, nil)
	}
	r := c.Finish(m.start.Add(2*time.Second), false, 10, results.Analysis{Labels: labels})
	r.Meta = results.Meta{
		Lockbench: "v1", Go: "go1.26", Host: m.host, GOMAXPROCS: 4, Start: m.start,
		Profile: "mutex", Workload: "exclusive, 1 client × 3 owners", RedisVersion: "7.4.0",
		RedisBackend: "external", RedisAddr: "10.0.0.5:6379", Args: []string{"--owners", "3"},
	}
	r.Runtime = results.Runtime{PeakRSSBytes: int64(len(m.host)) << 20, GoroutinesMax: 10 * len(m.host), Shards: 1}
	h, err := results.ReadIntervalLog(bytes.NewReader(r.IntervalLog()))
	if err != nil {
		t.Fatal(err)
	}
	return r, h
}

var (
	hostA = machine{host: "alpha", start: base, acquire: 100 * us, perOwner: []int64{30, 30, 30}, timeouts: 2}
	hostB = machine{host: "beta-2", start: base.Add(1500 * time.Millisecond), acquire: 300 * us, perOwner: []int64{10, 10, 0}, timeouts: 1, overlap: true}
)

func mergeOf(t *testing.T, ms ...machine) (*results.Result, []*results.Result, []map[string]*hdr.Histogram) {
	t.Helper()
	var runs []*results.Result
	var hists []map[string]*hdr.Histogram
	for _, m := range ms {
		r, h := collect(t, m)
		runs = append(runs, r)
		hists = append(hists, h)
	}
	m, err := results.Merge(runs, hists)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	return m, runs, hists
}

func TestMergeSums(t *testing.T) {
	m, runs, hists := mergeOf(t, hostA, hostB)
	a, b := runs[0], runs[1]

	if m.Throughput.Attempts != a.Throughput.Attempts+b.Throughput.Attempts || m.Throughput.Attempts != 90+2+22+1 {
		t.Errorf("attempts %d, want %d + %d = 115", m.Throughput.Attempts, a.Throughput.Attempts, b.Throughput.Attempts)
	}
	// The three timeouts are attempts, not throughput.
	if m.Throughput.Ops != 112 || m.Throughput.Failed != 3 || m.Throughput.SuccessRatio != math.Round(112.0/115*1e6)/1e6 {
		t.Errorf("ops/failed/success %d/%d/%v, want 112/3/%v", m.Throughput.Ops, m.Throughput.Failed, m.Throughput.SuccessRatio, 112.0/115)
	}
	if got, want := m.Throughput.OpsPerSec, a.Throughput.OpsPerSec+b.Throughput.OpsPerSec; got != want {
		t.Errorf("ops/s %v, want %v", got, want)
	}
	if got := m.Throughput.Acquisitions; got["exclusive"] != 110 || got["write"] != 2 {
		t.Errorf("acquisitions %v, want exclusive 110, write 2", got)
	}
	if m.Errors["timeout"] != 3 || m.Errors["conn"] != 0 {
		t.Errorf("errors %v, want timeout 3", m.Errors)
	}
	if m.Measured != 2 || m.Warmup != 0 {
		t.Errorf("measured %v warmup %v, want the longest run's", m.Measured, m.Warmup)
	}

	// Latencies: counts add up and percentiles are those of the added
	// histograms: 90 at 100 µs and 20 at 300 µs put p50 at 100 µs, p99 at 300 µs.
	ex := m.Latency["acquire_exclusive"]
	if ex.Count != 110 || !within(ex.P50, 100, 0.001) || !within(ex.P99, 300, 0.001) {
		t.Errorf("acquire_exclusive %+v, want 110 values, p50 100µs, p99 300µs", ex)
	}
	for tag := range hists[0] {
		want := results.NewHistogram()
		want.Merge(hists[0][tag])
		if h := hists[1][tag]; h != nil {
			want.Merge(h)
		}
		if got := m.Latency[tag]; got != results.Summarize(want) {
			t.Errorf("%s: merged %+v, want %+v", tag, got, results.Summarize(want))
		}
	}
	if all := m.Latency[results.AcquireAll]; all.Count != 112 || all.Count != a.Latency[results.AcquireAll].Count+b.Latency[results.AcquireAll].Count {
		t.Errorf("acquire (all modes) count %d, want 112", all.Count)
	}

	// Meta: one profile, every host, the earliest start, no one run's args.
	if m.Meta.Profile != "mutex" || m.Meta.Host != "alpha,beta-2" || !m.Meta.Start.Equal(base) || m.Meta.Args != nil || m.Meta.GOMAXPROCS != 8 {
		t.Errorf("meta %+v", m.Meta)
	}
	if m.Runtime.PeakRSSBytes != 6<<20 || m.Runtime.GoroutinesMax != 60 {
		t.Errorf("runtime %+v, want the larger machine's peaks", m.Runtime)
	}
	if want := []string{a.Stem() + ".json", b.Stem() + ".json"}; !slices.Equal(m.MergedFrom, want) {
		t.Errorf("MergedFrom %q, want %q", m.MergedFrom, want)
	}
	if m.Partial || len(m.MergeNotes) != 0 || m.Fairness.FIFO != nil {
		t.Errorf("partial %v, notes %q, fifo %v", m.Partial, m.MergeNotes, m.Fairness.FIFO)
	}
}

func TestMergeFairnessAndSafety(t *testing.T) {
	m, runs, _ := mergeOf(t, hostA, hostB)
	want := map[string]int64{
		"alpha/alice": 30, "alpha/bob": 30, "alpha/carol": 30,
		"beta-2/alice": 11, "beta-2/bob": 11, "beta-2/carol": 0,
	}
	if !mapsEqual(m.Fairness.PerOwner, want) {
		t.Errorf("per owner %v, want %v", m.Fairness.PerOwner, want)
	}
	ref := results.ComputeFairness([]int64{30, 30, 30, 11, 11, 0}, []string{"a", "b", "c", "d", "e", "f"})
	if f := m.Fairness; f.Owners != 6 || f.Jain != ref.Jain || f.Min != 0 || f.Max != 30 || f.Starved != 1 || f.CV != ref.CV {
		t.Errorf("fairness %+v, want Jain %v over 6 owners, 1 starved", f, ref.Jain)
	}
	if !slices.Equal(m.Fairness.StarvedOwners, []string{"beta-2/carol"}) {
		t.Errorf("starved %q", m.Fairness.StarvedOwners)
	}

	s := m.Safety
	if s.Sections != runs[0].Safety.Sections+runs[1].Safety.Sections || s.Violations != 1 || s.MaxOverlapUs != 5000 || s.UnsafeUs != 5000 {
		t.Errorf("safety %+v", s)
	}
	if len(s.Examples) != 1 || s.Examples[0].First.Owner != "beta-2/alice" || s.Examples[0].Second.Owner != "beta-2/bob" || s.Examples[0].Lock != "users" {
		t.Errorf("examples %+v, want beta-2's owners on users", s.Examples)
	}
	if s.Incomplete != results.MergeIncomplete || s.OK() {
		t.Errorf("incomplete %q, want the cross-machine caveat", s.Incomplete)
	}
}

// TestMergeSameHost: two runs on one host keep their owners apart.
func TestMergeSameHost(t *testing.T) {
	a, b := hostA, hostB
	b.host = "alpha"
	m, _, _ := mergeOf(t, a, b)
	for _, o := range []string{"alpha#0/alice", "alpha#1/alice", "alpha#1/carol"} {
		if _, ok := m.Fairness.PerOwner[o]; !ok {
			t.Errorf("no owner %s in %v", o, m.Fairness.PerOwner)
		}
	}
	if m.Fairness.Owners != 6 || m.Meta.Host != "alpha,alpha" {
		t.Errorf("owners %d host %q", m.Fairness.Owners, m.Meta.Host)
	}
}

func TestMergeExamplesEarliestFirstCapped(t *testing.T) {
	mk := func(host string, starts ...float64) *results.Result {
		r := &results.Result{Schema: results.Schema, Meta: results.Meta{Profile: "p", Host: host}}
		for _, s := range starts {
			r.Safety.Examples = append(r.Safety.Examples, results.Violation{Lock: "l", OverlapStart: s, First: results.Holder{Owner: "o"}})
			r.Safety.Violations++
		}
		r.Safety.Incomplete = "host " + host + " ran out of room"
		return r
	}
	var late, early []float64
	for i := range 15 {
		late = append(late, 10+float64(i))
		early = append(early, 1+float64(i))
	}
	m, err := results.Merge([]*results.Result{mk("a", late...), mk("b", early...)}, make([]map[string]*hdr.Histogram, 2))
	if err != nil {
		t.Fatal(err)
	}
	ex := m.Safety.Examples
	if len(ex) != 20 || m.Safety.Violations != 30 || ex[0].OverlapStart != 1 || ex[0].First.Owner != "b/o" || ex[19].OverlapStart != 15 {
		t.Errorf("%d examples of %d, first %+v, last %+v", len(ex), m.Safety.Violations, ex[0], ex[len(ex)-1])
	}
	if !strings.HasPrefix(m.Safety.Incomplete, results.MergeIncomplete) ||
		!strings.Contains(m.Safety.Incomplete, "run 0 (host a): host a ran out of room") || !strings.Contains(m.Safety.Incomplete, "run 1 (host b)") {
		t.Errorf("incomplete %q", m.Safety.Incomplete)
	}
}

// TestMergeSeries aligns points by the second since each run's start and
// folds a run's short last interval into its second at its own rate.
func TestMergeSeries(t *testing.T) {
	a := &results.Result{Meta: results.Meta{Profile: "p", Host: "a"}, Series: []results.Point{
		{T: 1.0, Ops: 100, OpsPerSec: 100, AcquireP99: 50, Warmup: true},
		{T: 2.0, Ops: 100, OpsPerSec: 100, AcquireP99: 70, Errors: 1},
		{T: 2.004, Ops: 2, OpsPerSec: 500, AcquireP99: 90}, // the run's end, 4 ms after the last tick
	}}
	b := &results.Result{Meta: results.Meta{Profile: "p", Host: "b"}, Series: []results.Point{
		{T: 1.001, Ops: 50, OpsPerSec: 49.95, AcquireP99: 80},
		{T: 2.0, Ops: 50, OpsPerSec: 50.05, AcquireP99: 60, Errors: 2},
		{T: 3.0, Ops: 40, OpsPerSec: 40, AcquireP99: 60},
	}}
	m, err := results.Merge([]*results.Result{a, b}, make([]map[string]*hdr.Histogram, 2))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 3 {
		t.Fatalf("series %+v, want 3 seconds", m.Series)
	}
	p1, p2, p3 := m.Series[0], m.Series[1], m.Series[2]
	if p1.T != 1 || p1.Ops != 150 || !within(p1.OpsPerSec, 149.95, 1e-9) || p1.AcquireP99 != 80 || !p1.Warmup {
		t.Errorf("second 1: %+v", p1)
	}
	// a's second 2 is 102 ops over 1.004 s; b's is its own point.
	if want := 102/1.004 + 50.05; p2.T != 2 || p2.Ops != 152 || !within(p2.OpsPerSec, want, 1e-9) || p2.Errors != 3 || p2.AcquireP99 != 90 || p2.Warmup {
		t.Errorf("second 2: %+v, want %v ops/s", p2, want)
	}
	if p3.T != 3 || p3.Ops != 40 || p3.OpsPerSec != 40 {
		t.Errorf("second 3: %+v", p3)
	}
}

func TestMergeRefuses(t *testing.T) {
	ra, ha := collect(t, hostA)
	rb, hb := collect(t, hostB)
	if _, err := results.Merge([]*results.Result{ra}, []map[string]*hdr.Histogram{ha}); err == nil || !strings.Contains(err.Error(), "at least 2 runs") {
		t.Errorf("one run: %v", err)
	}
	other := *rb
	other.Meta.Profile = "rw90"
	_, err := results.Merge([]*results.Result{ra, &other}, []map[string]*hdr.Histogram{ha, hb})
	if err == nil || !strings.Contains(err.Error(), "meta.profile differs") || !strings.Contains(err.Error(), `"mutex"`) ||
		!strings.Contains(err.Error(), `run 1 (host beta-2) has "rw90"`) {
		t.Errorf("profile mismatch: %v", err)
	}
	other = *rb
	other.Meta.Workload = "exclusive, 1 client × 8 owners"
	if _, err := results.Merge([]*results.Result{ra, &other}, []map[string]*hdr.Histogram{ha, hb}); err == nil || !strings.Contains(err.Error(), "meta.workload differs") {
		t.Errorf("workload mismatch: %v", err)
	}
	other = *rb
	other.Meta.Impl = "raw"
	if _, err := results.Merge([]*results.Result{ra, &other}, []map[string]*hdr.Histogram{ha, hb}); err == nil || !strings.Contains(err.Error(), `meta.impl differs: run 0 (host alpha) has "lockimpl"`) {
		t.Errorf("implementation mismatch: %v", err)
	}
	if _, err := results.Merge([]*results.Result{ra, rb}, []map[string]*hdr.Histogram{ha, nil}); err == nil || !strings.Contains(err.Error(), "no histograms") {
		t.Errorf("missing histograms: %v", err)
	}
	if _, err := results.Merge([]*results.Result{ra, rb}, []map[string]*hdr.Histogram{ha}); err == nil {
		t.Error("merged 2 runs with 1 histogram set")
	}
}

func TestMergeNotesAndPartial(t *testing.T) {
	ra, ha := collect(t, hostA)
	rb, hb := collect(t, hostB)
	rb.Meta.RedisVersion = "7.2.4"
	rb.Partial, rb.PartialReason = true, "interrupted by interrupt"
	m, err := results.Merge([]*results.Result{ra, rb}, []map[string]*hdr.Histogram{ha, hb})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.MergeNotes) != 1 || !strings.Contains(m.MergeNotes[0], "server differs: run 0 (host alpha) redis_version 7.4.0 (server not recorded), run 1 (host beta-2) redis_version 7.2.4 (server not recorded)") {
		t.Errorf("notes %q", m.MergeNotes)
	}
	if m.Meta.RedisVersion != "7.4.0" {
		t.Errorf("redis version %q, want the first run's", m.Meta.RedisVersion)
	}
	if !m.Partial || m.PartialReason != "merged from partial runs: run 1 (host beta-2): interrupted by interrupt" {
		t.Errorf("partial %v %q", m.Partial, m.PartialReason)
	}
}

// TestMergeIntervalLog: the merged log reads back to the merged
// latencies, survives WriteFiles and LoadHistograms, and merges again.
func TestMergeIntervalLog(t *testing.T) {
	m, _, _ := mergeOf(t, hostA, hostB)
	log := m.IntervalLog()
	if !bytes.HasPrefix(log, []byte("#[Histogram log format version 1.3]")) || !bytes.Contains(log, []byte("#[BaseTime: ")) {
		t.Errorf("log header:\n%.300s", log)
	}
	rd := hdr.NewHistogramLogReader(bytes.NewReader(log))
	var tags []string
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		tags = append(tags, h.Tag())
		if h.StartTimeMs() != base.UnixMilli() || h.EndTimeMs() != base.Add(3500*time.Millisecond).UnixMilli() {
			t.Errorf("%s: interval [%d, %d], want both runs' measured windows", h.Tag(), h.StartTimeMs(), h.EndTimeMs())
		}
	}
	// wait and handoff come from beta-2's overlapping pair.
	if want := []string{"acquire_exclusive", "acquire_write", "release", "hold", "wait", "handoff", "ping"}; !slices.Equal(tags, want) {
		t.Errorf("one interval per metric: tags %q, want %q", tags, want)
	}
	checkLog := func(hs map[string]*hdr.Histogram, r *results.Result) {
		t.Helper()
		for tag, l := range r.Latency {
			h := hs[tag]
			if tag == results.AcquireAll {
				h = results.NewHistogram()
				h.Merge(hs["acquire_exclusive"])
				h.Merge(hs["acquire_write"])
			}
			if h == nil || results.Summarize(h) != l {
				t.Errorf("%s: log %v, result %+v", tag, h, l)
			}
		}
	}
	hs, err := results.ReadIntervalLog(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	checkLog(hs, m)

	dir := t.TempDir()
	path, err := results.WriteFiles(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "mutex-20231114T221320Z-merged.json"); path != want {
		t.Errorf("merged file %s, want %s", path, want)
	}
	back, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := results.LoadHistograms(path, back)
	if err != nil {
		t.Fatal(err)
	}
	checkLog(loaded, back)
	if back.Safety.Incomplete != results.MergeIncomplete || len(back.MergedFrom) != 2 || back.Throughput.Ops != m.Throughput.Ops {
		t.Errorf("read back: %+v", back)
	}

	// Merged again with a third machine: all three add up.
	hostC := machine{host: "gamma", start: base.Add(time.Second), acquire: 200 * us, perOwner: []int64{5, 5, 5}}
	rc, hc := collect(t, hostC)
	m2, err := results.Merge([]*results.Result{back, rc}, []map[string]*hdr.Histogram{loaded, hc})
	if err != nil {
		t.Fatal(err)
	}
	if m2.Throughput.Ops != m.Throughput.Ops+15 || m2.Latency["acquire_exclusive"].Count != 125 || m2.Fairness.Owners != 9 {
		t.Errorf("merged again: ops %d, acquire_exclusive %d, owners %d", m2.Throughput.Ops, m2.Latency["acquire_exclusive"].Count, m2.Fairness.Owners)
	}
	if _, ok := m2.Fairness.PerOwner["alpha,beta-2/beta-2/bob"]; !ok {
		t.Errorf("owners of the earlier merge: %v", m2.Fairness.PerOwner)
	}
	if _, err := os.Stat(filepath.Join(dir, back.HistogramLog)); err != nil {
		t.Error(err)
	}
}

// TestMergeGuard: two machines sharing one guarded counter merge into the
// store's latest reading and the holders' summed tallies, so the lost
// updates cover both with no clock; different counters are not merged.
func TestMergeGuard(t *testing.T) {
	a, ha := collect(t, hostA)
	b, hb := collect(t, hostB)
	a.Guard = &results.Guard{Mode: "plain", Store: "redis://s k", Sections: 50, Written: 50, Accepted: 50, Final: 48, Lost: 2}
	b.Guard = &results.Guard{Mode: "plain", Store: "redis://s k", Sections: 40, Written: 39, Accepted: 89, Final: 80, Lost: 9, Failed: 1}
	m, err := results.Merge([]*results.Result{a, b}, []map[string]*hdr.Histogram{ha, hb})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Guard
	if g == nil || g.Sections != 90 || g.Written != 89 || g.Accepted != 89 || g.Final != 80 || g.Lost != 9 || g.Failed != 1 {
		t.Fatalf("merged guard %+v; want 90 sections, 89 written, the later store reading (89 accepted, 80 final, 9 lost)", g)
	}
	if g.Occupancy || g.Overlaps != 0 {
		t.Errorf("merged guard of files without occupancy: occupancy %v, %d overlaps; want no count", g.Occupancy, g.Overlaps)
	}
	b.Guard.Store = "redis://other k"
	m, err = results.Merge([]*results.Result{a, b}, []map[string]*hdr.Histogram{ha, hb})
	if err != nil {
		t.Fatal(err)
	}
	if m.Guard != nil || !strings.Contains(strings.Join(m.MergeNotes, " "), "different counters") {
		t.Errorf("runs on different counters merged: %+v, notes %v", m.Guard, m.MergeNotes)
	}
}

// TestMergeGuardOverlaps: the store's overlaps merge as its later reading
// (the larger count), the examples once each however many machines read
// them; a run that did not count them leaves the merged count unknown.
func TestMergeGuardOverlaps(t *testing.T) {
	a, ha := collect(t, hostA)
	b, hb := collect(t, hostB)
	ex := func(entered string) results.Overlap {
		return results.Overlap{Name: "lb:0", Inside: []string{"a/o1"}, Entered: entered}
	}
	a.Guard = &results.Guard{Mode: "plain", Store: "s", Accepted: 10, Final: 10, Occupancy: true, Overlaps: 2, OverlapExamples: []results.Overlap{ex("b/o1"), ex("b/o2")}}
	b.Guard = &results.Guard{Mode: "plain", Store: "s", Accepted: 12, Final: 12, Occupancy: true, Overlaps: 3, OverlapExamples: []results.Overlap{ex("b/o1"), ex("b/o2"), ex("b/o3")}}
	m, err := results.Merge([]*results.Result{a, b}, []map[string]*hdr.Histogram{ha, hb})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Guard
	if g == nil || !g.Occupancy || g.Overlaps != 3 || !slices.EqualFunc(g.OverlapExamples, b.Guard.OverlapExamples, results.Overlap.Equal) {
		t.Fatalf("merged guard %+v; want the later reading: 3 overlaps, b's 3 examples once each", g)
	}
	if fs := m.Failures(); len(fs) == 0 || fs[0].Kind != results.FailSafety {
		t.Errorf("merged run with store-witnessed overlaps: failures %v; want a safety failure first", fs)
	}
	if s := m.Safety; s.Verdict() != results.SafetyViolated || s.StoreOverlaps != 3 || s.Witness != results.WitnessStore {
		t.Errorf("merged safety %+v; want VIOLATED by the store's 3 overlaps", s)
	}
	a.Guard.Occupancy, a.Guard.Overlaps, a.Guard.OverlapExamples = false, 0, nil // a file from before occupancy
	m, err = results.Merge([]*results.Result{a, b}, []map[string]*hdr.Histogram{ha, hb})
	if err != nil {
		t.Fatal(err)
	}
	if g := m.Guard; g == nil || g.Occupancy || g.Overlaps != 0 || g.OverlapExamples != nil {
		t.Errorf("merged with an old file: %+v; want no overlap count", g)
	}
	if s := m.Safety; !strings.HasPrefix(s.Incomplete, results.MergeIncomplete) || s.Witness != "" {
		t.Errorf("merged with an old file: safety %+v; want incomplete across machines, no witness", s)
	}
}

// TestMergeOneVerdict: machines that shared a guarded store which
// witnessed every section of each get one verdict, OK by the store, with
// only their own caveats; sections the store did not witness on any of
// them leave it incomplete, counted and named, and the run fails.
func TestMergeOneVerdict(t *testing.T) {
	a, ha := collect(t, hostA)
	b, hb := collect(t, hostB)
	a.Safety, b.Safety = results.Safety{Sections: 50}, results.Safety{Sections: 40} // clean clock checkers
	a.Guard = &results.Guard{Mode: "plain", Store: "s", Sections: 50, Written: 50, Accepted: 50, Final: 50, Occupancy: true}
	b.Guard = &results.Guard{Mode: "plain", Store: "s", Sections: 40, Written: 40, Accepted: 90, Final: 90, Occupancy: true}
	verdicts := func(m *results.Result) (ks []results.FailureKind) {
		for _, f := range m.Failures() {
			if !f.Kind.Throughput() {
				ks = append(ks, f.Kind)
			}
		}
		return ks
	}
	merge := func() *results.Result {
		t.Helper()
		m, err := results.Merge([]*results.Result{a, b}, []map[string]*hdr.Histogram{ha, hb})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := merge()
	if s := m.Safety; s.Verdict() != results.SafetyOK || s.Witness != results.WitnessStore || s.Missing() != "" || len(verdicts(m)) != 0 {
		t.Fatalf("merged safety %+v, failures %v; want OK by the guarded store", s, m.Failures())
	}
	b.Safety.Incomplete = "b's record limit"
	if s := merge().Safety; s.Verdict() != results.SafetyIncomplete || !strings.HasSuffix(s.Incomplete, ": b's record limit") || strings.Contains(s.Incomplete, results.MergeIncomplete) {
		t.Errorf("merged safety %+v; want incomplete for b's own caveat alone", s)
	}
	b.Safety.Incomplete = ""
	// b lost the store 4.1 s in: 15 of its sections unwitnessed; a met it
	// later, for 5.
	a.Guard.AddGap(results.GapUnreachable, 4.6, 1, errors.New("connection refused"))
	for range 4 {
		a.Guard.AddGap(results.GapUnreachable, 4.8, 1, nil)
	}
	b.Guard.AddGap(results.GapUnreachable, 4.1, 15, errors.New("dial tcp: connection refused"))
	m = merge()
	s := m.Safety
	want := "the guarded store witnessed 70 of 90 sections; 20 unwitnessed: store unreachable from t=4.1s (dial tcp: connection refused)"
	if s.Verdict() != results.SafetyIncomplete || s.Unwitnessed != want {
		t.Errorf("merged safety %+v; want INCOMPLETE: %q", s, want)
	}
	if ks := verdicts(m); !slices.Equal(ks, []results.FailureKind{results.FailUnwitnessed}) || !slices.ContainsFunc(m.Failures(), func(f results.Failure) bool { return f.Text == "no complete safety verdict: "+want }) {
		t.Errorf("failures %v; want the missing evidence named", m.Failures())
	}
	// A store that lost the run's keys lost its counts too.
	b.Guard.AddGap(results.GapEmptied, 5, 0, nil)
	if s := merge().Safety; !strings.HasSuffix(s.Unwitnessed, "its counts of lost updates and overlaps do not cover the run") ||
		!strings.Contains(s.Unwitnessed, "lost the run's keys by t=5.0s") {
		t.Errorf("merged safety %+v; want the lost keys and counts named", s)
	}
}
