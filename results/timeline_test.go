package results_test

import (
	"testing"

	"github.com/lockbench/lockbench/results"
)

// The timeline shows the lock with the violation, its holders, and the
// union of its overlaps as windows.
func TestBuildTimelinePicksTheUnsafeLock(t *testing.T) {
	ops := []results.Op{
		// lock 0: busy but safe.
		sec(0, 0, results.Exclusive, 1*ms, 2*ms), sec(1, 0, results.Exclusive, 2*ms, 3*ms), sec(2, 0, results.Exclusive, 3*ms, 4*ms),
		// lock 1: overlapping pairs forming one window [10, 35) ms, and one later [50, 55) ms.
		sec(0, 1, results.Exclusive, 1*ms, 30*ms), sec(1, 1, results.Exclusive, 10*ms, 40*ms), sec(2, 1, results.Exclusive, 20*ms, 35*ms),
		sec(0, 1, results.Exclusive, 50*ms, 60*ms), sec(1, 1, results.Exclusive, 45*ms, 55*ms),
	}
	tl := results.BuildTimeline(ops, labels)
	if tl == nil || tl.Lock != labels.Locks[1] {
		t.Fatalf("timeline %+v, want lock %s", tl, labels.Locks[1])
	}
	if len(tl.Holds) != 5 || tl.Omitted != 0 {
		t.Errorf("%d holds (%d omitted), want 5 (0)", len(tl.Holds), tl.Omitted)
	}
	want := []results.Window{{Start: secs(10 * ms), End: secs(35 * ms)}, {Start: secs(50 * ms), End: secs(55 * ms)}}
	if len(tl.Overlaps) != len(want) {
		t.Fatalf("overlaps %+v, want %+v", tl.Overlaps, want)
	}
	for i, w := range want {
		if tl.Overlaps[i] != w {
			t.Errorf("overlap %d = %+v, want %+v", i, tl.Overlaps[i], w)
		}
	}
	// The windows' union is the checker's unsafe time.
	s := results.CheckSafety(ops, labels, 5)
	var union float64
	for _, w := range tl.Overlaps {
		union += (w.End - w.Start) * 1e6
	}
	if d := union - s.UnsafeUs; d > 0.5 || d < -0.5 {
		t.Errorf("timeline windows cover %.1fµs, checker's unsafe window %.1fµs", union, s.UnsafeUs)
	}
}

// Without a violation the most-held lock is drawn; reads sharing a lock
// are not overlaps.
func TestBuildTimelineSafeRun(t *testing.T) {
	ops := []results.Op{
		sec(0, 0, results.Read, 1*ms, 10*ms), sec(1, 0, results.Read, 5*ms, 15*ms),
		sec(0, 1, results.Exclusive, 1*ms, 2*ms), sec(1, 1, results.Exclusive, 2*ms, 3*ms), sec(2, 1, results.Exclusive, 3*ms, 4*ms),
	}
	tl := results.BuildTimeline(ops, labels)
	if tl == nil || tl.Lock != labels.Locks[1] || len(tl.Overlaps) != 0 || len(tl.Holds) != 3 {
		t.Fatalf("timeline %+v, want lock %s with 3 holds and no overlap", tl, labels.Locks[1])
	}
	if results.BuildTimeline(nil, labels) != nil {
		t.Error("a run with no acquisition has a timeline")
	}
}

// A long lock history keeps the holds around the first overlap.
func TestBuildTimelineBounded(t *testing.T) {
	var ops []results.Op
	n := results.TimelineHolds * 3
	for i := range int64(n) {
		// From 1 ms: an acquisition at 0 reads as none.
		ops = append(ops, sec(int32(i%3), 0, results.Exclusive, (i+1)*ms, (i+2)*ms))
	}
	// One overlap two-thirds through.
	at := int64(2*n/3+1) * ms
	ops = append(ops, sec(1, 0, results.Exclusive, at+100*us, at+200*us))
	tl := results.BuildTimeline(ops, labels)
	if len(tl.Holds) != results.TimelineHolds || tl.Omitted != n+1-results.TimelineHolds {
		t.Fatalf("%d holds, %d omitted; want %d and %d", len(tl.Holds), tl.Omitted, results.TimelineHolds, n+1-results.TimelineHolds)
	}
	if len(tl.Overlaps) != 1 || tl.Holds[0].Acquired > tl.Overlaps[0].Start || tl.Holds[len(tl.Holds)-1].Released < tl.Overlaps[0].End {
		t.Errorf("kept %.3f–%.3fs, overlaps %+v: the overlap should be inside", tl.Holds[0].Acquired, tl.Holds[len(tl.Holds)-1].Released, tl.Overlaps)
	}
}
