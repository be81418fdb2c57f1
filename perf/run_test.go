package perf_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// TestRun runs the two parts that need no redis-benchmark, asked for out
// of order: they run in Parts' order, each handed over with its saved
// result before the next starts, with progress named by part.
func TestRun(t *testing.T) {
	env := redisenvtest.Start(t)
	out := t.TempDir()
	var finished, progress []string
	err := perf.Run(testkit.Context(t), perf.Options{
		Parts:       []string{perf.PartHandoff, perf.PartScale},
		Base:        workloads.Config{NewRedis: env.NewPool},
		ScalePoints: []perf.ScalePoint{{Clients: 2, Owners: 8}, {Clients: 2, Owners: 16}}, ScaleLocks: 4, ScaleRate: 400, ScaleDuration: time.Second,
		HandoffDuration: time.Second,
		Out:             out,
		Progress:        func(part, _ string) { progress = append(progress, part) },
		Finished: func(p perf.Part) error {
			finished = append(finished, p.Name)
			if _, err := os.Stat(p.Saved); err != nil {
				t.Errorf("%s: saved %q: %v", p.Name, p.Saved, err)
			}
			switch p.Name {
			case perf.PartScale:
				if len(p.Scale) != 2 || len(p.ScaleSaved) != 2 || p.Saved != p.ScaleSaved[1] {
					t.Fatalf("scale part %+v, saved %v; want a run at each of 2 points", p.Scale, p.ScaleSaved)
				}
				for i, s := range p.Scale {
					if _, err := os.Stat(p.ScaleSaved[i]); err != nil {
						t.Errorf("scale point %d: saved %q: %v", i, p.ScaleSaved[i], err)
					}
					checkScaleRow(t, s.Row(p.ScaleSaved[i]), s.Point)
				}
				// Each point's peak RSS is its own (and the process's other
				// tests' meanwhile), so only the goroutines must grow.
				if a, b := p.Scale[0].Row(""), p.Scale[1].Row(""); a.PeakRSSBytes <= 0 || b.PeakRSSBytes <= 0 || b.Goroutines <= a.Goroutines {
					t.Errorf("16 owners: peak RSS %d, goroutines %d; 8 owners: %d, %d: want peaks read, and more goroutines at more owners",
						b.PeakRSSBytes, b.Goroutines, a.PeakRSSBytes, a.Goroutines)
				}
			case perf.PartHandoff:
				if p.Handoff == nil || p.Handoff.HandoffUs <= 0 {
					t.Errorf("handoff part %+v; want a handoff p50", p.Handoff)
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{perf.PartScale, perf.PartHandoff}; !slices.Equal(finished, want) || !slices.Equal(slices.Compact(progress), want) {
		t.Errorf("finished %v, progress %v; want both %v", finished, progress, want)
	}

	// Finished's error ends Run: the next part does not start.
	stop := errors.New("stop")
	finished = nil
	err = perf.Run(testkit.Context(t), perf.Options{
		Parts:       []string{perf.PartScale, perf.PartHandoff},
		Base:        workloads.Config{NewRedis: env.NewPool},
		ScalePoints: []perf.ScalePoint{{Clients: 1, Owners: 1}}, ScaleLocks: 1, ScaleRate: 100, ScaleDuration: 500 * time.Millisecond,
		HandoffDuration: time.Second,
		Out:             out,
		Finished:        func(p perf.Part) error { finished = append(finished, p.Name); return stop },
	})
	if !errors.Is(err, stop) || !slices.Equal(finished, []string{perf.PartScale}) {
		t.Errorf("err %v, finished %v; want stop after scale", err, finished)
	}
}

// TestRunInterrupted: a cancelled context ends Run with its error, handing
// over no part that measured nothing.
func TestRunInterrupted(t *testing.T) {
	env := redisenvtest.Start(t)
	ctx, cancel := context.WithCancel(testkit.Context(t))
	cancel()
	err := perf.Run(ctx, perf.Options{
		Parts: []string{perf.PartHandoff}, Base: workloads.Config{NewRedis: env.NewPool},
		HandoffDuration: time.Second, Out: t.TempDir(),
		Finished: func(p perf.Part) error {
			if p.Handoff == nil || p.Handoff.Result == nil {
				t.Errorf("handed over %+v with nothing measured", p)
			}
			return nil
		},
	})
	if err == nil {
		t.Fatal("a cancelled run returned no error")
	}
}

// TestViolations: a matrix cell with a violation is the matrix's error,
// naming the cell; a clean matrix has none.
func TestViolations(t *testing.T) {
	m := &results.Lineup{Cells: []results.LineupCell{
		{Profile: "mutex", Owners: 8, Impl: "raw"},
		{Profile: "mutex", Owners: 8, Impl: "redislock", Median: results.LineupRound{Violations: 2}},
	}}
	if err := perf.Violations(m); err == nil {
		t.Error("a cell with 2 violations passed")
	}
	m.Cells[1].Median.Violations = 0
	if err := perf.Violations(m); err != nil {
		t.Errorf("a clean matrix: %v", err)
	}
}

// TestMatrixSpec: lockimpl brings lockimpl+ap beside it, a group keeps
// only the listed implementations, and groups none of them runs are left
// out; unknown and repeated names are refused.
func TestMatrixSpec(t *testing.T) {
	spec, err := perf.LineupSpecOf([]string{"lockimpl", " raw"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := spec.Impls[perf.PipelinedName]; !ok {
		t.Errorf("impls %v lack %s", spec.Impls, perf.PipelinedName)
	}
	var profiles []string
	for _, g := range spec.Groups {
		for _, n := range g.Impls {
			if _, ok := spec.Impls[n]; !ok {
				t.Errorf("group %s/%d runs %s, not in the spec", g.Profile, g.Owners, n)
			}
		}
		if !slices.Contains(profiles, g.Profile) {
			profiles = append(profiles, g.Profile)
		}
	}
	// fair and reentrant-deep run lockimpl too; only redisson's groups
	// would be empty, and there are none.
	if want := []string{"uncontended", "mutex", "rw90", "fair", "reentrant-deep"}; !slices.Equal(profiles, want) {
		t.Errorf("profiles %v; want %v", profiles, want)
	}
	if spec, err := perf.LineupSpecOf([]string{impls.RedissonName}); err == nil {
		for _, g := range spec.Groups {
			if slices.Contains(g.Impls, impls.Default) {
				t.Errorf("redisson alone: group %+v runs lockimpl", g)
			}
		}
	}
	for _, bad := range [][]string{{"lockimpl", "zk"}, {"raw", "raw"}} {
		if _, err := perf.LineupSpecOf(bad); err == nil {
			t.Errorf("LineupSpecOf(%q) accepted", bad)
		}
	}
}
