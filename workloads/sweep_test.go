package workloads_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

func rw90(t *testing.T) workloads.Profile {
	t.Helper()
	p, err := workloads.Builtin("rw90")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Listed values cross; the axis is concurrency, other lists make curves,
// each curve runs in increasing x.
func TestSweepPlanPoints(t *testing.T) {
	plan := workloads.SweepPlan{Base: rw90(t), Clients: []int{4, 1, 2}, ReadRatios: []float64{0.5, 0.9}}
	pts, err := plan.Points()
	if err != nil {
		t.Fatal(err)
	}
	owners := plan.Base.Owners
	for i, p := range pts {
		if p.X != float64(p.Profile.Clients*owners) {
			t.Errorf("point %d: x %g, want clients × owners = %d", i, p.X, p.Profile.Clients*owners)
		}
	}
	want := []string{"read_ratio 0.5", "read_ratio 0.5", "read_ratio 0.5", "read_ratio 0.9", "read_ratio 0.9", "read_ratio 0.9"}
	for i, p := range pts {
		if i >= len(want) || p.Series != want[i] || p.Profile.Clients != []int{1, 2, 4}[i%3] {
			t.Errorf("point %d: %s at %d clients, want %s at %d", i, p.Series, p.Profile.Clients, want[min(i, 5)], []int{1, 2, 4}[i%3])
		}
	}
	if len(pts) != 6 {
		t.Errorf("%d points, want 6", len(pts))
	}
	if plan.Axis() != results.AxisConcurrency || plan.CurrentX() != float64(plan.Base.Clients*plan.Base.Owners) {
		t.Errorf("axis %s current %g", plan.Axis(), plan.CurrentX())
	}
	open := rw90(t)
	open.Think = workloads.DurationDist{} // open loop paces by its schedule
	rates := workloads.SweepPlan{Base: open, Rates: []float64{2000, 1000}}
	pts, err = rates.Points()
	if err != nil || rates.Axis() != results.AxisRate || len(pts) != 2 || pts[0].X != 1000 || pts[0].Profile.Rate != 1000 {
		t.Errorf("rate sweep: %v, axis %s, points %+v", err, rates.Axis(), pts)
	}
}

// Bad values are refused before anything runs, naming the flag.
func TestSweepPlanBadInput(t *testing.T) {
	for _, tt := range []struct {
		plan workloads.SweepPlan
		flag string
	}{
		{workloads.SweepPlan{Clients: []int{1, 0}}, "--clients"},
		{workloads.SweepPlan{Owners: []int{-1}}, "--owners"},
		{workloads.SweepPlan{ReadRatios: []float64{1.5}}, "--read-ratio"},
		{workloads.SweepPlan{Rates: []float64{-5}}, "--rate"},
		{workloads.SweepPlan{StopAfter: -1}, "--stop-after"},
		{workloads.SweepPlan{SLO: -time.Millisecond}, "--slo-p99"},
		// A value listed twice would run its point twice.
		{workloads.SweepPlan{Clients: []int{1, 1}}, "--clients"},
		{workloads.SweepPlan{Clients: []int{1, 2, 4, 2}}, "--clients"},
		{workloads.SweepPlan{Owners: []int{4, 4}}, "--owners"},
		{workloads.SweepPlan{ReadRatios: []float64{0.5, 0.50}}, "--read-ratio"},
		{workloads.SweepPlan{Rates: []float64{1000, 2000, 1000}}, "--rate"},
		{workloads.SweepPlan{Shards: []int{3, 3}}, "--shards"},
	} {
		tt.plan.Base = rw90(t)
		_, err := tt.plan.Points()
		var fe *workloads.FieldError
		if !errors.As(err, &fe) || fe.Field != tt.flag || !fe.IsUsage() {
			t.Errorf("%s: error %v, want a usage error naming %s", tt.flag, err, tt.flag)
		}
	}
}

// fakeRun stands in for a Redis run: throughput grows with clients to a
// ceiling, p99 grows with them (the sweep loop is under test, not Redis).
func fakeRun(p99PerClient float64) func(context.Context, workloads.Profile) (*results.Result, error) {
	return func(_ context.Context, p workloads.Profile) (*results.Result, error) {
		ops := min(float64(p.Clients)*1000, 5000)
		return &results.Result{Schema: results.Schema, Throughput: results.Throughput{OpsPerSec: ops, Ops: int64(ops)},
			Latency: map[string]results.Latency{results.AcquireAll: {P99: float64(p.Clients) * p99PerClient}}}, nil
	}
}

// A curve stops after StopAfter points in a row break the SLO; the rest
// are reported skipped, and the capacity is drawn from what ran.
func TestSweepStopsEarly(t *testing.T) {
	base := rw90(t)
	base.AutoPipeline = true
	plan := workloads.SweepPlan{Base: base, Clients: []int{1, 2, 4, 8, 16, 32}, SLO: 3 * time.Millisecond, StopAfter: 2}
	var ran, skipped []int
	var etas []time.Duration
	cfg := workloads.SweepConfig{
		Plan: plan,
		Run: func(ctx context.Context, pt workloads.PlannedPoint) (*results.Result, error) {
			p := pt.Profile
			ran = append(ran, p.Clients)
			return fakeRun(1000)(ctx, p) // p99 = clients ms
		},
		Progress: func(sp workloads.SweepProgress) { etas = append(etas, sp.ETA) },
		Skipped:  func(pt workloads.PlannedPoint, _ string) { skipped = append(skipped, pt.Profile.Clients) },
	}
	sw, err := workloads.Sweep(context.Background(), cfg, results.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) != 4 || ran[3] != 8 || len(skipped) != 2 || skipped[0] != 16 {
		t.Errorf("ran %v skipped %v, want 1,2,4,8 then 16,32 skipped (4 and 8 broke the 3 ms SLO)", ran, skipped)
	}
	if sw.Partial || sw.Planned != 6 || len(sw.Points) != 4 || len(sw.Capacity) != 1 || sw.Capacity[0].Stopped == "" {
		t.Fatalf("sweep %+v", sw)
	}
	if b := sw.Capacity[0].Best; b == nil || b.Clients != 2 {
		t.Errorf("best %+v, want 2 clients", b)
	}
	// What the base set beyond the axis is said, so sweeps that differ
	// only in it can be told apart.
	var sum strings.Builder
	report.WriteSweepSummary(&sum, sw)
	if !strings.Contains(sw.Meta.Workload, "auto-pipelined") || !strings.Contains(sum.String(), "base      rw 90% reads · auto-pipelined") {
		t.Errorf("sweep workload %q, summary:\n%s\nwant the base's auto-pipelining named", sw.Meta.Workload, sum.String())
	}
	if len(etas) != 4 || etas[0] <= etas[1] {
		t.Errorf("ETAs %v, want decreasing", etas)
	}
}

// Ctrl-C during a point keeps the finished ones, records the partial one
// and leaves it off the curves.
func TestSweepInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var recorded int
	cfg := workloads.SweepConfig{
		Plan: workloads.SweepPlan{Base: rw90(t), Clients: []int{1, 2, 4}},
		Run: func(ctx context.Context, pt workloads.PlannedPoint) (*results.Result, error) {
			p := pt.Profile
			r, _ := fakeRun(100)(ctx, p)
			if p.Clients == 2 {
				cancel()
				r.Partial = true
				return r, ctx.Err()
			}
			return r, nil
		},
		Record: func(*results.Result, results.SweepPoint) (string, error) { recorded++; return "x.json", nil },
	}
	sw, err := workloads.Sweep(ctx, cfg, results.Meta{})
	if !errors.Is(err, context.Canceled) || sw == nil {
		t.Fatalf("err %v, sweep %v", err, sw)
	}
	if !sw.Partial || len(sw.Points) != 1 || recorded != 2 || !strings.Contains(sw.PartialReason, "point 2 of 3") {
		t.Errorf("partial %v (%s), %d points, %d recorded; want partial, 1 point, 2 recorded", sw.Partial, sw.PartialReason, len(sw.Points), recorded)
	}
}

// A rate sweep of a closed-loop profile says which flag fixes it; a rate
// of 0 on the rate axis is refused.
func TestSweepPlanRates(t *testing.T) {
	_, err := workloads.SweepPlan{Base: rw90(t), Rates: []float64{1000, 2000}}.Points()
	var fe *workloads.FieldError
	if !errors.As(err, &fe) || fe.Field != "--rate" || !strings.Contains(fe.Fix, "add --think 0") {
		t.Errorf("closed-loop profile: %v, want --rate naming --think 0", err)
	}
	open := rw90(t)
	open.Think = workloads.DurationDist{}
	_, err = workloads.SweepPlan{Base: open, Rates: []float64{0, 1000}}.Points()
	if !errors.As(err, &fe) || fe.Field != "--rate" || fe.Value != "0" {
		t.Errorf("rate 0 on the rate axis: %v", err)
	}
}

// TestSweepPlanShards: several shard counts at one concurrency are the
// axis; with several concurrencies they are curves; bad counts are refused.
func TestSweepPlanShards(t *testing.T) {
	plan := workloads.SweepPlan{Base: rw90(t), Shards: []int{6, 1, 3}}
	pts, err := plan.Points()
	if err != nil {
		t.Fatal(err)
	}
	if plan.Axis() != results.AxisShards || plan.CurrentX() != 0 || len(pts) != 3 {
		t.Fatalf("axis %s, current %g, %d points; want the shard axis with no current setting", plan.Axis(), plan.CurrentX(), len(pts))
	}
	for i, want := range []int{1, 3, 6} {
		if pts[i].X != float64(want) || pts[i].Shards != want || pts[i].Series != "" {
			t.Errorf("point %d: x %g, shards %d, series %q; want %d on one curve", i, pts[i].X, pts[i].Shards, pts[i].Series, want)
		}
	}
	curves := workloads.SweepPlan{Base: rw90(t), Shards: []int{1, 3}, Clients: []int{1, 2}}
	pts, err = curves.Points()
	if err != nil || curves.Axis() != results.AxisConcurrency || len(pts) != 4 || pts[0].Series != "shards 1" || pts[3].Series != "shards 3" || pts[3].Shards != 3 {
		t.Errorf("shards × clients: %v, axis %s, points %+v", err, curves.Axis(), pts)
	}
	for _, bad := range []int{0, 17} {
		_, err := workloads.SweepPlan{Base: rw90(t), Shards: []int{1, bad}}.Points()
		var fe *workloads.FieldError
		if !errors.As(err, &fe) || fe.Field != "--shards" {
			t.Errorf("--shards 1,%d: %v, want a FieldError naming --shards", bad, err)
		}
	}
}
