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
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// TestMatrixTargets judges made-up matrices: each target can fail.
func TestMatrixTargets(t *testing.T) {
	cell := func(profile string, owners int, impl string, ops, handoff float64, violations int64, vsRaw float64) results.MatrixCell {
		return results.MatrixCell{Profile: profile, Owners: owners, Impl: impl,
			Median: results.MatrixRound{OpsPerSec: ops, HandoffP50: handoff, Violations: violations}, VsRaw: results.Ratios{Ops: vsRaw}}
	}
	good := &results.Matrix{Cells: []results.MatrixCell{
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
	bad := &results.Matrix{Cells: []results.MatrixCell{
		cell("uncontended", 8, "lockimpl", 800, 0, 0, 0.8),
		cell("mutex", 8, "lockimpl", 900, 200, 1, 2),
		cell("mutex", 8, "redislock", 400, 1000, 0, 0.9), // only 5× slower
	}}
	for _, c := range perf.Targets(bad) {
		if c.Met {
			t.Errorf("target %q met on a matrix that misses it (%s)", c.Target, c.Value)
		}
	}
	if n := len(perf.Targets(bad)); n != 3 {
		t.Errorf("%d targets judged, want 3: %+v", n, perf.Targets(bad))
	}
}

// TestMeasureMatrix runs a small matrix on a real Redis: both
// implementations in every round, in rotating order, raw's ratio to
// itself 1, a redis-benchmark baseline per round; then a matrix
// interrupted after its first run comes back partial with what finished.
func TestMeasureMatrix(t *testing.T) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark not on PATH")
	}
	env := redisenvtest.Start(t)
	raw, _ := impls.Lookup("raw")
	li, _ := impls.Lookup(impls.Default)
	spec := perf.MatrixSpec{
		Impls:    map[string]workloads.Impl{"lockimpl": li, "raw": raw},
		Groups:   []perf.MatrixGroup{{Profile: "uncontended", Owners: 2, Impls: []string{"lockimpl", "raw"}}},
		Rounds:   2,
		Duration: 300 * time.Millisecond,
	}
	var order []string
	hooks := perf.MatrixHooks{Save: func(r *results.Result) string {
		order = append(order, r.Meta.ImplName())
		return "saved"
	}}
	base := workloads.Config{NewRedis: env.NewPool, Meta: results.Meta{Args: []string{"perf", "--test"}}}
	m, err := perf.MeasureMatrix(context.Background(), base, spec, bin, benchServer(t, env), hooks)
	if err != nil {
		t.Fatal(err)
	}
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
	hooks.Save = func(*results.Result) string { cancel(); return "" }
	m, err = perf.MeasureMatrix(ctx, base, spec, bin, benchServer(t, env), hooks)
	if !errors.Is(err, context.Canceled) || m == nil || !m.Partial {
		t.Fatalf("interrupted matrix: %v, partial %v", err, m != nil && m.Partial)
	}
	if md := markdown(t, m); !strings.Contains(md, "**Partial") {
		t.Errorf("partial matrix markdown lacks the partial mark:\n%s", md)
	}
	if keys := perfKeys(t, redisenvtest.Raw(t, env)); len(keys) != 0 {
		t.Errorf("matrix left keys %v", keys[:min(5, len(keys))])
	}
}

// markdown renders m as make perf does for docs/perf.md.
func markdown(t *testing.T, m *results.Matrix) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "perf.md")
	if err := report.Write(path, &report.Input{Matrices: []*results.Matrix{m}}, report.Options{Format: report.Markdown}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
