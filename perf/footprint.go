package perf

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// footprint measures what a scale run's owners cost: the live heap and
// the goroutine stacks before the run, as its load starts (the owners and
// clients made, no worker yet) and midway through the measured time, and
// the connections of the pools the run opened.
type footprint struct {
	warmup, d time.Duration

	mu            sync.Mutex
	rdbs          []redis.UniversalClient
	before, setup memSample
	mid           memSample
	conns         int64
	connBytes     int64
	timer         *time.Timer
}

// memSample is the live Go heap and the goroutine stacks at one moment.
type memSample struct {
	heap, stack int64
	goroutines  int
	taken       bool
}

func sampleMem() memSample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSample{heap: int64(ms.HeapAlloc), stack: int64(ms.StackInuse), goroutines: runtime.NumGoroutine(), taken: true}
}

func newFootprint(base workloads.Config, d time.Duration) *footprint {
	return &footprint{warmup: min(d/10, 5*time.Second), d: d, before: sampleMem()}
}

// wire returns base with its clients counted and its start and progress
// watched; the midway sample is taken on a timer from the load's start.
func (f *footprint) wire(base workloads.Config) workloads.Config {
	cfg := base
	keep := func(rdb redis.UniversalClient) redis.UniversalClient {
		f.mu.Lock()
		f.rdbs = append(f.rdbs, rdb)
		f.mu.Unlock()
		return rdb
	}
	if base.ClientRedis != nil {
		cfg.ClientRedis = func(c, n int) redis.UniversalClient { return keep(base.ClientRedis(c, n)) }
	} else if base.NewRedis != nil {
		cfg.NewRedis = func(n int) redis.UniversalClient { return keep(base.NewRedis(n)) }
	}
	cfg.Started = func(t time.Time) {
		f.setup = sampleMem()
		f.mu.Lock()
		f.timer = time.AfterFunc(time.Until(t.Add(f.warmup+f.d/2)), f.sampleMid)
		f.mu.Unlock()
		if base.Started != nil {
			base.Started(t)
		}
	}
	return cfg
}

func (f *footprint) sampleMid() {
	m := sampleMem()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mid = m
	for _, rdb := range f.rdbs {
		n := int64(rdb.PoolStats().TotalConns)
		f.conns += n
		f.connBytes += n * connBuffers(rdb)
	}
}

// stop ends the midway sample's wait when the run ended first.
func (f *footprint) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.timer != nil {
		f.timer.Stop()
	}
}

// connBuffers is the read and write buffers of one of rdb's connections,
// most of what an idle connection holds.
func connBuffers(rdb redis.UniversalClient) int64 {
	switch c := rdb.(type) {
	case *redis.Client:
		o := c.Options()
		return int64(o.ReadBufferSize + o.WriteBufferSize)
	case *redis.ClusterClient:
		o := c.Options()
		return int64(o.ReadBufferSize + o.WriteBufferSize)
	}
	return 0
}

// perOwnerFairness is what fairness holds per owner at the end: a counter,
// and an entry (name and count) in the result's per-owner map.
const perOwnerFairness = 8 + 40

// costs is the footprint of the run res, by component. A run that ended
// before midway has only its setup measured.
func (f *footprint) costs(res *results.Result) []results.ScaleCost {
	f.mu.Lock()
	defer f.mu.Unlock()
	var cs []results.ScaleCost
	var sum int64
	add := func(name string, b int64, how string) {
		b = max(b, 0) // a collection's noise at a few owners
		sum += b
		cs = append(cs, results.ScaleCost{Component: name, Bytes: b, How: how})
	}
	if f.setup.taken {
		add("owners and lock clients", f.setup.heap-f.before.heap, "live heap as the load starts, less before the run")
	}
	if f.mid.taken {
		// The records kept by midway, pro rata of the run's: the
		// collector's count is the run's own.
		records := res.Safety.Sections
		if total := time.Duration(res.Warmup*float64(time.Second)) + time.Duration(res.Measured*float64(time.Second)); total > 0 {
			records = int64(float64(records) * float64(f.warmup+f.d/2) / float64(total))
		}
		recordBytes := min(records, res.Safety.Sections) * results.OpRecordBytes
		// The goroutines the run added, at the mean stack in use midway:
		// a plain difference of stack memory is lost at a few owners, where
		// stacks freed by goroutines that were ending before the run are
		// reused by the run's own.
		added := max(f.mid.goroutines-f.before.goroutines, 0)
		mean := f.mid.stack / int64(max(f.mid.goroutines, 1))
		add("goroutine stacks", int64(added)*mean, fmt.Sprintf("%s added by midway × their mean stack in use then (%.1f KiB)", results.Count(added, "goroutine"), float64(mean)/1024))
		add("connections", f.connBytes, fmt.Sprintf("%s pooled midway × their read and write buffers", results.Count(f.conns, "connection")))
		add("operation records", recordBytes, fmt.Sprintf("the %s kept by midway (of the run's %s) × %d B", results.Count(recordBytes/results.OpRecordBytes, "record"), results.Commas(res.Safety.Sections), results.OpRecordBytes))
		add("workers and calls in flight", f.mid.heap-f.setup.heap-f.connBytes-recordBytes, "live heap midway, less as the load started, the connections and the records")
	}
	measured := sum
	// Computed, not measured: Finish holds the records as Ops, and a
	// pointer to each in its lock's list, while it sorts and checks them;
	// fairness a counter and a map entry per owner.
	owners := int64(res.Fairness.Owners)
	cs = append(cs, results.ScaleCost{Component: "safety and fairness checks", Bytes: res.Safety.Sections*(results.AnalysedOpBytes+16) + owners*perOwnerFairness,
		How: fmt.Sprintf("computed at the end: %s × %d B, and %d B per owner", results.Count(res.Safety.Sections, "record"), results.AnalysedOpBytes+16, perOwnerFairness)})
	if f.mid.taken {
		cs = append(cs, results.ScaleCost{Component: "the rest of peak RSS", Bytes: max(res.Runtime.PeakRSSBytes-measured, 0),
			How: "GC headroom, the runtime, the process before the run"})
	}
	return cs
}
