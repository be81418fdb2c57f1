package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/infile"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/results"
)

// run is a result to write for the compare and merge tests.
type run struct {
	profile string
	host    string
	start   time.Time
	acquire time.Duration // every acquisition's latency
	ops     int           // acquisitions over the run's one second
	impl    string        // --impl ("": lockimpl)
	hold    time.Duration // each hold ("": 100µs; past 1ms the owners' holds overlap)
}

var t0 = time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC)

// writeRun collects r's acquisitions (two owners taking turns on one
// lock, 1 ms apart) and writes the result and its interval log into dir.
func writeRun(t *testing.T, dir string, r run) string {
	t.Helper()
	c := results.NewCollector(r.start, 1, 0)
	hold := int64(100 * time.Microsecond)
	if r.hold > 0 {
		hold = int64(r.hold)
	}
	for k := range r.ops {
		at := int64(k+1) * int64(time.Millisecond)
		c.Shard(0).Record(results.Op{
			Start: at - int64(r.acquire), Called: at - int64(r.acquire), Acquired: at,
			Released: at + hold, Done: at + hold + 10_000, Owner: int32(k % 2), Mode: results.Exclusive, Depth: 1,
		}, nil, nil)
	}
	res := c.Finish(r.start.Add(time.Second), false, 1, results.Analysis{Labels: results.Labels{Owners: []string{"o0", "o1"}, Locks: []string{"l"}}})
	res.Meta = results.Meta{Profile: r.profile, Impl: r.impl, Workload: "exclusive, 1 client × 2 owners", Host: r.host, Start: r.start,
		RedisVersion: "7.4.0", RedisBackend: "external", RedisAddr: "10.0.0.5:6379"}
	path, err := results.WriteFiles(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

func call(cmd command, args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = cmd(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func compare(args ...string) (string, string, error) { return call(compareCmd, args...) }

func merge(args ...string) (string, string, error) { return call(mergeCmd, args...) }

func TestCompareOK(t *testing.T) {
	baseDir, newDir := t.TempDir(), t.TempDir()
	writeRun(t, baseDir, run{profile: "mutex", host: "ci", start: t0, acquire: 200 * time.Microsecond, ops: 500})
	cur := writeRun(t, newDir, run{profile: "mutex", host: "ci", start: t0.Add(time.Hour), acquire: 210 * time.Microsecond, ops: 500})
	// BASE as its directory, the flag after the positionals.
	out, errOut, err := compare(baseDir, cur, "--max-regression", "6%")
	if err != nil {
		t.Fatalf("compare: %v\n%s%s", err, out, errOut)
	}
	for _, want := range []string{"BASE  mutex · lockimpl on ci", "acquire exclusive p99", "OK: no gated metric regressed past 6%"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCompareRegressed(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, run{profile: "mutex", host: "ci", start: t0, acquire: 200 * time.Microsecond, ops: 500})
	cur := writeRun(t, dir, run{profile: "mutex", host: "ci", start: t0.Add(time.Hour), acquire: 600 * time.Microsecond, ops: 500})
	out, _, err := compare(base, cur)
	if err == nil || cli.ExitCode(err) != cli.ExitFailure {
		t.Fatalf("compare of a 3× slower acquire: err %v (exit %d), want exit 1\n%s", err, cli.ExitCode(err), out)
	}
	if !strings.Contains(out, "REGRESSED: acquire p99 rose") || !strings.Contains(err.Error(), "acquire p99 rose") {
		t.Errorf("err %v, output:\n%s", err, out)
	}
	// The same through --json, for reports.
	out, _, err = compare("--json", base, cur, "--max-regression=250")
	if err != nil {
		t.Fatalf("250%% allowed: %v", err)
	}
	var c results.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if c.MaxRegressionPct != 250 || c.Base.File != base || c.New.File != cur || len(c.Rows) == 0 || !c.OK() {
		t.Errorf("comparison %+v", c)
	}
}

// TestCompareViolation: NEW breaking mutual exclusion where BASE did not
// exits 1, and the comparison says so once.
func TestCompareViolation(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, run{profile: "mutex", host: "ci", start: t0, acquire: 200 * time.Microsecond, ops: 500})
	cur := writeRun(t, dir, run{profile: "mutex", host: "ci", start: t0.Add(time.Hour), acquire: 200 * time.Microsecond, ops: 500, hold: 1500 * time.Microsecond})
	if _, _, err := compare(base, cur); cli.ExitCode(err) != cli.ExitFailure {
		t.Fatalf("compare with violations in NEW: err %v (exit %d), want exit %d", err, cli.ExitCode(err), cli.ExitFailure)
	}
	out, _, _ := compare("--json", base, cur)
	var c results.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	said := 0
	for _, r := range c.Regressions {
		said += strings.Count(r, "mutual-exclusion")
	}
	if said != 1 {
		t.Errorf("regressions %q name the violations %d times; want once", c.Regressions, said)
	}
}

func TestCompareBadInput(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, run{profile: "mutex", host: "ci", start: t0, acquire: time.Millisecond, ops: 10})
	b := writeRun(t, dir, run{profile: "mutex", host: "ci", start: t0.Add(time.Minute), acquire: time.Millisecond, ops: 10})
	chaos := filepath.Join(t.TempDir(), "kill.chaos.json")
	if err := os.WriteFile(chaos, []byte(`{"schema":"lockbench.chaos/v1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string // in the error or on stderr
	}{
		{[]string{a, b, "--max-regression", "ten"}, []string{"max-regression", "10%"}},
		{[]string{a, b, "--max-regression", "-1%"}, []string{"max-regression", "at least 0%"}},
		{[]string{a, filepath.Join(dir, "nope.json")}, []string{"NEW", "nope.json", "no such file"}},
		{[]string{a}, []string{"BASE and NEW", "got 1"}},
		{[]string{a, b, b}, []string{"got 3"}},
		{[]string{dir, b}, []string{"BASE", "2 result files", filepath.Base(a), filepath.Base(b)}},
		{[]string{a, filepath.Dir(chaos)}, []string{"NEW", "no result file (lockbench.result/v2)", `kill.chaos.json (schema "lockbench.chaos/v1")`}},
		{[]string{chaos, b}, []string{"BASE", "lockbench.chaos/v1", "written by bench run"}},
	} {
		_, errOut, err := compare(tc.args...)
		if code := cli.ExitCode(err); code != cli.ExitUsage {
			t.Errorf("compare %q: exit %d (%v), want %d", tc.args, code, err, cli.ExitUsage)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error()+errOut, w) {
				t.Errorf("compare %q: %q does not say %q", tc.args, err.Error(), w)
			}
		}
	}
}

func TestMergeCmd(t *testing.T) {
	dirA, dirB, out := t.TempDir(), t.TempDir(), t.TempDir()
	a := writeRun(t, dirA, run{profile: "mutex", host: "alpha", start: t0, acquire: 200 * time.Microsecond, ops: 400})
	writeRun(t, dirB, run{profile: "mutex", host: "beta", start: t0.Add(2 * time.Second), acquire: 300 * time.Microsecond, ops: 300})
	// Other JSON in a directory is skipped.
	if err := os.WriteFile(filepath.Join(dirB, "kill.chaos.json"), []byte(`{"schema":"lockbench.chaos/v1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, errOut, err := merge(a, dirB, "--out", out)
	if err != nil {
		t.Fatalf("merge: %v\n%s%s", err, stdout, errOut)
	}
	m := readResult(t, out)
	if m.Throughput.Ops != 700 || m.Meta.Host != "alpha,beta" || m.Fairness.Owners != 4 || m.Latency["acquire_exclusive"].Count != 700 {
		t.Errorf("merged: ops %d, host %q, owners %d, latency %+v", m.Throughput.Ops, m.Meta.Host, m.Fairness.Owners, m.Latency["acquire_exclusive"])
	}
	if len(m.MergedFrom) != 2 || !strings.HasSuffix(m.MergedFrom[0], filepath.Base(a)) || filepath.IsAbs(m.MergedFrom[0]) {
		t.Errorf("merged from %q, want the sources relative to %s", m.MergedFrom, out)
	}
	path := filepath.Join(out, "mutex-20240304T050607Z-merged.json")
	if !strings.Contains(stdout, "result      "+path) || !strings.Contains(stdout, "lockbench mutex") || !strings.Contains(stdout, "INCOMPLETE") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if _, err := results.LoadHistograms(path, m); err != nil {
		t.Errorf("merged interval log: %v", err)
	}
}

// TestMergeIntoSourceDir: merging a directory into itself writes a
// "-merged" file beside the sources, and doing it again merges the runs,
// not the earlier merge, into a file of its own.
func TestMergeIntoSourceDir(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, run{profile: "mutex", host: "alpha", start: t0, acquire: 200 * time.Microsecond, ops: 100})
	writeRun(t, dir, run{profile: "mutex", host: "beta", start: t0.Add(time.Second), acquire: 200 * time.Microsecond, ops: 50})
	for range 2 {
		if out, errOut, err := merge(dir, "--out", dir); err != nil {
			t.Fatalf("merge: %v\n%s%s", err, out, errOut)
		}
	}
	for _, name := range []string{"mutex-20240304T050607Z-merged.json", "mutex-20240304T050607Z-merged-2.json"} {
		m, err := results.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if m.Throughput.Ops != 150 || len(m.MergedFrom) != 2 {
			t.Errorf("%s: ops %d from %q, want 150 from the 2 runs", name, m.Throughput.Ops, m.MergedFrom)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) != 4 {
		t.Errorf("dir holds %q, want both runs and the two merges", files)
	}
}

func TestMergeBadInput(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	a := writeRun(t, dir, run{profile: "mutex", host: "alpha", start: t0, acquire: time.Millisecond, ops: 10})
	rw := writeRun(t, other, run{profile: "rw90", host: "beta", start: t0, acquire: time.Millisecond, ops: 10})
	noLog := filepath.Join(t.TempDir(), "nolog.json")
	r, err := results.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	r.HistogramLog = ""
	r.Meta.Host = "gamma"
	b, _ := json.Marshal(r)
	if err := os.WriteFile(noLog, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{a, rw, "--out", t.TempDir()}, []string{"meta.profile differs", `"mutex"`, `"rw90"`, "run 1 is " + rw}},
		{[]string{a}, []string{"at least 2 results, got 1"}},
		{nil, []string{"needs the results to merge"}},
		{[]string{a, dir}, []string{"given twice"}},
		{[]string{a, filepath.Join(dir, "missing.json")}, []string{"missing.json", "no such file"}},
		{[]string{a, noLog}, []string{"nolog.json", "histogram log", ".hlog"}},
		{[]string{a, t.TempDir()}, []string{"no run result in the directory"}},
	} {
		_, _, err := merge(tc.args...)
		if code := cli.ExitCode(err); code != cli.ExitUsage {
			t.Errorf("merge %q: exit %d (%v), want %d", tc.args, code, err, cli.ExitUsage)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("merge %q: %q does not say %q", tc.args, err.Error(), w)
			}
		}
	}
}

// TestMergeChecksBeforeReadingLogs: runs merge refuses for what their
// result files say (another profile or implementation, the same run given
// twice), and a log over its limit, are refused before any interval log
// is opened: a log may be large, and was read in full before the refusal.
func TestMergeChecksBeforeReadingLogs(t *testing.T) {
	dir := t.TempDir()
	at := func(sub string, r run) string { return writeRun(t, filepath.Join(dir, sub), r) }
	a := at("a", run{profile: "mutex", host: "alpha", start: t0, acquire: time.Millisecond, ops: 10})
	rw := at("rw", run{profile: "rw90", host: "beta", start: t0, acquire: time.Millisecond, ops: 10})
	redsync := at("redsync", run{profile: "mutex", impl: "redsync", host: "gamma", start: t0, acquire: time.Millisecond, ops: 10})
	big := at("big", run{profile: "mutex", host: "delta", start: t0, acquire: time.Millisecond, ops: 10})
	// The same run as a, copied elsewhere: not the same path, the same run.
	again := filepath.Join(dir, "again", filepath.Base(a))
	for _, p := range []string{a, hlogOf(a)} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, "again", filepath.Base(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(hlogOf(big)); err != nil {
		t.Fatal(err)
	}
	sparse(t, hlogOf(big), int64(infile.HistLog)+1)
	var logs []string
	for _, p := range []string{a, rw, redsync, big, again} {
		logs = append(logs, hlogOf(p))
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{a, rw}, "meta.profile differs"},
		{[]string{a, redsync}, "meta.impl differs"},
		{[]string{a, again}, "are the same run"},
		{[]string{a, big}, "over the " + infile.HistLog.String() + " limit for an interval log"},
	} {
		opened := testkit.WatchOpens(t, logs...)
		_, _, err := merge(append(tc.args, "--out", t.TempDir())...)
		if code := cli.ExitCode(err); code != cli.ExitUsage || !strings.Contains(fmt.Sprint(err), tc.want) {
			t.Errorf("merge %q: exit %d (%v), want %d saying %q", tc.args, code, err, cli.ExitUsage, tc.want)
		}
		if o := opened(); len(o) > 0 {
			t.Errorf("merge %q: opened %q before refusing", tc.args, o)
		}
	}
	// The watch sees what a merge that goes ahead reads.
	b := at("b", run{profile: "mutex", host: "beta", start: t0, acquire: time.Millisecond, ops: 10})
	opened := testkit.WatchOpens(t, hlogOf(a), hlogOf(b))
	if out, errOut, err := merge(a, b, "--out", t.TempDir()); err != nil {
		t.Fatalf("merge: %v\n%s%s", err, out, errOut)
	}
	if o := opened(); len(o) != 2 {
		t.Errorf("a merge opened %q, want both logs", o)
	}
}

func hlogOf(result string) string { return strings.TrimSuffix(result, ".json") + ".hlog" }

func TestCompareMergeHelp(t *testing.T) {
	for _, tc := range []struct {
		cmd  command
		want string
	}{
		{compareCmd, "Usage: bench compare BASE NEW [flags]"},
		{mergeCmd, "Usage: bench merge RESULT... [flags]"},
	} {
		_, errOut, err := call(tc.cmd, "-h")
		if !errors.Is(err, flag.ErrHelp) || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "Exit codes:") {
			t.Errorf("-h: %v\n%s", err, errOut)
		}
	}
}
