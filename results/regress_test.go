package results_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/results"
)

// A zero-length hold releases when it acquires: its own release is not a
// handoff to itself.
func TestHandoffsIgnoreOwnRelease(t *testing.T) {
	var s results.Set
	results.Handoffs([]results.Op{{Called: 100, Acquired: 200, Released: 200, Depth: 1}}, 0, &s)
	if h := s.Get(results.Handoff); h != nil && h.TotalCount() > 0 {
		t.Errorf("a lone zero-length hold recorded %d handoffs", h.TotalCount())
	}
}

// Examples are the earliest overall, not the first lock's.
func TestSafetyExamplesEarliestAcrossLocks(t *testing.T) {
	ops := []results.Op{
		sec(0, 0, results.Exclusive, 2*ms, 3*ms), sec(1, 0, results.Exclusive, 2500*us, 4*ms), // lock 0 at 2.5 ms
		sec(0, 1, results.Exclusive, 1*us, 10*us), sec(1, 1, results.Exclusive, 2*us, 20*us), // lock 1 at 2 µs
	}
	s := results.CheckSafety(ops, labels, 1)
	if s.Violations != 2 || len(s.Examples) != 1 || s.Examples[0].Lock != labels.Locks[1] {
		t.Errorf("violations %d, examples %+v; want 2 and lock %s's first", s.Violations, s.Examples, labels.Locks[1])
	}
}

// With more overtakes than examples, the kept ones do not depend on map order.
func TestFIFOExamplesDeterministic(t *testing.T) {
	ops := []results.Op{
		fifoOp(0, 0, 1*ms, 20*ms), fifoOp(1, 0, 5*ms, 10*ms),
		fifoOp(0, 1, 1*ms, 30*ms), fifoOp(1, 1, 5*ms, 8*ms),
	}
	first := results.CheckFIFO(ops, labels, time.Millisecond, 1)
	for range 50 {
		if got := results.CheckFIFO(ops, labels, time.Millisecond, 1); len(got.Examples) != 1 || got.Examples[0] != first.Examples[0] {
			t.Fatalf("examples changed between calls: %+v vs %+v", got.Examples, first.Examples)
		}
	}
	if first.Examples[0].Lock != labels.Locks[1] {
		t.Errorf("kept %s's overtake, want the earliest (lock %s at 8 ms)", first.Examples[0].Lock, labels.Locks[1])
	}
}

// Short loopback latencies keep 3 significant digits.
func TestMicrosecondPrecision(t *testing.T) {
	h := results.NewHistogram()
	_ = h.RecordValue(10 * us)
	if got := results.Summarize(h).P50; got < 9.99 || got > 10.01 {
		t.Errorf("10µs reads back as %vµs", got)
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
