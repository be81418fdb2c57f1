package perf_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// TestLineupTargets judges made-up matrices: each target can fail.
func TestLineupTargets(t *testing.T) {
	cell := func(profile string, owners int, impl string, ops, handoff float64, violations int64, vsRaw float64) results.LineupCell {
		return results.LineupCell{Profile: profile, Owners: owners, Impl: impl,
			Median: results.LineupRound{OpsPerSec: ops, HandoffP50: handoff, Violations: violations}, VsRaw: results.Ratios{Ops: vsRaw}}
	}
	good := &results.Lineup{Cells: []results.LineupCell{
		cell("uncontended", 8, "lockimpl", 950, 0, 0, 0.95),
		cell("uncontended", 8, "raw", 1000, 0, 0, 1),
		cell("mutex", 8, "lockimpl", 900, 200, 0, 2),
		cell("mutex", 8, "redsync", 400, 30000, 0, 0.9),
		cell("mutex", 8, "redislock", 400, 2000, 0, 0.9),
	}}
	got := map[string]bool{}
	for _, c := range perf.Targets(good) {
		got[c.Target] = c.Met
	}
	want := map[string]bool{
		"uncontended, 8 owners: lockimpl ≥ 0.9× raw ops/s":                   true,
		"mutex, 8 owners: lockimpl handoff p50 ≥ 10× lower than redsync's":   true,
		"mutex, 8 owners: lockimpl handoff p50 ≥ 10× lower than redislock's": true,
		"no safety violation in any run":                                     true,
	}
	for k, v := range want {
		if m, ok := got[k]; !ok || m != v {
			t.Errorf("target %q: met %v (present %v), want %v; all: %v", k, m, ok, v, got)
		}
	}
	bad := &results.Lineup{Cells: []results.LineupCell{
		cell("uncontended", 8, "lockimpl", 800, 0, 0, 0.8),
		cell("mutex", 8, "lockimpl", 900, 200, 1, 2),
		cell("mutex", 8, "redislock", 400, 1000, 0, 0.9), // only 5× slower
	}}
	for _, c := range perf.Targets(bad) {
		if c.Met {
			t.Errorf("target %q met on a matrix that misses it (%s)", c.Target, c.Value)
		}
	}
	// Just short of a threshold is printed short of it.
	near := &results.Lineup{Cells: []results.LineupCell{
		cell("uncontended", 8, "lockimpl", 897, 0, 0, 0.8996),
		cell("mutex", 8, "lockimpl", 900, 200, 0, 2),
		cell("mutex", 8, "redsync", 400, 1999, 0, 0.9), // 9.995× slower
	}}
	for _, c := range perf.Targets(near) {
		if strings.Contains(c.Target, "violation") {
			continue
		}
		if c.Met || strings.HasPrefix(c.Value, "0.90×") || strings.HasPrefix(c.Value, "10.0×") {
			t.Errorf("target %q: met %v, %q: want missed and printed below its threshold", c.Target, c.Met, c.Value)
		}
	}
	if n := len(perf.Targets(bad)); n != 3 {
		t.Errorf("%d targets judged, want 3: %+v", n, perf.Targets(bad))
	}
}

// TestPipelineTargets judges made-up matrices against the pipelining
// targets, figured round by round against that round's baseline: each can
// fail, and the ceiling share and the stretch goal are said.
func TestPipelineTargets(t *testing.T) {
	mk := func(ap, plain, goRedis, apHandoff float64) *results.Lineup {
		b := results.Baseline{Clients: 32, LockPerSec: 60000, UnlockPerSec: 60000, // 30,000 cycles/s
			Ceiling: results.Drive{CyclesPerSec: 80000}, GoRedis: results.Drive{CyclesPerSec: goRedis}}
		m := &results.Lineup{Baselines: []results.LineupBaseline{{Clients: 32, Rounds: []results.Baseline{b, b}, Median: b}}}
		for _, c := range []struct {
			profile, impl  string
			ops, handoffUs float64
		}{
			{"uncontended", "lockimpl", plain, 0}, {"uncontended", perf.PipelinedName, ap, 0},
			{"mutex", "lockimpl", 1400, 300}, {"mutex", perf.PipelinedName, 1500, apHandoff},
		} {
			// Two rounds of the matrix, then the pairs to 6.
			var rs []results.LineupRound
			for i := range 6 {
				rs = append(rs, results.LineupRound{Round: i, OpsPerSec: c.ops, HandoffP50: c.handoffUs})
			}
			m.Cells = append(m.Cells, results.LineupCell{Profile: c.profile, Owners: 32, Impl: c.impl, Rounds: rs[:2], PairRounds: rs[2:], Median: rs[0]})
		}
		perf.Ratios(m)
		return m
	}
	judge := func(m *results.Lineup) map[string]results.TargetCheck {
		out := map[string]results.TargetCheck{}
		for _, c := range perf.Targets(m) {
			out[c.Target] = c
		}
		return out
	}
	const (
		apTarget    = "uncontended, 32 owners: lockimpl on the autopipeliner ≥ 1.25× redis-benchmark's unpipelined lock+unlock cycles (stretch 1.4×)"
		plainTarget = "uncontended, 32 owners: lockimpl ≥ 0.9× a bare go-redis loop running the same scripts"
		handoff     = "mutex, 32 owners: handoff p50 on the autopipeliner no higher than plain lockimpl's, within the pairs' spread"
	)
	good := judge(mk(45000, 28000, 30000, 290))
	for _, k := range []string{apTarget, plainTarget, handoff} {
		if c, ok := good[k]; !ok || !c.Met {
			t.Errorf("target %q: %+v (present %v), want met; all %v", k, c, ok, good)
		}
	}
	if v := good[apTarget].Value; !strings.Contains(v, "1.50×") || !strings.Contains(v, "56% of the -P 16 ceiling") || !strings.Contains(v, "stretch 1.4× reached") {
		t.Errorf("autopipeliner target says %q: want 1.50×, the ceiling share and the stretch", v)
	}
	// Just short of a threshold is not shown as reaching it.
	near := judge(mk(37380, 26980, 30000, 301.5)) // 1.246×, 0.8993×, 1.005×
	for k, want := range map[string]string{apTarget: "1.246×", plainTarget: "0.899×", handoff: "1.005×"} {
		if c := near[k]; c.Met || !strings.HasPrefix(c.Value, want) {
			t.Errorf("target %q: %+v, want missed and %s", k, c, want)
		}
	}
	// Just short of the stretch is not printed as reaching it.
	if v := judge(mk(41880, 28000, 30000, 290))[apTarget].Value; !strings.HasPrefix(v, "1.396×") || strings.Contains(v, "stretch 1.4× reached") {
		t.Errorf("autopipeliner target at 1.396× says %q: want 1.396× and no stretch", v)
	}
	bad := judge(mk(33000, 25000, 30000, 330))
	for _, k := range []string{apTarget, plainTarget, handoff} {
		if c, ok := bad[k]; !ok || c.Met {
			t.Errorf("target %q: %+v (present %v), want missed", k, c, ok)
		}
	}
	// Higher in five pairs but not in the sixth: within the spread, met,
	// and said; with the matrix's two rounds alone, too few to judge.
	m := mk(45000, 28000, 30000, 330)
	ap := m.Cell("mutex", 32, perf.PipelinedName)
	ap.PairRounds[3].HandoffP50 = 290
	perf.Ratios(m)
	if c := judge(m)[handoff]; !c.Met || !strings.Contains(c.Value, "higher within spread") || !strings.Contains(c.Value, "6 pairs 0.97..1.10") {
		t.Errorf("handoff higher in 5 of 6 pairs: %+v, want met, higher within spread", c)
	}
	ap.PairRounds = nil
	m.Cell("mutex", 32, "lockimpl").PairRounds = nil
	perf.Ratios(m)
	if c := judge(m)[handoff]; c.Met || !strings.HasPrefix(c.Value, "not measured: 2 pairs of handoffs, fewer than the 6") {
		t.Errorf("handoff over 2 pairs: %+v, want missed as not measured", c)
	}
	// A figure that was not measured (no go-redis loop ran) misses its
	// target, saying so, rather than vanishing from the list.
	if c, ok := judge(mk(45000, 28000, 0, 290))[plainTarget]; !ok || c.Met || !strings.HasPrefix(c.Value, "not measured") {
		t.Errorf("plain target without a go-redis figure: %+v (present %v), want missed, not measured", c, ok)
	}
	// A lone owner never waits, so mutex at 1 owner has no handoffs to
	// compare: no target, rather than a miss for want of a figure.
	lone := mk(45000, 28000, 30000, 290)
	for _, impl := range []string{"lockimpl", perf.PipelinedName} {
		lone.Cells = append(lone.Cells, results.LineupCell{Profile: "mutex", Owners: 1, Impl: impl,
			Rounds: []results.LineupRound{{OpsPerSec: 3000}}, Median: results.LineupRound{OpsPerSec: 3000}})
	}
	for k, c := range judge(lone) {
		if strings.HasPrefix(k, "mutex, 1 owners") {
			t.Errorf("target %q judged at 1 owner: %+v", k, c)
		}
	}
	// The redis-benchmark figure beside the ratio is the median of the
	// rounds' cycle rates, not one built of two rounds' halves.
	m = mk(45000, 28000, 30000, 290)
	m.Baselines[0].Rounds = []results.Baseline{
		{Clients: 32, LockPerSec: 90000, UnlockPerSec: 30000},  // 22,500 cycles/s
		{Clients: 32, LockPerSec: 30000, UnlockPerSec: 90000},  // 22,500
		{Clients: 32, LockPerSec: 60000, UnlockPerSec: 120000}, // 40,000
	}
	if got := perf.MedianBaseline(32, m.Baselines[0].Rounds).CyclesPerSec(); got != 22500 {
		t.Errorf("median baseline cycles = %.1f, want 22,500 (the median round's), not the 36,000 that the median lock and unlock rates combine to", got)
	}
}

// TestMeasureLineup runs a small matrix on a real Redis: both
// implementations in every round, in rotating order, raw's ratio to
// itself 1, a redis-benchmark baseline per round; then a matrix
// interrupted after its first run comes back partial with what finished.
func TestMeasureLineup(t *testing.T) {
	rig := newLineupRig(t)
	spec := perf.LineupSpec{
		Impls:    rig.impls,
		Groups:   []perf.LineupGroup{{Profile: "uncontended", Owners: 2, Impls: []string{"lockimpl", "raw"}}},
		Rounds:   2,
		Duration: 300 * time.Millisecond,
	}
	m, order := rig.measure(t, spec)
	if got := strings.Join(order, ","); got != "lockimpl,raw,raw,lockimpl" {
		t.Errorf("run order %s; want the order rotated in round 2", got)
	}
	if len(m.Cells) != 2 || len(m.Baselines) != 1 || len(m.Baselines[0].Rounds) != 2 || m.Partial {
		t.Fatalf("cells %d, baselines %+v, partial %v", len(m.Cells), m.Baselines, m.Partial)
	}
	for _, c := range m.Cells {
		if len(c.Rounds) != 2 || c.Median.OpsPerSec <= 0 || c.VsRaw.Ops <= 0 || c.VsRedisBenchmark.Ops <= 0 || c.VsRedisBenchmark.AcquireP50 <= 0 {
			t.Errorf("cell %s: rounds %d, median %+v, vs raw %+v, vs redis-benchmark %+v", c.Impl, len(c.Rounds), c.Median, c.VsRaw, c.VsRedisBenchmark)
		}
		if c.VsGoRedis <= 0 || c.VsCeiling <= 0 || c.Median.RedisCPU <= 0 || c.Median.LoadCPU <= 0 {
			t.Errorf("cell %s: vs go-redis %v, vs ceiling %v, cpu redis %v lockbench %v: want all measured", c.Impl, c.VsGoRedis, c.VsCeiling, c.Median.RedisCPU, c.Median.LoadCPU)
		}
		if c.Owners != 2 || c.Clients != 2 || c.Rounds[0].File != "saved" {
			t.Errorf("cell %s: %d owners over %d clients, file %q", c.Impl, c.Owners, c.Clients, c.Rounds[0].File)
		}
	}
	if r := m.Cell("uncontended", 2, "raw").VsRaw.Ops; r != 1 {
		t.Errorf("raw vs raw = %v, want 1", r)
	}
	md := markdown(t, m)
	if !strings.Contains(md, `"bench perf --test"`) || !strings.Contains(md, "### 2 owners (2 clients)") {
		t.Errorf("markdown:\n%s", md)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hooks := perf.LineupHooks{Save: func(*results.Result) string { cancel(); return "" }}
	m, err := perf.MeasureLineup(ctx, rig.base, spec, rig.bin, benchServer(t, rig.env), hooks)
	if !errors.Is(err, context.Canceled) || m == nil || !m.Partial {
		t.Fatalf("interrupted matrix: %v, partial %v", err, m != nil && m.Partial)
	}
	if md := markdown(t, m); !strings.Contains(md, "**Partial") {
		t.Errorf("partial matrix markdown lacks the partial mark:\n%s", md)
	}
	if keys := perfKeys(t, redisenvtest.Raw(t, rig.env)); len(keys) != 0 {
		t.Errorf("matrix left keys %v", keys[:min(5, len(keys))])
	}
}

// lineupRig measures small matrices on a real Redis with lockimpl,
// lockimpl+ap and raw.
type lineupRig struct {
	env   *redisenv.Env
	bin   string
	base  workloads.Config
	impls map[string]workloads.Impl
}

func newLineupRig(t *testing.T) *lineupRig {
	t.Helper()
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark not on PATH")
	}
	env := redisenvtest.Start(t)
	raw, _ := impls.Lookup("raw")
	li, _ := impls.Lookup(impls.Default)
	return &lineupRig{env: env, bin: bin,
		base:  workloads.Config{NewRedis: env.NewPool, Meta: results.Meta{Args: []string{"perf", "--test"}}},
		impls: map[string]workloads.Impl{impls.Default: li, perf.PipelinedName: perf.Pipelined{Lockimpl: li.(workloads.Lockimpl)}, "raw": raw}}
}

// measure runs spec to the end: the matrix, and the implementations in
// the order they ran. Each run is saved as "saved".
func (r *lineupRig) measure(t *testing.T, spec perf.LineupSpec) (*results.Lineup, []string) {
	t.Helper()
	var order []string
	hooks := perf.LineupHooks{Save: func(res *results.Result) string {
		order = append(order, res.Meta.ImplName())
		return "saved"
	}}
	m, err := perf.MeasureLineup(context.Background(), r.base, spec, r.bin, benchServer(t, r.env), hooks)
	if err != nil {
		t.Fatal(err)
	}
	return m, order
}

// TestRoundOrder: the implementations rotate from round to round and
// from group to group; lockimpl and lockimpl+ap stay back to back, moving
// as one, and take turns going first.
func TestRoundOrder(t *testing.T) {
	all := []string{"lockimpl", perf.PipelinedName, "raw", "redsync"}
	for _, tc := range []struct {
		names     []string
		round, gi int
		want      string
	}{
		{all, 0, 0, "lockimpl,lockimpl+ap,raw,redsync"},
		{all, 1, 0, "raw,redsync,lockimpl+ap,lockimpl"},
		{all, 2, 0, "redsync,lockimpl,lockimpl+ap,raw"},
		{all, 0, 1, "raw,redsync,lockimpl,lockimpl+ap"},
		{all, 3, 0, "lockimpl+ap,lockimpl,raw,redsync"},
		{[]string{"lockimpl", perf.PipelinedName}, 0, 1, "lockimpl,lockimpl+ap"},
		{[]string{"lockimpl", perf.PipelinedName}, 1, 1, "lockimpl+ap,lockimpl"},
		{[]string{"lockimpl", "raw"}, 1, 0, "raw,lockimpl"},
		{[]string{perf.PipelinedName, "raw"}, 1, 0, "raw,lockimpl+ap"},
	} {
		if got := strings.Join(perf.RoundOrder(tc.names, tc.round, tc.gi), ","); got != tc.want {
			t.Errorf("%v in round %d, group %d: %s, want %s", tc.names, tc.round, tc.gi, got, tc.want)
		}
	}
}

// TestMeasureLineupPairs: lockimpl and lockimpl+ap run back to back in
// every round, each first in turn, while the others rotate around them;
// after the matrix's rounds the two run alone until there are Pairs pairs,
// kept apart from the matrix's rounds and counted in VsPlain.
func TestMeasureLineupPairs(t *testing.T) {
	rig := newLineupRig(t)
	spec := perf.LineupSpec{
		Impls:    rig.impls,
		Groups:   []perf.LineupGroup{{Profile: "uncontended", Owners: 2, Impls: []string{impls.Default, perf.PipelinedName, "raw"}}},
		Rounds:   2,
		Pairs:    3,
		Duration: 300 * time.Millisecond,
	}
	m, order := rig.measure(t, spec)
	want := "lockimpl,lockimpl+ap,raw," + // round 1: the pair as one, plain first
		"raw,lockimpl+ap,lockimpl," + // round 2: rotated, the autopipeliner first
		"lockimpl,lockimpl+ap" // the third pair, the two alone
	if got := strings.Join(order, ","); got != want {
		t.Errorf("run order %s; want %s", got, want)
	}
	if m.Pairs != 3 || m.Schedule() != "2 rounds, then lockimpl and lockimpl+ap alone to 3 pairs" {
		t.Errorf("pairs %d, schedule %q", m.Pairs, m.Schedule())
	}
	for _, c := range m.Cells {
		pairs := 1
		if c.Impl == "raw" {
			pairs = 0
		}
		if len(c.Rounds) != 2 || len(c.PairRounds) != pairs || pairs == 1 && c.PairRounds[0].Round != 2 {
			t.Errorf("%s: %d rounds and pair rounds %+v; want 2 rounds and %d pair rounds (round 2)", c.Impl, len(c.Rounds), c.PairRounds, pairs)
		}
	}
	if v := m.Cell("uncontended", 2, perf.PipelinedName).VsPlain; v == nil || v.Ops.Rounds != 3 || v.AcquireP99.Rounds != 3 {
		t.Errorf("VsPlain %+v: want 3 pairs", v)
	}
	if md := markdown(t, m); !strings.Contains(md, "2 rounds, then lockimpl and lockimpl+ap alone to 3 pairs") || !strings.Contains(md, "| uncontended | 2 | 3 |") {
		t.Errorf("markdown lacks the pairs:\n%s", md)
	}
}

// markdown renders m as make perf does for docs/perf.md.
func markdown(t *testing.T, m *results.Lineup) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "perf.md")
	if err := report.Write(path, &report.Input{Lineups: []*results.Lineup{m}}, report.Options{Format: report.Markdown}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMedianRoundHoldErrors: a hold error of 0 (on time) is a figure, not
// a missing one; rounds without holds are left out of the medians.
func TestMedianRoundHoldErrors(t *testing.T) {
	got := perf.MedianRound([]results.LineupRound{
		{Holds: 5, HoldErrP50: 0, HoldErrP99: 10},
		{Holds: 5, HoldErrP50: 0, HoldErrP99: 30},
		{Holds: 5, HoldErrP50: 4, HoldErrP99: 20},
		{OpsPerSec: 1}, // no holds measured
	})
	if got.Holds != 15 || got.HoldErrP50 != 0 || got.HoldErrP99 != 20 || got.HoldInImpl {
		t.Errorf("median %+v: want 15 holds, error p50 0 and p99 20", got)
	}
	if got := perf.MedianRound([]results.LineupRound{{OpsPerSec: 1, HoldInImpl: true}}); got.Holds != 0 || !got.HoldInImpl {
		t.Errorf("median %+v: want no holds, held in the implementation", got)
	}
}

// TestRoundOfHolds: a round reads its holds' achieved − asked and the
// spinner's share from the result, and whether the implementation held.
func TestRoundOfHolds(t *testing.T) {
	res := &results.Result{Waits: &results.Waits{
		Hold:      &results.WaitError{Latency: results.Latency{Count: 7, P50: 1.5, P99: 30}},
		SpinShare: 0.25, HoldNote: results.HoldInImpl,
	}}
	r := perf.RoundOf(res, 2)
	if r.Round != 2 || r.Holds != 7 || r.HoldErrP50 != 1.5 || r.HoldErrP99 != 30 || r.SpinShare != 0.25 || !r.HoldInImpl {
		t.Errorf("round %+v: want 7 holds, error 1.5 and 30 µs, spin 0.25, held in the implementation", r)
	}
	if r := perf.RoundOf(&results.Result{}, 0); r.Holds != 0 || r.HoldInImpl {
		t.Errorf("round of a result without waits %+v: want no holds", r)
	}
}
