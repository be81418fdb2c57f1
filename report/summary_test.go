package report_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/results/resultstest"
)

func summaryOf(t *testing.T, r *results.Result) string {
	t.Helper()
	var b strings.Builder
	if err := report.WriteSummary(&b, r); err != nil {
		t.Fatalf("WriteSummary: %v", err)
	}
	return b.String()
}

func baseResult() *results.Result {
	return &results.Result{
		Schema:   results.Schema,
		Meta:     results.Meta{Profile: "fair", Workload: "8 clients × 2 owners", Server: "redis 7.4", RedisVersion: "7.4", RedisBackend: "redis", RedisAddr: "127.0.0.1:6379"},
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
	fifo.Fairness.FIFO = &results.FIFO{Checked: 1000, Violations: 4, Overtaken: 2, SlackUs: 1000}
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
	ones.Fairness.FIFO = &results.FIFO{Checked: 1, Violations: 1, Overtaken: 1}
	ones.Throughput.Unreleased = 1
	precise := baseResult()
	precise.Waits = &results.Waits{Hold: &results.WaitError{Latency: results.Latency{Count: 3500, P50: 4, P99: 30, Max: 400}, AskedMean: 200},
		Clock: results.WaitClockTimer, TimerS: 0.05, KickedShare: 0.9, SpinS: 0.7, SpinShare: 0.2, CPUShare: 0.25}
	// Spun waits on a saturated host that Redis shares: the cpu line says
	// what lockbench's waits took of it.
	spun := baseResult()
	spun.Waits = &results.Waits{Hold: &results.WaitError{Latency: results.Latency{Count: 3500, P50: 1, P99: 9, Max: 40}, AskedMean: 200},
		Clock: results.WaitClockSpin, SpinS: 9.2, SpinShare: 0.82, CPUShare: 0.82}
	spun.CPU = &results.CPU{Redis: 0.7, RedisTotal: 0.72, Load: 1.12, Waits: 0.92, LoadLimit: 2, HostCores: 2, SharedHost: true, Host: 1.9}
	late := baseResult()
	late.Waits = &results.Waits{Hold: &results.WaitError{Latency: results.Latency{Count: 3500, P50: 900, P99: 1100, Max: 3000}, AskedMean: 200},
		Think: &results.WaitError{Latency: results.Latency{Count: 3500, P50: 3, P99: 20, Max: 50}, AskedMean: 1000}}

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
				"safety      OK: no mutual-exclusion violation in 3,500 critical sections\n",
				"errors      timeout 3 · ctx 0 · conn 1,200 · redis 0 · stalled 0 · other 0 · refused 0 · lost holds 0\n",
				"Jain 0.9977",
			},
			wantRe: []string{
				`(?m)^\s*latency\s+count\s+p50\s+p90\s+p99\s+p99\.9\s+max\s*$`,
				`(?m)^\s*acquire exclusive\s+1,000\s+120\.5µs\s+300\.0µs\s+1\.50ms\s+2\.50ms\s+3\.00s\s*$`,
				`(?m)^\s*hold\s+3,500\s+50\.0µs\s+60\.0µs\s+70\.0µs\s+80\.0µs\s+90\.0µs\s*$`,
			},
			notWant: []string{"VIOLATED", "PARTIAL", "FAILED", "NO DATA", "unreleased", "acquire read", "ping", "fifo", "incomplete", "max/2 > min", "cut by the end"},
		},
		{
			name: "waits within the bound",
			r:    precise,
			want: []string{
				"waits       hold  achieved − asked p50 +4.0µs · p99 +30.0µs · max +400.0µs over 3,500, asked 200.0µs on average\n",
				"waits slept on Go timers, 90% of them kicked awake at their deadlines by a high-resolution timer (0.05s of CPU at least), holds' last µs spun while the host had an idle core (0.70s), 25.0% of lockbench's own CPU\n",
			},
			notWant: []string{"WARNING", "--spin-waits"},
		},
		{
			name: "spun waits on a saturated host",
			r:    spun,
			want: []string{
				"every wait spun to its deadline (--spin-waits: exact at the host's expense): 9.20s spun, 82.0% of lockbench's own CPU\n",
				"lockbench 112% (of 200%: driving 20%, waiting 92%) · host 190% (of 200%; 6% neither Redis's nor lockbench's): the host's CPUs are the limit (Redis and lockbench share them); lockbench's own waits took 92% of the CPUs Redis shares: these figures are partly lockbench's, not the lock's\n",
			},
		},
		{
			name: "waits past the bound",
			r:    late,
			want: []string{
				"WARNING     hold lasts longer than asked: p50 +900.0µs, p99 +1.10ms, past the bound p50 ≤ 20.0µs, p99 ≤ 100.0µs, each + 1% of asked\n",
				"            think achieved − asked p50 +3.0µs",
			},
			notWant: []string{"think lasts longer", "spun"},
		},
		{
			name:    "violated",
			r:       violated,
			want:    []string{"safety      VIOLATED: 2 mutual-exclusion violations in 3,500 critical sections", "orders-lock: alice (exclusive) and bob (exclusive) both held it for 1.50ms at t=1.500000s"},
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
			want:    []string{"safety      OK: no mutual-exclusion violation in 1 critical section\n", "fifo        1 overtake of 1 waiter in 1 fair acquisition (", "unreleased  1 hold: "},
			notWant: []string{"1 critical sections", "1 overtakes", "1 waiters", "1 holds"},
		},
		{
			name: "fifo",
			r:    fifo,
			want: []string{"fifo        4 overtakes of 2 waiters in 1,000 fair acquisitions (send-time slack 1.00ms)"},
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
			want: []string{"starved 2/3", "max/2 > min"},
		},
		{
			name: "every operation failed",
			r:    readonly,
			want: []string{
				"FAILED      no operation succeeded: all 5,664 attempts failed (redis 5,664)\n",
				"throughput  0.0 ops/s  (0 successful of 5,664 attempts, 0%: 5,664 failed)",
				"fairness    no measured acquisitions among the 32 owners, so nothing to judge\n",
				"safety      NO DATA: no critical section was checked (nothing was acquired)\n",
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

func TestWriteSummaryPropagatesWriterError(t *testing.T) {
	want := errors.New("disk full")
	err := report.WriteSummary(failWriter{want}, &results.Result{})
	if !errors.Is(err, want) {
		t.Errorf("WriteSummary error = %v, want %v", err, want)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

func TestWriteMatrixSummaryDashesUnmeasured(t *testing.T) {
	m := &results.Lineup{Rounds: 1, Cells: []results.LineupCell{{
		Profile: "uncontended", Owners: 32, Impl: "lockimpl+ap",
		Median:           results.LineupRound{OpsPerSec: 64380.4, AcquireP50: 188.4, AcquireP99: 932.4},
		VsRedisBenchmark: results.Ratios{Ops: 1.41}, VsGoRedis: 1.25, VsCeiling: 0.8,
	}}}
	var b strings.Builder
	report.WriteLineupSummary(&b, m)
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

func TestWriteComparison(t *testing.T) {
	base, cur := resultstest.Run(), resultstest.Run()
	cur.Meta.Host = "ci-2"
	var b strings.Builder
	if err := report.WriteComparison(&b, results.Compare(base, cur, 10)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"BASE  rw90 · lockimpl on ci-1 at 2024-05-06 07:08:09Z",
		"NEW   rw90 · lockimpl on ci-2",
		"4,100.0 ops/s",
		"acquire write p99",
		"1.20ms",
		"0.9900",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; last != "OK: no gated metric regressed past 10%" {
		t.Errorf("verdict line %q", last)
	}
	// The table is aligned: its lines are equally wide.
	var table []string
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "metric ") || len(table) > 0 && l != "" {
			table = append(table, l)
		} else if len(table) > 0 {
			break
		}
	}
	if len(table) != 21 { // header, throughput, success ratio, 5 latencies × 3, errors, violations, jain
		t.Errorf("table of %d lines:\n%s", len(table), out)
	}
	for _, l := range table {
		if len([]rune(l)) != len([]rune(table[0])) {
			t.Errorf("table not aligned:\n%s", strings.Join(table, "\n"))
			break
		}
	}

	cur.Throughput.OpsPerSec = 100
	cur.Meta.Profile = "mutex"
	b.Reset()
	if err := report.WriteComparison(&b, results.Compare(base, cur, 0.5)); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	if !strings.Contains(out, "REGRESSED: throughput dropped 97.6%") || !strings.Contains(out, "over the 0.5% allowed") ||
		!strings.Contains(out, "note: profiles differ") || !strings.Contains(out, "REGRESSED\n") {
		t.Errorf("regressed output:\n%s", out)
	}
}

func mitigationSummary(m *results.MitigationMatrix) string {
	var b strings.Builder
	report.WriteMitigationSummary(&b, m)
	return b.String()
}

func TestMitigationSummaryVerdicts(t *testing.T) {
	good := results.MitigationCell{Scenario: "lease-expiry", Mitigation: "none", Lost: 3, Written: 9, Expect: "lost updates > 0", OK: true}
	bad := results.MitigationCell{Scenario: "lease-expiry", Mitigation: "fencing", Lost: 2, Written: 9, Expect: "0 lost updates", Problem: "2 lost updates"}
	skipped := results.MitigationCell{Scenario: "lease-expiry", Mitigation: "redisson", Skipped: "no Redisson variant"}
	for _, tc := range []struct {
		name    string
		m       results.MitigationMatrix
		ok      bool
		last    string
		partial bool
	}{
		{"as expected", results.MitigationMatrix{Cells: []results.MitigationCell{good, skipped}}, true, "matrix: every cell as expected", false},
		{"a bad cell", results.MitigationMatrix{Cells: []results.MitigationCell{good, bad}}, false, "matrix: FAIL: some cell", false},
		{"interrupted, good so far", results.MitigationMatrix{Cells: []results.MitigationCell{good}, Partial: true}, false, "matrix: PARTIAL: interrupted after 1 cell and 0 healthy runs [", true},
		{"interrupted, a bad cell", results.MitigationMatrix{Cells: []results.MitigationCell{good, bad}, Partial: true}, false, "matrix: PARTIAL: interrupted after 2 cells and 0 healthy runs; FAIL: 1 of them not as expected", true},
		{"every cell skipped", results.MitigationMatrix{Cells: []results.MitigationCell{skipped}}, false, "matrix: FAIL: nothing ran: every cell was skipped", false},
		{"no cell", results.MitigationMatrix{}, false, "matrix: FAIL: nothing ran", false},
	} {
		tc.m.Scenarios, tc.m.Mitigations = []string{"lease-expiry"}, []string{"none", "fencing", "redisson"}
		out := mitigationSummary(&tc.m)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if tc.m.OK() != tc.ok || !strings.HasPrefix(lines[len(lines)-1], tc.last) {
			t.Errorf("%s: ok %v (want %v), last line %q, want it to start %q", tc.name, tc.m.OK(), tc.ok, lines[len(lines)-1], tc.last)
		}
		if got := strings.HasPrefix(out, results.PartialNote); got != tc.partial {
			t.Errorf("%s: PARTIAL banner first: %v, want %v:\n%s", tc.name, got, tc.partial, out)
		}
	}
}
