package results

import (
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Metric names one latency histogram.
type Metric int

// The metrics. Acquire latencies count from the intended start (in open
// loop the schedule's time, so a slow server's backlog shows up as latency,
// as in wrk2); the others from the moment the measured step began.
const (
	AcquireExclusive Metric = iota // outermost acquisition of a reentrant or fair lock
	AcquireRead                    // outermost read acquisition
	AcquireWrite                   // outermost write acquisition
	AcquireNested                  // each nested (reentrant) acquisition
	Release                        // each unlock call
	Hold                           // acquired → release began (the critical section)
	Wait                           // call → acquired, for acquisitions that found an incompatible holder
	Handoff                        // the lock fell free while owners waited → the first of them acquired
	Ping                           // PING round trip sampled during the run: the floor under all of these
	numMetrics
)

var metricNames = [numMetrics]string{
	"acquire_exclusive", "acquire_read", "acquire_write", "acquire_nested",
	"release", "hold", "wait", "handoff", "ping",
}

// AcquireAll is the Latency key of every measured outermost acquisition,
// all modes together: the figure an SLO and a sweep judge.
const AcquireAll = "acquire"

// String is the metric's name in result files and interval-log tags.
func (m Metric) String() string { return metricNames[m] }

// AcquireMetric is the outermost-acquire metric of mode m.
func AcquireMetric(m Mode) Metric {
	switch m {
	case Read:
		return AcquireRead
	case Write:
		return AcquireWrite
	}
	return AcquireExclusive
}

// Histogram bounds: nanoseconds from 1 ns to 1 h at 3 significant digits,
// so a 10 µs loopback latency reads back within 0.1%, as a 10 s one does. A
// value beyond an hour is recorded as an hour and counted.
const (
	histLowest  = int64(1)
	histHighest = int64(time.Hour)
	histDigits  = 3
)

// NewHistogram returns an empty histogram with lockbench's bounds.
func NewHistogram() *hdr.Histogram { return hdr.New(histLowest, histHighest, histDigits) }

// Set is one histogram per metric, allocated on first use: a shard records
// only the metrics its owners produce.
type Set struct {
	h       [numMetrics]*hdr.Histogram
	clamped int64
}

// Record adds one value of metric m.
func (s *Set) Record(m Metric, ns int64) {
	h := s.h[m]
	if h == nil {
		h = NewHistogram()
		s.h[m] = h
	}
	if ns < 0 {
		ns = 0
	}
	if ns > histHighest {
		ns = histHighest
		s.clamped++
	}
	_ = h.RecordValue(ns) // in range by construction
}

// Get returns metric m's histogram, nil when nothing was recorded.
func (s *Set) Get(m Metric) *hdr.Histogram { return s.h[m] }

// Merge adds every histogram of from into s.
func (s *Set) Merge(from *Set) {
	for m, h := range from.h {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if s.h[m] == nil {
			s.h[m] = NewHistogram()
		}
		s.h[m].Merge(h)
	}
	s.clamped += from.clamped
}

// Reset empties s, keeping its histograms for reuse.
func (s *Set) Reset() {
	for _, h := range s.h {
		if h != nil {
			h.Reset()
		}
	}
	s.clamped = 0
}

// Latency summarizes one histogram in microseconds.
type Latency struct {
	Count  int64   `json:"count"`
	Min    float64 `json:"min_us"`
	Mean   float64 `json:"mean_us"`
	StdDev float64 `json:"stddev_us"`
	P50    float64 `json:"p50_us"`
	P90    float64 `json:"p90_us"`
	P99    float64 `json:"p99_us"`
	P999   float64 `json:"p99_9_us"`
	Max    float64 `json:"max_us"`
}

// Summarize reads h's percentiles. hdrhistogram-go's ValueAtQuantile takes
// a percentile in 0–100, not a fraction: 99 is the 99th percentile.
func Summarize(h *hdr.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	us := func(ns int64) float64 { return roundUs(float64(ns) / 1e3) }
	return Latency{
		Count:  h.TotalCount(),
		Min:    us(h.Min()),
		Mean:   roundUs(h.Mean() / 1e3),
		StdDev: roundUs(h.StdDev() / 1e3),
		P50:    us(h.ValueAtQuantile(50)),
		P90:    us(h.ValueAtQuantile(90)),
		P99:    us(h.ValueAtQuantile(99)),
		P999:   us(h.ValueAtQuantile(99.9)),
		Max:    us(h.Max()),
	}
}

// roundUs keeps a tenth of a microsecond: finer is noise for a lock.
func roundUs(v float64) float64 { return math.Round(v*10) / 10 }

// p99 is metric m's 99th percentile in nanoseconds (0 when empty).
func (s *Set) p99(m Metric) int64 {
	if h := s.h[m]; h != nil {
		return h.ValueAtQuantile(99)
	}
	return 0
}
