package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/clitest"
	"github.com/lockbench/lockbench/results"
)

// TestSweep runs a two-point sweep against a real redis-server: points,
// sweep file, both capacity charts and the report, and a statement on
// stdout.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runBench(t, "sweep", "--redis", "local", "--profile", "rw90", "--clients", "1,2", "--owners", "2",
		"--duration", "700ms", "--warmup", "0s", "--slo-p99", "1s", "--out", dir)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"over 2 points (", "point 1 of 2: clients 1 × owners 2", "point 2 of 2", "meets the SLO"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("progress lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "Highest throughput meeting the SLO (p99 ≤ 1.00s)") || !strings.Contains(out, "report      "+filepath.Join(dir, "report.html")) {
		t.Errorf("stdout:\n%s", out)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sw.Partial || len(sw.Points) != 2 || sw.Points[0].X != 2 || sw.Points[1].X != 4 || sw.Axis != results.AxisConcurrency {
		t.Fatalf("sweep: partial %v, points %+v", sw.Partial, sw.Points)
	}
	for _, p := range sw.Points {
		r, err := results.ReadFile(filepath.Join(dir, p.File))
		if err != nil || r.Throughput.OpsPerSec != p.OpsPerSec || p.OpsPerSec == 0 || !p.MeetsSLO {
			t.Errorf("point %+v: result %v", p, err)
		}
	}
	if c := sw.Capacity; len(c) != 1 || c[0].Best == nil || c[0].Peak == nil {
		t.Errorf("capacity %+v", c)
	}
	for _, f := range []string{"capacity-throughput.png", "capacity-p99.png", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// bench report reads the sweep directory back, in Markdown too.
	code, out, errOut = runBench(t, "report", "--format", "md", dir)
	if code != cli.ExitOK || !strings.Contains(out, "(0 runs, 0 chaos scenarios, 1 sweep)") {
		t.Fatalf("bench report: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.md")); err != nil || !strings.Contains(string(b), "## Capacity: rw90") {
		t.Errorf("report.md: %v", err)
	}
	// A second sweep into the same directory is refused before it runs.
	code, _, errOut = runBench(t, "sweep", "--redis", "local", "--clients", "1", "--out", dir)
	if code != cli.ExitUsage || !strings.Contains(errOut, "already holds a sweep") {
		t.Errorf("sweep into a used --out: exit %d\n%s", code, errOut)
	}
}

// TestSweepOfOnePoint: a sweep of one point says so in the singular.
func TestSweepOfOnePoint(t *testing.T) {
	_, errOut := runBenchOK(t, "sweep", "--redis", "local", "--profile", "mutex", "--clients", "1", "--owners", "1",
		"--duration", "300ms", "--warmup", "0s", "--slo-p99", "1s", "--out", t.TempDir())
	if !strings.Contains(errOut, "over 1 point (") {
		t.Errorf("progress does not say 'over 1 point':\n%s", errOut)
	}
}

// TestSweepInterrupted: Ctrl-C during the second point keeps the first,
// writes the sweep and report marked partial, and exits 130.
func TestSweepInterrupted(t *testing.T) {
	t.Setenv("REDIS_URL", "")
	dir := t.TempDir()
	code, out, errOut := clitest.Interrupt(t, program().Main, []string{"sweep", "--redis", "local", "--profile", "mutex", "--clients", "1,2,4", "--owners", "1",
		"--duration", "500ms", "--warmup", "0s", "--out", dir}, "point 2 of 3", 2*time.Minute)
	if code != cli.ExitInterrupted {
		t.Fatalf("exit %d, want 130\n%s\n%s", code, out, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !sw.Partial || len(sw.Points) != 1 || !strings.Contains(sw.PartialReason, "point 2 of 3") {
		t.Errorf("sweep: partial %v (%s), %d points; want partial with 1 point", sw.Partial, sw.PartialReason, len(sw.Points))
	}
	pts, _ := filepath.Glob(filepath.Join(dir, "points", "*.json"))
	if len(pts) != 2 {
		t.Errorf("%d point results on disk, want 2 (the finished one and the partial one)", len(pts))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.html")); err != nil || !strings.Contains(string(b), "Partial sweep") {
		t.Errorf("report: %v", err)
	}
	if !strings.Contains(out, "PARTIAL") {
		t.Errorf("stdout does not say partial:\n%s", out)
	}
}

// TestSweepShards: --shards runs each point on a fresh cluster of that
// many primaries, on the shard axis, each point's result split by shard.
func TestSweepShards(t *testing.T) {
	dir := t.TempDir()
	_, errOut := runBenchOK(t, "sweep", "--redis", "local", "--profile", "uncontended", "--shards", "1,2", "--replicas", "0",
		"--clients", "1", "--owners", "4", "--duration", "500ms", "--warmup", "0s", "--slo-p99", "1s", "--out", dir)
	if !strings.Contains(errOut, "on 2 shards") || strings.Count(errOut, "cluster of") != 2 {
		t.Errorf("progress does not show a cluster per shard count:\n%s", errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sw.Axis != results.AxisShards || len(sw.Points) != 2 {
		t.Fatalf("axis %s, %d points; want the shard axis with 2", sw.Axis, len(sw.Points))
	}
	for i, p := range sw.Points {
		r, err := results.ReadFile(filepath.Join(dir, p.File))
		if err != nil {
			t.Fatal(err)
		}
		if p.X != float64(i+1) || p.Shards != i+1 || len(r.PerShard) != i+1 || r.Meta.RedisTopology != fmt.Sprintf("cluster %dx0", i+1) {
			t.Errorf("point %d: x %g shards %d, result per shard %+v topology %q", i, p.X, p.Shards, r.PerShard, r.Meta.RedisTopology)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "capacity-throughput.png")); err != nil || st.Size() < 1000 {
		t.Errorf("capacity chart: %v", err)
	}
}
