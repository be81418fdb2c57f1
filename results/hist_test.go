package results_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

const (
	us = int64(time.Microsecond)
	ms = int64(time.Millisecond)
)

// within reports whether got is within rel (a fraction) of want.
func within(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// oneToThousandMicros is a histogram holding 1 µs, 2 µs, …, 1000 µs.
func oneToThousandMicros(t *testing.T) results.Latency {
	t.Helper()
	h := results.NewHistogram()
	for v := int64(1); v <= 1000; v++ {
		if err := h.RecordValue(v * us); err != nil {
			t.Fatalf("RecordValue(%d µs): %v", v, err)
		}
	}
	return results.Summarize(h)
}

func TestSummarizePercentilesTakePercentNotFraction(t *testing.T) {
	l := oneToThousandMicros(t)
	if l.Count != 1000 {
		t.Fatalf("Count = %d, want 1000", l.Count)
	}
	// The histogram keeps 3 significant digits; the values read back are
	// the highest equivalent value of their bucket, so allow 0.1%.
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"P50", l.P50, 500},
		{"P90", l.P90, 900},
		{"P99", l.P99, 990},
		{"P99.9", l.P999, 999},
		{"Max", l.Max, 1000},
		{"Mean", l.Mean, 500.5},
	} {
		if !within(c.got, c.want, 0.001) {
			t.Errorf("%s = %v µs, want %v µs ±0.1%%", c.name, c.got, c.want)
		}
	}
	// Population stddev of 1..1000 is sqrt((1000²-1)/12) ≈ 288.67.
	if want := math.Sqrt((1000*1000 - 1) / 12.0); !within(l.StdDev, want, 0.005) {
		t.Errorf("StdDev = %v µs, want %v µs ±0.5%%", l.StdDev, want)
	}
	if l.Min > 1 || l.Min <= 0 {
		t.Errorf("Min = %v µs, want in (0, 1]", l.Min)
	}
	if !(l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Errorf("percentiles not monotonic: %+v", l)
	}
}

// TestValueAtQuantileFractionTrap documents the trap Summarize avoids:
// hdrhistogram-go's ValueAtQuantile takes a percentile in 0–100. Passing
// the fraction 0.99 asks for the 0.99th percentile, which is near the
// minimum, not the 99th percentile.
func TestValueAtQuantileFractionTrap(t *testing.T) {
	h := results.NewHistogram()
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v * us)
	}
	p99 := h.ValueAtQuantile(99)
	if !within(float64(p99), float64(990*us), 0.001) {
		t.Fatalf("ValueAtQuantile(99) = %d ns, want ≈ 990 µs", p99)
	}
	trap := h.ValueAtQuantile(0.99)
	// The 0.99th percentile of 1..1000 µs is the 10th smallest value: 10 µs
	// (plus bucket rounding). That is 1% of the range, i.e. roughly the minimum.
	if trap > 11*us {
		t.Errorf("ValueAtQuantile(0.99) = %d ns, want ≤ 11 µs (the 0.99th percentile)", trap)
	}
	if trap*50 > p99 {
		t.Errorf("ValueAtQuantile(0.99) = %d ns is not far below the real p99 %d ns", trap, p99)
	}
	// Summarize must report the real 99th percentile, not the trap.
	if l := results.Summarize(h); !within(l.P99, 990, 0.001) {
		t.Errorf("Summarize P99 = %v µs, want ≈ 990 µs (did it pass a fraction?)", l.P99)
	}
}

func TestSummarizeEmpty(t *testing.T) {
	if got := results.Summarize(nil); got != (results.Latency{}) {
		t.Errorf("Summarize(nil) = %+v, want zero", got)
	}
	if got := results.Summarize(results.NewHistogram()); got != (results.Latency{}) {
		t.Errorf("Summarize(empty) = %+v, want zero", got)
	}
}

func TestSetRecordClampsAndFloors(t *testing.T) {
	hour := int64(time.Hour)
	tests := []struct {
		name    string
		ns      int64
		wantMin int64 // histogram Min/Max bounds of the single recorded value
		wantMax int64
	}{
		// Zero's bucket spans [0, 511] ns: below the 1 µs floor.
		{"negative recorded as zero", -5 * us, 0, us - 1},
		{"zero", 0, 0, us - 1},
		{"one hour kept", hour, hour * 999 / 1000, hour * 1001 / 1000},
		{"just over one hour clamped", hour + 1, hour * 999 / 1000, hour * 1001 / 1000},
		{"two hours clamped to one", 2 * hour, hour * 999 / 1000, hour * 1001 / 1000},
		{"huge clamped to one hour", math.MaxInt64, hour * 999 / 1000, hour * 1001 / 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s results.Set
			if s.Get(results.Hold) != nil {
				t.Fatal("Get before Record should be nil")
			}
			s.Record(results.Hold, tt.ns)
			h := s.Get(results.Hold)
			if h == nil || h.TotalCount() != 1 {
				t.Fatalf("histogram after one Record: %v", h)
			}
			if h.Min() < tt.wantMin || h.Max() > tt.wantMax {
				t.Errorf("recorded range [%d, %d], want within [%d, %d]", h.Min(), h.Max(), tt.wantMin, tt.wantMax)
			}
			if s.Get(results.Wait) != nil {
				t.Error("a metric never recorded should stay nil")
			}
		})
	}
}

// Clamped values are counted: the count is only visible through a
// collector's Result, so record through one.
func TestClampedCount(t *testing.T) {
	hour := int64(time.Hour)
	tests := []struct {
		name        string
		values      []int64
		wantClamped int64
	}{
		{"none", []int64{us, ms, hour}, 0},
		{"one over", []int64{us, hour + 1}, 1},
		{"negative is not clamped", []int64{-1, -hour}, 0},
		{"several over", []int64{2 * hour, 3 * hour, 10 * hour, 5 * ms}, 3},
	}
	base := time.Unix(1_700_000_000, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := results.NewCollector(base, 3, 100)
			for i, v := range tt.values {
				c.Shard(i).RecordValue(results.Ping, v)
				// Spread across ticks too: clamped counts must survive merging.
				c.Tick(base.Add(time.Duration(i+1)*time.Second), false, 1)
			}
			r := c.Finish(base.Add(time.Minute), false, 1, results.Analysis{})
			if r.Clamped != tt.wantClamped {
				t.Errorf("Clamped = %d, want %d", r.Clamped, tt.wantClamped)
			}
			if got := r.Latency["ping"].Count; got != int64(len(tt.values)) {
				t.Errorf("ping count = %d, want %d", got, len(tt.values))
			}
		})
	}
}

func TestSetMergeAndReset(t *testing.T) {
	var a, b results.Set
	for i := int64(1); i <= 10; i++ {
		a.Record(results.Hold, i*us)
	}
	for i := int64(1); i <= 5; i++ {
		b.Record(results.Hold, i*ms)
		b.Record(results.Ping, i*ms)
	}
	a.Merge(&b)
	if got := a.Get(results.Hold).TotalCount(); got != 15 {
		t.Errorf("merged hold count = %d, want 15", got)
	}
	if a.Get(results.Ping) == nil || a.Get(results.Ping).TotalCount() != 5 {
		t.Errorf("merge did not create ping histogram: %v", a.Get(results.Ping))
	}
	if got := b.Get(results.Hold).TotalCount(); got != 5 {
		t.Errorf("merge changed its source: count %d, want 5", got)
	}
	a.Reset()
	for _, m := range []results.Metric{results.Hold, results.Ping} {
		if h := a.Get(m); h != nil && h.TotalCount() != 0 {
			t.Errorf("%v after Reset: count %d, want 0", m, h.TotalCount())
		}
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{results.Exclusive.String(), "exclusive"},
		{results.Read.String(), "read"},
		{results.Write.String(), "write"},
		{results.Mode(9).String(), "mode(9)"},
		{results.NoErr.String(), "none"},
		{results.ErrTimeout.String(), "timeout"},
		{results.ErrCtx.String(), "ctx"},
		{results.ErrConn.String(), "conn"},
		{results.ErrOther.String(), "other"},
		{results.ErrClass(42).String(), "err(42)"},
		{results.AcquireExclusive.String(), "acquire_exclusive"},
		{results.AcquireNested.String(), "acquire_nested"},
		{results.Handoff.String(), "handoff"},
		{results.Ping.String(), "ping"},
		{results.AcquireMetric(results.Exclusive).String(), "acquire_exclusive"},
		{results.AcquireMetric(results.Read).String(), "acquire_read"},
		{results.AcquireMetric(results.Write).String(), "acquire_write"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
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

// zeros is an endless stream of zero bytes that counts what was read and
// gives up (failing the read) past max, so a reader that does not bound
// its lines cannot take the machine's memory.
type zeros struct{ read, max int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.read >= z.max {
		return 0, fmt.Errorf("read %d MiB of zeros without stopping", z.read>>20)
	}
	clear(p)
	z.read += int64(len(p))
	return len(p), nil
}

// TestReadIntervalLogBoundsLines: an interval log without line ends (a
// sparse file, /dev/zero) is refused once a line passes the bound, not
// gathered into memory whole.
func TestReadIntervalLogBoundsLines(t *testing.T) {
	z := &zeros{max: 256 << 20}
	_, err := results.ReadIntervalLog(z)
	if err == nil || !strings.Contains(err.Error(), "not an interval log") || z.read > 17<<20 {
		t.Errorf("after %d MiB read: %v; want a refusal within 17 MiB", z.read>>20, err)
	}
}
