package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Schema names the result file format. A change that removes or renames a
// field bumps the version; adding fields does not.
const Schema = "lockbench.result/v1"

// Result is one run's result file.
type Result struct {
	Schema string `json:"schema"`
	// Partial marks a run that did not finish (interrupted, or failed
	// midway): what it measured is real but covers less than asked.
	Partial       bool   `json:"partial"`
	PartialReason string `json:"partial_reason,omitempty"`
	Meta          Meta   `json:"meta"`
	// Profile is the workload as run, flags applied.
	Profile    any        `json:"profile"`
	Measured   float64    `json:"measured_s"` // after warmup
	Warmup     float64    `json:"warmup_s"`
	Throughput Throughput `json:"throughput"`
	// PerShard is the throughput of each Redis Cluster shard's locks
	// (bench run on a cluster); empty otherwise.
	PerShard []ShardThroughput  `json:"per_shard,omitempty"`
	Errors   map[string]int64   `json:"errors"` // measured operations by error class
	Latency  map[string]Latency `json:"latency_us"`
	Fairness Fairness           `json:"fairness"`
	Safety   Safety             `json:"safety"`
	Series   []Point            `json:"series"`
	Runtime  Runtime            `json:"runtime"`
	// Clamped counts latencies beyond the histograms' one-hour range,
	// recorded as one hour.
	Clamped int64 `json:"clamped,omitempty"`
	// HistogramLog is the interval log's file name, next to this file.
	HistogramLog string `json:"histogram_log,omitempty"`
	// Events are the faults injected during the run (chaos), in start order.
	Events []Event `json:"events,omitempty"`
	// Timeline is one lock's holders over the run (chaos runs).
	Timeline *Timeline `json:"timeline,omitempty"`
	// MergedFrom marks a merged result (see Merge) and names its sources:
	// Merge sets each source's file name as bench run writes it (its Stem
	// plus .json); a caller that read them from disk replaces these with
	// the paths, relative to the merged file's directory where possible.
	MergedFrom []string `json:"merged_from,omitempty"`
	// MergeNotes are what the merged runs disagreed on without being
	// refused (Redis version or address, lockbench version).
	MergeNotes []string `json:"merge_notes,omitempty"`

	log []byte // the interval log, written next to the JSON
}

// ErrorCount is the measured operations that failed, every class together.
func (r *Result) ErrorCount() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// IntervalLog is the run's HdrHistogram interval log (format 1.3): one
// line per metric per interval, values in nanoseconds. HdrHistogram's
// HistogramLogProcessor and HistogramLogAnalyzer read it.
func (r *Result) IntervalLog() []byte { return r.log }

// Meta says what ran where.
type Meta struct {
	Lockbench    string    `json:"lockbench_version"`
	Go           string    `json:"go_version"`
	Host         string    `json:"host"`
	GOMAXPROCS   int       `json:"gomaxprocs"`
	Start        time.Time `json:"start"`
	Profile      string    `json:"profile"`
	Workload     string    `json:"workload"` // one line: kind, clients × owners, locks, pacing
	RedisVersion string    `json:"redis_version"`
	RedisBackend string    `json:"redis_backend"`
	// RedisTopology is single, replica, "cluster PxR" or cluster (external).
	RedisTopology string   `json:"redis_topology,omitempty"`
	RedisAddr     string   `json:"redis_addr"`
	Args          []string `json:"args,omitempty"`
	// Impl is the lock implementation driven (bench run --impl); empty in
	// results from before implementations were pluggable, which ran lockimpl.
	Impl string `json:"impl,omitempty"`
	// ImplNote says how the implementation met the profile where it
	// differs from lockimpl, e.g. a fixed expiry standing in for a watchdog.
	ImplNote string `json:"impl_note,omitempty"`
}

// ImplName is Impl, "lockimpl" when unset.
func (m Meta) ImplName() string {
	if m.Impl == "" {
		return "lockimpl"
	}
	return m.Impl
}

// Event is one fault injection: what, on which target, from Start to End
// (seconds since the run started; End equals Start for an instant fault
// such as a kill). Plots shade these windows.
type Event struct {
	Kind   string  `json:"kind"`             // e.g. latency, blackhole, pause, kill, clock_skew
	Target string  `json:"target"`           // e.g. client:0, clients, redis:primary
	Detail string  `json:"detail,omitempty"` // parameters, e.g. "latency 125ms ±75ms both"
	Start  float64 `json:"start_s"`
	End    float64 `json:"end_s"`
	// Err is set when injecting or reverting failed.
	Err string `json:"error,omitempty"`
}

// Throughput counts measured operations.
type Throughput struct {
	Ops          int64            `json:"ops"` // finished, successful or not
	OpsPerSec    float64          `json:"ops_per_s"`
	TargetRate   float64          `json:"target_rate,omitempty"` // open loop: the schedule's ops/s
	Acquisitions map[string]int64 `json:"acquisitions"`          // outermost, by mode
	Nested       int64            `json:"nested"`                // nested (reentrant) acquisitions
	Lost         int64            `json:"lost"`                  // holds the holder was told were lost before release
	Cut          int64            `json:"cut"`                   // acquisitions the run's end cancelled
}

// ShardThroughput is the measured operations on the locks one Redis
// Cluster shard serves.
type ShardThroughput struct {
	Name         string  `json:"name"`  // e.g. "shard1 127.0.0.1:7001 slots 0-5460"
	Locks        int     `json:"locks"` // lock names served by the shard
	Ops          int64   `json:"ops"`   // finished, successful or not
	OpsPerSec    float64 `json:"ops_per_s"`
	Acquisitions int64   `json:"acquisitions"`
	Share        float64 `json:"share"` // of all measured acquisitions
}

// Runtime is the harness's own footprint during the run.
type Runtime struct {
	PeakRSSBytes    int64 `json:"peak_rss_bytes"`
	GoroutinesStart int   `json:"goroutines_start"` // before clients were created
	GoroutinesMax   int   `json:"goroutines_max"`
	GoroutinesEnd   int   `json:"goroutines_end"` // after clients were closed
	Shards          int   `json:"shards"`
}

// Stem is the file name stem for r: profile, the implementation unless
// it is lockimpl, and start time (UTC), and "-merged" for a merged result (MergedFrom set), whose start is its
// earliest source's: without it, merging into the sources' directory
// would overwrite that source.
func (r *Result) Stem() string {
	name := strings.Map(func(c rune) rune {
		if c == '/' || c == '\\' || c == ' ' || c == os.PathSeparator {
			return '_'
		}
		return c
	}, r.Meta.Profile)
	if name == "" {
		name = "run"
	}
	if impl := r.Meta.ImplName(); impl != "lockimpl" {
		name += "-" + impl
	}
	stem := name + "-" + r.Meta.Start.UTC().Format("20060102T150405Z")
	if len(r.MergedFrom) > 0 {
		stem += "-merged"
	}
	return stem
}

// WriteFiles writes the interval log (when there is one) and then the
// result JSON into dir, each atomically (temp file, fsync, rename), so a
// reader never sees half a file. It returns the JSON file's path. A run
// never replaces another's files: when the stem is taken (two runs
// started in the same second, as a sweep's short points can) it gets a
// "-2", "-3", … suffix.
func WriteFiles(dir string, r *Result) (string, error) {
	hlog := r.log
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	stem := freeStem(dir, r.Stem())
	if len(hlog) > 0 {
		r.HistogramLog = stem + ".hlog"
		if err := WriteAtomic(filepath.Join(dir, r.HistogramLog), hlog); err != nil {
			return "", err
		}
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("results: encode %s: %w", stem, err)
	}
	path := filepath.Join(dir, stem+".json")
	if err := WriteAtomic(path, append(b, '\n')); err != nil {
		return "", err
	}
	return path, nil
}

// freeStem is stem, or stem-N for the lowest N ≥ 2, whose .json and
// .hlog files do not exist in dir.
func freeStem(dir, stem string) string {
	taken := func(s string) bool {
		for _, ext := range []string{".json", ".hlog"} {
			if _, err := os.Lstat(filepath.Join(dir, s+ext)); err == nil {
				return true
			}
		}
		return false
	}
	free := stem
	for n := 2; taken(free); n++ {
		free = fmt.Sprintf("%s-%d", stem, n)
	}
	return free
}

// WriteAtomic writes data to path through a synced temporary file and a
// rename, so a reader (or a crash) never sees half a file. Chaos reports
// and JUnit files are written the same way as results.
func WriteAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	return nil
}

// ReadFile loads a result file, refusing other schemas.
func ReadFile(path string) (*Result, error) {
	var r Result
	if err := readJSON(path, &r); err != nil {
		return nil, err
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("results: %s: schema %q, want %q", path, r.Schema, Schema)
	}
	return &r, nil
}
