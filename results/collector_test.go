package results_test

import (
	"bytes"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/results"
)

// base is a run's start, on a whole second so the interval log's
// second-granular base time loses nothing.
var base = time.Unix(1_700_000_000, 0)

const (
	workers   = 4
	sharedLk  = 4 // lock index shared by the extra operations
	perWorker = 20
	warmupOps = 5
)

var e2eLabels = results.Labels{
	Owners: []string{"w0", "w1", "w2", "w3"},
	Locks:  []string{"L0", "L1", "L2", "L3", "shared"},
}

var workerMode = [workers]results.Mode{results.Exclusive, results.Read, results.Write, results.Exclusive}

type recorded struct {
	op                     results.Op
	nested, nestedReleases []int64
}

// workerOps is what worker w records: warmup operations in [0, 1 s),
// measured ones from 1 s, each on the worker's own lock so they never
// conflict, plus errors, a cut and a lost hold.
func workerOps(w int) (warm, measured []recorded) {
	lock := int32(w)
	owner := int32(w)
	mode := workerMode[w]
	held := func(called int64) results.Op {
		return results.Op{
			Start: called, Called: called,
			Acquired: called + 100*us, Released: called + 150*us, Done: called + 170*us,
			Owner: owner, Lock: lock, Mode: mode, Depth: 1,
		}
	}
	for k := range int64(warmupOps) {
		o := held(100*ms + k*10*ms)
		o.Flags = results.Warmup
		warm = append(warm, recorded{op: o})
	}
	if w == 0 {
		// A warmup operation the run's end cut: counted nowhere.
		o := results.Op{Start: 900 * ms, Called: 900 * ms, Owner: owner, Lock: lock, Err: results.ErrCtx, Flags: results.Warmup | results.Cut}
		warm = append(warm, recorded{op: o})
	}
	for k := range int64(perWorker) {
		r := recorded{op: held(1*time.Second.Nanoseconds() + k*10*ms)}
		switch {
		case w == 0:
			r.op.Depth = 3
			r.nested = []int64{30 * us, 30 * us}
			r.nestedReleases = []int64{10 * us, 10 * us}
		case w == 3 && k == 5:
			r.op.Flags = results.NestFailed
		case w == 3 && k == 6:
			r.op.Flags = results.Lost
		}
		measured = append(measured, r)
	}
	failed := func(called int64, err results.ErrClass, flags results.OpFlag) recorded {
		return recorded{op: results.Op{Start: called, Called: called, Owner: owner, Lock: lock, Mode: mode, Err: err, Flags: flags}}
	}
	switch w {
	case 0:
		measured = append(measured, failed(2500*ms, results.ErrCtx, results.Cut))
	case 1:
		measured = append(measured, failed(2500*ms, results.ErrTimeout, 0), failed(2600*ms, results.ErrTimeout, 0))
	case 2:
		measured = append(measured, failed(2500*ms, results.ErrConn, 0))
	}
	return warm, measured
}

// extraOps are on the shared lock: a warmup overlap between w0 and w1
// (a safety violation the checker must see although it is warmup) and a
// measured handoff from w2 to w3.
func extraOps() (warm, measured []recorded) {
	x := results.Exclusive
	warm = []recorded{
		{op: results.Op{Start: 490 * ms, Called: 490 * ms, Acquired: 500 * ms, Released: 600 * ms, Done: 601 * ms, Owner: 0, Lock: sharedLk, Mode: x, Flags: results.Warmup}},
		{op: results.Op{Start: 540 * ms, Called: 540 * ms, Acquired: 550 * ms, Released: 650 * ms, Done: 651 * ms, Owner: 1, Lock: sharedLk, Mode: x, Flags: results.Warmup}},
	}
	t0 := 2 * time.Second.Nanoseconds()
	measured = []recorded{
		{op: results.Op{Start: t0, Called: t0, Acquired: t0 + 100*us, Released: t0 + 1100*us, Done: t0 + 1120*us, Owner: 2, Lock: sharedLk, Mode: x}},
		{op: results.Op{Start: t0 + 500*us, Called: t0 + 500*us, Acquired: t0 + 1300*us, Released: t0 + 1400*us, Done: t0 + 1420*us, Owner: 3, Lock: sharedLk, Mode: x}},
	}
	return warm, measured
}

func record(c *results.Collector, shard int, rs []recorded) {
	for _, r := range rs {
		c.Shard(shard).Record(r.op, r.nested, r.nestedReleases)
	}
}

// runE2E records the synthetic run from several goroutines: warmup, a
// warmup tick, then the measured phase concurrently with two ticks, and
// Finish at 4 s (warmup ends at 1 s).
func runE2E(t *testing.T) *results.Result {
	t.Helper()
	c := results.NewCollector(base, workers, 1000)
	if !c.Base().Equal(base) {
		t.Fatalf("Base() = %v, want %v", c.Base(), base)
	}
	if got := c.Since(base.Add(1500 * time.Millisecond)); got != 1500*ms {
		t.Fatalf("Since = %d, want %d", got, 1500*ms)
	}

	phase := func(pick func(w int) []recorded, extra []recorded, concurrently func()) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { record(c, w, pick(w)) })
		}
		// Shard(i) wraps: shard 5 is shard 1.
		wg.Go(func() { record(c, workers+1, extra) })
		wg.Go(func() { c.Shard(2).RecordValue(results.Ping, 2*time.Hour.Nanoseconds()) }) // clamped
		if concurrently != nil {
			wg.Go(concurrently)
		}
		wg.Wait()
	}
	extraWarm, extraMeasured := extraOps()
	phase(func(w int) []recorded { warm, _ := workerOps(w); return warm }, extraWarm, nil)
	p := c.Tick(base.Add(time.Second), true, 10)
	if want := int64(workers*warmupOps + len(extraWarm)); p.Ops != want || !p.Warmup || p.Errors != 0 {
		t.Errorf("warmup tick = %+v, want %d ops, warmup, no errors", p, want)
	}
	if p.T != 1 || p.OpsPerSec != float64(p.Ops) || p.Goroutines != 10 {
		t.Errorf("warmup tick T/OpsPerSec/Goroutines = %v/%v/%v", p.T, p.OpsPerSec, p.Goroutines)
	}
	if p.AcquireP50 != 0 || p.AcquireP99 != 0 { // warmup latencies are not recorded
		t.Errorf("warmup tick acquire p50/p99 = %v/%v µs, want 0/0", p.AcquireP50, p.AcquireP99)
	}
	phase(func(w int) []recorded { _, m := workerOps(w); return m }, extraMeasured, func() {
		c.Tick(base.Add(2*time.Second), false, 10)
		_ = c.AcquireP99()
		_, _ = c.Totals()
		c.Tick(base.Add(3*time.Second), false, 10)
	})
	return c.Finish(base.Add(4*time.Second), false, 10, results.Analysis{
		Labels:      e2eLabels,
		MeasureFrom: time.Second.Nanoseconds(),
		Examples:    5,
	})
}

func TestCollectorEndToEnd(t *testing.T) {
	r := runE2E(t)

	if r.Schema != results.Schema {
		t.Errorf("Schema = %q", r.Schema)
	}
	if r.Measured != 3 || r.Warmup != 1 {
		t.Errorf("Measured/Warmup = %v/%v, want 3/1", r.Measured, r.Warmup)
	}

	// Measured attempts: 4×20 held + 2 timeouts + 1 conn error + 2 on the
	// shared lock; the cut one is not an attempt. Four failed (the two
	// timeouts, the conn error and the failed nested acquisition), so the
	// throughput is the other 81.
	const measuredOps = workers*perWorker + 3 + 2
	const failedOps = 4
	th := r.Throughput
	if th.Attempts != measuredOps || th.Ops != measuredOps-failedOps || th.Failed != failedOps {
		t.Errorf("Throughput attempts/ops/failed = %d/%d/%d, want %d/%d/%d", th.Attempts, th.Ops, th.Failed, measuredOps, measuredOps-failedOps, failedOps)
	}
	if want := math.Round((measuredOps-failedOps)/3.0*10) / 10; th.OpsPerSec != want {
		t.Errorf("OpsPerSec = %v, want %v (successful operations only)", th.OpsPerSec, want)
	}
	if want := math.Round(float64(measuredOps-failedOps)/measuredOps*1e6) / 1e6; th.SuccessRatio != want {
		t.Errorf("SuccessRatio = %v, want %v", th.SuccessRatio, want)
	}
	wantAcq := map[string]int64{"exclusive": 2*perWorker + 2, "read": perWorker, "write": perWorker}
	if !mapsEqual(th.Acquisitions, wantAcq) {
		t.Errorf("Acquisitions = %v, want %v", th.Acquisitions, wantAcq)
	}
	if th.Nested != 2*perWorker || th.Lost != 1 || th.Cut != 1 {
		t.Errorf("Nested/Lost/Cut = %d/%d/%d, want %d/1/1", th.Nested, th.Lost, th.Cut, 2*perWorker)
	}

	// Errors by class: the cut (ErrCtx) is not an error; NestFailed is "other".
	wantErr := map[string]int64{"timeout": 2, "ctx": 0, "conn": 1, "redis": 0, "stalled": 0, "other": 1, "refused": 0}
	if !mapsEqual(r.Errors, wantErr) {
		t.Errorf("Errors = %v, want %v", r.Errors, wantErr)
	}

	// Latency counts exclude warmup operations.
	wantCounts := map[string]int64{
		"acquire_exclusive": 2*perWorker + 2,
		"acquire_read":      perWorker,
		"acquire_write":     perWorker,
		"acquire_nested":    2 * perWorker,
		"hold":              workers*perWorker + 2,
		"release":           workers*perWorker + 2 + 2*perWorker, // outermost + nested unlocks
		"wait":              1,
		"handoff":           1,
		"ping":              2,
	}
	// The all-modes aggregate is the sum of the outermost acquisitions.
	wantCounts[results.AcquireAll] = wantCounts["acquire_exclusive"] + wantCounts["acquire_read"] + wantCounts["acquire_write"]
	gotCounts := map[string]int64{}
	for k, l := range r.Latency {
		gotCounts[k] = l.Count
	}
	if !mapsEqual(gotCounts, wantCounts) {
		t.Errorf("latency counts = %v, want %v", gotCounts, wantCounts)
	}
	checkUs := func(metric string, got, want float64) {
		t.Helper()
		if !within(got, want, 0.01) {
			t.Errorf("%s = %v µs, want ≈ %v", metric, got, want)
		}
	}
	checkUs("acquire_read p50", r.Latency["acquire_read"].P50, 100)
	checkUs("acquire_exclusive max", r.Latency["acquire_exclusive"].Max, 800) // the waiter on the shared lock
	checkUs("hold p50", r.Latency["hold"].P50, 50)
	checkUs("acquire_nested p50", r.Latency["acquire_nested"].P50, 30)
	checkUs("wait", r.Latency["wait"].P50, 800)
	checkUs("handoff", r.Latency["handoff"].P50, 200)
	checkUs("ping max (clamped to an hour)", r.Latency["ping"].Max, 3.6e9)
	if r.Clamped != 2 {
		t.Errorf("Clamped = %d, want 2", r.Clamped)
	}

	// Safety sees warmup sections too, and the warmup overlap.
	s := r.Safety
	const sections = workers*(perWorker+warmupOps) + 4
	if s.Sections != sections || s.Violations != 1 || s.Incomplete != "" {
		t.Errorf("Safety = %d sections, %d violations, incomplete %q; want %d, 1, none", s.Sections, s.Violations, s.Incomplete, sections)
	}
	if len(s.Examples) != 1 {
		t.Fatalf("Examples = %+v", s.Examples)
	}
	v := s.Examples[0]
	if v.Lock != "shared" || v.First.Owner != "w0" || v.Second.Owner != "w1" ||
		v.OverlapStart != 0.55 || v.OverlapEnd != 0.6 || v.OverlapUs != 50000 || s.MaxOverlapUs != 50000 {
		t.Errorf("violation = %+v", v)
	}

	// Fairness over measured acquisitions: w2 and w3 got the shared lock once.
	f := r.Fairness
	if f.Owners != 4 || f.Min != perWorker || f.Max != perWorker+1 || f.Starved != 0 || f.FIFO != nil {
		t.Errorf("Fairness = %+v", f)
	}

	// The series: one point per tick; ops per interval (warmup included)
	// sum to every finished operation.
	if len(r.Series) != 4 {
		t.Fatalf("len(Series) = %d, want 4", len(r.Series))
	}
	var sumOps, sumErr int64
	for i, p := range r.Series {
		sumOps += p.Ops
		sumErr += p.Errors
		if p.Warmup != (i == 0) {
			t.Errorf("Series[%d].Warmup = %v", i, p.Warmup)
		}
		if p.T != float64(i+1) {
			t.Errorf("Series[%d].T = %v, want %d", i, p.T, i+1)
		}
	}
	if want := int64(measuredOps - failedOps + workers*warmupOps + 2); sumOps != want {
		t.Errorf("sum of Series ops = %d, want %d (successful only)", sumOps, want)
	}
	if sumErr != 4 {
		t.Errorf("sum of Series errors = %d, want 4", sumErr)
	}
}

// TestCollectorIntervalLog reads the interval log back with
// hdrhistogram-go and checks that each tag's intervals add up to the
// result's count for that metric.
func TestCollectorIntervalLog(t *testing.T) {
	r := runE2E(t)
	log := r.IntervalLog()
	if !bytes.HasPrefix(log, []byte("#[Histogram log format version 1.3]")) {
		t.Errorf("log does not start with its format version:\n%.200s", log)
	}
	rd := hdr.NewHistogramLogReader(bytes.NewReader(log))
	merged := map[string]*hdr.Histogram{}
	intervals := 0
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("NextIntervalHistogram: %v", err)
		}
		if h == nil {
			break
		}
		intervals++
		tag := h.Tag()
		if _, ok := r.Latency[tag]; !ok {
			t.Errorf("interval tagged %q, not a metric of the result", tag)
			continue
		}
		if start := h.StartTimeMs(); start < base.UnixMilli() || h.EndTimeMs() > base.Add(4*time.Second).UnixMilli() || h.EndTimeMs() <= start {
			t.Errorf("%s interval [%d, %d] ms outside the run", tag, start, h.EndTimeMs())
		}
		if merged[tag] == nil {
			merged[tag] = results.NewHistogram()
		}
		if dropped := merged[tag].Merge(h); dropped != 0 {
			t.Errorf("%s: merge dropped %d values", tag, dropped)
		}
	}
	if intervals == 0 {
		t.Fatal("no intervals in the log")
	}
	ex := merged["acquire_exclusive"]
	if ex == nil || ex.TotalCount() != r.Latency["acquire_exclusive"].Count {
		t.Errorf("acquire_exclusive in the log: %v, want total %d", ex, r.Latency["acquire_exclusive"].Count)
	}
	for tag, l := range r.Latency {
		h := merged[tag]
		if tag == results.AcquireAll {
			// Derived, not logged: the per-mode tags add up to it.
			h = results.NewHistogram()
			for _, m := range []string{"acquire_exclusive", "acquire_read", "acquire_write"} {
				if merged[m] != nil {
					h.Merge(merged[m])
				}
			}
		}
		if h == nil {
			t.Errorf("metric %s missing from the log", tag)
			continue
		}
		if h.TotalCount() != l.Count {
			t.Errorf("%s: log total %d, result count %d", tag, h.TotalCount(), l.Count)
		}
		if got := results.Summarize(h); got != l {
			t.Errorf("%s: log summary %+v, result %+v", tag, got, l)
		}
	}
}

func TestCollectorMaxOpsOverflow(t *testing.T) {
	// 2 shards share one limit of 4 acquisitions: shard 0 takes all 4, so
	// shard 1's one is dropped; failed operations never use the budget.
	c := results.NewCollector(base, 2, 4)
	c.Shard(1).Record(results.Op{Owner: 1, Lock: 1, Err: results.ErrTimeout, Called: ms, Released: ms, Done: ms}, nil, nil)
	for k := range int64(4) {
		c.Shard(0).Record(sec(0, 0, results.Exclusive, 1*ms+k*ms, 1*ms+k*ms+100*us), nil, nil)
	}
	c.Shard(1).Record(sec(1, 1, results.Exclusive, 1*ms, 2*ms), nil, nil)
	r := c.Finish(base.Add(time.Second), false, 1, results.Analysis{Labels: labels})
	if r.Safety.Incomplete == "" {
		t.Fatal("Safety.Incomplete empty although an operation was dropped")
	}
	if !strings.Contains(r.Safety.Incomplete, "1 acquisition past the 4-acquisition record limit not checked") {
		t.Errorf("Incomplete = %q, want it to count the 1 dropped acquisition against the limit 4", r.Safety.Incomplete)
	}
	if r.Safety.Sections != 4 || r.Safety.OK() {
		t.Errorf("Sections = %d (want the 4 kept), OK() = %v (want false: incomplete)", r.Safety.Sections, r.Safety.OK())
	}
	// Dropped operations still count in throughput and latency.
	if r.Throughput.Attempts != 6 || r.Throughput.Ops != 5 || r.Latency["acquire_exclusive"].Count != 5 {
		t.Errorf("attempts %d, ops %d, acquire count %d; want 6, 5 and 5", r.Throughput.Attempts, r.Throughput.Ops, r.Latency["acquire_exclusive"].Count)
	}
}

func TestCollectorWithinMaxOpsIsComplete(t *testing.T) {
	c := results.NewCollector(base, 2, 4)
	c.Shard(0).Record(sec(0, 0, results.Exclusive, 1*ms, 2*ms), nil, nil)
	c.Shard(0).Record(sec(0, 0, results.Exclusive, 3*ms, 4*ms), nil, nil)
	c.Shard(1).Record(sec(1, 1, results.Exclusive, 1*ms, 2*ms), nil, nil)
	r := c.Finish(base.Add(time.Second), false, 1, results.Analysis{Labels: labels})
	if r.Safety.Incomplete != "" || r.Safety.Sections != 3 {
		t.Errorf("Safety = %+v, want complete with 3 sections", r.Safety)
	}
}

func TestCollectorFIFOAnalysis(t *testing.T) {
	overtake := []results.Op{fifoOp(0, 0, 1*ms, 20*ms), fifoOp(1, 0, 5*ms, 10*ms)}
	tests := []struct {
		name           string
		pings          []int64
		slack          time.Duration
		wantSlackUs    [2]float64 // inclusive range
		wantViolations int64
	}{
		{"explicit slack", nil, 2 * time.Millisecond, [2]float64{2000, 2000}, 1},
		{"explicit slack too wide", nil, 10 * time.Millisecond, [2]float64{10000, 10000}, 0},
		{"default slack without pings is 1ms", nil, 0, [2]float64{1000, 1000}, 1},
		// Twice the ping p99 (2 ms, read back within 0.1%).
		{"default slack from ping p99", []int64{2 * ms, 2 * ms, 2 * ms}, 0, [2]float64{4000, 4004}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := results.NewCollector(base, 1, 0)
			for _, p := range tt.pings {
				c.Shard(0).RecordValue(results.Ping, p)
			}
			for _, o := range overtake {
				c.Shard(0).Record(o, nil, nil)
			}
			r := c.Finish(base.Add(time.Second), false, 1, results.Analysis{Labels: labels, FIFO: true, Slack: tt.slack})
			f := r.Fairness.FIFO
			if f == nil {
				t.Fatal("Fairness.FIFO is nil with FIFO requested")
			}
			if f.SlackUs < tt.wantSlackUs[0] || f.SlackUs > tt.wantSlackUs[1] {
				t.Errorf("SlackUs = %v, want in %v", f.SlackUs, tt.wantSlackUs)
			}
			if f.Violations != tt.wantViolations || f.Checked != 2 {
				t.Errorf("FIFO violations %d checked %d, want %d and 2", f.Violations, f.Checked, tt.wantViolations)
			}
		})
	}
}

func TestCollectorFinishTwicePanics(t *testing.T) {
	c := results.NewCollector(base, 1, 0)
	c.Finish(base.Add(time.Second), false, 1, results.Analysis{})
	defer func() {
		if recover() == nil {
			t.Error("second Finish did not panic")
		}
	}()
	c.Finish(base.Add(2*time.Second), false, 1, results.Analysis{})
}

func TestCollectorTotalsAndAcquireP99(t *testing.T) {
	c := results.NewCollector(base, 2, 0)
	for k := range int64(100) {
		o := sec(int32(k%2), 0, results.Exclusive, (k+1)*ms, (k+1)*ms+10*us)
		o.Start = o.Acquired - (k+1)*us // acquire latency 1..100 µs
		c.Shard(int(k)).Record(o, nil, nil)
	}
	failed := results.Op{Start: 1, Called: 1, Err: results.ErrConn}
	c.Shard(0).Record(failed, nil, nil)
	if ops, errs := c.Totals(); ops != 0 || errs != 0 {
		t.Errorf("Totals before a tick = %d/%d, want 0/0", ops, errs)
	}
	c.Tick(base.Add(time.Second), false, 1)
	if ok, errs := c.Totals(); ok != 100 || errs != 1 {
		t.Errorf("Totals = %d/%d, want 100 successful, 1 failed", ok, errs)
	}
	if p99 := c.AcquireP99(); !within(p99, 99, 0.02) {
		t.Errorf("AcquireP99 = %v µs, want ≈ 99", p99)
	}
}

func mapsEqual[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCollectorPerShard: locks sorted into shards count each shard's
// measured operations and acquisitions; warmup and failed operations are
// kept apart as in the totals.
func TestCollectorPerShard(t *testing.T) {
	c := results.NewCollector(base, 2, 0)
	// Locks 0 and 2 on shard "a", lock 1 on shard "b".
	c.GroupLocks([]int32{0, 1, 0}, []string{"a", "b"})
	c.Shard(0).Record(sec(0, 0, results.Exclusive, 1*ms, 2*ms), nil, nil)
	c.Shard(1).Record(sec(1, 2, results.Exclusive, 3*ms, 4*ms), nil, nil)
	c.Shard(1).Record(sec(1, 1, results.Exclusive, 5*ms, 6*ms), nil, nil)
	c.Shard(0).Record(results.Op{Owner: 0, Lock: 1, Err: results.ErrTimeout, Called: 7 * ms, Released: 7 * ms, Done: 7 * ms}, nil, nil)
	warm := sec(0, 0, results.Exclusive, 8*ms, 9*ms)
	warm.Flags |= results.Warmup
	c.Shard(0).Record(warm, nil, nil)
	r := c.Finish(base.Add(2*time.Second), false, 1, results.Analysis{Labels: labels})
	if len(r.PerShard) != 2 {
		t.Fatalf("PerShard = %+v, want 2 shards", r.PerShard)
	}
	a, b := r.PerShard[0], r.PerShard[1]
	if a.Name != "a" || a.Locks != 2 || a.Ops != 2 || a.Acquisitions != 2 || a.OpsPerSec != 1 {
		t.Errorf("shard a = %+v, want 2 locks, 2 ops, 2 acquisitions, 1 op/s", a)
	}
	if b.Name != "b" || b.Locks != 1 || b.Ops != 1 || b.Acquisitions != 1 {
		t.Errorf("shard b = %+v, want 1 lock, 1 successful op (the other timed out), 1 acquisition", b)
	}
	if a.Share+b.Share < 0.999 || a.Share < 0.66 || a.Share > 0.67 {
		t.Errorf("shares %.3f + %.3f; want 2/3 and 1/3", a.Share, b.Share)
	}
	var ops int64
	for _, s := range r.PerShard {
		ops += s.Ops
	}
	if ops != r.Throughput.Ops {
		t.Errorf("shards count %d ops, the total is %d", ops, r.Throughput.Ops)
	}
	// Without groups there is no per-shard section.
	c2 := results.NewCollector(base, 1, 0)
	c2.Shard(0).Record(sec(0, 0, results.Exclusive, 1*ms, 2*ms), nil, nil)
	if r2 := c2.Finish(base.Add(time.Second), false, 1, results.Analysis{Labels: labels}); r2.PerShard != nil {
		t.Errorf("PerShard without groups = %+v", r2.PerShard)
	}
}

// The interval log is in time order, and wait and handoff sit in the
// intervals of their acquisitions.
func TestIntervalLogTimeOrder(t *testing.T) {
	c := results.NewCollector(base, 1, 0)
	c.Shard(0).Record(sec(0, 0, results.Exclusive, 100*ms, 200*ms), nil, nil)
	c.Tick(base.Add(time.Second), false, 1)
	waiter := sec(1, 0, results.Exclusive, 1300*ms, 1400*ms)
	waiter.Called = 150 * ms // waited for owner 0's release at 200 ms… and got it at 1.3 s
	c.Shard(0).Record(waiter, nil, nil)
	c.Tick(base.Add(2*time.Second), false, 1)
	r := c.Finish(base.Add(2*time.Second+500*time.Millisecond), false, 1, results.Analysis{Labels: labels})
	rd := hdr.NewHistogramLogReader(bytes.NewReader(r.IntervalLog()))
	last := -1.0
	handoffAt := -1.0
	for {
		h, err := rd.NextIntervalHistogram()
		if err == io.EOF || h == nil {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		start := float64(h.StartTimeMs())
		if start < last {
			t.Errorf("interval at %vms after one at %vms", start, last)
		}
		last = start
		if h.Tag() == "handoff" {
			handoffAt = start
		}
	}
	if want := float64(base.Add(time.Second).UnixMilli()); handoffAt != want {
		t.Errorf("handoff interval starts at %v, want %v (the second interval)", handoffAt, want)
	}
}

// TestCutHoldIsNoSuccess: a hold the run's end cut short is not an
// operation done: it counts as cut, its acquisition and release are
// timed, its truncated hold is not, and the safety check still sees it.
// A cut hold whose unlock failed stays a failure.
func TestCutHoldIsNoSuccess(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	c := results.NewCollector(base, 1, 0)
	sh := c.Shard(0)
	// One operation done, then two holds cut at the run's end (one of
	// them told of its loss), then one cut hold whose unlock failed.
	sh.Record(results.Op{Start: ms, Called: ms, Acquired: 2 * ms, Released: 3 * ms, Done: 4 * ms, Owner: 0, Mode: results.Exclusive, Depth: 1}, nil, nil)
	sh.Record(results.Op{Start: 5 * ms, Called: 5 * ms, Acquired: 6 * ms, Released: 900 * ms, Done: 901 * ms, Owner: 1, Lock: 1, Mode: results.Exclusive, Depth: 1, Flags: results.Cut}, nil, nil)
	sh.Record(results.Op{Start: 7 * ms, Called: 7 * ms, Acquired: 8 * ms, Released: 900 * ms, Done: 901 * ms, Owner: 2, Lock: 2, Mode: results.Exclusive, Depth: 1, Flags: results.Cut | results.Lost}, nil, nil)
	sh.Record(results.Op{Start: 9 * ms, Called: 9 * ms, Acquired: 10 * ms, Released: 20 * ms, Done: 950 * ms, Owner: 3, Lock: 3, Mode: results.Exclusive, Depth: 1,
		Err: results.ErrConn, Flags: results.Cut | results.ReleaseFailed}, nil, nil)
	r := c.Finish(base.Add(time.Second), false, 1, results.Analysis{Labels: results.Labels{Owners: []string{"a", "b", "c", "d"}, Locks: []string{"0", "1", "2", "3"}}})
	th := r.Throughput
	if th.Ops != 1 || th.Attempts != 2 || th.Failed != 1 || th.Cut != 2 || th.Lost != 1 || th.Unreleased != 1 {
		t.Errorf("ops/attempts/failed/cut/lost/unreleased = %d/%d/%d/%d/%d/%d, want 1/2/1/2/1/1", th.Ops, th.Attempts, th.Failed, th.Cut, th.Lost, th.Unreleased)
	}
	if n := th.Acquisitions["exclusive"]; n != 4 {
		t.Errorf("acquisitions %d, want 4: a cut hold was acquired", n)
	}
	if h := r.Latency["hold"]; h.Count != 2 || h.Max > 20_000 {
		t.Errorf("hold latency %+v: want the done and the failed operation's only, not the cut ones' truncated holds", h)
	}
	if a := r.Latency[results.AcquireAll]; a.Count != 4 {
		t.Errorf("acquire latency count %d, want 4", a.Count)
	}
	if r.Safety.Sections != 4 {
		t.Errorf("safety checked %d sections, want 4", r.Safety.Sections)
	}
	var ops int64
	for _, p := range r.Series {
		ops += p.Ops
	}
	if ops != 1 {
		t.Errorf("the series counts %d successful operations, want 1", ops)
	}
}
