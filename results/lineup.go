package results

import (
	"fmt"
	"time"
)

// LineupSchema names the side-by-side matrix file format.
const LineupSchema = "lockbench.matrix/v1"

// Lineup is implementations measured side by side on the same profiles,
// in rounds, with redis-benchmark driving the same scripts at each
// concurrency (bench perf's matrix; make perf renders it as docs/perf.md).
type Lineup struct {
	Schema string `json:"schema"`
	Meta   Meta   `json:"meta"`
	Rounds int    `json:"rounds"`
	// Pairs is how many rounds in all compared lockimpl+ap with plain
	// lockimpl where both ran: the matrix's, then the two alone
	// (LineupCell.PairRounds); Rounds when none ran alone.
	Pairs     int              `json:"pairs,omitempty"`
	Duration  time.Duration    `json:"duration_ns"` // measured time of each run
	Warmup    time.Duration    `json:"warmup_ns"`
	Elapsed   time.Duration    `json:"elapsed_ns"`
	Cells     []LineupCell     `json:"cells"`
	Baselines []LineupBaseline `json:"baselines"`
	// Targets are the side-by-side targets as judged when it was measured.
	Targets []TargetCheck `json:"targets"`
	// Partial is set when the measuring was interrupted; the cells keep
	// the rounds that finished.
	Partial bool `json:"partial,omitempty"`
	// Servers are the same matrix's server groups on each other server of
	// bench perf --servers, measured in the same rounds as this one, each
	// with its own baselines, ratios and targets; each one's Meta.Server
	// names its server.
	Servers []Lineup `json:"servers,omitempty"`
	// ServerTable lays this matrix and Servers side by side, a row per
	// implementation on each workload they share, then the servers'
	// redis-benchmark baselines at its concurrency.
	ServerTable []ServerRow `json:"server_table,omitempty"`
	// Scale is bench perf's scale part, when it ran beside the matrix:
	// the harness's own footprint at each point.
	Scale []ScaleRow `json:"scale,omitempty"`
	// JVMProfiles are where each Redisson configuration's JVM spent its
	// time, one cell of each profiled.
	JVMProfiles []JVMProfile `json:"jvm_profiles,omitempty"`
}

// Schedule says m's rounds, and its pairs of lockimpl and lockimpl+ap
// beyond them: "3 rounds, then lockimpl and lockimpl+ap alone to 8 pairs".
func (m *Lineup) Schedule() string {
	s := Count(m.Rounds, "round")
	if m.Pairs > m.Rounds {
		s += fmt.Sprintf(", then lockimpl and lockimpl+ap alone to %d pairs", m.Pairs)
	}
	return s
}

// JVMProfile is a flight recording of one implementation's JVM on one
// cell of the matrix, made in a run of its own after the rounds (the
// recording's sampling would weigh on the figures), and the methods its
// execution samples found on top.
type JVMProfile struct {
	Impl    string `json:"impl"`
	Profile string `json:"profile"`
	Owners  int    `json:"owners"`
	Clients int    `json:"clients"`
	// Recording is the .jfr file; Duration the recorded run's measured
	// time.
	Recording string        `json:"recording"`
	Duration  time.Duration `json:"duration_ns"`
	// OpsPerSec is the recorded run's, beside the cell's median: what
	// recording cost.
	OpsPerSec float64 `json:"ops_per_sec"`
	// Samples counts the execution samples; Top are the methods most
	// often on top of them (self samples), most first.
	Samples int     `json:"samples"`
	Top     []Frame `json:"top"`
	// Packages are the samples by package (a method's first two names),
	// most first.
	Packages []Frame `json:"packages,omitempty"`
	// Error says why the recording has no frames.
	Error string `json:"error,omitempty"`
}

// Frame is a method and the samples in which it was the top frame.
type Frame struct {
	Method  string `json:"method"`
	Samples int    `json:"samples"`
}

// ServerRow is one row of the server comparison: an implementation on
// one workload, or a redis-benchmark baseline at one concurrency, on
// every server.
type ServerRow struct {
	// Profile is the workload's; empty on a baseline's row.
	Profile string `json:"profile,omitempty"`
	// Owners is the workload's total owners, or the baseline's
	// concurrency (redis-benchmark -c).
	Owners int `json:"owners"`
	// Impl is the implementation, or RowRedisBenchmark or RowCeiling.
	Impl string `json:"impl"`
	// On holds each server's figures: the matrix's server first, then
	// those of Servers in order.
	On []ServerCell `json:"on"`
}

// The baseline rows of the server comparison: redis-benchmark driving the
// acquire and unlock scripts, plain and with -P 16 (the server's ceiling).
const (
	RowRedisBenchmark = "redis-benchmark"
	RowCeiling        = "redis-benchmark -P 16"
)

// ServerCell is one row's figures on one server, medians over the rounds.
type ServerCell struct {
	Server string `json:"server"` // as Meta.ServerName names it
	// OpsPerSec is the implementation's ops/s, or redis-benchmark's
	// lock+unlock cycles/s.
	OpsPerSec float64 `json:"ops_per_sec"`
	// AcquireP99 is the acquire call's p99 (redis-benchmark's acquire
	// script's, plain only), in µs.
	AcquireP99 float64 `json:"acquire_p99_us,omitempty"`
	// Limit is the side that ran out of CPU in most rounds (CPU.Limit),
	// LimitNone when neither did.
	Limit string `json:"limit,omitempty"`
	// VsFirst is OpsPerSec over the first server's, the median of the
	// rounds' ratios; 0 on the first server and where either is missing.
	VsFirst float64 `json:"vs_first,omitempty"`
}

// LineupRound is one run of one cell.
type LineupRound struct {
	Round      int     `json:"round"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	AcquireP50 float64 `json:"acquire_p50_us"` // all modes
	AcquireP99 float64 `json:"acquire_p99_us"`
	HandoffP50 float64 `json:"handoff_p50_us"` // 0 when nothing waited
	HandoffP99 float64 `json:"handoff_p99_us"`
	WaitP50    float64 `json:"wait_p50_us"`
	Handoffs   int64   `json:"handoffs"`
	Waits      int64   `json:"waits"`
	Ops        int64   `json:"ops"`
	Errors     int64   `json:"errors"`
	// Cut counts the operations the run's end cut short (Throughput.Cut).
	Cut        int64   `json:"cut"`
	Violations int64   `json:"violations"`
	Jain       float64 `json:"jain"`
	// Holds counts the holds measured against what the profile asked
	// (Result.Waits.Hold); HoldErrP50 and HoldErrP99 are their achieved
	// minus asked, µs. HoldInImpl: the implementation's process held them
	// (Waits.HoldNote).
	Holds      int64   `json:"holds,omitempty"`
	HoldErrP50 float64 `json:"hold_err_p50_us,omitempty"`
	HoldErrP99 float64 `json:"hold_err_p99_us,omitempty"`
	HoldInImpl bool    `json:"hold_in_impl,omitempty"`
	// SpinShare is the share of lockbench's own CPU that spinning to
	// waits' deadlines took (Waits.SpinShare); WaitCPU is what its waits
	// took in all, spin and the clock's kicks, in cores (CPU.Waits).
	SpinShare float64 `json:"spin_cpu_share,omitempty"`
	WaitCPU   float64 `json:"wait_cpu,omitempty"`
	// RedisCPU and LoadCPU are the busiest server's command thread and
	// the load generator over the run, in cores; CPULimit names the side
	// that saturated (CPU.Limit).
	RedisCPU float64 `json:"redis_cpu,omitempty"`
	LoadCPU  float64 `json:"load_cpu,omitempty"`
	CPULimit string  `json:"cpu_limit,omitempty"`
	// HelperCPU is the helper processes' part of LoadCPU (Redisson's
	// JVM), HelperSysCPU the kernel's part of that, HostCPU the busy time
	// of the host's CPUs (CPU.Helper, CPU.HelperSys, CPU.Host), in cores.
	HelperCPU    float64 `json:"helper_cpu,omitempty"`
	HelperSysCPU float64 `json:"helper_sys_cpu,omitempty"`
	HostCPU      float64 `json:"host_cpu,omitempty"`
	Partial      bool    `json:"partial,omitempty"`
	File         string  `json:"file,omitempty"` // where the result was saved
}

// Ratios are one implementation's figures over a reference's; 0 where
// either is missing.
type Ratios struct {
	Ops        float64 `json:"ops"`
	AcquireP50 float64 `json:"acquire_p50"`
	AcquireP99 float64 `json:"acquire_p99"`
	HandoffP50 float64 `json:"handoff_p50"`
}

// LineupCell is one implementation on one workload: medians over rounds.
type LineupCell struct {
	Profile string `json:"profile"`
	// Description is the profile's, for a reader of the matrix alone.
	Description string        `json:"description,omitempty"`
	Clients     int           `json:"clients"`
	Owners      int           `json:"owners"`
	Impl        string        `json:"impl"`
	Note        string        `json:"note,omitempty"` // the implementation's note on the profile
	Rounds      []LineupRound `json:"rounds"`
	// PairRounds are lockimpl's and lockimpl+ap's rounds after the
	// matrix's, the two alone back to back: more pairs for VsPlain and
	// the handoff comparison. Median and the other ratios read Rounds.
	PairRounds []LineupRound `json:"pair_rounds,omitempty"`
	Median     LineupRound   `json:"median"` // per-figure medians; counts are sums
	// VsRaw compares with the raw scripts on the same workload, round by
	// round; VsRedisBenchmark with redis-benchmark at the same concurrency
	// in the same round.
	VsRaw            Ratios `json:"vs_raw"`
	VsRedisBenchmark Ratios `json:"vs_redis_benchmark"`
	// VsGoRedis is ops/s over bare go-redis loops running the same two
	// scripts at the same concurrency in the same round, on the
	// autopipeliner for an implementation that rides it; VsCeiling over
	// redis-benchmark -P 16's cycles, the server's own ceiling.
	VsGoRedis float64 `json:"vs_go_redis,omitempty"`
	VsCeiling float64 `json:"vs_ceiling,omitempty"`
	// VsPlain compares lockimpl+ap with plain lockimpl on the same
	// workload, round by round; nil on other cells.
	VsPlain *VsPlain `json:"vs_plain,omitempty"`
}

// VsPlain is an auto-pipelined cell's ops/s, acquire p99 and handoff p50
// over plain lockimpl's, pair by pair.
type VsPlain struct {
	Ops        RatioSpread `json:"ops"`
	AcquireP99 RatioSpread `json:"acquire_p99"`
	HandoffP50 RatioSpread `json:"handoff_p50"`
}

// Lost names the figures ("ops/s", "p99") auto-pipelining lost on beyond
// the pairs' spread: worse in every one of enough pairs (RatioSpread).
func (v VsPlain) Lost() []string {
	var lost []string
	if v.Ops.Below() {
		lost = append(lost, "ops/s")
	}
	if v.AcquireP99.Above() {
		lost = append(lost, "p99")
	}
	return lost
}

// Pairs is how many pairs v compares.
func (v VsPlain) Pairs() int { return max(v.Ops.Rounds, v.AcquireP99.Rounds) }

// Judged reports whether v has the pairs (MinPairs) to show a loss.
func (v VsPlain) Judged() bool { return v.Pairs() >= MinPairs }

// MinPairs is the fewest pairs that can show a loss: of two that do not
// differ, all of 6 pairs fall on one given side once in 64; all of 3 would
// once in 8, a verdict by chance.
const MinPairs = 6

// RatioSpread is a ratio of one cell's figure to another's over paired
// runs (each pair's two runs back to back): the pairs' ratios, their
// median, least and greatest.
type RatioSpread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Rounds int     `json:"rounds"` // the pairs
	// Apart: every pair's ratio is on the same side of 1, so the
	// difference held through the machine's drift from pair to pair, which
	// hits both runs of a pair alike. Of two that do not differ, n pairs
	// all fall on one given side with a chance of 1 in 2^n.
	Apart bool `json:"apart,omitempty"`
}

// Judged reports whether r has the pairs (MinPairs) to show a difference
// beyond the spread.
func (r RatioSpread) Judged() bool { return r.Rounds >= MinPairs }

// Above reports a ratio above 1 in every one of enough pairs: slower, for
// a latency.
func (r RatioSpread) Above() bool { return r.Judged() && r.Apart && r.Median > 1 }

// Below reports a ratio below 1 in every one of enough pairs: fewer, for
// ops/s.
func (r RatioSpread) Below() bool { return r.Judged() && r.Apart && r.Median > 0 && r.Median < 1 }

// Baseline is redis-benchmark driving the acquire script on fresh names
// and the unlock script, at one concurrency.
type Baseline struct {
	Clients      int     `json:"clients"`
	Requests     int     `json:"requests"`
	LockPerSec   float64 `json:"lock_per_sec"`
	UnlockPerSec float64 `json:"unlock_per_sec"`
	// Cycles is set on a median over rounds: the median of the rounds'
	// cycle rates, which the median lock and unlock rates, each from
	// whichever round, need not combine to.
	Cycles float64 `json:"cycles_per_sec,omitempty"`
	// LockP50Us and LockP99Us are the acquire script's latency percentiles
	// as redis-benchmark reports them (ms with 3 decimals: 1 µs resolution).
	LockP50Us float64 `json:"lock_p50_us"`
	LockP99Us float64 `json:"lock_p99_us"`
	// RedisCPU is the server's command thread while redis-benchmark ran,
	// in cores; LoadCPU redis-benchmark's own.
	RedisCPU float64 `json:"redis_cpu,omitempty"`
	LoadCPU  float64 `json:"load_cpu,omitempty"`
	// Ceiling is the same two scripts by redis-benchmark -P 16: the
	// server's ceiling here, where its command thread, not round trips, is
	// the limit.
	Ceiling Drive `json:"ceiling"`
	// GoRedis and GoRedisPipelined are bare go-redis loops, a goroutine
	// per owner alternating the two scripts with nothing else: what any Go
	// client reaches here, plain and on go-redis's autopipeliner.
	GoRedis          Drive `json:"go_redis"`
	GoRedisPipelined Drive `json:"go_redis_pipelined"`
}

// Drive is one baseline driver: its lock+unlock cycles per second and
// the CPU it took, in cores.
type Drive struct {
	CyclesPerSec float64 `json:"cycles_per_sec"`
	Cycles       int64   `json:"cycles,omitempty"`    // counted in the measured time
	RedisCPU     float64 `json:"redis_cpu,omitempty"` // the server's command thread
	LoadCPU      float64 `json:"load_cpu,omitempty"`  // the driver's
}

// CyclesPerSec is lock+unlock cycles per second when each connection
// alternates the two: the harmonic combination of the two rates, or, on a
// median over rounds, Cycles.
func (b Baseline) CyclesPerSec() float64 {
	if b.Cycles > 0 {
		return b.Cycles
	}
	if b.LockPerSec <= 0 || b.UnlockPerSec <= 0 {
		return 0
	}
	return 1 / (1/b.LockPerSec + 1/b.UnlockPerSec)
}

// LineupBaseline is redis-benchmark at one concurrency: medians over the
// rounds.
type LineupBaseline struct {
	Clients int        `json:"clients"`
	Rounds  []Baseline `json:"rounds"`
	Median  Baseline   `json:"median"`
}

// TargetCheck is one side-by-side target, judged on a matrix.
type TargetCheck struct {
	Target string `json:"target"`
	Value  string `json:"value"`
	Met    bool   `json:"met"`
}

// Cell returns the cell of impl on profile at owners, or nil.
func (m *Lineup) Cell(profile string, owners int, impl string) *LineupCell {
	for i := range m.Cells {
		if c := &m.Cells[i]; c.Profile == profile && c.Owners == owners && c.Impl == impl {
			return c
		}
	}
	return nil
}

// BaselineAt is redis-benchmark's round round at concurrency n, nil when
// it did not run.
func (m *Lineup) BaselineAt(n, round int) *Baseline {
	for i := range m.Baselines {
		if b := &m.Baselines[i]; b.Clients == n && round < len(b.Rounds) {
			return &b.Rounds[round]
		}
	}
	return nil
}

// WriteLineup writes m as <dir>/matrix-<time>.json (atomically) and
// returns the path.
func WriteLineup(dir string, m *Lineup) (string, error) {
	m.Schema = LineupSchema
	return writeJSON(dir, "matrix-"+Stamp(m.Meta.Start)+".json", m)
}

// ReadLineup loads a matrix file, refusing other schemas.
func ReadLineup(path string) (*Lineup, error) {
	return readVersioned(path, func(m *Lineup) string { return m.Schema }, LineupSchema, nil)
}
