package results_test

import (
	"path/filepath"
	"testing"

	"github.com/lockbench/lockbench/results"
)

func point(series string, x, ops, p99 float64) results.SweepPoint {
	return results.SweepPoint{Series: series, X: x, Clients: int(x), Owners: 1, OpsPerSec: ops, Ops: int64(ops * 20), P99Us: p99}
}

// A curve that saturates: the best SLO point, the knee at 90% of the peak
// and the headroom at the current setting all come out where they are.
func TestSweepCapacity(t *testing.T) {
	s := &results.Sweep{Schema: results.SweepSchema, Axis: results.AxisConcurrency, SLOP99Us: 10_000, CurrentX: 4, Points: []results.SweepPoint{
		point("", 1, 1000, 300), point("", 2, 1900, 500), point("", 4, 3500, 900), point("", 8, 5000, 3000),
		point("", 16, 5600, 8000), point("", 32, 5900, 20_000), point("", 64, 6000, 45_000),
	}}
	s.Analyze()
	if len(s.Capacity) != 1 {
		t.Fatalf("%d curves, want 1", len(s.Capacity))
	}
	c := s.Capacity[0]
	if c.Best == nil || c.Best.X != 16 {
		t.Errorf("best under SLO %+v, want x=16 (5,600 ops/s at p99 8 ms)", c.Best)
	}
	if c.Knee == nil || c.Knee.X != 16 {
		t.Errorf("knee %+v, want x=16, the first ≥ 90%% of the 6,000 peak", c.Knee)
	}
	if c.Peak == nil || c.Peak.X != 64 {
		t.Errorf("peak %+v, want x=64", c.Peak)
	}
	if c.Current == nil || c.Current.OpsPerSec != 3500 || c.HeadroomPct < 59.9 || c.HeadroomPct > 60.1 {
		t.Errorf("current %+v headroom %.2f%%, want 3,500 ops/s and +60%%", c.Current, c.HeadroomPct)
	}
	for _, p := range s.Points {
		if want := p.P99Us <= 10_000; p.MeetsSLO != want {
			t.Errorf("x=%g p99 %.0fµs: meets SLO %v, want %v", p.X, p.P99Us, p.MeetsSLO, want)
		}
	}
}

// Between swept points the current setting is interpolated; errors,
// violations and empty points break the SLO whatever the p99.
func TestSweepJudgeAndInterpolate(t *testing.T) {
	pts := []results.SweepPoint{point("a", 2, 2000, 100), point("a", 8, 5000, 200)}
	pts[1].Errors = pts[1].Ops / 50 // 2% failed
	for i := range pts {
		pts[i].Judge(1000, results.DefaultMaxErrorRate)
	}
	if !pts[0].MeetsSLO || pts[1].MeetsSLO {
		t.Fatalf("meets SLO %v/%v, want true/false (2%% errors)", pts[0].MeetsSLO, pts[1].MeetsSLO)
	}
	v := point("a", 4, 100, 1)
	v.Violations = 1
	if v.Judge(1000, results.DefaultMaxErrorRate); v.MeetsSLO {
		t.Error("a point with a safety violation meets the SLO")
	}
	var empty results.SweepPoint
	if empty.Judge(0, results.DefaultMaxErrorRate); empty.MeetsSLO {
		t.Error("a point with no operation meets the SLO")
	}
	c := results.AnalyzeCurve(pts, 4, results.AxisConcurrency)
	if c.Current == nil || c.Current.OpsPerSec != 3000 || c.Current.File != "" {
		t.Errorf("current at 4 = %+v, want 3,000 ops/s interpolated", c.Current)
	}
	if c.Best == nil || c.Best.X != 2 || c.HeadroomPct > -33 || c.HeadroomPct < -34 {
		t.Errorf("best %+v headroom %.1f%%, want x=2 and −33%%", c.Best, c.HeadroomPct)
	}
	if c := results.AnalyzeCurve(pts, 100, results.AxisConcurrency); c.Current != nil {
		t.Errorf("current outside the curve = %+v, want none", c.Current)
	}
	if c := results.AnalyzeCurve(pts[1:], 0, results.AxisConcurrency); c.Best != nil {
		t.Errorf("all broken: best %+v, want none", c.Best)
	}
}

// Curves are analysed apart, a stop reason survives Analyze, and the file
// round-trips.
func TestSweepSeriesAndFile(t *testing.T) {
	s := &results.Sweep{Schema: results.SweepSchema, Axis: results.AxisConcurrency, SLOP99Us: 1000, Points: []results.SweepPoint{
		point("read_ratio 0.5", 1, 100, 500), point("read_ratio 0.5", 2, 150, 2000),
		point("read_ratio 0.9", 1, 300, 400), point("read_ratio 0.9", 2, 600, 800),
	}, Capacity: []results.Capacity{{Series: "read_ratio 0.5", Stopped: "2 points in a row broke the SLO"}}}
	s.Analyze()
	if got := s.SeriesNames(); len(got) != 2 || len(s.Capacity) != 2 {
		t.Fatalf("series %v, capacity %d", got, len(s.Capacity))
	}
	if s.Capacity[0].Best.X != 1 || s.Capacity[1].Best.X != 2 || s.Capacity[0].Stopped == "" {
		t.Errorf("capacity %+v", s.Capacity)
	}
	dir := t.TempDir()
	path, err := results.WriteSweep(dir, s)
	if err != nil || filepath.Base(path) != "sweep.json" {
		t.Fatalf("WriteSweep: %v %s", err, path)
	}
	back, err := results.ReadSweep(path)
	if err != nil || len(back.Points) != 4 || back.Capacity[1].Best.OpsPerSec != 600 {
		t.Fatalf("read back: %v %+v", err, back)
	}
	if _, err := results.ReadSweep(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("reading a missing sweep succeeded")
	}
}

// What the statement advises at a current setting past the SLO, and on
// curves that never saturate.
func TestSweepStatements(t *testing.T) {
	judged := func(axis string, currentX float64, pts ...results.SweepPoint) results.Capacity {
		for i := range pts {
			pts[i].Judge(10_000, results.DefaultMaxErrorRate)
		}
		return results.AnalyzeCurve(pts, currentX, axis)
	}
	over := judged(results.AxisConcurrency, 64,
		point("", 8, 4000, 2000), point("", 16, 6000, 8000), point("", 32, 5500, 30_000), point("", 64, 5000, 80_000))
	if cur := over.Current; cur == nil || cur.X != 64 || cur.MeetsSLO || over.Best == nil || over.Best.X != 16 || over.Best.OpsPerSec != 6000 {
		t.Errorf("current setting over the SLO: current %+v, best %+v: want x=64 breaking it, best x=16", over.Current, over.Best)
	}
	rising := judged(results.AxisConcurrency, 0, point("", 1, 1000, 100), point("", 2, 2000, 100), point("", 4, 4000, 100), point("", 8, 8000, 100))
	if rising.Knee != nil || rising.Peak == nil || rising.Peak.X != 8 {
		t.Errorf("a linear curve has knee %+v", rising.Knee)
	}
	rate := judged(results.AxisRate, 0, point("", 1000, 1000, 100), point("", 2000, 1990, 100), point("", 4000, 2500, 100))
	if rate.Knee == nil || rate.Knee.X != 2000 {
		t.Errorf("rate knee %+v, want 2000, the last rate achieved", rate.Knee)
	}
	kept := judged(results.AxisRate, 0, point("", 1000, 1000, 100), point("", 2000, 2000, 100))
	if kept.Knee != nil {
		t.Errorf("rates all achieved, knee %+v", kept.Knee)
	}
}
