package report_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

var labels = results.Labels{Owners: []string{"c0/o0", "c0/o1", "c1/o0"}, Locks: []string{"lb:orders", "lb:users"}}

// makeResult records a few seconds of operations through a real collector,
// as a run would, with an overlap on lb:users when violate is set.
func makeResult(t *testing.T, profile string, start time.Time, perSec int, violate bool, events []results.Event) *results.Result {
	t.Helper()
	c := results.NewCollector(start, 2, 0)
	ms := int64(time.Millisecond)
	for sec := range int64(3) {
		for i := range int64(perSec) {
			at := sec*1000*ms + i*(1000*ms/int64(perSec)) + ms
			op := results.Op{Start: at, Called: at, Acquired: at + ms/2, Released: at + ms, Done: at + ms + ms/4,
				Owner: int32(i % 3), Lock: int32(i % 2), Mode: results.Mode(i % 3), Depth: 1}
			c.Shard(int(i)).Record(op, nil, nil)
		}
		c.Shard(0).RecordValue(results.Ping, 80_000)
		c.Tick(start.Add(time.Duration(sec+1)*time.Second), false, 12)
	}
	if violate {
		c.Shard(0).Record(results.Op{Start: 100 * ms, Called: 100 * ms, Acquired: 100 * ms, Released: 900 * ms, Done: 901 * ms, Owner: 0, Lock: 1, Mode: results.Exclusive, Depth: 1, Flags: results.LostIgnored}, nil, nil)
		c.Shard(1).Record(results.Op{Start: 400 * ms, Called: 400 * ms, Acquired: 450 * ms, Released: 1200 * ms, Done: 1201 * ms, Owner: 2, Lock: 1, Mode: results.Exclusive, Depth: 1}, nil, nil)
	}
	r := c.Finish(start.Add(3*time.Second+500*time.Millisecond), false, 12, results.Analysis{Labels: labels, Timeline: true})
	r.Meta = results.Meta{Profile: profile, Workload: "rw: 2 clients × 2 owners", Host: "testhost", Start: start, Server: "redis 7.0.15", RedisVersion: "7.0.15", RedisBackend: "local", RedisAddr: "127.0.0.1:1", Lockbench: "lockbench test"}
	r.Events = events
	return r
}

func write(t *testing.T, dir string, r *results.Result) string {
	t.Helper()
	path, err := results.WriteFiles(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// A self-contained page: every chart embedded, no script, no external
// resource; metadata, the latency table, the safety verdict and, with two
// runs, the comparison.
func TestHTMLReport(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, makeResult(t, "rw90", t0, 200, false, nil))
	write(t, dir, makeResult(t, "rw90", t0.Add(time.Minute), 150, true, nil))
	in, err := report.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Runs) != 2 {
		t.Fatalf("%d runs loaded, want 2", len(in.Runs))
	}
	out := filepath.Join(dir, "report.html")
	if err := report.Write(out, in, report.Options{Generator: "lockbench test"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<!DOCTYPE html>", "Comparison", "rw90-20261121T100000Z", "rw: 2 clients × 2 owners",
		"acquire (all modes)", "Safety OK", "Safety VIOLATED", "lb:users", "Jain", "redis 7.0.15 (local)"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Per run: spectrum, throughput, timeline, fairness; plus the
	// comparison's spectrum.
	if n := strings.Count(page, `src="data:image/png;base64,`); n != 9 {
		t.Errorf("%d embedded charts, want 9", n)
	}
	if strings.Contains(page, "<script") || regexp.MustCompile(`(src|href)="https?:`).MatchString(page) || strings.Contains(page, "@import") {
		t.Error("the report loads something from outside the file")
	}
	// The second run's throughput dropped about 25%: the delta is marked bad.
	if !regexp.MustCompile(`<td class="bad">-2[0-9]\.[0-9]%</td>`).MatchString(page) {
		t.Error("the comparison does not mark a 25% throughput drop")
	}
}

// Markdown writes its charts beside it and links them; the text is the
// same content.
func TestMarkdownReport(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, makeResult(t, "mutex", t0, 100, true, []results.Event{{Kind: "latency", Target: "client:0", Start: 1, End: 2}}))
	in, err := report.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", "r.md")
	if err := report.Write(out, in, report.Options{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	md := string(b)
	links := regexp.MustCompile(`!\[[^\]]*\]\(<(r-charts/[^>]+\.png)>\)`).FindAllStringSubmatch(md, -1)
	if len(links) != 4 {
		t.Fatalf("%d chart links, want 4 (spectrum, throughput, timeline, fairness):\n%s", len(links), md)
	}
	for _, l := range links {
		png, err := os.ReadFile(filepath.Join(dir, "out", l[1]))
		if err != nil || len(png) < 1000 || string(png[1:4]) != "PNG" {
			t.Errorf("chart %s: %v (%d bytes)", l[1], err, len(png))
		}
	}
	for _, want := range []string{"# lockbench report: mutex", "| latency |", "**Safety VIOLATED", "| latency | client:0 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// A chaos report brings its runs; they are not listed again on their own.
func TestChaosReport(t *testing.T) {
	dir := t.TempDir()
	run := write(t, dir, makeResult(t, "chaos-watchdog-loss.ignore-lost", t0, 50, true, []results.Event{{Kind: "pause", Target: "redis:primary", Start: 0.5, End: 1.5}}))
	rep := &results.ChaosReport{Schema: results.ChaosSchema, Scenario: "watchdog-loss", Description: "the watchdog stops", Invariant: "the checker catches it",
		Expected: results.ExpectedViolation, Verdict: results.ExpectedViolation, Start: t0, Seconds: 4, Quick: true, Seed: 1,
		Redis:  "redis: local backend, valkey 9.1.2, at 127.0.0.1:6379",
		Plan:   []string{"ignore-lost: at 1s for 1s: pause redis:primary"},
		Checks: []results.Check{{Name: "violation detected", Want: "≥ 1", Got: "1", OK: true}},
		Runs:   []results.RunSummary{{Variant: "ignore-lost", File: "/moved/away/" + filepath.Base(run)}}}
	if _, err := results.WriteChaosReport(dir, rep); err != nil {
		t.Fatal(err)
	}
	fail := *rep
	fail.Scenario, fail.Verdict, fail.Reason, fail.Runs = "latency", results.Fail, "mutual exclusion: want 0, got 3", nil
	if _, err := results.WriteChaosReport(dir, &fail); err != nil {
		t.Fatal(err)
	}
	in, err := report.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Scenarios) != 2 || len(in.Runs) != 0 {
		t.Fatalf("%d scenarios, %d standalone runs; want 2 and 0", len(in.Scenarios), len(in.Runs))
	}
	found := 0
	for _, s := range in.Scenarios {
		if len(s.Runs) == 1 && s.Runs[0] != nil {
			found++
		}
	}
	if found != 1 {
		t.Fatalf("the watchdog-loss run was not found next to its report")
	}
	out := filepath.Join(dir, "chaos.html")
	if err := report.Write(out, in, report.Options{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	page := string(b)
	for _, want := range []string{"Chaos suite", `<td class="ok">EXPECTED VIOLATION DETECTED</td>`, `<td class="bad">FAIL</td>`,
		"1 EXPECTED VIOLATION DETECTED, 1 FAIL", "pause", "redis:primary", "violation detected", "watchdog-loss · ignore-lost",
		"<p>redis: local backend, valkey 9.1.2, at 127.0.0.1:6379</p>"} {
		if !strings.Contains(page, want) {
			t.Errorf("chaos report lacks %q", want)
		}
	}
	if n := strings.Count(page, "data:image/png"); n < 3 {
		t.Errorf("%d charts for the chaos run, want spectrum, throughput and timeline", n)
	}
	if lines := strings.Split(report.ChaosSummary(rep), "\n"); !slices.Contains(lines, "  "+rep.Redis) {
		t.Errorf("chaos summary does not name the server:\n%s", strings.Join(lines, "\n"))
	}
}

// Paths that hold nothing to report are bad input, named.
func TestLoadBadInput(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"schema":"something/v9"}`), 0o644)
	notJSON := filepath.Join(dir, "x.json")
	os.WriteFile(notJSON, []byte(`nope`), 0o644)
	for _, tt := range []struct {
		paths []string
		want  string
	}{
		{nil, "no result file"},
		{[]string{filepath.Join(dir, "missing")}, "missing"},
		{[]string{dir}, "holds no lockbench"},
		{[]string{other}, `schema "something/v9"`},
		{[]string{notJSON}, "not a lockbench file"},
	} {
		_, err := report.Load(tt.paths...)
		var usage interface{ IsUsage() bool }
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &usage) || !usage.IsUsage() {
			t.Errorf("Load(%v) = %v, want a usage error mentioning %q", tt.paths, err, tt.want)
		}
	}
	if err := report.Write(filepath.Join(dir, "r.html"), &report.Input{}, report.Options{}); err == nil {
		t.Error("an empty report was written")
	}
}

// A run whose histogram log is gone still reports, saying what is missing.
func TestMissingHistogramLog(t *testing.T) {
	dir := t.TempDir()
	r := makeResult(t, "rw90", t0, 50, false, nil)
	write(t, dir, r)
	if err := os.Remove(filepath.Join(dir, r.HistogramLog)); err != nil {
		t.Fatal(err)
	}
	in, err := report.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.html")
	if err := report.Write(out, in, report.Options{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), "Latency spectrum omitted") || !strings.Contains(string(b), "Throughput") {
		t.Error("the report does not say the spectrum is missing, or lost the rest")
	}
}

// A sweep's report states the capacity, draws both curves and lists the
// points; the points' own results are not repeated as runs.
func TestSweepReport(t *testing.T) {
	dir := t.TempDir()
	pointsDir := filepath.Join(dir, "points")
	sw := &results.Sweep{Schema: results.SweepSchema, Axis: results.AxisConcurrency, SLOP99Us: 10_000, StopAfter: 2, CurrentX: 4, Planned: 4,
		Meta: results.Meta{Profile: "rw90", Host: "testhost"}}
	for i, x := range []int{1, 2, 4, 8} {
		r := makeResult(t, "rw90", t0.Add(time.Duration(i)*time.Minute), 100*x, false, nil)
		path := write(t, pointsDir, r)
		p := results.PointFrom(r)
		p.X, p.Clients, p.Owners, p.P99Us = float64(x), x, 1, float64(x)*3000
		p.File, _ = filepath.Rel(dir, path)
		sw.Points = append(sw.Points, p)
	}
	sw.Analyze()
	path, err := results.WriteSweep(dir, sw)
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(pointsDir, "*.hlog"))
	opened := testkit.WatchOpens(t, logs...)
	in, err := report.Load(path, pointsDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Sweeps) != 1 || len(in.Runs) != 0 {
		t.Fatalf("%d sweeps and %d runs, want 1 and 0 (the points belong to the sweep)", len(in.Sweeps), len(in.Runs))
	}
	// A sweep's report draws no point's spectrum: their logs, which may be
	// large, are not read.
	if o := opened(); len(logs) != 4 || len(o) > 0 {
		t.Errorf("of the points' %d logs, Load opened %q; want none", len(logs), o)
	}
	out := filepath.Join(dir, "report.html")
	if err := report.Write(out, in, report.Options{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	page := string(b)
	for _, want := range []string{"lockbench capacity report: rw90", "Highest throughput meeting the SLO (p99 ≤ 10.00ms)", "at concurrency 2", "knee", "At the current setting (4, swept)", "it breaks the SLO", "go back to it", `<td class="bad">broken</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("sweep report lacks %q", want)
		}
	}
	if n := strings.Count(page, "data:image/png"); n != 2 {
		t.Errorf("%d charts, want the 2 capacity curves", n)
	}
	charts, err := report.WriteCapacityCharts(dir, sw)
	if err != nil || len(charts) != 2 {
		t.Fatalf("capacity charts: %v %v", charts, err)
	}
	for _, c := range charts {
		if st, err := os.Stat(c); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", c, err)
		}
	}
}

// A directory named twice, or with glob characters in its name, loads.
func TestLoadRepeatedAndOddDirs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs[1]*")
	write(t, dir, makeResult(t, "rw90", t0, 20, false, nil))
	in, err := report.Load(dir, dir)
	if err != nil || len(in.Runs) != 1 {
		t.Fatalf("Load(dir, dir) = %v, %d runs; want 1 run", err, len(in.Runs))
	}
}

// Names from result files are text, never markup, in HTML and Markdown.
func TestReportEscapes(t *testing.T) {
	dir := t.TempDir()
	r := makeResult(t, "rw90", t0, 20, false, []results.Event{{Kind: "latency", Target: "<script>alert(1)</script>", Detail: "a|b\nc"}})
	r.Meta.Workload = `<img src=x onerror=alert(1)> | pipes | *stars*`
	write(t, dir, r)
	in, err := report.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	html, md := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md")
	if err := report.Write(html, in, report.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := report.Write(md, in, report.Options{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(html)
	if strings.Contains(string(b), "<script>") || strings.Contains(string(b), "<img src=x") || !strings.Contains(string(b), "&lt;script&gt;") {
		t.Error("HTML report does not escape names from the result file")
	}
	b, _ = os.ReadFile(md)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "script") && strings.HasPrefix(line, "|") {
			// The event row keeps its 5 cells: pipes and newlines inside are escaped.
			if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 6 {
				t.Errorf("markdown row has %d unescaped pipes, want 6: %s", n, line)
			}
		}
	}
	if strings.Contains(string(b), "<script>") {
		t.Error("markdown carries raw HTML from the result file")
	}
}

// A mitigation matrix renders as its table (a failed cell marked), the
// chart and the costs; a stale write a fenced store accepted is labelled
// apart from an unfenced one, and nothing is called fencing's failure.
func TestMitigationReport(t *testing.T) {
	m := &results.MitigationMatrix{Schema: results.MitigationSchema, Start: t0, Quick: true, Store: "redis://store",
		Scenarios: []string{"watchdog-loss"}, Mitigations: []string{"none", "fencing", "honour+fencing"},
		Cells: []results.MitigationCell{
			{Scenario: "watchdog-loss", Mitigation: "none", Lost: 3, Violations: 7, UnsafeMs: 4900, StaleAccepted: 5, Written: 9, Expect: "lost updates > 0", OK: true},
			{Scenario: "watchdog-loss", Mitigation: "fencing", Fenced: true, Lost: 2, Violations: 7, StaleAccepted: 2, Written: 9, Expect: "0 lost updates", Why: "the store refuses", Problem: "2 lost updates"},
			{Scenario: "watchdog-loss", Mitigation: "honour+fencing", Fenced: true, Violations: 7, Rejected: 17, StaleAccepted: 1, Written: 9, Expect: "0 lost updates", OK: true},
		},
		Costs: []results.MitigationCost{{Mitigation: "none", OpsPerSec: 700, AcquireP50Us: 6000, AcquireP99Us: 48000}},
	}
	cells, page := renderMatrix(t, m)
	for _, tc := range []struct {
		mitigation, class, verdict string
		lines                      []string
	}{
		{"none", "lost", "pass", []string{"3 lost updates", "7 violations", "unsafe 4.9 s", "5 stale written"}},
		{"fencing", "lost", "miss", []string{"2 lost updates", "7 violations", "2 stale accepted"}},
		{"honour+fencing", "overlap", "pass", []string{"0 lost updates", "7 violations", "17 stale refused", "1 stale accepted"}},
	} {
		got := cells[[2]string{"watchdog-loss", tc.mitigation}]
		if !slices.Contains(got.classes, tc.class) || got.verdict != tc.verdict || !slices.Equal(got.lines, tc.lines) {
			t.Errorf("watchdog-loss × %s: %+v; want class %s, verdict %s, lines %q", tc.mitigation, got, tc.class, tc.verdict, tc.lines)
		}
	}
	if !strings.Contains(page, "✗ watchdog-loss × fencing: expected 0 lost updates") {
		t.Error("the failed cell is not listed under the matrix")
	}
	if strings.Contains(page, "fencing failed") {
		t.Error("the report calls a stale write a fenced store accepted fencing's failure")
	}
	if n := strings.Count(page, "data:image/png"); n != 1 {
		t.Errorf("%d charts, want the matrix's", n)
	}
	if m.OK() {
		t.Error("a matrix with a failed cell is OK")
	}
}

// An interrupted matrix says so in its HTML report, even when every cell
// that ran met its verdict; one in which every cell was skipped says that
// nothing ran.
func TestMitigationReportPartialAndNothingRan(t *testing.T) {
	dir := t.TempDir()
	ok := results.MitigationCell{Scenario: "lease-expiry", Mitigation: "none", Lost: 3, Written: 9, Expect: "lost updates > 0", OK: true}
	skipped := results.MitigationCell{Scenario: "lease-expiry", Mitigation: "none", Expect: "lost updates > 0", Skipped: "this one is external (--redis-url)"}
	for _, tc := range []struct {
		name string
		m    results.MitigationMatrix
		want []string
	}{
		{"partial", results.MitigationMatrix{Cells: []results.MitigationCell{ok}, Partial: true},
			[]string{"Mitigations under faults (PARTIAL)", `class="bad">` + results.PartialNote}},
		{"nothing ran", results.MitigationMatrix{Cells: []results.MitigationCell{skipped}},
			[]string{`class="bad">Nothing ran: every cell was skipped`, `class="note">¹ skipped, every cell: this one is external (--redis-url).`}},
	} {
		m := tc.m
		m.Schema, m.Start, m.Scenarios, m.Mitigations = results.MitigationSchema, t0, []string{"lease-expiry"}, []string{"none"}
		path, err := results.WriteMitigationMatrix(filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")), &m)
		if err != nil {
			t.Fatal(err)
		}
		in, err := report.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		out := strings.TrimSuffix(path, ".json") + ".html"
		if err := report.Write(out, in, report.Options{}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(out)
		for _, want := range tc.want {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: the report lacks %q", tc.name, want)
			}
		}
	}
}
