package results_test

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

var labels = results.Labels{
	Owners: []string{"alice", "bob", "carol"},
	Locks:  []string{"orders", "users"},
}

// sec is a successful operation holding lock in mode over [acq, rel),
// called 10 µs before it acquired and done 10 µs after it released.
func sec(owner, lock int32, mode results.Mode, acq, rel int64) results.Op {
	return results.Op{
		Start: acq - 10*us, Called: acq - 10*us, Acquired: acq, Released: rel, Done: rel + 10*us,
		Owner: owner, Lock: lock, Mode: mode, Depth: 1,
	}
}

// secs converts run-relative nanoseconds to the seconds result files use.
func secs(ns int64) float64 { return float64(ns) / float64(time.Second) }

func holder(owner string, mode results.Mode, acq, rel int64) results.Holder {
	return results.Holder{Owner: owner, Mode: mode.String(), Acquired: secs(acq), Released: secs(rel)}
}

func TestCheckSafety(t *testing.T) {
	const (
		alice, bob, carol = 0, 1, 2
		orders, users     = 0, 1
	)
	X, R, W := results.Exclusive, results.Read, results.Write
	lost := sec(bob, orders, X, 2*ms, 4*ms)
	lost.Flags = results.Lost
	timedOut := sec(bob, orders, X, 2*ms, 4*ms)
	timedOut.Acquired = 0
	timedOut.Err = results.ErrTimeout
	// A held section whose unlock failed: the holder still believed it
	// held the lock, so the section is checked like any other.
	releaseFailed := sec(bob, orders, X, 2*ms, 4*ms)
	releaseFailed.Err = results.ErrConn
	releaseFailed.Flags = results.ReleaseFailed
	warm := sec(bob, orders, X, 2*ms, 4*ms)
	warm.Flags = results.Warmup

	tests := []struct {
		name           string
		ops            []results.Op
		wantSections   int64
		wantViolations int64
		wantMaxUs      float64
		wantExamples   []results.Violation
	}{
		{
			name:           "exclusive sections overlap",
			ops:            []results.Op{sec(alice, orders, X, 1*ms, 3*ms), sec(bob, orders, X, 2*ms, 4*ms)},
			wantSections:   2,
			wantViolations: 1,
			wantMaxUs:      1000,
			wantExamples: []results.Violation{{
				Lock:         "orders",
				First:        holder("alice", X, 1*ms, 3*ms),
				Second:       holder("bob", X, 2*ms, 4*ms),
				OverlapStart: secs(2 * ms), OverlapEnd: secs(3 * ms), OverlapUs: 1000,
			}},
		},
		{
			name: "input order does not matter",
			// Same as above, given latest first, on the second lock.
			ops:            []results.Op{sec(bob, users, X, 2*ms, 4*ms), sec(alice, users, X, 1*ms, 3*ms)},
			wantSections:   2,
			wantViolations: 1,
			wantMaxUs:      1000,
			wantExamples: []results.Violation{{
				Lock:         "users",
				First:        holder("alice", X, 1*ms, 3*ms),
				Second:       holder("bob", X, 2*ms, 4*ms),
				OverlapStart: secs(2 * ms), OverlapEnd: secs(3 * ms), OverlapUs: 1000,
			}},
		},
		{
			name:           "section nested inside another",
			ops:            []results.Op{sec(alice, orders, X, 1*ms, 10*ms), sec(carol, orders, X, 2*ms, 2*ms+500*us)},
			wantSections:   2,
			wantViolations: 1,
			wantMaxUs:      500,
			wantExamples: []results.Violation{{
				Lock:         "orders",
				First:        holder("alice", X, 1*ms, 10*ms),
				Second:       holder("carol", X, 2*ms, 2*ms+500*us),
				OverlapStart: secs(2 * ms), OverlapEnd: secs(2*ms + 500*us), OverlapUs: 500,
			}},
		},
		{
			name:           "lost holder is marked",
			ops:            []results.Op{sec(alice, orders, X, 1*ms, 3*ms), lost},
			wantSections:   2,
			wantViolations: 1,
			wantMaxUs:      1000,
			wantExamples: []results.Violation{{
				Lock:         "orders",
				First:        holder("alice", X, 1*ms, 3*ms),
				Second:       results.Holder{Owner: "bob", Mode: "exclusive", Acquired: secs(2 * ms), Released: secs(4 * ms), Lost: true},
				OverlapStart: secs(2 * ms), OverlapEnd: secs(3 * ms), OverlapUs: 1000,
			}},
		},
		{
			name:         "read and read overlap is fine",
			ops:          []results.Op{sec(alice, orders, R, 1*ms, 3*ms), sec(bob, orders, R, 2*ms, 4*ms)},
			wantSections: 2,
		},
		{
			name:           "read then write overlap",
			ops:            []results.Op{sec(alice, orders, R, 1*ms, 3*ms), sec(bob, orders, W, 2*ms, 4*ms)},
			wantSections:   2,
			wantViolations: 1,
			wantMaxUs:      1000,
			wantExamples: []results.Violation{{
				Lock:         "orders",
				First:        holder("alice", R, 1*ms, 3*ms),
				Second:       holder("bob", W, 2*ms, 4*ms),
				OverlapStart: secs(2 * ms), OverlapEnd: secs(3 * ms), OverlapUs: 1000,
			}},
		},
		{
			name:           "write then read overlap",
			ops:            []results.Op{sec(alice, orders, W, 1*ms, 3*ms), sec(bob, orders, R, 2*ms, 4*ms)},
			wantSections:   2,
			wantViolations: 1,
			wantMaxUs:      1000,
			wantExamples: []results.Violation{{
				Lock:         "orders",
				First:        holder("alice", W, 1*ms, 3*ms),
				Second:       holder("bob", R, 2*ms, 4*ms),
				OverlapStart: secs(2 * ms), OverlapEnd: secs(3 * ms), OverlapUs: 1000,
			}},
		},
		{
			name:           "write and write overlap",
			ops:            []results.Op{sec(alice, orders, W, 1*ms, 3*ms), sec(bob, orders, W, 2*ms, 4*ms)},
			wantSections:   2,
			wantViolations: 1,
			wantMaxUs:      1000,
			wantExamples: []results.Violation{{
				Lock:         "orders",
				First:        holder("alice", W, 1*ms, 3*ms),
				Second:       holder("bob", W, 2*ms, 4*ms),
				OverlapStart: secs(2 * ms), OverlapEnd: secs(3 * ms), OverlapUs: 1000,
			}},
		},
		{
			name:         "same owner overlap is not a violation",
			ops:          []results.Op{sec(alice, orders, X, 1*ms, 3*ms), sec(alice, orders, X, 2*ms, 4*ms)},
			wantSections: 2,
		},
		{
			name:         "end touching start is not an overlap",
			ops:          []results.Op{sec(alice, orders, X, 1*ms, 2*ms), sec(bob, orders, X, 2*ms, 3*ms), sec(carol, orders, X, 3*ms, 4*ms)},
			wantSections: 3,
		},
		{
			name:         "different locks do not conflict",
			ops:          []results.Op{sec(alice, orders, X, 1*ms, 3*ms), sec(bob, users, X, 2*ms, 4*ms)},
			wantSections: 2,
		},
		{
			name:         "failed acquisition (Acquired 0) is ignored",
			ops:          []results.Op{sec(alice, orders, X, 1*ms, 3*ms), timedOut},
			wantSections: 1,
		},
		{
			name:           "a section whose unlock failed is still checked",
			ops:            []results.Op{sec(alice, orders, X, 1*ms, 3*ms), releaseFailed},
			wantSections:   2,
			wantViolations: 1,
			wantMaxUs:      1000,
			wantExamples: []results.Violation{{
				Lock:         "orders",
				First:        holder("alice", X, 1*ms, 3*ms),
				Second:       holder("bob", X, 2*ms, 4*ms),
				OverlapStart: secs(2 * ms), OverlapEnd: secs(3 * ms), OverlapUs: 1000,
			}},
		},
		{
			name:           "warmup sections are checked",
			ops:            []results.Op{sec(alice, orders, X, 1*ms, 3*ms), warm},
			wantSections:   2,
			wantViolations: 1,
			wantMaxUs:      1000,
			wantExamples: []results.Violation{{
				Lock:         "orders",
				First:        holder("alice", X, 1*ms, 3*ms),
				Second:       holder("bob", X, 2*ms, 4*ms),
				OverlapStart: secs(2 * ms), OverlapEnd: secs(3 * ms), OverlapUs: 1000,
			}},
		},
		{
			name: "only the still-held section conflicts",
			// alice ended before carol began; bob and carol overlap.
			ops: []results.Op{
				sec(alice, orders, X, 1*ms, 2*ms),
				sec(bob, orders, X, 3*ms, 5*ms),
				sec(carol, orders, X, 4*ms, 6*ms),
			},
			wantSections:   3,
			wantViolations: 1,
			wantMaxUs:      1000,
			wantExamples: []results.Violation{{
				Lock:         "orders",
				First:        holder("bob", X, 3*ms, 5*ms),
				Second:       holder("carol", X, 4*ms, 6*ms),
				OverlapStart: secs(4 * ms), OverlapEnd: secs(5 * ms), OverlapUs: 1000,
			}},
		},
		{
			name:         "unnamed lock and owner get placeholders",
			ops:          []results.Op{sec(7, 9, X, 1*ms, 3*ms), sec(8, 9, X, 2*ms, 4*ms)},
			wantSections: 2, wantViolations: 1, wantMaxUs: 1000,
			wantExamples: []results.Violation{{
				Lock:         "lock#9",
				First:        holder("owner#7", X, 1*ms, 3*ms),
				Second:       holder("owner#8", X, 2*ms, 4*ms),
				OverlapStart: secs(2 * ms), OverlapEnd: secs(3 * ms), OverlapUs: 1000,
			}},
		},
		{name: "no operations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := results.CheckSafety(tt.ops, labels, 20)
			if s.Sections != tt.wantSections {
				t.Errorf("Sections = %d, want %d", s.Sections, tt.wantSections)
			}
			if s.Violations != tt.wantViolations {
				t.Errorf("Violations = %d, want %d", s.Violations, tt.wantViolations)
			}
			if s.OK() != (tt.wantViolations == 0 && tt.wantSections > 0) {
				t.Errorf("OK() = %v with %d violations in %d sections", s.OK(), s.Violations, s.Sections)
			}
			if tt.wantSections == 0 && s.Verdict() != results.SafetyNoData {
				t.Errorf("Verdict() = %q with no section, want %q", s.Verdict(), results.SafetyNoData)
			}
			if s.MaxOverlapUs != tt.wantMaxUs {
				t.Errorf("MaxOverlapUs = %v, want %v", s.MaxOverlapUs, tt.wantMaxUs)
			}
			if !reflect.DeepEqual(s.Examples, tt.wantExamples) {
				t.Errorf("Examples =\n%+v\nwant\n%+v", s.Examples, tt.wantExamples)
			}
			if s.Incomplete != "" {
				t.Errorf("Incomplete = %q, want empty", s.Incomplete)
			}
		})
	}
}

func TestCheckSafetyAllPairsOverlap(t *testing.T) {
	for _, n := range []int{2, 3, 6, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			// Owner i holds [1 ms + i µs, 10 ms + i µs): every pair overlaps.
			var ops []results.Op
			for i := range n {
				ops = append(ops, sec(int32(i), 0, results.Exclusive, 1*ms+int64(i)*us, 10*ms+int64(i)*us))
			}
			const examples = 4
			s := results.CheckSafety(ops, labels, examples)
			if want := int64(n * (n - 1) / 2); s.Violations != want {
				t.Errorf("Violations = %d, want n(n-1)/2 = %d", s.Violations, want)
			}
			if want := min(examples, n*(n-1)/2); len(s.Examples) != want {
				t.Errorf("len(Examples) = %d, want %d", len(s.Examples), want)
			}
			// Largest overlap: neighbours, 9 ms - 1 µs.
			if s.MaxOverlapUs != 8999 {
				t.Errorf("MaxOverlapUs = %v, want 8999", s.MaxOverlapUs)
			}
			if !slices.IsSortedFunc(s.Examples, func(a, b results.Violation) int {
				return cmp.Compare(a.OverlapStart, b.OverlapStart)
			}) {
				t.Errorf("Examples not in time order: %+v", s.Examples)
			}
			for _, v := range s.Examples {
				if v.First.Owner == v.Second.Owner {
					t.Errorf("example pairs an owner with itself: %+v", v)
				}
				if v.OverlapEnd <= v.OverlapStart || v.OverlapUs <= 0 {
					t.Errorf("empty overlap window in %+v", v)
				}
			}
		})
	}
}

func TestCheckSafetyExamplesZeroStillCounts(t *testing.T) {
	ops := []results.Op{
		sec(0, 0, results.Exclusive, 1*ms, 3*ms),
		sec(1, 0, results.Exclusive, 2*ms, 4*ms),
	}
	s := results.CheckSafety(ops, labels, 0)
	if s.Violations != 1 || len(s.Examples) != 0 {
		t.Errorf("examples=0: Violations %d (want 1), %d examples (want 0)", s.Violations, len(s.Examples))
	}
}

func TestCheckSafetyReadersAndOneWriter(t *testing.T) {
	// n readers all overlapping, one writer overlapping all of them: only
	// the writer's pairs are violations.
	const n = 5
	var ops []results.Op
	for i := range n {
		ops = append(ops, sec(int32(i), 0, results.Read, 1*ms+int64(i)*us, 5*ms))
	}
	ops = append(ops, sec(n, 0, results.Write, 2*ms, 3*ms))
	s := results.CheckSafety(ops, labels, 100)
	if s.Violations != n {
		t.Errorf("Violations = %d, want %d", s.Violations, n)
	}
	for _, v := range s.Examples {
		if v.First.Mode != "read" || v.Second.Mode != "write" {
			t.Errorf("unexpected pair %s/%s", v.First.Mode, v.Second.Mode)
		}
	}
}

func TestCheckSafetyHealthySerializedHistory(t *testing.T) {
	// 3 owners take turns on 2 locks, each section ending exactly when the
	// next begins; readers share on the second lock between writers.
	var ops []results.Op
	for k := range int64(1000) {
		ops = append(ops, sec(int32(k%3), 0, results.Exclusive, 1*ms+k*20*us, 1*ms+(k+1)*20*us))
	}
	for k := range int64(100) {
		t0 := 1*ms + k*100*us
		ops = append(ops,
			sec(int32(k%3), 1, results.Write, t0, t0+40*us),
			sec(0, 1, results.Read, t0+40*us, t0+100*us),
			sec(1, 1, results.Read, t0+50*us, t0+90*us),
			sec(2, 1, results.Read, t0+60*us, t0+100*us),
		)
	}
	s := results.CheckSafety(ops, labels, 20)
	if s.Sections != 1400 {
		t.Errorf("Sections = %d, want 1400", s.Sections)
	}
	if !s.OK() || s.Violations != 0 || len(s.Examples) != 0 || s.MaxOverlapUs != 0 {
		t.Errorf("healthy history reported %d violations: %+v", s.Violations, s.Examples)
	}
}

// fifoOp is a successful exclusive acquisition of lock by owner that was
// called at called and held [acq, acq+1µs).
func fifoOp(owner, lock int32, called, acq int64) results.Op {
	return results.Op{Start: called, Called: called, Acquired: acq, Released: acq + us, Done: acq + 2*us, Owner: owner, Lock: lock, Mode: results.Exclusive}
}

// overtake is an exclusive hold of "orders" by later, acquired at lAcq,
// that overtook earlier's, acquired at eAcq, each held 1 µs.
func overtake(earlier string, eAcq int64, later string, lAcq, called, behind int64) results.Overtake {
	return results.Overtake{
		Lock:    "orders",
		Earlier: holder(earlier, results.Exclusive, eAcq, eAcq+us),
		Later:   holder(later, results.Exclusive, lAcq, lAcq+us),
		Called:  secs(called), Behind: secs(behind),
	}
}

func TestCheckFIFO(t *testing.T) {
	const slack = time.Millisecond
	failed := fifoOp(0, 0, 1*ms, 0)
	failed.Err = results.ErrTimeout
	tests := []struct {
		name           string
		ops            []results.Op
		wantChecked    int64
		wantViolations int64
		wantOvertaken  int64
		wantExamples   []results.Overtake
	}{
		{
			name:        "strict FIFO order",
			ops:         []results.Op{fifoOp(0, 0, 1*ms, 10*ms), fifoOp(1, 0, 3*ms, 20*ms), fifoOp(2, 0, 5*ms, 30*ms)},
			wantChecked: 3,
		},
		{
			name:           "later caller overtakes by more than slack",
			ops:            []results.Op{fifoOp(0, 0, 1*ms, 20*ms), fifoOp(1, 0, 5*ms, 10*ms)},
			wantChecked:    2,
			wantViolations: 1,
			wantOvertaken:  1,
			wantExamples:   []results.Overtake{overtake("alice", 20*ms, "bob", 10*ms, 1*ms, 5*ms)},
		},
		{
			name:        "overtake within slack is unknown order",
			ops:         []results.Op{fifoOp(0, 0, 1*ms, 20*ms), fifoOp(1, 0, 1*ms+500*us, 10*ms)},
			wantChecked: 2,
		},
		{
			name:        "gap exactly the slack does not count",
			ops:         []results.Op{fifoOp(0, 0, 1*ms, 20*ms), fifoOp(1, 0, 2*ms, 10*ms)},
			wantChecked: 2,
		},
		{
			name:           "gap one nanosecond over the slack counts",
			ops:            []results.Op{fifoOp(0, 0, 1*ms, 20*ms), fifoOp(1, 0, 2*ms+1, 10*ms)},
			wantChecked:    2,
			wantViolations: 1,
			wantOvertaken:  1,
			wantExamples:   []results.Overtake{overtake("alice", 20*ms, "bob", 10*ms, 1*ms, 2*ms+1)},
		},
		{
			name: "one overtake of two waiters counts once",
			ops: []results.Op{
				fifoOp(0, 0, 1*ms, 30*ms), fifoOp(1, 0, 2*ms, 40*ms), fifoOp(2, 0, 10*ms, 20*ms),
			},
			wantChecked:    3,
			wantViolations: 1,
			wantOvertaken:  2,
			wantExamples:   []results.Overtake{overtake("alice", 30*ms, "carol", 20*ms, 1*ms, 10*ms)},
		},
		{
			// A caller held back between its call time and its send is
			// passed by everyone who called after it: many overtakes, one
			// waiter overtaken.
			name: "one held-back caller passed by two",
			ops: []results.Op{
				fifoOp(0, 0, 1*ms, 30*ms), fifoOp(1, 0, 5*ms, 10*ms), fifoOp(2, 0, 6*ms, 20*ms),
			},
			wantChecked:    3,
			wantViolations: 2,
			wantOvertaken:  1,
			wantExamples:   []results.Overtake{overtake("alice", 30*ms, "bob", 10*ms, 1*ms, 5*ms), overtake("alice", 30*ms, "carol", 20*ms, 1*ms, 6*ms)},
		},
		{
			name:        "failed earlier caller is not overtaken",
			ops:         []results.Op{failed, fifoOp(1, 0, 5*ms, 10*ms)},
			wantChecked: 1,
		},
		{
			name:        "different locks have separate queues",
			ops:         []results.Op{fifoOp(0, 0, 1*ms, 20*ms), fifoOp(1, 1, 5*ms, 10*ms)},
			wantChecked: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := results.CheckFIFO(tt.ops, labels, slack, 10)
			if f.Checked != tt.wantChecked {
				t.Errorf("Checked = %d, want %d", f.Checked, tt.wantChecked)
			}
			if f.Violations != tt.wantViolations || f.Overtaken != tt.wantOvertaken {
				t.Errorf("Violations, Overtaken = %d, %d; want %d, %d", f.Violations, f.Overtaken, tt.wantViolations, tt.wantOvertaken)
			}
			if f.SlackUs != 1000 {
				t.Errorf("SlackUs = %v, want 1000", f.SlackUs)
			}
			if !reflect.DeepEqual(f.Examples, tt.wantExamples) {
				t.Errorf("Examples =\n%+v\nwant\n%+v", f.Examples, tt.wantExamples)
			}
		})
	}
}

func TestCheckFIFOCountsAllExamplesCapped(t *testing.T) {
	// Each round, a late caller (called 5 ms after the round's waiter)
	// acquires before it: 10 overtakes on one lock.
	var ops []results.Op
	for k := range int64(10) {
		t0 := k * 100 * ms
		ops = append(ops, fifoOp(0, 0, t0+1*ms, t0+20*ms), fifoOp(1, 0, t0+6*ms, t0+10*ms))
	}
	f := results.CheckFIFO(ops, labels, time.Millisecond, 3)
	if f.Violations != 10 || f.Overtaken != 10 || f.Checked != 20 {
		t.Errorf("Violations %d Overtaken %d Checked %d, want 10, 10 and 20", f.Violations, f.Overtaken, f.Checked)
	}
	if len(f.Examples) != 3 {
		t.Fatalf("len(Examples) = %d, want 3", len(f.Examples))
	}
	for i, e := range f.Examples {
		if e.Later.Owner != "bob" || e.Earlier.Owner != "alice" || e.Behind <= e.Called {
			t.Errorf("example %d: %+v", i, e)
		}
		if i > 0 && f.Examples[i-1].Later.Acquired > e.Later.Acquired {
			t.Errorf("examples not in acquisition order")
		}
	}
}

// latencies summarizes the expected values as a histogram would.
func latencies(ns ...int64) results.Latency {
	if len(ns) == 0 {
		return results.Latency{}
	}
	var s results.Set
	for _, v := range ns {
		s.Record(results.Wait, v)
	}
	return results.Summarize(s.Get(results.Wait))
}

func TestHandoffs(t *testing.T) {
	X, R, W := results.Exclusive, results.Read, results.Write
	// op: owner, lock, mode, called, acquired, released.
	op := func(owner, lock int32, mode results.Mode, called, acq, rel int64) results.Op {
		return results.Op{Start: called, Called: called, Acquired: acq, Released: rel, Done: rel + us, Owner: owner, Lock: lock, Mode: mode}
	}
	warm := op(1, 0, X, 12*ms, 21*ms, 25*ms)
	warm.Flags = results.Warmup
	failed := op(1, 0, X, 12*ms, 0, 0)
	failed.Err = results.ErrTimeout

	tests := []struct {
		name         string
		ops          []results.Op
		measureFrom  int64
		wantWait     []int64
		wantHandoffs []int64
	}{
		{
			name:         "waiter called before the release",
			ops:          []results.Op{op(0, 0, X, 9*ms, 10*ms, 20*ms), op(1, 0, X, 12*ms, 21*ms, 25*ms)},
			wantWait:     []int64{9 * ms},
			wantHandoffs: []int64{1 * ms},
		},
		{
			name: "acquirer that called after the release did not wait",
			ops:  []results.Op{op(0, 0, X, 9*ms, 10*ms, 20*ms), op(1, 0, X, 25*ms, 26*ms, 30*ms)},
		},
		{
			name: "called at the very moment of the release did not wait",
			ops:  []results.Op{op(0, 0, X, 9*ms, 10*ms, 20*ms), op(1, 0, X, 20*ms, 21*ms, 25*ms)},
		},
		{
			name:         "called one nanosecond before the release waited",
			ops:          []results.Op{op(0, 0, X, 9*ms, 10*ms, 20*ms), op(1, 0, X, 20*ms-1, 21*ms, 25*ms)},
			wantWait:     []int64{1*ms + 1},
			wantHandoffs: []int64{1 * ms},
		},
		{
			name: "reader after reader is not a handoff",
			ops:  []results.Op{op(0, 0, R, 9*ms, 10*ms, 20*ms), op(1, 0, R, 15*ms, 21*ms, 25*ms)},
		},
		{
			name:         "reader after writer is a handoff",
			ops:          []results.Op{op(0, 0, W, 9*ms, 10*ms, 20*ms), op(1, 0, R, 15*ms, 21*ms, 25*ms)},
			wantWait:     []int64{6 * ms},
			wantHandoffs: []int64{1 * ms},
		},
		{
			name:         "writer after reader is a handoff",
			ops:          []results.Op{op(0, 0, R, 9*ms, 10*ms, 20*ms), op(1, 0, W, 15*ms, 21*ms, 25*ms)},
			wantWait:     []int64{6 * ms},
			wantHandoffs: []int64{1 * ms},
		},
		{
			name: "reader waits for the writer, not the later reader",
			// W releases at 20; reader R1 releases at 22; R2 acquires at 23
			// having called at 15: its handoff counts from W's release.
			ops: []results.Op{
				op(0, 0, W, 9*ms, 10*ms, 20*ms),
				op(1, 0, R, 21*ms, 21*ms, 22*ms),
				op(2, 0, R, 15*ms, 23*ms, 30*ms),
			},
			wantWait:     []int64{8 * ms},
			wantHandoffs: []int64{3 * ms},
		},
		{
			name: "the latest release before the acquisition counts",
			// A [10,20]; B called 15, acquired 20.5, released 22; C called
			// 16, acquired 23: C's handoff is from B's release.
			ops: []results.Op{
				op(0, 0, X, 9*ms, 10*ms, 20*ms),
				op(1, 0, X, 15*ms, 20*ms+500*us, 22*ms),
				op(2, 0, X, 16*ms, 23*ms, 30*ms),
			},
			wantWait:     []int64{5*ms + 500*us, 7 * ms},
			wantHandoffs: []int64{500 * us, 1 * ms},
		},
		{
			name: "a poller is charged from every release it waited through",
			// B called at 5 and polls; A takes the lock at 10, 12 and 14
			// (never waiting: it calls after each release) and releases at
			// 11, 13 and 15; B's poll finds it free at 20. Each release left
			// B waiting: handoffs 9, 7 and 5 ms. B's wait counts once, from
			// the latest release.
			ops: []results.Op{
				op(0, 0, X, 10*ms, 10*ms, 11*ms),
				op(0, 0, X, 12*ms, 12*ms, 13*ms),
				op(0, 0, X, 14*ms, 14*ms, 15*ms),
				op(1, 0, X, 5*ms, 20*ms, 21*ms),
			},
			wantWait:     []int64{15 * ms},
			wantHandoffs: []int64{5 * ms, 7 * ms, 9 * ms},
		},
		{
			name: "the first waiter to acquire ends the handoff",
			// A releases at 20 with B (acquires 22) and C (acquires 21) waiting.
			ops: []results.Op{
				op(0, 0, X, 9*ms, 10*ms, 20*ms),
				op(1, 0, X, 12*ms, 22*ms, 25*ms),
				op(2, 0, X, 13*ms, 21*ms, 21*ms+500*us),
			},
			wantWait:     []int64{8 * ms, 10 * ms},
			wantHandoffs: []int64{1 * ms, 500 * us},
		},
		{
			name: "a lock still held by a reader is not free",
			// W waits from 12; readers [10,20] and [15,25]: free only at 25.
			ops: []results.Op{
				op(0, 0, R, 9*ms, 10*ms, 20*ms),
				op(1, 0, R, 15*ms, 15*ms, 25*ms),
				op(2, 0, W, 12*ms, 26*ms, 30*ms),
			},
			wantWait:     []int64{14 * ms},
			wantHandoffs: []int64{1 * ms},
		},
		{
			name: "a waiter acquiring at the instant of the release waited no time",
			ops: []results.Op{
				op(0, 0, X, 9*ms, 10*ms, 20*ms),
				op(1, 0, X, 12*ms, 20*ms, 25*ms),
			},
			wantWait:     []int64{8 * ms},
			wantHandoffs: []int64{0},
		},
		{
			name: "a zero-length hold is not a waiter for its own release",
			// Z acquired and released at 20, the instant A released: at that
			// moment Z counts as a holder, not a waiter, and the two releases
			// are one moment. B, waiting since 16, acquires at 21: one
			// handoff of 1 ms.
			ops: []results.Op{
				op(0, 0, X, 9*ms, 10*ms, 20*ms),
				op(2, 0, X, 15*ms, 20*ms, 20*ms),
				op(1, 0, X, 16*ms, 21*ms, 25*ms),
			},
			wantWait:     []int64{5 * ms, 5 * ms},
			wantHandoffs: []int64{1 * ms},
		},
		{
			name: "releases on another lock are ignored",
			ops:  []results.Op{op(0, 0, X, 9*ms, 10*ms, 20*ms), op(1, 1, X, 12*ms, 21*ms, 25*ms)},
		},
		{
			name:        "acquisitions before measureFrom are excluded",
			ops:         []results.Op{op(0, 0, X, 9*ms, 10*ms, 20*ms), op(1, 0, X, 12*ms, 21*ms, 25*ms)},
			measureFrom: 22 * ms,
		},
		{
			name:         "called before measureFrom but acquired after counts",
			ops:          []results.Op{op(0, 0, X, 9*ms, 10*ms, 20*ms), op(1, 0, X, 12*ms, 21*ms, 25*ms)},
			measureFrom:  15 * ms,
			wantWait:     []int64{9 * ms},
			wantHandoffs: []int64{1 * ms},
		},
		{
			name: "warmup-flagged acquisitions are excluded",
			ops:  []results.Op{op(0, 0, X, 9*ms, 10*ms, 20*ms), warm},
		},
		{
			name: "failed acquisitions are excluded",
			ops:  []results.Op{op(0, 0, X, 9*ms, 10*ms, 20*ms), failed},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s results.Set
			results.Handoffs(tt.ops, tt.measureFrom, &s)
			if got, want := results.Summarize(s.Get(results.Wait)), latencies(tt.wantWait...); got != want {
				t.Errorf("wait = %+v\nwant %+v", got, want)
			}
			if got, want := results.Summarize(s.Get(results.Handoff)), latencies(tt.wantHandoffs...); got != want {
				t.Errorf("handoff = %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestOwnerCounts(t *testing.T) {
	warm := sec(0, 0, results.Exclusive, 1*ms, 2*ms)
	warm.Flags = results.Warmup
	failed := sec(1, 0, results.Exclusive, 1*ms, 2*ms)
	failed.Acquired, failed.Err = 0, results.ErrTimeout
	ops := []results.Op{
		sec(0, 0, results.Exclusive, 1*ms, 2*ms),
		sec(0, 1, results.Read, 1*ms, 2*ms),
		sec(2, 0, results.Write, 3*ms, 4*ms),
		warm, failed,
		sec(5, 0, results.Exclusive, 5*ms, 6*ms),  // owner beyond the count
		sec(-1, 0, results.Exclusive, 5*ms, 6*ms), // negative owner
	}
	if got, want := results.OwnerCounts(ops, 3), []int64{2, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("OwnerCounts = %v, want %v", got, want)
	}
}

func TestComputeFairness(t *testing.T) {
	owners := []string{"a", "b", "c", "d", "e"}
	tests := []struct {
		name   string
		counts []int64
		want   results.Fairness
	}{
		{
			name:   "equal",
			counts: []int64{7, 7, 7, 7},
			want:   results.Fairness{Owners: 4, Min: 7, Max: 7, Jain: 1, MinMax: 1, CV: 0},
		},
		{
			name:   "one of four has everything",
			counts: []int64{0, 0, 12, 0},
			// Jain 1/n; CV = sqrt(27)/3 = sqrt(3).
			want: results.Fairness{Owners: 4, Min: 0, Max: 12, Jain: 0.25, MinMax: 0, CV: 1.7321,
				Starved: 3, StarvedOwners: []string{"a", "b", "d"}},
		},
		{
			name:   "one of three has everything",
			counts: []int64{5, 0, 0},
			want: results.Fairness{Owners: 3, Min: 0, Max: 5, Jain: 0.3333, MinMax: 0, CV: 1.4142,
				Starved: 2, StarvedOwners: []string{"b", "c"}},
		},
		{
			name:   "nobody acquired",
			counts: []int64{0, 0},
			want:   results.Fairness{Owners: 2, Starved: 2, StarvedOwners: []string{"a", "b"}},
		},
		{
			name:   "no owners",
			counts: nil,
			want:   results.Fairness{},
		},
		{
			name:   "single owner",
			counts: []int64{3},
			want:   results.Fairness{Owners: 1, Min: 3, Max: 3, Jain: 1, MinMax: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := results.ComputeFairness(tt.counts, owners)
			if len(tt.counts) > 0 {
				tt.want.PerOwner = map[string]int64{}
				for i, c := range tt.counts {
					tt.want.PerOwner[owners[i]] = c
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ComputeFairness(%v) =\n%+v\nwant\n%+v", tt.counts, got, tt.want)
			}
		})
	}
}

func TestComputeFairnessMatchesFormulas(t *testing.T) {
	for _, counts := range [][]int64{
		{1, 2, 3, 4, 10},
		{100, 90, 80, 3},
		{1000, 1},
		{5, 5, 5, 6},
	} {
		t.Run(fmt.Sprint(counts), func(t *testing.T) {
			n := float64(len(counts))
			var sum, sumSq float64
			for _, c := range counts {
				sum += float64(c)
				sumSq += float64(c) * float64(c)
			}
			jain := sum * sum / (n * sumSq)
			mean := sum / n
			var dev float64 // two-pass population variance
			for _, c := range counts {
				dev += (float64(c) - mean) * (float64(c) - mean)
			}
			cv := math.Sqrt(dev/n) / mean
			minC, maxC := slices.Min(counts), slices.Max(counts)

			f := results.ComputeFairness(counts, nil)
			if math.Abs(f.Jain-jain) > 0.5e-4 {
				t.Errorf("Jain = %v, want %v", f.Jain, jain)
			}
			if math.Abs(f.CV-cv) > 0.5e-4 {
				t.Errorf("CV = %v, want %v", f.CV, cv)
			}
			if want := float64(minC) / float64(maxC); math.Abs(f.MinMax-want) > 0.5e-4 {
				t.Errorf("MinMax = %v, want %v", f.MinMax, want)
			}
			if f.Min != minC || f.Max != maxC || f.Owners != len(counts) || f.Starved != 0 {
				t.Errorf("Min/Max/Owners/Starved = %d/%d/%d/%d", f.Min, f.Max, f.Owners, f.Starved)
			}
			if f.Jain < 1/n || f.Jain > 1 {
				t.Errorf("Jain %v outside [1/n, 1]", f.Jain)
			}
		})
	}
}

func TestComputeFairnessStarvedListCapped(t *testing.T) {
	counts := make([]int64, 13)
	counts[12] = 4
	f := results.ComputeFairness(counts, []string{"o0", "o1"})
	if f.Starved != 12 {
		t.Errorf("Starved = %d, want 12", f.Starved)
	}
	want := []string{"o0", "o1", "owner#2", "owner#3", "owner#4", "owner#5", "owner#6", "owner#7", "owner#8", "owner#9"}
	if !slices.Equal(f.StarvedOwners, want) {
		t.Errorf("StarvedOwners = %v, want %v", f.StarvedOwners, want)
	}
	if f.Jain != 0.0769 { // 1/13
		t.Errorf("Jain = %v, want 0.0769", f.Jain)
	}
}

// TestUnsafeWindowIsTheUnionOfOverlaps: three holders at once count the
// time two of them overlapped once, not once per pair.
func TestUnsafeWindowIsTheUnionOfOverlaps(t *testing.T) {
	const (
		alice, bob, carol = 0, 1, 2
		orders, users     = 0, 1
		X                 = results.Exclusive
	)
	ops := []results.Op{
		sec(alice, orders, X, 1*ms, 10*ms), // alice 1–10
		sec(bob, orders, X, 2*ms, 6*ms),    // bob 2–6: overlap 2–6
		sec(carol, orders, X, 4*ms, 12*ms), // carol 4–12: overlaps 4–10 (alice), 4–6 (bob)
		sec(alice, users, X, 1*ms, 2*ms),
		sec(bob, users, X, 1500*us, 3*ms), // 1.5–2 on another lock
	}
	s := results.CheckSafety(ops, labels, 20)
	if s.Violations != 4 {
		t.Fatalf("Violations = %d, want 4", s.Violations)
	}
	// orders: union of [2,6), [4,10), [4,6) = [2,10) = 8 ms; users 0.5 ms.
	if s.UnsafeUs != 8500 {
		t.Errorf("UnsafeUs = %v, want 8500", s.UnsafeUs)
	}
	if s.MaxOverlapUs != 6000 {
		t.Errorf("MaxOverlapUs = %v, want 6000", s.MaxOverlapUs)
	}
}

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

// TestFairnessCaveat: fairness says when it rests on part of the run
// (the record limit kept the rest out) or on too few acquisitions to
// tell unfairness from chance, and says nothing when it stands.
func TestFairnessCaveat(t *testing.T) {
	owners := func(n int) []string {
		var o []string
		for i := range n {
			o = append(o, fmt.Sprintf("o%d", i))
		}
		return o
	}
	even := func(n int, each int64) []int64 {
		c := make([]int64, n)
		for i := range c {
			c[i] = each
		}
		return c
	}
	for _, tc := range []struct {
		name   string
		counts []int64
		total  int64
		want   []string // in the caveat; none: no caveat
	}{
		{"enough, all counted", even(32, results.MinFairnessPerOwner), 320, nil},
		{"too few", append([]int64{5}, even(31, 0)...), 5, []string{"5 acquisitions for 32 owners: too few to tell unfairness from chance, which takes 10 per owner (320)"}},
		{"part of the run", append([]int64{5}, even(31, 0)...), 2043, []string{"rests on 5 of the run's 2,043 acquisitions (the record limit, --max-ops, kept the rest out)", "too few"}},
		{"part, but enough", even(4, 100), 1000, []string{"rests on 400 of the run's 1,000 acquisitions"}},
		{"one owner", []int64{3}, 3, nil},
	} {
		f := results.ComputeFairness(tc.counts, owners(len(tc.counts)))
		f.Judge(tc.total)
		if len(tc.want) == 0 && f.Caveat != "" {
			t.Errorf("%s: caveat %q, want none", tc.name, f.Caveat)
		}
		for _, w := range tc.want {
			if !strings.Contains(f.Caveat, w) {
				t.Errorf("%s: caveat %q lacks %q", tc.name, f.Caveat, w)
			}
		}
		if f.Total != max(tc.total, f.Counted) {
			t.Errorf("%s: counted %d of %d, want of %d", tc.name, f.Counted, f.Total, tc.total)
		}
	}

	// End to end: a collector whose record limit keeps 5 of 40 measured
	// acquisitions says so in the result and the summary.
	base := time.Unix(1_700_000_000, 0)
	c := results.NewCollector(base, 1, 5)
	for k := range int64(40) {
		at := (k + 1) * int64(time.Millisecond)
		c.Shard(0).Record(results.Op{Start: at, Called: at, Acquired: at + 100, Released: at + 200, Done: at + 300, Owner: int32(k % 4), Mode: results.Exclusive, Depth: 1}, nil, nil)
	}
	r := c.Finish(base.Add(time.Second), false, 1, results.Analysis{Labels: results.Labels{Owners: owners(4), Locks: []string{"l"}}})
	if r.Fairness.Counted != 5 || r.Fairness.Total != 40 || !strings.Contains(r.Fairness.Caveat, "rests on 5 of the run's 40") {
		t.Errorf("fairness %+v: want it to rest on 5 of 40, and say so", r.Fairness)
	}
	base2 := *r
	base2.Fairness.Caveat = ""
	if cmp := results.Compare(&base2, r, 10); !slices.ContainsFunc(cmp.Notes, func(n string) bool { return strings.HasPrefix(n, "NEW's fairness rests on 5") }) {
		t.Errorf("compare notes %q lack NEW's fairness caveat", cmp.Notes)
	}
}
