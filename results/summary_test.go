package results_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

func summaryOf(t *testing.T, r *results.Result) string {
	t.Helper()
	var b strings.Builder
	if err := results.WriteSummary(&b, r); err != nil {
		t.Fatalf("WriteSummary: %v", err)
	}
	return b.String()
}

func baseResult() *results.Result {
	return &results.Result{
		Schema:   results.Schema,
		Meta:     results.Meta{Profile: "fair", Workload: "8 clients × 2 owners", RedisVersion: "7.4", RedisBackend: "redis", RedisAddr: "127.0.0.1:6379"},
		Measured: 10, Warmup: 2,
		Throughput: results.Throughput{
			Attempts: 1235770, Ops: 1234567, Failed: 1203, SuccessRatio: 0.999027, OpsPerSec: 12345.67,
			Acquisitions: map[string]int64{"exclusive": 1000, "read": 2500},
			Nested:       40,
		},
		Errors: map[string]int64{"timeout": 3, "ctx": 0, "conn": 1200, "other": 0},
		Latency: map[string]results.Latency{
			"acquire_exclusive": {Count: 1000, P50: 120.5, P90: 300, P99: 1500, P999: 2500, Max: 3_000_000},
			"hold":              {Count: 3500, P50: 50, P90: 60, P99: 70, P999: 80, Max: 90},
		},
		Fairness: results.Fairness{Owners: 2, Min: 1000, Max: 1100, Jain: 0.9977, MinMax: 0.9091, CV: 0.0476},
		Safety:   results.Safety{Sections: 3500},
	}
}

func TestWriteSummary(t *testing.T) {
	violated := baseResult()
	violated.Safety = results.Safety{
		Sections: 3500, Violations: 2, MaxOverlapUs: 1500,
		Examples: []results.Violation{{
			Lock:  "orders-lock",
			First: results.Holder{Owner: "alice", Mode: "exclusive"}, Second: results.Holder{Owner: "bob", Mode: "exclusive"},
			OverlapStart: 1.5, OverlapEnd: 1.5015, OverlapUs: 1500,
		}},
	}
	partial := baseResult()
	partial.Partial, partial.PartialReason = true, "interrupted"
	incomplete := baseResult()
	incomplete.Safety.Incomplete = "7 operations past the limit were not checked"
	manyExamples := baseResult()
	manyExamples.Safety = results.Safety{Sections: 10, Violations: 9}
	for _, lk := range []string{"l1", "l2", "l3", "l4", "l5"} {
		manyExamples.Safety.Examples = append(manyExamples.Safety.Examples, results.Violation{Lock: lk, OverlapUs: 1})
	}
	fifo := baseResult()
	fifo.Fairness.FIFO = &results.FIFO{Checked: 1000, Violations: 4, SlackUs: 1000}
	withHandoff := baseResult()
	withHandoff.Latency["handoff"] = results.Latency{Count: 10, P50: 300}
	withHandoff.Latency["ping"] = results.Latency{Count: 10, P50: 100}
	starved := baseResult()
	starved.Fairness = results.Fairness{Owners: 3, Min: 0, Max: 10, Jain: 0.3333, Starved: 2}
	// Every operation failed against a read-only replica: nothing was
	// acquired, so there is no throughput, no safety and no fairness.
	readonly := baseResult()
	readonly.Throughput = results.Throughput{Attempts: 5664, Failed: 5664, Acquisitions: map[string]int64{}}
	readonly.Errors = map[string]int64{"redis": 5664}
	readonly.ErrorMessages = []results.ErrorMessage{{Class: "redis", Message: "READONLY You can't write against a read only replica.", Count: 5664, First: 0.01}}
	readonly.Latency = map[string]results.Latency{}
	readonly.Fairness = results.Fairness{Owners: 32, Starved: 32}
	readonly.Safety = results.Safety{}
	stalled := baseResult()
	stalled.Partial, stalled.PartialReason = true, "server stalled: no reply from t=27.8s, for 4.2s"
	stalled.Stall = &results.Stall{FromS: 27.8, NoReplyS: 4.2, Calls: 32, BoundS: 2}
	stalled.Throughput.Unreleased = 3
	lenient := baseResult()
	lenient.Throughput = results.Throughput{Attempts: 100, Ops: 90, Failed: 10, SuccessRatio: 0.9, Acquisitions: map[string]int64{}}
	lenient.Errors = map[string]int64{"timeout": 10}
	tenPct := 0.1
	lenient.MaxErrorRate = &tenPct
	tooMany := baseResult()
	tooMany.Throughput = lenient.Throughput
	tooMany.Errors = lenient.Errors
	// One of each: no line says "1 critical sections" or "1 overtakes".
	ones := baseResult()
	ones.Safety = results.Safety{Sections: 1}
	ones.Fairness.FIFO = &results.FIFO{Checked: 1, Violations: 1}
	ones.Throughput.Unreleased = 1

	tests := []struct {
		name    string
		r       *results.Result
		want    []string // substrings
		wantRe  []string // multi-line regexps
		notWant []string
	}{
		{
			name: "clean",
			r:    baseResult(),
			want: []string{
				"lockbench fair · lockimpl\n",
				"  8 clients × 2 owners\n",
				"redis 7.4 (redis 127.0.0.1:6379) · 10.0s measured after 2.0s warmup",
				"throughput  12,345.7 ops/s  (1,234,567 successful of 1,235,770 attempts, 99.9%: 1,203 failed)\n",
				"acquired    exclusive 1,000 · read 2,500 · nested 40\n",
				"safety      OK: 0 violations in 3,500 critical sections\n",
				"errors      timeout 3 · ctx 0 · conn 1,200 · redis 0 · stalled 0 · other 0 · lost holds 0\n",
				"jain 0.9977",
			},
			wantRe: []string{
				`(?m)^\s*latency\s+count\s+p50\s+p90\s+p99\s+p99\.9\s+max\s*$`,
				`(?m)^\s*acquire exclusive\s+1,000\s+120\.5µs\s+300\.0µs\s+1\.50ms\s+2\.50ms\s+3\.00s\s*$`,
				`(?m)^\s*hold\s+3,500\s+50\.0µs\s+60\.0µs\s+70\.0µs\s+80\.0µs\s+90\.0µs\s*$`,
			},
			notWant: []string{"VIOLATED", "PARTIAL", "FAILED", "NO DATA", "unreleased", "acquire read", "ping", "fifo", "incomplete", "max/2 > min", "cut by the end"},
		},
		{
			name:    "violated",
			r:       violated,
			want:    []string{"safety      VIOLATED: 2 violations in 3,500 critical sections (max overlap 1.50ms)", "orders-lock: alice (exclusive) and bob (exclusive) both held it for 1.50ms at t=1.500000s"},
			notWant: []string{"OK:", "more in the result file"},
		},
		{
			name: "partial",
			r:    partial,
			want: []string{"lockbench fair · lockimpl  [PARTIAL: interrupted]\n"},
		},
		{
			name: "incomplete safety check",
			r:    incomplete,
			want: []string{"incomplete: 7 operations past the limit were not checked"},
		},
		{
			name:    "examples beyond three are elided",
			r:       manyExamples,
			want:    []string{"l1:", "l2:", "l3:", "… 2 more in the result file"},
			notWant: []string{"l4:", "l5:"},
		},
		{
			name:    "counts of one",
			r:       ones,
			want:    []string{"safety      OK: 0 violations in 1 critical section\n", "fifo        1 overtake in 1 fair acquisition (", "unreleased  1 hold: "},
			notWant: []string{"1 critical sections", "1 overtakes", "1 holds"},
		},
		{
			name: "fifo",
			r:    fifo,
			want: []string{"fifo        4 overtakes in 1,000 fair acquisitions (slack 1.00ms)"},
		},
		{
			name:   "handoff against ping",
			r:      withHandoff,
			want:   []string{"handoff p50 is 3.0× the ping p50"},
			wantRe: []string{`(?m)^\s*handoff\s+10\s`, `(?m)^\s*ping\s+10\s`},
		},
		{
			name: "starvation flagged",
			r:    starved,
			want: []string{"starved 2/3", "(max/2 > min)"},
		},
		{
			name: "every operation failed",
			r:    readonly,
			want: []string{
				"FAILED      no operation succeeded: all 5,664 attempts failed (redis 5,664)\n",
				"throughput  0.0 ops/s  (0 successful of 5,664 attempts, 0%: 5,664 failed)",
				"fairness    no measured acquisitions: nothing to judge\n",
				"safety      NO DATA: no critical section was checked\n",
				"redis ×5,664 from 0.0s: READONLY You can't write against a read only replica.\n",
			},
			notWant: []string{"jain", "starved", "OK:"},
		},
		{
			name: "stalled",
			r:    stalled,
			want: []string{
				"FAILED      server stalled: no reply from t=27.8s, for 4.2s (32 calls still waiting, cut 2.0s after the run's end)\n",
				"unreleased  3 holds: their unlock failed or got no answer",
			},
		},
		{
			name:    "error rate within a raised threshold",
			r:       lenient,
			notWant: []string{"FAILED"},
		},
		{
			name: "error rate over the default threshold",
			r:    tooMany,
			want: []string{"FAILED      10% of operations failed (10 of 100: timeout 10), over the 1% allowed (--max-error-rate)\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := summaryOf(t, tt.r)
			for _, s := range tt.want {
				if !strings.Contains(out, s) {
					t.Errorf("summary lacks %q:\n%s", s, out)
				}
			}
			for _, re := range tt.wantRe {
				if !regexp.MustCompile(re).MatchString(out) {
					t.Errorf("summary does not match %s:\n%s", re, out)
				}
			}
			for _, s := range tt.notWant {
				if strings.Contains(out, s) {
					t.Errorf("summary unexpectedly contains %q:\n%s", s, out)
				}
			}
		})
	}
}

// A collected result with a violation prints it with the lock's name.
func TestWriteSummaryCollectedViolation(t *testing.T) {
	r := runE2E(t)
	out := summaryOf(t, r)
	for _, s := range []string{
		"safety      VIOLATED: 1 violation in 104 critical sections (max overlap 50.00ms)",
		"shared: w0 (exclusive) and w1 (exclusive) both held it for 50.00ms at t=0.550000s",
		"throughput  27.0 ops/s  (81 successful of 85 attempts, 95.29%: 4 failed)",
		"errors      timeout 2 · ctx 0 · conn 1 · redis 0 · stalled 0 · other 1 · lost holds 1 · cut by the end 1",
		"FAILED      4.71% of operations failed (4 of 85: timeout 2 · conn 1 · other 1), over the 1% allowed (--max-error-rate)",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("summary lacks %q:\n%s", s, out)
		}
	}
	for _, metric := range []string{"acquire exclusive", "acquire read", "acquire write", "acquire nested", "release", "hold", "wait", "handoff", "ping"} {
		if !regexp.MustCompile(`(?m)^\s*` + metric + `\s+[0-9,]+\s`).MatchString(out) {
			t.Errorf("no latency row for %s:\n%s", metric, out)
		}
	}
}

func TestWriteSummaryPropagatesWriterError(t *testing.T) {
	want := errors.New("disk full")
	err := results.WriteSummary(failWriter{want}, &results.Result{})
	if !errors.Is(err, want) {
		t.Errorf("WriteSummary error = %v, want %v", err, want)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// TestCPULimit: each way a run can run out of CPU is named, and a run
// that ran out of nothing is called latency-bound.
func TestCPULimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		cpu   results.CPU
		limit string
		says  string
	}{
		{"server", results.CPU{Redis: 0.97, RedisTotal: 1.0, Load: 1.2, LoadLimit: 2, HostCores: 4, SharedHost: true},
			results.LimitRedis, "redis 97% of a core · lockbench 120% (of 200%) · host 220% (of 400%): the server is the limit"},
		{"load", results.CPU{Redis: 0.4, RedisTotal: 0.4, Load: 1.85, LoadLimit: 2, HostCores: 8, SharedHost: true},
			results.LimitLoad, "lockbench is the limit (the load generator's CPUs)"},
		{"shared host", results.CPU{Redis: 0.8, RedisTotal: 0.85, Load: 1.0, LoadLimit: 2, HostCores: 2, SharedHost: true},
			results.LimitHost, "host 185% (of 200%): the host's CPUs are the limit (Redis and lockbench share them)"},
		{"remote server", results.CPU{Redis: 0.8, RedisTotal: 0.85, Load: 1.0, LoadLimit: 2, HostCores: 2},
			results.LimitNone, "redis 80% of a core · lockbench 100% (of 200%): neither is saturated: latency is the limit"},
		{"busy host", results.CPU{Redis: 0.43, RedisTotal: 0.45, Load: 0.78, LoadLimit: 2, HostCores: 2, SharedHost: true, Host: 1.98},
			results.LimitHost, "host 198% (of 200%; 75% neither Redis's nor lockbench's): the host's CPUs are the limit, and other work took 75% of them"},
		{"measured host, not busy", results.CPU{Redis: 0.7, RedisTotal: 0.72, Load: 0.98, LoadLimit: 2, HostCores: 2, SharedHost: true, Host: 1.72},
			results.LimitNone, "host 172% (of 200%): neither is saturated"},
		{"latency", results.CPU{Redis: 0.3, RedisTotal: 0.3, Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true},
			results.LimitNone, "neither is saturated"},
		{"unread, host read", results.CPU{Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true, Unread: "INFO cpu: NOPERM", Host: 1.3},
			results.LimitNone, "lockbench 50% (of 200%) · host 130% (of 200%): lockbench is not saturated"},
		{"unread", results.CPU{Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true, Unread: "INFO cpu: NOPERM"},
			results.LimitNone, "redis unread (INFO cpu: NOPERM) · lockbench 50% (of 200%): lockbench is not saturated; the server's share is unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.cpu.Limit(); got != c.limit {
				t.Errorf("Limit() = %q, want %q", got, c.limit)
			}
			if got := c.cpu.Line(); !strings.Contains(got, c.says) {
				t.Errorf("Line() = %q, want it to say %q", got, c.says)
			}
		})
	}
}

// A figure the matrix did not measure (raw was not run; uncontended has no
// handoffs) prints as a dash, never as a measured-looking zero.
func TestWriteMatrixSummaryDashesUnmeasured(t *testing.T) {
	m := &results.Matrix{Rounds: 1, Cells: []results.MatrixCell{{
		Profile: "uncontended", Owners: 32, Impl: "lockimpl+ap",
		Median:           results.MatrixRound{OpsPerSec: 64380.4, AcquireP50: 188.4, AcquireP99: 932.4},
		VsRedisBenchmark: results.Ratios{Ops: 1.41}, VsGoRedis: 1.25, VsCeiling: 0.8,
	}}}
	var b strings.Builder
	results.WriteMatrixSummary(&b, m)
	var row string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "lockimpl+ap") {
			row = l
		}
	}
	f := strings.Fields(row)
	// profile owners impl ops/s ×raw ×rb ×go-redis ×ceiling p50 p99 handoff
	if len(f) < 11 || f[4] != "—" || f[5] != "1.41×" || f[6] != "1.25×" || f[7] != "0.80×" || f[10] != "—" {
		t.Errorf("row = %q; want × raw and handoff p50 as —, × rb 1.41×, × go-redis 1.25×, × ceiling 0.80×", row)
	}
	if strings.Contains(row, "0.00") {
		t.Errorf("row %q prints an unmeasured figure as 0.00", row)
	}
}

// TestCount: a count's noun agrees with it, with thousands separators,
// so that no line says "1 runs" or "over 1 points".
func TestCount(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{results.Count(1, "run"), "1 run"},
		{results.Count(0, "run"), "0 runs"},
		{results.Count(int64(1), "critical section"), "1 critical section"},
		{results.Count(int64(3500), "critical section"), "3,500 critical sections"},
		{results.Count(int32(2), "match"), "2 matches"},
		{results.Noun(1, "point"), "point"},
		{results.Noun(1008, "owner"), "owners"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
