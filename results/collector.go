package results

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"runtime/metrics"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Point is one interval of the throughput time series.
type Point struct {
	T float64 `json:"t_s"` // end of the interval, seconds since the run started
	// Ops is the operations that finished in the interval and succeeded:
	// the throughput. Failed ones are attempts, counted in Errors.
	Ops       int64   `json:"ops"`
	OpsPerSec float64 `json:"ops_per_s"`
	Attempts  int64   `json:"attempts"` // finished in the interval, successful or not
	Errors    int64   `json:"errors"`   // failed: Attempts − Ops
	// Timeouts is the part of Errors that are tryLock waits run out: lock
	// contention, not trouble with Redis.
	Timeouts   int64   `json:"timeouts,omitempty"`
	AcquireP50 float64 `json:"acquire_p50_us"` // all modes, this interval only
	AcquireP99 float64 `json:"acquire_p99_us"`
	Goroutines int     `json:"goroutines"`
	HeapBytes  int64   `json:"heap_bytes"` // live Go heap at the last GC: growth is a leak's sign
	Warmup     bool    `json:"warmup,omitempty"`
}

// Collector owns the shards, merges them every tick into the run's totals
// and the interval log, and at the end runs the analyses.
type Collector struct {
	base    time.Time
	logBase time.Time // base, in whole seconds: the log header cannot say less
	shards  []*Shard
	maxOps  int64
	kept    atomic.Int64
	dropped atomic.Int64

	mu       sync.Mutex // guards what follows: Tick and Finish may race at the end
	last     time.Time
	total    interval
	spare    []*interval
	tick     interval
	series   []Point
	ticks    []time.Time // interval i is [ticks[i], ticks[i+1])
	logs     [][]byte    // interval i's histograms in log lines
	finished bool

	groupOf    []int32 // lock index -> group index (GroupLocks)
	groupNames []string
}

// NewCollector returns a collector with n shards whose times count from base.
func NewCollector(base time.Time, n, maxOps int) *Collector {
	if maxOps <= 0 {
		maxOps = DefaultMaxOps
	}
	c := &Collector{base: base, logBase: base.Truncate(time.Second), last: base, maxOps: int64(maxOps), ticks: []time.Time{base}}
	for range max(n, 1) {
		c.shards = append(c.shards, &Shard{cur: &interval{}, c: c})
		c.spare = append(c.spare, &interval{})
	}
	return c
}

// GroupLocks sorts the locks into named groups, so that Finish reports
// throughput per group in Result.PerShard: on Redis Cluster a group is the
// shard serving the lock. groupOf[i] is lock i's index into names. Call it
// before the first Record.
func (c *Collector) GroupLocks(groupOf []int32, names []string) {
	c.groupOf, c.groupNames = groupOf, names
	for _, s := range c.shards {
		s.groupOps = make([]int64, len(names))
		s.groupAcq = make([]int64, len(names))
	}
}

// perShard sums the group counters of every shard.
func (c *Collector) perShard(measured time.Duration) []ShardThroughput {
	if c.groupNames == nil {
		return nil
	}
	out := make([]ShardThroughput, len(c.groupNames))
	for i, n := range c.groupNames {
		out[i].Name = n
	}
	for _, g := range c.groupOf {
		out[g].Locks++
	}
	var all int64
	for _, s := range c.shards {
		s.mu.Lock()
		for g := range out {
			out[g].Ops += s.groupOps[g]
			out[g].Acquisitions += s.groupAcq[g]
		}
		s.mu.Unlock()
	}
	for _, g := range out {
		all += g.Acquisitions
	}
	for i := range out {
		if measured > 0 {
			out[i].OpsPerSec = math.Round(float64(out[i].Ops)/measured.Seconds()*10) / 10
		}
		if all > 0 {
			out[i].Share = math.Round(float64(out[i].Acquisitions)/float64(all)*1000) / 1000
		}
	}
	return out
}

// Base is the time operations count from.
func (c *Collector) Base() time.Time { return c.base }

// Shard returns shard i (mod the shard count).
func (c *Collector) Shard(i int) *Shard { return c.shards[i%len(c.shards)] }

// Since converts t to the collector's nanosecond clock.
func (c *Collector) Since(t time.Time) int64 { return int64(t.Sub(c.base)) }

// Tick closes the interval ending at now: it swaps every shard's interval
// for an empty one, merges them into the totals, appends the interval's
// histograms to the log and a point to the series, and returns the point.
func (c *Collector) Tick(now time.Time, warmup bool, goroutines int) Point {
	heap := heapBytes()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick.reset()
	for i, s := range c.shards {
		fresh := c.spare[i]
		s.mu.Lock()
		old := s.cur
		s.cur = fresh
		s.mu.Unlock()
		c.tick.add(old)
		old.reset()
		c.spare[i] = old
	}
	c.total.add(&c.tick)
	c.logs = append(c.logs, c.encodeInterval(&c.tick.set, c.last, now))
	c.ticks = append(c.ticks, now)

	secs := now.Sub(c.last).Seconds()
	acq := mergeAcquire(&c.tick.set)
	p := Point{
		T:          now.Sub(c.base).Seconds(),
		Ops:        c.tick.all - c.tick.allFailed,
		Attempts:   c.tick.all,
		Errors:     c.tick.allFailed,
		Timeouts:   c.tick.allTimeouts,
		AcquireP50: Summarize(acq).P50,
		AcquireP99: Summarize(acq).P99,
		Goroutines: goroutines,
		HeapBytes:  heap,
		Warmup:     warmup,
	}
	if secs > 0 {
		p.OpsPerSec = float64(p.Ops) / secs
	}
	p.T = float64(int64(p.T*1000)) / 1000
	c.series = append(c.series, p)
	c.last = now
	return p
}

// AcquireP99 is the 99th percentile of every measured outermost
// acquisition so far, in microseconds.
func (c *Collector) AcquireP99() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Summarize(mergeAcquire(&c.total.set)).P99
}

// Totals reports the operations that succeeded and those that failed so
// far, warmup included.
func (c *Collector) Totals() (ok, failed int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total.all - c.total.allFailed, c.total.allFailed
}

// encodeInterval writes s's histograms as interval-log lines for [from, to).
func (c *Collector) encodeInterval(s *Set, from, to time.Time) []byte {
	var b bytes.Buffer
	for m, h := range s.h {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		_ = writeLogInterval(&b, c.logBase, Metric(m).String(), h, from, to) // metric names are valid tags
	}
	return b.Bytes()
}

// intervalLog assembles the log: header, then each interval's lines in
// time order, the wait and handoff histograms Finish derived placed in the
// intervals where those acquisitions happened.
func (c *Collector) intervalLog(post []Set) []byte {
	var b bytes.Buffer
	writeLogHeader(&b, c.base, c.logBase)
	for i, lines := range c.logs {
		b.Write(lines)
		if i < len(post) {
			b.Write(c.encodeInterval(&post[i], c.ticks[i], c.ticks[i+1]))
		}
	}
	return b.Bytes()
}

// writeLogHeader writes the header every lockbench interval log starts
// with (a run's, a merge's): format version, start time, and the base time
// (start in whole seconds: the header cannot say less) that interval
// timestamps count from. Collector and Merge share it so their logs read
// alike in HdrHistogram's tools.
func writeLogHeader(b *bytes.Buffer, start, base time.Time) {
	w := hdr.NewHistogramLogWriter(b)
	_ = w.OutputLogFormatVersion() // a bytes.Buffer does not fail
	_ = w.OutputStartTime(start.UnixMilli())
	w.SetBaseTime(base.UnixMilli())
	_ = w.OutputBaseTime(base.UnixMilli())
	_ = w.OutputComment("lockbench latencies in nanoseconds; one tag per metric; max column in ms")
	_ = w.OutputLegend()
}

// writeLogInterval appends h as one interval-log line tagged tag (a
// metric name) for [from, to), relative to the header's base. It sets h's
// tag and times. It fails only on a tag the format cannot hold.
func writeLogInterval(b *bytes.Buffer, base time.Time, tag string, h *hdr.Histogram, from, to time.Time) error {
	w := hdr.NewHistogramLogWriter(b)
	w.SetBaseTime(base.UnixMilli())
	h.SetTag(tag)
	h.SetStartTimeMs(from.UnixMilli())
	h.SetEndTimeMs(to.UnixMilli())
	if err := w.OutputIntervalHistogram(h); err != nil {
		return fmt.Errorf("results: interval log: %w", err)
	}
	return nil
}

func mergeAcquire(s *Set) *hdr.Histogram {
	var out *hdr.Histogram
	for _, m := range []Metric{AcquireExclusive, AcquireRead, AcquireWrite} {
		if h := s.h[m]; h != nil && h.TotalCount() > 0 {
			if out == nil {
				out = NewHistogram()
			}
			out.Merge(h)
		}
	}
	return out
}

// Analysis is what Finish needs to know about the run beyond the ops.
type Analysis struct {
	Labels
	// MeasureFrom is when warmup ended (ns since base): handoffs and waits
	// are measured for acquisitions from then on.
	MeasureFrom int64
	// FIFO asks for the fair-lock FIFO check, with Slack as the send-time
	// gap below which two waiters' queue order is considered unknown.
	FIFO  bool
	Slack time.Duration
	// Examples bounds the violations listed (all are counted). Default 20.
	Examples int
	// Timeline asks for one lock's holder timeline (see BuildTimeline),
	// as chaos runs draw it.
	Timeline bool
}

// Finish takes the last tick at end and analyses every recorded operation:
// safety, fairness (and FIFO order), waits and handoffs. It fills the
// measured parts of a Result; the caller adds Meta, Profile and Runtime.
// Call it once, after every worker has stopped recording.
func (c *Collector) Finish(end time.Time, warmup bool, goroutines int, a Analysis) *Result {
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		panic("results: Collector.Finish called twice")
	}
	c.finished = true
	c.mu.Unlock()
	c.Tick(end, warmup, goroutines)
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.Examples <= 0 {
		a.Examples = 20
	}
	total := 0
	for _, s := range c.shards {
		s.mu.Lock()
		total += s.ops.n
		s.mu.Unlock()
	}
	ops := make([]Op, 0, total)
	for _, s := range c.shards {
		s.mu.Lock()
		ops = s.ops.drain(ops)
		s.mu.Unlock()
	}
	dropped := c.dropped.Load()
	slices.SortFunc(ops, func(x, y Op) int { return cmp.Compare(x.Acquired, y.Acquired) })

	// Waits and handoffs, each placed in the interval of its acquisition.
	post := make([]Set, len(c.logs))
	handoffs(ops, a.MeasureFrom, func(at int64, m Metric, v int64) {
		c.total.set.Record(m, v)
		t := c.base.Add(time.Duration(at))
		i := sort.Search(len(c.ticks), func(i int) bool { return c.ticks[i].After(t) }) - 1
		if i >= 0 && i < len(post) {
			post[i].Record(m, v)
		}
	})
	from := c.base.Add(time.Duration(a.MeasureFrom))

	measured := end.Sub(from)
	r := &Result{
		Schema:   Schema,
		Measured: measured.Seconds(),
		Warmup:   time.Duration(a.MeasureFrom).Seconds(),
		Latency:  map[string]Latency{},
		Errors:   map[string]int64{},
		Series:   c.series,
	}
	for m, h := range c.total.set.h {
		if h != nil && h.TotalCount() > 0 {
			r.Latency[Metric(m).String()] = Summarize(h)
		}
	}
	if acq := mergeAcquire(&c.total.set); acq != nil {
		r.Latency[AcquireAll] = Summarize(acq)
	}
	for cl := ErrTimeout; cl < numErrClasses; cl++ {
		r.Errors[cl.String()] = c.total.errors[cl]
	}
	r.Throughput = c.throughput(measured)
	r.PerShard = c.perShard(measured)
	r.ErrorMessages, r.ErrorMessagesDropped = c.messages()
	counts := OwnerCounts(ops, len(a.Owners))
	r.Fairness = ComputeFairness(counts, a.Owners)
	var acquired int64
	for _, n := range c.total.acquired {
		acquired += n
	}
	r.Fairness.Judge(acquired)
	if a.FIFO {
		if a.Slack <= 0 {
			// Two sends closer than a couple of round trips may reach Redis
			// in either order.
			a.Slack = max(time.Millisecond, 2*time.Duration(c.total.set.p99(Ping)))
		}
		f := CheckFIFO(ops, a.Labels, a.Slack, a.Examples)
		r.Fairness.FIFO = &f
	}
	r.Safety = CheckSafety(ops, a.Labels, a.Examples)
	if a.Timeline {
		r.Timeline = BuildTimeline(ops, a.Labels)
	}
	if dropped > 0 {
		r.Safety.Incomplete = fmt.Sprintf("%s past the %d-acquisition record limit not checked", Count(dropped, "acquisition"), c.maxOps)
	}
	r.Clamped = c.total.set.clamped
	r.log = c.intervalLog(post)
	return r
}

func (c *Collector) throughput(measured time.Duration) Throughput {
	t := Throughput{
		Attempts:     c.total.attempts,
		Ops:          c.total.attempts - c.total.failed,
		Failed:       c.total.failed,
		Acquisitions: map[string]int64{},
		Nested:       c.total.nested,
		Lost:         c.total.lost,
		Cut:          c.total.cut,
		Unreleased:   c.total.unreleased,
	}
	for m, n := range c.total.acquired {
		if n > 0 {
			t.Acquisitions[Mode(m).String()] = n
		}
	}
	t.fill(measured.Seconds())
	return t
}

// fill derives the success ratio and the rate from the counts.
func (t *Throughput) fill(measuredS float64) {
	t.SuccessRatio, t.OpsPerSec = 0, 0
	if t.Attempts > 0 {
		t.SuccessRatio = math.Round(float64(t.Ops)/float64(t.Attempts)*1e6) / 1e6
	}
	if measuredS > 0 {
		t.OpsPerSec = math.Round(float64(t.Ops)/measuredS*10) / 10
	}
}

// messages gathers the shards' error messages: counts of one message
// added, the first seen first.
func (c *Collector) messages() ([]ErrorMessage, int64) {
	var all []ErrorMessage
	var dropped int64
	for _, s := range c.shards {
		s.mu.Lock()
		dropped += s.msgsDropped
		for _, m := range s.msgs {
			i := slices.IndexFunc(all, func(a ErrorMessage) bool { return a.Class == m.Class && a.Message == m.Message })
			if i < 0 {
				all = append(all, m)
				continue
			}
			all[i].Count += m.Count
			all[i].First = min(all[i].First, m.First)
		}
		s.mu.Unlock()
	}
	slices.SortStableFunc(all, func(a, b ErrorMessage) int { return cmp.Compare(a.First, b.First) })
	if len(all) > maxMessages {
		for _, m := range all[maxMessages:] {
			dropped += m.Count
		}
		all = all[:maxMessages]
	}
	return all, dropped
}

var heapSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
var heapMu sync.Mutex

// heapBytes reads the live Go heap as of the last GC (cheap: no stop-the-world).
func heapBytes() int64 {
	heapMu.Lock()
	defer heapMu.Unlock()
	metrics.Read(heapSample)
	if heapSample[0].Value.Kind() == metrics.KindUint64 {
		return int64(heapSample[0].Value.Uint64())
	}
	return 0
}
