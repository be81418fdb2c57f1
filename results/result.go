package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Schema names the result file format. A change that removes or renames a
// field, or changes what one means, bumps the version; adding fields does
// not. In v2 throughput counts successful operations only (v1 counted
// every finished one); ReadFile reads v1 files and recomputes it.
const Schema = "lockbench.result/v2"

// schemaV1 is the previous format, read and upgraded by ReadFile.
const schemaV1 = "lockbench.result/v1"

// DefaultMaxErrorRate is the share of failed operations above which a run
// fails (k6-style threshold): failures leave the latency histograms and
// throughput, so past a few percent the figures describe only the lucky
// part of the run.
const DefaultMaxErrorRate = 0.01

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
	PerShard []ShardThroughput `json:"per_shard,omitempty"`
	Errors   map[string]int64  `json:"errors"` // measured operations by error class
	// ErrorMessages are the first distinct error messages of the run
	// (warmup included), verbatim, with how often each came; the messages
	// found after those (or beyond the kept ones) are ErrorMessagesDropped.
	ErrorMessages        []ErrorMessage `json:"error_messages,omitempty"`
	ErrorMessagesDropped int64          `json:"error_messages_dropped,omitempty"`
	// MaxErrorRate is the share of failed measured operations the run was
	// allowed (see Failures); nil reads as DefaultMaxErrorRate.
	MaxErrorRate *float64 `json:"max_error_rate,omitempty"`
	// Stall is set when Redis stopped answering and the run's stall bound
	// cut the calls still waiting; the run is then partial.
	Stall    *Stall             `json:"stall,omitempty"`
	Latency  map[string]Latency `json:"latency_us"`
	Fairness Fairness           `json:"fairness"`
	Safety   Safety             `json:"safety"`
	// Guard is the guarded resource's outcome, when critical sections
	// updated one (profile field guard).
	Guard   *Guard  `json:"guard,omitempty"`
	Series  []Point `json:"series"`
	Runtime Runtime `json:"runtime"`
	// CPU is where the CPU time went, Redis's and the load generator's,
	// and which side saturated; nil in results of tests that drive no
	// Redis, and of versions before it was measured.
	CPU *CPU `json:"cpu,omitempty"`
	// Waits is how long holds, think times and open-loop waits lasted
	// against how long the profile asked; nil in results of versions
	// before it was measured.
	Waits *Waits `json:"waits,omitempty"`
	// NoEffect names the profile's settings that could not take effect in
	// this run, each with why ("replica_sync: no replica, nothing sent"):
	// the profile records what was asked, this what did not happen.
	NoEffect []string `json:"no_effect,omitempty"`
	// Clamped counts latencies beyond the histograms' one-hour range,
	// recorded as one hour.
	Clamped int64 `json:"clamped,omitempty"`
	// HistogramLog is the interval log's file name, next to this file.
	HistogramLog string `json:"histogram_log,omitempty"`
	// ClientLog is what the Redis client library logged during the run
	// (reconnects, pool trouble), kept here instead of on the terminal;
	// ClientLogDropped counts the lines past the kept ones.
	ClientLog        []string `json:"client_log,omitempty"`
	ClientLogDropped int64    `json:"client_log_dropped,omitempty"`
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
	// Worker is set on one worker's result of a run spread over several
	// machines; Spread on the merged result of such a run.
	Worker *Worker `json:"worker,omitempty"`
	Spread *Spread `json:"spread,omitempty"`

	log    []byte // the interval log, written next to the JSON
	fromV1 bool   // read from a v1 file: throughput recomputed
}

// ErrorMessage is one distinct error message of a run.
type ErrorMessage struct {
	Class   string  `json:"class"` // the error class, as in Result.Errors
	Message string  `json:"message"`
	Count   int64   `json:"count"`
	First   float64 `json:"first_s"` // seconds since the run started
}

// Stall is how a run ended when Redis stopped answering: the calls still
// waiting a bound after the planned end (or an interrupt) were cut and
// counted as failed (ErrStalled), with the time they had waited.
type Stall struct {
	// NoReplyS is the longest a cut call had waited for Redis, in seconds.
	NoReplyS float64 `json:"no_reply_s"`
	// FromS is when the longest-waiting cut call was sent, in seconds
	// since the run started: when Redis stopped answering, as far as the
	// run saw.
	FromS float64 `json:"from_s"`
	// Calls is how many calls were cut.
	Calls int `json:"calls"`
	// BoundS is how long the run waited past its end for them, in seconds.
	BoundS float64 `json:"bound_s"`
}

// Reason is the stall in words, as partial_reason gives it.
func (s *Stall) Reason() string {
	return fmt.Sprintf("server stalled: no reply from t=%.1fs, for %.1fs (%s still waiting, cut %.1fs after the run's end)", s.FromS, s.NoReplyS, Count(s.Calls, "call"), s.BoundS)
}

// ErrorRateLimit is the share of failed measured operations the run was
// allowed: MaxErrorRate, else DefaultMaxErrorRate.
func (r *Result) ErrorRateLimit() float64 {
	if r.MaxErrorRate != nil {
		return *r.MaxErrorRate
	}
	return DefaultMaxErrorRate
}

// ErrorRate is the share of measured operations that failed (0 with none).
func (r *Result) ErrorRate() float64 {
	n := r.Throughput.attempts()
	if n == 0 {
		return 0
	}
	return float64(r.Throughput.Failed) / float64(n)
}

// attempts is Attempts, or Ops + Failed where a hand-made result left
// Attempts out.
func (t Throughput) attempts() int64 { return max(t.Attempts, t.Ops+t.Failed) }

// FailureKind names a reason a run failed (Failure.Kind).
type FailureKind string

// The reasons a run fails.
const (
	// FailSafety: the checker found owners holding a lock at once.
	FailSafety FailureKind = "safety"
	// FailLostUpdates: the guarded counter lost updates.
	FailLostUpdates FailureKind = "lost_updates"
	// FailUnwitnessed: the run asked for the guarded store's witness and
	// did not get all of it (Safety.Unwitnessed).
	FailUnwitnessed FailureKind = "unwitnessed"
	// FailStall: Redis stopped answering and the stall bound cut calls.
	FailStall FailureKind = "stall"
	// FailNoOperation: nothing finished, or nothing succeeded.
	FailNoOperation FailureKind = "no_operation"
	// FailErrorRate: more operations failed than ErrorRateLimit allows.
	FailErrorRate FailureKind = "error_rate"
	// FailDeadTime: seconds in which Redis failed every operation.
	FailDeadTime FailureKind = "dead_time"
	// FailMissingWorker: a worker of a run spread over several machines
	// never reported its result.
	FailMissingWorker FailureKind = "missing_worker"
)

// Throughput reports whether a failure of kind k is of the run's
// operations (they failed, stalled or did not finish), as opposed to its
// safety or of its evidence: a run that only broke exclusion still
// succeeded at its operations.
func (k FailureKind) Throughput() bool {
	return k != FailSafety && k != FailLostUpdates && k != FailUnwitnessed
}

// Failure is one reason a run's figures do not stand.
type Failure struct {
	Kind FailureKind
	Text string // one line, in words
}

// String is the failure in words.
func (f Failure) String() string { return f.Text }

// Failures says why the run does not stand, one Failure each: a
// mutual-exclusion violation, a lost update of the guarded counter, the
// guarded store's evidence missing, Redis stalled, no operation
// succeeded, more operations failed than ErrorRateLimit allows, or
// seconds with only failures. Empty when none applies. Exclusion is the
// clock checker's (Safety) to judge where it compared every pair; where
// it did not (merged machines), the guarded store's overlaps
// (Safety.StoreOverlaps) judge it too, in the same Failure.
// Within one process the clock checker is the exact one: the store sees a
// holder that stopped at a lost hold leave one round trip late. Every consumer (summary, report, compare, sweep, the CLIs'
// exit codes) reads the run's verdict from here, so none can call a
// failed run good. Chaos scenarios, which provoke violations on purpose,
// judge theirs apart and do not call it.
func (r *Result) Failures() []Failure {
	var out []Failure
	add := func(k FailureKind, format string, a ...any) {
		out = append(out, Failure{Kind: k, Text: fmt.Sprintf(format, a...)})
	}
	var unsafe []string
	if v := r.Safety.Violations; v > 0 {
		unsafe = append(unsafe, Count(v, "mutual-exclusion violation")+": owners held a lock at once")
	}
	if n := r.Safety.StoreOverlaps; n > 0 {
		unsafe = append(unsafe, Count(n, "overlap")+" the guarded store witnessed: two holders inside one lock at once")
	}
	if len(unsafe) > 0 {
		add(FailSafety, "%s", strings.Join(unsafe, "; "))
	}
	if u := r.Safety.Unwitnessed; u != "" {
		add(FailUnwitnessed, "no complete safety verdict: %s", u)
	}
	if g := r.Guard; g != nil && g.Lost > 0 {
		add(FailLostUpdates, "%s of the guarded counter", Count(g.Lost, "lost update"))
	}
	t := r.Throughput
	t.Attempts = t.attempts()
	if r.Stall != nil {
		add(FailStall, "%s", r.Stall.Reason())
	}
	switch {
	case t.Attempts == 0 && !r.Partial && t.Cut > 0:
		add(FailNoOperation, "no operation finished in the measured time: the run's end cut all %s short (a hold or wait longer than the run?)", commas(t.Cut))
	case t.Attempts == 0 && !r.Partial:
		add(FailNoOperation, "no operation finished in the measured time")
	case t.Attempts > 0 && t.Ops == 0:
		all := "all " + Count(t.Attempts, "attempt")
		if t.Attempts == 1 {
			all = "its one attempt"
		}
		add(FailNoOperation, "no operation succeeded: %s failed (%s)", all, r.errorBreakdown())
	case t.Attempts > 0 && r.ErrorRate() > r.ErrorRateLimit()+1e-12:
		add(FailErrorRate, "%s of operations failed (%s of %s: %s), over the %s allowed (--max-error-rate)",
			percent(r.ErrorRate()), commas(t.Failed), commas(t.Attempts), r.errorBreakdown(), percent(r.ErrorRateLimit()))
	}
	if t.Ops > 0 {
		if secs, from := r.deadTime(); secs >= minDeadTime {
			add(FailDeadTime, "Redis failed every operation for %.1fs from t=%.1fs (no success, only errors other than lock timeouts)", secs, from)
		}
	}
	if ms := r.Spread.MissingWorkers(); len(ms) > 0 {
		add(FailMissingWorker, "%s", missingWorkers(ms, r.Spread.Workers))
	}
	return out
}

// joinFailures is fs in words, "; " between them.
func joinFailures(fs []Failure) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = f.Text
	}
	return strings.Join(s, "; ")
}

// minDeadTime is how long a run may go with only failures before it
// fails whatever its error rate: failed calls can be slow (each dial to a
// dead server retries for half a second), so a dead server can hide
// behind a low error rate.
const minDeadTime = 1.0

// deadTime sums the measured seconds of the series in which nothing
// succeeded and something failed for another reason than a lock timeout,
// and says when the first began. After a stall the last interval is left
// out: it holds the calls the stall bound cut, whose failures are filed
// when they were cut, not when they went unanswered, and the stall's own
// line dates them.
func (r *Result) deadTime() (secs, from float64) {
	prev := 0.0
	from = -1
	series := r.Series
	if r.Stall != nil && len(series) > 0 {
		series = series[:len(series)-1]
	}
	for _, p := range series {
		if !p.Warmup && p.Ops == 0 && p.Errors-p.Timeouts > 0 {
			secs += p.T - prev
			if from < 0 {
				from = prev
			}
		}
		prev = p.T
	}
	return secs, from
}

// errorBreakdown is the failures by class: "conn 35,706 · timeout 12".
func (r *Result) errorBreakdown() string {
	var parts []string
	for _, c := range errClassNames[1:] {
		if n := r.Errors[c]; n > 0 {
			parts = append(parts, c+" "+commas(n))
		}
	}
	if len(parts) == 0 {
		return "no class recorded"
	}
	return strings.Join(parts, " · ")
}

// percent prints a share as a percentage with up to two decimals: 93.6%,
// 1%, 0.05%.
func percent(v float64) string {
	s := strconv.FormatFloat(v*100, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
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
	Lockbench  string    `json:"lockbench_version"`
	Go         string    `json:"go_version"`
	Host       string    `json:"host"`
	GOMAXPROCS int       `json:"gomaxprocs"`
	Start      time.Time `json:"start"`
	Profile    string    `json:"profile"`
	Workload   string    `json:"workload"` // one line: kind, clients × owners, locks, pacing
	// Server is the server as its INFO names it: "valkey 9.1.2",
	// "redis 7.0.15". Empty in results from before it was recorded.
	Server string `json:"server,omitempty"`
	// RedisVersion is INFO's redis_version: Valkey keeps one for clients
	// (9.1 says 7.2.4), so it does not tell the servers apart.
	RedisVersion string `json:"redis_version"`
	RedisBackend string `json:"redis_backend"`
	// RedisTopology is single, replica, sentinel, "cluster PxR" or cluster
	// (external).
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

// ServerName names the server: Server, or in a result from before
// servers were named only the redis_version it gave (which Valkey gives
// too), saying so.
func (m Meta) ServerName() string {
	switch {
	case m.Server != "":
		return m.Server
	case m.RedisVersion != "":
		return "redis_version " + m.RedisVersion + " (server not recorded)"
	}
	return ""
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
	// RevertStart is when the revert began (0: never reverted): a
	// resumed server can answer before the revert returns, so "after the
	// fault" means after RevertStart, while End is when the revert had
	// finished.
	RevertStart float64 `json:"revert_start_s,omitempty"`
	End         float64 `json:"end_s"`
	// Err is set when injecting or reverting failed.
	Err string `json:"error,omitempty"`
}

// Throughput counts measured operations. Only successful operations are
// throughput: a timed-out tryLock, a refused connection or a Redis error
// is an attempt, counted in Failed and by class in Result.Errors.
type Throughput struct {
	// Attempts is every measured operation that finished, successful or
	// not (those the run's end cut short are Cut, not attempts).
	Attempts int64 `json:"attempts"`
	// Ops is the attempts that succeeded: the operations the run achieved.
	Ops    int64 `json:"ops"`
	Failed int64 `json:"failed"` // Attempts − Ops
	// SuccessRatio is Ops / Attempts (vegeta's "Success"); 0 with no attempt.
	SuccessRatio float64 `json:"success_ratio"`
	// OpsPerSec is successful operations per measured second.
	OpsPerSec    float64          `json:"ops_per_s"`
	TargetRate   float64          `json:"target_rate,omitempty"` // open loop: the schedule's ops/s
	Acquisitions map[string]int64 `json:"acquisitions"`          // outermost, by mode
	Nested       int64            `json:"nested"`                // nested (reentrant) acquisitions
	Lost         int64            `json:"lost"`                  // holds the holder was told were lost before release
	// Cut is the operations the run's end cut short: acquisitions still
	// waiting, and holds that had not lasted their planned time (their
	// acquisitions count in Acquisitions, their holds in no latency).
	Cut int64 `json:"cut"`
	// Unreleased is the holds whose unlock failed or got no answer (warmup
	// included): Redis may keep them until their lease ends.
	Unreleased int64 `json:"unreleased"`
}

// ShardThroughput is the measured operations on the locks one Redis
// Cluster shard serves.
type ShardThroughput struct {
	Name         string  `json:"name"`  // e.g. "shard1 127.0.0.1:7001 slots 0-5460"
	Locks        int     `json:"locks"` // lock names served by the shard
	Ops          int64   `json:"ops"`   // successful operations
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
	stem := name + "-" + Stamp(r.Meta.Start)
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	return writeFiles(dir, freeStem(dir, r.Stem()), r)
}

// writeFiles is WriteFiles to the files stem names in dir, which exists.
func writeFiles(dir, stem string, r *Result) (string, error) {
	hlog := r.log
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

// ReadFile loads a result file, refusing other schemas. A v1 file (whose
// throughput counted failed operations too) is upgraded: its successful
// operations are its operations less its errors, and its rates follow.
func ReadFile(path string) (*Result, error) {
	return readVersioned(path, func(r *Result) string { return r.Schema }, Schema,
		map[string]func(*Result){schemaV1: (*Result).upgradeV1})
}

// upgradeV1 recomputes a v1 result's throughput from successes only.
func (r *Result) upgradeV1() {
	r.fromV1 = true
	r.Schema = Schema
	t := &r.Throughput
	t.Attempts = t.Ops
	t.Failed = min(r.ErrorCount(), t.Attempts)
	t.Ops = t.Attempts - t.Failed
	t.fill(r.Measured)
	for i := range r.Series {
		p := &r.Series[i]
		p.Attempts = p.Ops
		p.Ops = max(p.Attempts-p.Errors, 0)
		if p.Attempts > 0 {
			p.OpsPerSec *= float64(p.Ops) / float64(p.Attempts)
		}
	}
}

// FromV1 reports that r was read from a v1 file and upgraded.
func (r *Result) FromV1() bool { return r.fromV1 }

// Stamp is t in UTC as lockbench names files with it: 20261124T150405Z,
// sortable and free of characters shells or file systems mind.
func Stamp(t time.Time) string { return t.UTC().Format("20060102T150405Z") }

// The kinds of lockbench file, as KindOf names them.
const (
	KindResult = "result"
	KindChaos  = "chaos"
	KindSweep  = "sweep"
	KindLineup = "matrix"
	// KindMitigations is chaos matrix's mitigation matrix.
	KindMitigations = "mitigations"
)

// KindOf says which kind of lockbench file schema names, in its current
// version or an earlier one the readers still accept; "" for none.
func KindOf(schema string) string {
	switch schema {
	case Schema, schemaV1:
		return KindResult
	case ChaosSchema, chaosSchemaV1:
		return KindChaos
	case SweepSchema, sweepSchemaV1:
		return KindSweep
	case LineupSchema:
		return KindLineup
	case MitigationSchema:
		return KindMitigations
	}
	return ""
}
