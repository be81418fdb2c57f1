package results_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/results/resultstest"
)

func row(t *testing.T, c results.Comparison, name string) results.Row {
	t.Helper()
	for _, r := range c.Rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", name, c.Rows)
	return results.Row{}
}

func TestCompareThroughputDrop(t *testing.T) {
	base, cur := resultstest.Run(), resultstest.Run()
	cur.Throughput.OpsPerSec = 3140
	c := results.Compare(base, cur, 10)
	if c.OK() {
		t.Fatal("a 23.4% throughput drop passed a 10% gate")
	}
	want := "throughput dropped 23.4% (4,100 → 3,140 ops/s), over the 10% allowed"
	if len(c.Regressions) != 1 || c.Regressions[0] != want {
		t.Errorf("Regressions = %q, want [%q]", c.Regressions, want)
	}
	tp := row(t, c, "throughput")
	if !tp.Gated || !tp.Regressed || tp.Delta != "-23.4%" || tp.Change != results.ChangeWorse || tp.Better != results.HigherIsBetter || tp.Unit != "ops/s" {
		t.Errorf("throughput row = %+v", tp)
	}
	if got := c.Verdict(); got != "REGRESSED: "+want {
		t.Errorf("Verdict = %q", got)
	}
}

func TestCompareThreshold(t *testing.T) {
	for _, tc := range []struct {
		name      string
		max       float64
		opsPerSec float64 // new throughput; base 4100
		p99       float64 // new acquire p99; base 1000
		regressed bool
	}{
		{"unchanged, zero tolerance", 0, 4100, 1000, false},
		{"throughput exactly 10% down", 10, 3690, 1000, false},
		{"throughput just over 10% down", 10, 3689, 1000, true},
		{"throughput up", 10, 9000, 1000, false},
		{"p99 exactly 10% up", 10, 4100, 1100, false},
		{"p99 just over 10% up", 10, 4100, 1100.1, true},
		{"p99 down", 10, 4100, 10, false},
		{"p99 0.6% up, half a percent allowed", 0.5, 4100, 1006, true},
		{"p99 0.4% up, half a percent allowed", 0.5, 4100, 1004, false},
		{"negative tolerance is none", -5, 4099, 1000, true},
	} {
		base, cur := resultstest.Run(), resultstest.Run()
		cur.Throughput.OpsPerSec = tc.opsPerSec
		l := cur.Latency[results.AcquireAll]
		l.P99 = tc.p99
		cur.Latency[results.AcquireAll] = l
		c := results.Compare(base, cur, tc.max)
		if c.OK() == tc.regressed {
			t.Errorf("%s: OK() = %v, regressions %q", tc.name, c.OK(), c.Regressions)
		}
		if tc.max < 0 && c.MaxRegressionPct != 0 {
			t.Errorf("%s: MaxRegressionPct = %v, want 0", tc.name, c.MaxRegressionPct)
		}
	}
}

func TestCompareGates(t *testing.T) {
	base, cur := resultstest.Run(), resultstest.Run()
	for _, k := range []string{"hold", "acquire_nested"} {
		l := cur.Latency[k]
		l.P50, l.P99, l.P999 = l.P50*5, l.P99*5, l.P999*5
		cur.Latency[k] = l
	}
	cur.Errors["conn"] = 500
	cur.Fairness.Jain = 0.5
	l := cur.Latency["acquire_write"]
	l.P99 *= 2
	cur.Latency["acquire_write"] = l

	c := results.Compare(base, cur, 10)
	gated := map[string]bool{}
	for _, r := range c.Rows {
		if r.Gated {
			gated[r.Name] = true
		}
		if r.Regressed && r.Name != "acquire write p99" {
			t.Errorf("row %s regressed; only acquire write p99 should", r.Name)
		}
	}
	want := []string{"throughput", "success ratio", "acquire p99", "acquire read p99", "acquire write p99", "safety violations"}
	if len(gated) != len(want) {
		t.Errorf("gated rows %v, want %v", gated, want)
	}
	for _, w := range want {
		if !gated[w] {
			t.Errorf("%s not gated", w)
		}
	}
	if len(c.Regressions) != 1 || c.Regressions[0] != "acquire write p99 rose 100.0% (1.20ms → 2.40ms), over the 10% allowed" {
		t.Errorf("Regressions = %q", c.Regressions)
	}
	for name, change := range map[string]string{
		"hold p99": results.ChangeWorse, "acquire nested p50": results.ChangeWorse, "errors": results.ChangeWorse,
		"fairness jain": results.ChangeWorse, "acquire read p50": results.ChangeSame,
	} {
		if r := row(t, c, name); r.Change != change {
			t.Errorf("%s: change %q, want %q", name, r.Change, change)
		}
	}
	if r := row(t, c, "errors"); r.Base != 3 || r.New != 502 {
		t.Errorf("errors row %v → %v, want the sums 3 → 502", r.Base, r.New)
	}
	// Rows follow the summary's order: throughput, success ratio, acquire
	// (all), the metrics in order, then errors, violations, fairness.
	var names []string
	for _, r := range c.Rows {
		if r.Stat == "" || r.Stat == "p50" {
			names = append(names, r.Metric)
		}
	}
	if got := strings.Join(names, " "); got != "throughput success_ratio acquire acquire_read acquire_write acquire_nested hold errors violations jain" {
		t.Errorf("row order %s", got)
	}
}

func TestCompareSafety(t *testing.T) {
	base, cur := resultstest.Run(), resultstest.Run()
	cur.Safety.Violations = 3
	c := results.Compare(base, cur, 1000) // no threshold excuses the first violation
	// One regression says so (NEW failed), and the row shows where.
	if len(c.Regressions) != 1 || !slices.Equal(c.NewFailures, []results.FailureKind{results.FailSafety}) {
		t.Errorf("Regressions = %q, new failures %q: want the violations once", c.Regressions, c.NewFailures)
	}
	if v := row(t, c, "safety violations"); !v.Gated || !v.Regressed {
		t.Errorf("violations row %+v; want it gated and regressed", v)
	}
	// A BASE that failed otherwise (a stall) does not excuse a violation.
	stalled := resultstest.Run()
	stalled.Stall = &results.Stall{NoReplyS: 3, FromS: 1, Calls: 2, BoundS: 2}
	cur.Stall = stalled.Stall
	if c := results.Compare(stalled, cur, 1000); len(c.Regressions) != 1 || !slices.Equal(c.NewFailures, []results.FailureKind{results.FailSafety}) {
		t.Errorf("BASE stalled, NEW stalled and violated: regressions %q, new failures %q; want the violation alone", c.Regressions, c.NewFailures)
	}
	cur.Stall = nil
	// Lost updates of the guarded counter fail NEW too.
	lost := resultstest.Run()
	lost.Guard = &results.Guard{Mode: "plain", Accepted: 10, Final: 9, Lost: 1}
	if c := results.Compare(base, lost, 1000); c.OK() || !slices.Equal(c.NewFailures, []results.FailureKind{results.FailLostUpdates}) {
		t.Errorf("a NEW with a lost update: OK %v, new failures %q", c.OK(), c.NewFailures)
	}
	// A baseline that already violated gates nothing, but says so.
	base.Safety.Violations = 2
	c = results.Compare(base, cur, 10)
	if !c.OK() || !hasNote(c, "BASE had 2 safety violations") {
		t.Errorf("base with violations: OK %v, regressions %q, notes %q", c.OK(), c.Regressions, c.Notes)
	}
}

func hasNote(c results.Comparison, sub string) bool {
	for _, n := range c.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

func TestCompareZeroBase(t *testing.T) {
	base, cur := resultstest.Run(), resultstest.Run()
	base.Throughput.OpsPerSec = 0
	base.Errors = map[string]int64{}
	cur.Errors = map[string]int64{}
	l := base.Latency["acquire_read"]
	l.P99 = 0
	base.Latency["acquire_read"] = l
	c := results.Compare(base, cur, 10)

	if tp := row(t, c, "throughput"); tp.DeltaPct != nil || tp.Delta != "new" || tp.Regressed || tp.Change != results.ChangeBetter {
		t.Errorf("throughput from 0: %+v", tp)
	}
	if e := row(t, c, "errors"); e.DeltaPct == nil || *e.DeltaPct != 0 || e.Delta != "+0.0%" || e.Change != results.ChangeSame {
		t.Errorf("errors 0 → 0: %+v", e)
	}
	if r := row(t, c, "acquire read p99"); !r.Regressed || r.Delta != "new" {
		t.Errorf("acquire read p99 from 0: %+v", r)
	}
	if len(c.Regressions) != 1 || c.Regressions[0] != "acquire read p99 rose from 0 to 900.0µs" {
		t.Errorf("Regressions = %q", c.Regressions)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("Comparison does not encode: %v", err)
	}
	text := []string{string(b)}
	for _, r := range c.Rows {
		text = append(text, r.Delta, r.FormatValue(r.Base), r.FormatValue(r.New))
	}
	for _, out := range text {
		if strings.Contains(out, "Inf") || strings.Contains(out, "NaN") {
			t.Errorf("output shows Inf or NaN:\n%s", out)
		}
	}
	var back results.Comparison
	if err := json.Unmarshal(b, &back); err != nil || len(back.Rows) != len(c.Rows) || back.Rows[0].DeltaPct != nil {
		t.Errorf("JSON round trip: %v, %+v", err, back.Rows)
	}
}

func TestCompareNotes(t *testing.T) {
	base, cur := resultstest.Run(), resultstest.Run()
	if c := results.Compare(base, cur, 10); len(c.Notes) != 0 || !c.OK() {
		t.Errorf("like runs: notes %q, regressions %q", c.Notes, c.Regressions)
	}
	cur.Meta.Profile = "mutex"
	// Valkey keeps a redis_version of its own: the server's name tells.
	cur.Meta.Server, cur.Meta.RedisVersion = "valkey 9.1.2", "7.2.4"
	cur.Meta.RedisBackend = "docker"
	cur.Partial, cur.PartialReason = true, "interrupted"
	delete(cur.Latency, "acquire_write")
	cur.Latency["ping"] = results.Latency{Count: 1, P99: 80}
	c := results.Compare(base, cur, 10)
	for _, want := range []string{
		`profiles differ: BASE ran "rw90", NEW ran "mutex"`,
		"servers differ: BASE ran on redis 7.4.0, NEW on valkey 9.1.2",
		"Redis backends differ: BASE local, NEW docker",
		"NEW is partial (interrupted)",
		"acquire write latency only in BASE",
		"ping latency only in NEW",
	} {
		if !hasNote(c, want) {
			t.Errorf("notes lack %q: %q", want, c.Notes)
		}
	}
	for _, r := range c.Rows {
		if r.Metric == "acquire_write" || r.Metric == "ping" {
			t.Errorf("row %s compares a latency only one run has", r.Name)
		}
	}
	// Same profile, other settings.
	cur = resultstest.Run()
	cur.Meta.Workload = "rw 90% reads, 8 clients × 4 owners"
	if c := results.Compare(base, cur, 10); !hasNote(c, "workloads differ") {
		t.Errorf("workload change not noted: %q", c.Notes)
	}
	// Same workload, another library: compared, and said so.
	cur = resultstest.Run()
	cur.Meta.Impl = "redsync"
	if c := results.Compare(base, cur, 10); !hasNote(c, "implementations differ: BASE lockimpl, NEW redsync") {
		t.Errorf("implementation change not noted: %q", c.Notes)
	}
}

func TestRowFormatValue(t *testing.T) {
	for _, tc := range []struct {
		unit string
		v    float64
		want string
	}{
		{"ops/s", 4100, "4,100.0 ops/s"},
		{"µs", 1200, "1.20ms"},
		{"", 1234567, "1,234,567"},
		{"", 0.99771, "0.9977"},
	} {
		if got := (results.Row{Unit: tc.unit}).FormatValue(tc.v); got != tc.want {
			t.Errorf("FormatValue(%s %v) = %q, want %q", tc.unit, tc.v, got, tc.want)
		}
	}
	if got := (results.Row{Metric: "jain"}).FormatValue(1); got != "1.0000" {
		t.Errorf("Jain 1 shows as %q", got)
	}
}

func TestCompareFailedRuns(t *testing.T) {
	base := resultstest.Run()
	dead := resultstest.Run()
	dead.Throughput = results.Throughput{Attempts: 68972, Failed: 68972, OpsPerSec: 0}
	dead.Errors = map[string]int64{"conn": 68972}
	c := results.Compare(base, dead, 10)
	if c.OK() || c.Refused == "" {
		t.Fatalf("a NEW run with no successful operation was compared: OK %v, refused %q, regressions %q", c.OK(), c.Refused, c.Regressions)
	}
	for _, want := range []string{"NEW has no successful operation", "68,972 of 68,972 attempts failed: conn 68,972"} {
		if !strings.Contains(c.Verdict(), want) {
			t.Errorf("verdict %q lacks %q", c.Verdict(), want)
		}
	}
	if c := results.Compare(dead, base, 10); c.OK() || !strings.Contains(c.Refused, "BASE has no successful operation") {
		t.Errorf("a BASE with no success: refused %q", c.Refused)
	}

	worse := resultstest.Run()
	worse.Throughput = results.Throughput{Attempts: 60000, Ops: 49000, Failed: 11000, SuccessRatio: 49000.0 / 60000, OpsPerSec: 4900}
	worse.Errors = map[string]int64{"timeout": 11000}
	c = results.Compare(base, worse, 10)
	if c.OK() {
		t.Fatalf("success ratio 81.7%% against 99.99%% passed: %+v", c)
	}
	sr := row(t, c, "success ratio")
	if !sr.Gated || !sr.Regressed || sr.Change != results.ChangeWorse {
		t.Errorf("success ratio row = %+v", sr)
	}
	if !slices.Contains(c.NewFailures, results.FailErrorRate) {
		t.Errorf("regressions %q, new failures %q: want NEW's threshold failure", c.Regressions, c.NewFailures)
	}
	// A stray failure within the slack does not fail the gate.
	stray := resultstest.Run()
	stray.Throughput.Failed, stray.Throughput.Attempts = 20, 41020
	stray.Throughput.SuccessRatio = 41000.0 / 41020
	if c := results.Compare(base, stray, 10); !c.OK() {
		t.Errorf("20 failures in 41,020 regressed: %q", c.Regressions)
	}
}

func TestCompareNoAcquisitions(t *testing.T) {
	base, cur := resultstest.Run(), resultstest.Run()
	cur.Fairness = results.Fairness{Owners: 16, Starved: 16}
	for _, r := range results.Compare(base, cur, 10).Rows {
		if r.Metric == "jain" {
			t.Errorf("jain compared against a run with no acquisition: %+v", r)
		}
	}
}

func TestCompareNotesWhatTookEffect(t *testing.T) {
	base, cur := resultstest.Run(), resultstest.Run()
	base.Meta.RedisTopology = "replica"
	cur.Meta.RedisTopology = "single"
	cur.NoEffect = []string{"replica_sync: no replica, nothing sent (profile rw90-synced is meant for topology replica)"}
	c := results.Compare(base, cur, 10)
	for _, want := range []string{
		"Redis topologies differ: BASE replica, NEW single",
		"a setting differs in effect: in NEW, replica_sync: no replica, nothing sent (profile rw90-synced is meant for topology replica); in BASE it took effect",
	} {
		if !hasNote(c, want) {
			t.Errorf("notes lack %q: %q", want, c.Notes)
		}
	}
	if c := results.Compare(cur, cur, 10); len(c.Notes) != 0 {
		t.Errorf("a run against itself: notes %q", c.Notes)
	}
	// A result from before topologies were recorded ran on one server.
	old := resultstest.Run()
	if c := results.Compare(old, cur, 10); hasNote(c, "topologies differ") {
		t.Errorf("an unrecorded topology against single: %q", c.Notes)
	}
}

// Two servers that claim the same redis_version are still told apart,
// and a result that does not record its server is not taken for Redis.
func TestCompareServersSameRedisVersion(t *testing.T) {
	base, cur := resultstest.Run(), resultstest.Run()
	base.Meta.Server, base.Meta.RedisVersion = "redis 7.2.4", "7.2.4"
	cur.Meta.Server, cur.Meta.RedisVersion = "valkey 9.1.2", "7.2.4"
	c := results.Compare(base, cur, 10)
	if !hasNote(c, "servers differ: BASE ran on redis 7.2.4, NEW on valkey 9.1.2") {
		t.Errorf("notes lack the servers: %q", c.Notes)
	}
	base.Meta.Server = ""
	c = results.Compare(base, cur, 10)
	if !hasNote(c, "only one run records its server: BASE redis_version 7.2.4 (server not recorded), NEW valkey 9.1.2") {
		t.Errorf("an unrecorded server: notes %q", c.Notes)
	}
	cur.Meta.Server = "valkey 9.1.2"
	base.Meta.Server = "valkey 9.1.2"
	if c := results.Compare(base, cur, 10); len(c.Notes) != 0 {
		t.Errorf("the same server: notes %q", c.Notes)
	}
}
