package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/clitest"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// mainArgsEnv makes the test binary act as the bench program, so that
// signal tests exercise the real main.
const mainArgsEnv = "LOCKBENCH_BENCH_ARGS"

func TestMain(m *testing.M) {
	spawnCommand = spawnTestBinary
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		os.Args = append([]string{"bench"}, strings.Fields(args)...)
		main()
		return
	}
	redisenvtest.Main(m)
}

func runBench(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("REDIS_URL", "")
	var out, errb bytes.Buffer
	code = program().Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// runBenchOK runs bench and fails t unless it exits 0.
func runBenchOK(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	code, out, errOut := runBench(t, args...)
	if code != cli.ExitOK {
		t.Fatalf("bench %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
	}
	return out, errOut
}

// startBench runs the real program (this test binary as bench) with args,
// waits for the stderr line containing ready, and returns the process and
// the rest of its stderr. The process is killed when t ends.
func startBench(t *testing.T, args, ready string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := benchProcess(t, t.TempDir(), args)
	_, sc := startUntil(t, cmd, ready)
	return cmd, sc
}

// benchProcess is the real program (this test binary as bench) with args,
// in an environment as a user's: no $REDIS_URL, nothing that turns
// testcontainers' reaper off, none of the variables drop names; tmp is
// its temp dir.
func benchProcess(t *testing.T, tmp, args string, drop ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	drop = append(drop, "REDIS_URL", "TMPDIR")
next:
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "TESTCONTAINERS_") {
			continue
		}
		for _, d := range drop {
			if name == d {
				continue next
			}
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, mainArgsEnv+"="+args, "TMPDIR="+tmp)
	return cmd
}

// startUntil starts cmd (a bench process) and returns once it writes a
// stderr line containing ready, with what it wrote there so far and the
// rest to come. The process is killed when t ends.
func startUntil(t *testing.T, cmd *exec.Cmd, ready string) (string, *bufio.Scanner) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var seen strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), ready) {
			return seen.String(), sc
		}
	}
	_ = cmd.Wait()
	t.Fatalf("bench never wrote %q:\n%s", ready, seen.String())
	return "", nil
}

func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}} {
		code, out, _ := runBench(t, args...)
		if code != cli.ExitOK || !strings.Contains(out, "bench run --profile rw90") || !strings.Contains(out, "Commands:") {
			t.Errorf("bench %v: code %d, output:\n%s", args, code, out)
		}
	}
	code, _, errOut := runBench(t, "run", "--help")
	if code != cli.ExitOK || !strings.Contains(errOut, "-profile") || !strings.Contains(errOut, "-redis-url") {
		t.Errorf("bench run --help: code %d, output:\n%s", code, errOut)
	}
	code, _, errOut = runBench(t, "help", "env")
	if code != cli.ExitOK || !strings.Contains(errOut, "Usage: bench env") {
		t.Errorf("bench help env: code %d, output:\n%s", code, errOut)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := runBench(t, args...)
		if code != cli.ExitOK || !strings.HasPrefix(out, "lockbench ") {
			t.Errorf("bench %v: code %d, output %q", args, code, out)
		}
	}
}

// TestHelpTexts: the help names the schema sweeps are written in, and
// says that the profile decides the topology when --topology is not
// given (rw90-synced starts a replica).
func TestHelpTexts(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"sweep", []string{"(schema " + results.SweepSchema + ")", "the profile's topology field decides"}},
		{"run", []string{"the profile's topology field decides (rw90-synced's is replica), else single"}},
	} {
		clitest.Help(t, program().Main, tc.cmd, tc.want, []string{"single (default)"})
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	unknownField := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(unknownField, []byte("kind: rw\nread_ration: 0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // the message names the field
	}{
		{nil, "Usage:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run", "--no-such-flag"}, "-no-such-flag"},
		{[]string{"run", "--duration", "-1s"}, `duration "-1s": must not be negative`},
		{[]string{"run", "--duration", "soon"}, "--duration"},
		{[]string{"run", "--duration", ""}, "-duration: empty value"},
		{[]string{"run", "--auto-pipeline", "--redis", "local"}, `-auto-pipeline: no value given ("--redis" is the next flag)`},
		{[]string{"run", "--auto-pipeline", "maybe"}, `auto_pipeline "maybe": want true or false`},
		{[]string{"run", "--impl", "raw", "--auto-pipeline", "true"}, "autopipeliner"},
		{[]string{"run", "--profile", "nope"}, "known: fair, fenced, hotkey"},
		{[]string{"run", "--read-ratio", "1.5"}, "read_ratio 1.5: must be between 0 and 1"},
		{[]string{"run", "--owners", "0"}, "owners 0"},
		{[]string{"run", "--locks", "99999999999999"}, "locks 99999999999999: must be at most 1000000"},
		{[]string{"run", "--popularity", "zipf", "--locks", "100000000"}, "locks 100000000: must be at most 1000000"},
		{[]string{"run", "--rate", "1e308", "--think", "0"}, "rate 1e+308: must be at most 10000000 ops/s"},
		{[]string{"run", "--rate", "1e-300", "--think", "0"}, "rate 1e-300: schedules less than one operation"},
		{[]string{"run", "--duration", "9999999999h"}, `duration "9999999999h": warmup and duration together must be at most 24h`},
		{[]string{"run", "--duration", "1000000h"}, "must be at most 24h"},
		{[]string{"sweep", "--rate", "100,1e308", "--think", "0", "--out", dir}, "must be at most 10000000 ops/s"},
		{[]string{"run", "--profile-file", unknownField}, "read_ration: unknown field (line 2)"},
		{[]string{"run", "--profile-file", filepath.Join(dir, "missing.yaml")}, "cannot read it"},
		{[]string{"run", "--max-ops", "0"}, "--max-ops"},
		{[]string{"run", "--profile", "mutex", "--guard", "fenced"}, "only kind fenced has"},
		{[]string{"run", "--profile", "mutex", "--guard", "always"}, "guard"},
		{[]string{"run", "--profile", "mutex", "--guard-url", "redis://127.0.0.1:1"}, "--guard-url and --guard-key apply"},
		{[]string{"run", "--profile", "mutex", "--guard", "plain", "--guard-key", "k"}, "--guard-key"},
		// Refused before any Redis starts: a mistyped store is bad input.
		{[]string{"run", "--profile", "mutex", "--guard", "plain", "--guard-url", "redis://h:notaport"}, `--guard-url "redis://h:notaport": field host`},
		{[]string{"run", "--redis", "docker"}, `--redis "docker"`},
		{[]string{"run", "--topology", "ring"}, `--topology "ring"`},
		{[]string{"run", "--server", "/"}, `--server "/": / is a directory`},
		{[]string{"run", "--server", "valkey", "--image", "redis:7.4"}, `--server "valkey": beside --image redis:7.4 it is ambiguous`},
		{[]string{"run", "--redis", "local", "--redis-url", "redis://u:pw@h:1"}, "--redis-url"},
		{[]string{"run", "stray"}, `unexpected argument "stray"`},
		{[]string{"profiles", "show", "nope"}, "no such built-in profile"},
		{[]string{"profiles", "frob"}, "usage: bench profiles"},
		{[]string{"perf", "--only", "speed"}, `unknown part "speed"`},
		{[]string{"perf", "--matrix-impls", "lockimpl,zk"}, `--matrix-impls "lockimpl,zk"`},
		{[]string{"perf", "--matrix-rounds", "0"}, "--matrix-rounds"},
		{[]string{"perf", "--matrix-pairs", "0"}, "--matrix-pairs 0: must be at least 1"},
		{[]string{"perf", "--only", "scale", "--matrix-pairs", "5"}, "--matrix-pairs applies to the matrix part"},
		{[]string{"perf", "--only", "scale", "--doc", "x.md"}, "--doc applies to the matrix part"},
		{[]string{"run", "--impl", ""}, `--impl "": unknown implementation`},
		{[]string{"run", "--impl", "zk"}, `--impl "zk": unknown implementation; use lockimpl, raw, redsync, redislock`},
		{[]string{"run", "--impl", "redsync", "--profile", "rw90"}, "needs a read-write lock (kind: rw), which redsync lacks"},
		{[]string{"run", "--impl", "redislock", "--profile", "mutex", "--depth", "2"}, "needs reentrancy"},
		{[]string{"run", "--impl", "raw", "--profile", "fair"}, "needs a fair lock"},
		{[]string{"run", "--impl", "redsync", "--profile", "mutex", "--hold", "5s"}, "could outlive redsync's 8s expiry"},
		{[]string{"sweep", "--impl", "redsync", "--profile", "rw90", "--out", dir}, "which redsync lacks"},
		{[]string{"impls", "extra"}, `unexpected argument "extra"`},
		{[]string{"perf", "--scale-duration", "0s"}, "--scale-duration"},
		{[]string{"perf", "--only", "scale", "--scale-owners", "1000,15"}, "the owners must split evenly over at least one client"},
		{[]string{"perf", "--only", "scale", "--scale-owners", "1000,x"}, `"x" is not a count of owners`},
		{[]string{"perf", "--only", "scale", "--scale-rate", "0"}, "--scale-rate 0"},
		{[]string{"env", "--redis-url", "http://u:pw@h:1"}, "field scheme"},
		{[]string{"sweep", "--clients", "1,x"}, `"x": want a comma-separated list`},
		{[]string{"sweep", "--clients", "1,0", "--out", dir}, "--clients 0: must be at least 1"},
		{[]string{"sweep", "--read-ratio", "0.5,2", "--out", dir}, "--read-ratio 2"},
		{[]string{"sweep", "--stop-after", "-1", "--out", dir}, "--stop-after -1"},
		{[]string{"sweep", "--clients", "1,1", "--duration", "10ms", "--warmup", "0s", "--out", filepath.Join(dir, "dup")}, `--clients 1,1: 1 is listed twice (at positions 1 and 2 of the list); list each value once`},
		{[]string{"sweep", "--clients", "1,2,4,2", "--duration", "10ms", "--warmup", "0s", "--out", filepath.Join(dir, "dup3")}, `--clients 1,2,4,2: 2 is listed twice (at positions 2 and 4 of the list)`},
		{[]string{"sweep", "--clients", "2", "--owners", "1,4,1", "--duration", "10ms", "--warmup", "0s", "--out", filepath.Join(dir, "dup2")}, `--owners 1,4,1: 1 is listed twice`},
		{[]string{"sweep", "--duration", "0s", "--out", dir}, "--duration 0s"},
		{[]string{"run", "--shards", "3"}, "--shards"},
		{[]string{"run", "--topology", "cluster", "--shards", "0"}, "--shards"},
		{[]string{"run", "--topology", "cluster", "--replicas", "9"}, "--replicas"},
		{[]string{"sweep", "--shards", "1,0", "--out", dir}, "--shards"},
		{[]string{"sweep", "--shards", "1,3", "--topology", "replica", "--out", dir}, "--topology is replica"},
		{[]string{"sweep", "--shards", "1,3", "--redis-url", "127.0.0.1:1,127.0.0.1:2", "--out", dir}, "external Redis cannot"},
		{[]string{"report"}, "give at least one result file"},
		{[]string{"report", filepath.Join(dir, "nothing")}, "nothing: no such file"},
		{[]string{"report", dir}, "holds no lockbench"},
		{[]string{"report", "--format", "pdf", dir}, `--format "pdf"`},
	} {
		code, _, errOut := runBench(t, tc.args...)
		if code != cli.ExitUsage {
			t.Errorf("bench %v: exit %d, want %d\n%s", tc.args, code, cli.ExitUsage, errOut)
		}
		if !strings.Contains(errOut, tc.want) {
			t.Errorf("bench %v: stderr does not name %q:\n%s", tc.args, tc.want, errOut)
		}
		if strings.Contains(errOut, ":pw@") || strings.Contains(errOut, "goroutine ") {
			t.Errorf("bench %v: stderr leaks the password or a stack trace:\n%s", tc.args, errOut)
		}
		if n := strings.Count(strings.TrimSpace(errOut), "\n"); n > 0 && tc.args != nil && !strings.Contains(errOut, "Usage") {
			t.Errorf("bench %v: want one line, got %d:\n%s", tc.args, n+1, errOut)
		}
	}
}

// TestMalformedFlagIsOneLine: a malformed flag value, an unknown flag or
// a flag missing its value is one line on stderr, exit 2, in every
// subcommand (the flag package printed its message and then every flag's
// usage, about a hundred lines).
func TestMalformedFlagIsOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--duration", "soon"}, "--duration"},
		{[]string{"run", "--max-ops", "many"}, `"many" for flag -max-ops: parse error (see bench run -h)`},
		{[]string{"run", "--quiet=maybe"}, `"maybe" for -quiet`},
		{[]string{"run", "--nope"}, "-nope (see bench run -h)"},
		{[]string{"run", "--max-ops"}, "-max-ops (see bench run -h)"},
		{[]string{"sweep", "--clients", "1,x"}, "-clients: \"x\""},
		{[]string{"report", "--nope", "x"}, "-nope (see bench report -h)"},
		{[]string{"compare", "--max-regression", "lots", "a", "b"}, "-max-regression: want a percentage"},
		{[]string{"profiles", "--nope"}, "-nope (see bench profiles -h)"},
		{[]string{"env", "--duration", "long"}, `"long" for flag -duration: parse error (see bench env -h)`},
	} {
		code, out, errOut := runBench(t, tc.args...)
		if code != cli.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("bench %v: exit %d, want %d and one line saying %q; stdout %q, stderr:\n%s", tc.args, code, cli.ExitUsage, tc.want, out, errOut)
		}
	}
}

// TestBooleansOneWay: yes/no flags, a profile field's override or a
// flag of the program's own, take true or false and refuse the rest with
// the same words (--auto-pipeline took yes while refusing 1; --quiet took
// 1 and refused yes).
func TestBooleansOneWay(t *testing.T) {
	for _, args := range [][]string{
		{"--auto-pipeline", "yes"}, {"--auto-pipeline", "1"}, {"--replica-sync", "on"},
		{"--quiet=1"}, {"--quiet=yes"}, {"--json=True"}, {"--appendonly=t"},
	} {
		// --max-ops 0 stops a run whose flags were all taken.
		code, _, errOut := runBench(t, append(append([]string{"run"}, args...), "--max-ops", "0")...)
		if code != cli.ExitUsage || !strings.Contains(errOut, "want true or false") {
			t.Errorf("bench run %v: exit %d, want %d saying true or false:\n%s", args, code, cli.ExitUsage, errOut)
		}
	}
	// Taken: the run goes on to the next check (--max-ops 0, refused).
	for _, args := range [][]string{{"--auto-pipeline", "true"}, {"--replica-sync", "false"}, {"--quiet=true"}, {"--quiet"}, {"--json=false"}} {
		code, _, errOut := runBench(t, append(append([]string{"run"}, args...), "--max-ops", "0")...)
		if code != cli.ExitUsage || !strings.Contains(errOut, "--max-ops 0") {
			t.Errorf("bench run %v: exit %d, want it taken (then --max-ops refused):\n%s", args, code, errOut)
		}
	}
}

func TestProfiles(t *testing.T) {
	code, out, errOut := runBench(t, "profiles")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"rw90", "rw50", "rw10", "mutex", "fair", "reentrant-deep", "hotkey", "uncontended", "open-rw90"} {
		if !regexp.MustCompile(`(?m)^` + name + `\s+\S`).MatchString(out) {
			t.Errorf("bench profiles lacks %s with a description:\n%s", name, out)
		}
	}
	code, out, errOut = runBench(t, "profiles", "show", "rw90")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	p, err := workloads.Parse([]byte(out), ".yaml")
	if err != nil {
		t.Fatalf("bench profiles show rw90 is not a profile: %v\n%s", err, out)
	}
	if want, _ := workloads.Builtin("rw90"); p.Summary() != want.Summary() || p.ReadRatio != 0.9 {
		t.Errorf("shown rw90 = %s, want %s", p.Summary(), want.Summary())
	}
}

// TestRun runs a short profile end to end: a summary on stdout, a result
// file and an interval log on disk, and no redis-server left behind.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runBench(t, "run", "--redis", "local", "--profile", "mutex", "--duration", "1s", "--warmup", "200ms",
		"--clients", "2", "--owners", "2", "--out", dir)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"lockbench mutex", "throughput", "acquire exclusive", "handoff", "ping", "fairness    over", "safety      OK", "errors      timeout 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	r := readResult(t, dir)
	if r.Partial || r.Meta.Profile != "mutex" || r.Meta.RedisVersion == "" || r.Meta.RedisBackend != "local" || r.Throughput.Ops == 0 {
		t.Errorf("result: partial %v, meta %+v, ops %d", r.Partial, r.Meta, r.Throughput.Ops)
	}
	if r.Fairness.Owners != 4 {
		t.Errorf("--clients 2 --owners 2 ran %d owners, want 4", r.Fairness.Owners)
	}
	if _, err := os.Stat(filepath.Join(dir, r.HistogramLog)); r.HistogramLog == "" || err != nil {
		t.Errorf("interval log %q: %v", r.HistogramLog, err)
	}
	// The run's report sits beside its result, charts embedded.
	html := strings.TrimSuffix(r.HistogramLog, ".hlog") + ".html"
	if b, err := os.ReadFile(filepath.Join(dir, html)); err != nil || strings.Count(string(b), "data:image/png") < 3 || !strings.Contains(string(b), "Safety OK") {
		t.Errorf("report %s: %v (%d charts)", html, err, strings.Count(string(b), "data:image/png"))
	}
	if !strings.Contains(out, "report      "+filepath.Join(dir, html)) {
		t.Errorf("stdout does not name the report:\n%s", out)
	}
	redisenvtest.WaitProcessGone(t, redisPID(t, errOut), 15*time.Second)
}

// TestRunSpinWaitsNamed: with --spin-waits on a host Redis shares, the
// summary and the result name what lockbench's own waits took, and the
// CPU verdict says the instrument took it from the server.
func TestRunSpinWaitsNamed(t *testing.T) {
	dir := t.TempDir()
	out, _ := runBenchOK(t, "run", "--redis", "local", "--profile", "rw90", "--duration", "2s", "--warmup", "500ms", "--spin-waits", "--out", dir)
	for _, want := range []string{"every wait spun to its deadline (--spin-waits: exact at the host's expense)", "waiting", "lockbench's own waits took"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	r := readResult(t, dir)
	if r.Waits == nil || r.Waits.Clock != results.WaitClockSpin || r.Waits.SpinS <= 0 || r.CPU == nil || r.CPU.Waits <= 0 || !r.CPU.SharedHost {
		t.Errorf("result: waits %+v, cpu %+v; want the spinner, its spin, and its cores on a shared host", r.Waits, r.CPU)
	}
}

func TestRunJSON(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runBench(t, "run", "--redis", "local", "--profile", "rw90", "--duration", "500ms", "--warmup", "0s",
		"--owners", "2", "--out", dir, "--json", "--quiet")
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var r results.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json output is not a result: %v\n%s", err, out)
	}
	if r.Schema != results.Schema || r.Throughput.Acquisitions["read"] == 0 {
		t.Errorf("schema %q, acquisitions %v", r.Schema, r.Throughput.Acquisitions)
	}
	if strings.Contains(errOut, "bench: running") {
		t.Errorf("--quiet still printed the start line:\n%s", errOut)
	}
}

func TestPerfQuick(t *testing.T) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Skip("redis-benchmark not on PATH (Debian package redis-tools): the overhead part cannot run")
	}
	dir := t.TempDir()
	code, out, errOut := runBench(t, "perf", "--redis", "local", "--only", "scale,handoff,overhead", "--rounds", "1", "--overhead-duration", "500ms",
		"--scale-duration", "1s", "--scale-clients", "2", "--scale-owners", "6", "--scale-closed", "4", "--scale-rate", "200", "--scale-locks", "2",
		"--handoff-duration", "1s", "--out", dir)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	lineups, _ := filepath.Glob(filepath.Join(dir, "matrix-*.json"))
	if len(lineups) != 1 {
		t.Fatalf("lineup files %v; want the overhead part's one", lineups)
	}
	m, err := results.ReadLineup(lineups[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, impl := range []string{impls.Default, perf.PipelinedName} {
		for _, profile := range []string{"uncontended", "mutex"} {
			if c := m.Cell(profile, 32, impl); c == nil || c.Median.OpsPerSec <= 0 {
				t.Errorf("%s on %s at 32 owners: cell %+v; want one with throughput", impl, profile, c)
			}
		}
	}
	if len(m.Baselines) != 1 || m.Baselines[0].Clients != 32 || m.Baselines[0].Median.CyclesPerSec() <= 0 ||
		m.Baselines[0].Median.Ceiling.CyclesPerSec <= 0 || m.Baselines[0].Median.GoRedisPipelined.CyclesPerSec <= 0 {
		t.Errorf("baselines %+v; want redis-benchmark (plain and -P 16) and go-redis at 32", m.Baselines)
	}
	if len(m.Targets) < 3 {
		t.Errorf("targets %+v; want the overhead part's three", m.Targets)
	}
	scaled, closed := false, false
	runs, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, p := range runs {
		r, err := results.ReadFile(p)
		if err != nil || r.Throughput.Ops == 0 {
			continue
		}
		scaled = scaled || r.Fairness.Owners == 6 && r.Throughput.TargetRate > 0
		closed = closed || r.Fairness.Owners == 4 && r.Throughput.TargetRate == 0
	}
	if !scaled || !closed {
		t.Errorf("scale runs of 2 × 3 owners in open loop: %v, of 2 × 2 in closed loop: %v; among the results %v", scaled, closed, runs)
	}
	if !strings.Contains(out, "closed") {
		t.Errorf("the scale part's table does not show the closed-loop point:\n%s", out)
	}
}

// TestRunVerdict: a run that broke mutual exclusion or lost guarded
// updates exits 1, naming each reason; a clean one exits 0.
func TestRunVerdict(t *testing.T) {
	res := &results.Result{Measured: 1, Throughput: results.Throughput{Attempts: 10, Ops: 10}}
	if err := runVerdict(res, "r.json"); err != nil {
		t.Fatalf("a clean run: %v", err)
	}
	res.Safety.Violations = 2
	res.Guard = &results.Guard{Lost: 1}
	err := runVerdict(res, "r.json")
	if cli.ExitCode(err) != cli.ExitFailure {
		t.Fatalf("a run with violations and a lost update: %v (exit %d), want exit %d", err, cli.ExitCode(err), cli.ExitFailure)
	}
	if n := len(strings.Split(err.Error(), "\n")); n != len(res.Failures()) {
		t.Errorf("%d lines for %d failures:\n%v", n, len(res.Failures()), err)
	}
}

// TestRunImpl runs a peer library through bench run: the result file
// names it, the summary shows the note on how it met the profile, and
// the run is safe.
func TestRunImpl(t *testing.T) {
	out := t.TempDir()
	code, stdout, errOut := runBench(t, "run", "--redis", "local", "--profile", "mutex", "--impl", "redislock",
		"--clients", "2", "--owners", "2", "--duration", "1s", "--warmup", "0s", "--quiet", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	for _, w := range []string{"lockbench mutex · redislock", "redislock: redislock with retries every 50-250ms", "safety      OK"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("summary lacks %q:\n%s", w, stdout)
		}
	}
	files, _ := filepath.Glob(filepath.Join(out, "mutex-redislock-*.json"))
	if len(files) != 1 {
		t.Fatalf("result files %v; want one mutex-redislock-*.json", files)
	}
	res, err := results.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.Impl != "redislock" || res.Meta.ImplNote == "" {
		t.Errorf("meta impl %q, note %q", res.Meta.Impl, res.Meta.ImplNote)
	}
	code, stdout, _ = runBench(t, "impls")
	if code != cli.ExitOK || !strings.Contains(stdout, "redsync") || !strings.Contains(stdout, "raw") {
		t.Errorf("bench impls: exit %d\n%s", code, stdout)
	}
}

// TestPerfMatrixQuick runs the matrix cut down (lockimpl and raw, one
// short round and a second pair of lockimpl and lockimpl+ap) and checks
// the Markdown it writes.
func TestPerfMatrixQuick(t *testing.T) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Skip("redis-benchmark not on PATH: the matrix needs it")
	}
	doc := filepath.Join(t.TempDir(), "docs", "perf.md")
	code, out, errOut := runBench(t, "perf", "--redis", "local", "--matrix-impls", "lockimpl,raw", "--matrix-rounds", "1", "--matrix-pairs", "2",
		"--matrix-duration", "200ms", "--matrix-warmup", "0s", "--doc", doc, "--out", t.TempDir())
	if code != cli.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, w := range []string{"# Lock implementations side by side", "## Targets", "## Baselines: redis-benchmark and bare go-redis",
		"## uncontended", "## mutex", "## rw90", "### 32 owners (4 clients)", "### 64 owners (4 clients)", "| lockimpl |", "| lockimpl+ap |",
		"| raw |", "no safety violation in any run", "lockimpl on the autopipeliner ≥ 1.25×", "× go-redis", "× ceiling",
		"1 round, then lockimpl and lockimpl+ap alone to 2 pairs", "| mutex | 32 | 2 |", "too few pairs to tell"} {
		if !strings.Contains(md, w) {
			t.Errorf("perf.md lacks %q", w)
		}
	}
	if strings.Contains(md, "redsync") {
		t.Error("perf.md mentions redsync, which --matrix-impls left out")
	}
	if !strings.Contains(out, "written to "+doc) {
		t.Errorf("stdout does not say where the doc went:\n%s", out)
	}
}

var pidLine = regexp.MustCompile(`bench: redis primary at \S+ pid (\d+)`)

func redisPID(t *testing.T, out string) int {
	t.Helper()
	m := pidLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no redis pid line in:\n%s", out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

func readResult(t *testing.T, dir string) *results.Result {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("want one result file in %s, got %v", dir, files)
	}
	r, err := results.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestInterrupt runs the real program, waits until its load runs, then
// interrupts it: Ctrl-C must stop the load, write the partial result (the
// guarded store's tallies too) and leave no redis-server behind; SIGKILL
// must leave none either.
func TestInterrupt(t *testing.T) {
	for _, tc := range []struct {
		sig      syscall.Signal
		wantCode int
	}{
		{syscall.SIGINT, cli.ExitInterrupted},
		{syscall.SIGTERM, cli.ExitInterrupted},
		{syscall.SIGKILL, -1},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(os.Args[0])
			// A killed bench cannot remove its temp dir: give it one of ours.
			cmd.Env = append(os.Environ(), mainArgsEnv+"=run --redis local --profile mutex --owners 2 --duration 5m --warmup 0s --guard plain --out "+out,
				"REDIS_URL=", "TMPDIR="+t.TempDir())
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()

			// Wait for the event "the load runs", signalled by the pid line.
			var errOut strings.Builder
			sc := bufio.NewScanner(stderr)
			pid := 0
			for pid == 0 && sc.Scan() {
				errOut.WriteString(sc.Text() + "\n")
				if m := pidLine.FindStringSubmatch(sc.Text()); m != nil {
					pid, _ = strconv.Atoi(m[1])
				}
			}
			if pid == 0 {
				t.Fatalf("bench never reported its Redis:\n%s", errOut.String())
			}
			// Then its guarded store, which starts just before the load.
			for sc.Scan() {
				errOut.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), "guarded counters") {
					break
				}
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(stderr)
			errOut.Write(rest)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("bench exited with %v, want a failure exit", err)
			}
			if tc.wantCode >= 0 {
				if ee.ExitCode() != tc.wantCode {
					t.Errorf("exit code %d, want %d\n%s", ee.ExitCode(), tc.wantCode, errOut.String())
				}
				if !strings.Contains(stdout.String(), "PARTIAL") {
					t.Errorf("interrupted run did not report its partial measurement:\n%s", stdout.String())
				}
				r := readResult(t, out)
				if !r.Partial || !strings.Contains(r.PartialReason, "interrupted") {
					t.Errorf("result file: partial %v (%q), want partial", r.Partial, r.PartialReason)
				}
				// The guarded store outlives the interrupt: its tallies are kept.
				if r.Guard == nil || !r.Guard.Occupancy {
					t.Errorf("result file: guard %+v, want the store's tallies", r.Guard)
				}
				// One plain line at the end, not "interrupted: context canceled".
				lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
				if last := lines[len(lines)-1]; last != "bench: interrupted" {
					t.Errorf("last line %q, want %q", last, "bench: interrupted")
				}
			}
			redisenvtest.WaitProcessGone(t, pid, 15*time.Second)
		})
	}
}

// TestInterruptWhileStarting: Ctrl-C or SIGTERM while a local cluster
// starts exits 130 with the line any interrupt ends with (not the error of
// whichever node's start it cut, with its log) and leaves no server and
// no dir behind.
func TestInterruptWhileStarting(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		when string // a file of the start's, under its temp dir
	}{
		{syscall.SIGINT, "lockbench-redis-*/shard1-primary/redis.conf"},
		{syscall.SIGTERM, "lockbench-redis-*/shard3-replica1/redis.conf"},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			cmd := benchProcess(t, tmp, "run --redis local --topology cluster --shards 3 --replicas 1 --duration 20s --out "+t.TempDir())
			code, stderr := signalWhen(t, cmd, tc.sig, func() bool {
				m, _ := filepath.Glob(filepath.Join(tmp, tc.when))
				return len(m) > 0
			})
			checkInterrupted(t, code, stderr)
			checkNothingUnder(t, tmp)
		})
	}
}

// signalWhen starts cmd (a bench process), sends it sig as soon as when
// holds (polled while it starts) and returns its exit code and all it
// wrote to stderr. t fails if cmd ends before when holds, or either takes
// longer than Patience.
func signalWhen(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, when func() bool) (int, string) {
	t.Helper()
	var stderr clitest.LineWriter
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	done := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		// A failed test's process is interrupted, not killed: a Podman
		// service killed with it while it commits an image leaves the
		// engine's storage with half an image.
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(testkit.Patience):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	exit := func(err error) int {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 0
	}
	deadline := time.Now().Add(testkit.Patience)
	for !when() {
		select {
		case <-done:
			t.Fatalf("bench ended (exit %d) before the moment to signal it:\n%s", exit(waitErr), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the moment to signal bench did not come within %v:\n%s", testkit.Patience, stderr.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		return exit(waitErr), stderr.String()
	case <-time.After(testkit.Patience):
		t.Fatalf("bench still runs %v after %v:\n%s", testkit.Patience, sig, stderr.String())
		return 0, ""
	}
}

// checkInterrupted fails t unless a bench process exited 130 and wrote,
// after the signal's own line, the line the programs end any interrupt
// with and nothing else (a line of what its start swept aside: another
// run's leftovers are not its message).
func checkInterrupted(t *testing.T, code int, stderr string) {
	t.Helper()
	var end bytes.Buffer
	cli.Program{Name: "bench", Commands: map[string]cli.Command{"run": {Run: func(context.Context, []string, io.Writer, io.Writer) error {
		return context.Canceled
	}}}}.Main(context.Background(), []string{"run"}, io.Discard, &end)
	_, after, ok := strings.Cut(stderr, "stopping and cleaning up (again to quit at once)\n")
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(after), "\n") {
		if !strings.HasPrefix(l, "redis: removed ") {
			lines = append(lines, l)
		}
	}
	if code != cli.ExitInterrupted || !ok || len(lines) != 1 || lines[0]+"\n" != end.String() {
		t.Errorf("exit %d, want %d with the one line %q after the signal's:\n%s", code, cli.ExitInterrupted, strings.TrimSpace(end.String()), stderr)
	}
}

// checkNothingUnder fails t if a process runs from dir (a bench's temp
// dir) or anything is left in it.
func checkNothingUnder(t *testing.T, dir string) {
	t.Helper()
	if left := procsUnder(dir); len(left) > 0 {
		t.Errorf("still running: %s", strings.Join(left, "; "))
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Errorf("left in its temp dir: %s", strings.Join(names, ", "))
	}
}

// TestRunCluster: bench run on a local 2-primary cluster spreads the locks
// evenly over the shards and reports each shard's throughput.
func TestRunCluster(t *testing.T) {
	dir := t.TempDir()
	out, errOut := runBenchOK(t, "run", "--redis", "local", "--topology", "cluster", "--shards", "2", "--replicas", "0",
		"--profile", "uncontended", "--clients", "2", "--owners", "4", "--duration", "1s", "--warmup", "200ms", "--out", dir)
	if !strings.Contains(errOut, "cluster of 2 nodes") || !strings.Contains(out, "shard1 127.0.0.1:") || !strings.Contains(out, "cluster 2x0") {
		t.Errorf("output does not show the cluster and its shards:\n%s\n%s", out, errOut)
	}
	r := readResult(t, dir)
	if r.Meta.RedisTopology != "cluster 2x0" || len(r.PerShard) != 2 {
		t.Fatalf("topology %q, per shard %+v; want cluster 2x0 with 2 shards", r.Meta.RedisTopology, r.PerShard)
	}
	var ops int64
	for _, s := range r.PerShard {
		ops += s.Ops
		if s.Locks != 4 || s.Acquisitions == 0 || s.OpsPerSec <= 0 {
			t.Errorf("shard %+v: want 4 of the 8 locks and some throughput", s)
		}
	}
	if ops != r.Throughput.Ops || !r.Safety.OK() {
		t.Errorf("shards count %d ops of %d; safety %+v", ops, r.Throughput.Ops, r.Safety)
	}
}

// TestRunProfileTopology: a profile that names a topology gets it when
// --topology is not given (rw90-synced: a primary and a replica, every
// acquisition acknowledged by the replica), and the flag still wins.
func TestRunProfileTopology(t *testing.T) {
	dir := t.TempDir()
	out, errOut := runBenchOK(t, "run", "--redis", "local", "--profile", "rw90-synced", "--clients", "2", "--owners", "2",
		"--duration", "500ms", "--warmup", "0s", "--out", dir)
	if !strings.Contains(errOut, "replica at 127.0.0.1:") {
		t.Errorf("rw90-synced did not start a replica:\n%s\n%s", out, errOut)
	}
	r := readResult(t, dir)
	if r.Meta.RedisTopology != "replica" || !r.Safety.OK() || r.Throughput.Ops == 0 {
		t.Errorf("topology %q, safety %+v, ops %d", r.Meta.RedisTopology, r.Safety, r.Throughput.Ops)
	}
	dir = t.TempDir()
	_, errOut = runBenchOK(t, "run", "--redis", "local", "--topology", "single", "--profile", "rw90-synced", "--replica-sync", "false",
		"--clients", "1", "--owners", "2", "--duration", "300ms", "--warmup", "0s", "--out", dir)
	if strings.Contains(errOut, "replica at") {
		t.Errorf("--topology single still started a replica:\n%s", errOut)
	}
	if r := readResult(t, dir); r.Meta.RedisTopology != "single" {
		t.Errorf("topology %q with --topology single", r.Meta.RedisTopology)
	}
}

// TestPerfRefusesAPasswordForRedisBenchmark: redis-benchmark takes a
// password only on its command line, where any local user reads it, so
// the parts that run it are refused against a Redis that needs one
// (exit 2, before any load), naming the way out.
func TestPerfRefusesAPasswordForRedisBenchmark(t *testing.T) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Skip("redis-benchmark not on PATH")
	}
	env := redisenvtest.Start(t)
	redisenvtest.ACLUser(t, env, "alice", "s3cretPW")
	url := "redis://alice:s3cretPW@" + env.Addr() + "/0"
	code, out, errOut := runBench(t, "perf", "--redis-url", url, "--only", "overhead", "--rounds", "1", "--out", t.TempDir())
	if code != cli.ExitUsage || !strings.Contains(errOut, "redis-benchmark would have on its command line") || !strings.Contains(errOut, "--only scale,handoff") {
		t.Fatalf("exit %d, want %d naming the command line and the way out\nstdout:\n%s\nstderr:\n%s", code, cli.ExitUsage, out, errOut)
	}
	if strings.Contains(out+errOut, "s3cretPW") {
		t.Errorf("the password was printed:\n%s\n%s", out, errOut)
	}
}
