package results_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/results"
)

// TestWaitStrays: the median and the 99th percentile each have their
// bound, widened by a share of what was asked.
func TestWaitStrays(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    *results.WaitError
		want bool
	}{
		{"none", nil, false},
		{"empty", &results.WaitError{}, false},
		{"within", &results.WaitError{Latency: results.Latency{Count: 10, P50: 19, P99: 99}, AskedMean: 100}, false},
		{"p50 past", &results.WaitError{Latency: results.Latency{Count: 10, P50: 25, P99: 30}, AskedMean: 100}, true},
		{"p99 past", &results.WaitError{Latency: results.Latency{Count: 10, P50: 5, P99: 150}, AskedMean: 100}, true},
		{"long wait's share", &results.WaitError{Latency: results.Latency{Count: 10, P50: 900, P99: 1000}, AskedMean: 100_000}, false},
	} {
		if got := tc.e.Strays(); got != tc.want {
			t.Errorf("%s: Strays = %v, want %v", tc.name, got, tc.want)
		}
	}
	w := &results.Waits{Hold: &results.WaitError{Latency: results.Latency{Count: 1, P50: 1000, P99: 1000}, AskedMean: 200}}
	if got := w.Straying(); !slices.Equal(got, []string{"hold"}) {
		t.Errorf("Straying = %v, want [hold]", got)
	}
}

// TestWaitRecorder: each kind apart, recorders merge, and errors below
// zero (a wait that returned early) count as none.
func TestWaitRecorder(t *testing.T) {
	var a, b results.WaitRecorder
	a.Record(results.WaitHold, 200*time.Microsecond, 210*time.Microsecond)
	b.Record(results.WaitHold, 200*time.Microsecond, 230*time.Microsecond)
	b.Record(results.WaitStart, time.Millisecond, 900*time.Microsecond)
	a.Merge(&b)
	w := a.Waits()
	if w.Hold == nil || w.Hold.Count != 2 || w.Hold.AskedMean != 200 || w.Hold.Max < 29.5 || w.Hold.Max > 30.5 {
		t.Errorf("hold = %+v, want 2 waits of 200µs, the worst 30µs over", w.Hold)
	}
	if w.Start == nil || w.Start.Count != 1 || w.Start.Max != 0 {
		t.Errorf("start = %+v, want one wait, not late", w.Start)
	}
	if w.Think != nil {
		t.Errorf("think = %+v, want none", w.Think)
	}
}

// TestResultWaitsFile: waits round-trip through a result file, and a file
// written before they were measured reads with none.
func TestResultWaitsFile(t *testing.T) {
	r := finished(t)
	var rec results.WaitRecorder
	rec.Record(results.WaitHold, 100*time.Microsecond, 112*time.Microsecond)
	rec.Record(results.WaitThink, time.Millisecond, 1010*time.Microsecond)
	r.Waits = rec.Waits()
	r.Waits.SpinS, r.Waits.SpinShare, r.Waits.HoldNote = 0.5, 0.05, results.HoldInImpl
	path, err := results.WriteFiles(t.TempDir(), r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Waits == nil || *got.Waits.Hold != *r.Waits.Hold || *got.Waits.Think != *r.Waits.Think || got.Waits.Start != nil ||
		got.Waits.SpinS != r.Waits.SpinS || got.Waits.SpinShare != 0.05 || got.Waits.HoldNote != results.HoldInImpl {
		t.Errorf("read back %+v, wrote %+v", got.Waits, r.Waits)
	}

	old := finished(t)
	raw, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["waits"]; ok {
		t.Fatal(`a result without waits has a "waits" key`)
	}
	oldPath, err := results.WriteFiles(filepath.Join(t.TempDir(), "old"), old)
	if err != nil {
		t.Fatal(err)
	}
	got, err = results.ReadFile(oldPath)
	if err != nil {
		t.Fatalf("a result without waits: %v", err)
	}
	if got.Waits != nil {
		t.Errorf("a result without waits read back with %+v", got.Waits)
	}
}

// TestMergeWaits: per kind the machine whose p99 strays further, the spin
// added up, the CPU share dropped; a machine without waits adds nothing.
func TestMergeWaits(t *testing.T) {
	a, ha := collect(t, hostA)
	b, hb := collect(t, hostB)
	a.Waits = &results.Waits{Hold: &results.WaitError{Latency: results.Latency{Count: 5, P99: 40}}, Think: &results.WaitError{Latency: results.Latency{Count: 5, P99: 90}}, SpinS: 1, SpinShare: 0.1}
	b.Waits = &results.Waits{Hold: &results.WaitError{Latency: results.Latency{Count: 7, P99: 60}}, SpinS: 2, SpinShare: 0.2}
	m, err := results.Merge([]*results.Result{a, b}, []map[string]*hdr.Histogram{ha, hb})
	if err != nil {
		t.Fatal(err)
	}
	w := m.Waits
	if w == nil || w.Hold.Count != 7 || w.Think.Count != 5 || w.Start != nil || w.SpinS != 3 || w.SpinShare != 0 {
		t.Errorf("merged waits %+v, want beta's hold, alpha's think, 3s spun and no CPU share", w)
	}
	b.Waits = nil
	if m, err = results.Merge([]*results.Result{a, b}, []map[string]*hdr.Histogram{ha, hb}); err != nil {
		t.Fatal(err)
	}
	if w := m.Waits; w == nil || w.Hold.Count != 5 || w.SpinS != 1 {
		t.Errorf("merged with a machine without waits: %+v, want alpha's", w)
	}
}
