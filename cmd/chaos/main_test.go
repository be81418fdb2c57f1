package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/clitest"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/scenarios"
)

func TestMain(m *testing.M) { redisenvtest.Main(m, testkit.ToxiproxyStage) }

func runChaos(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("REDIS_URL", "")
	var out, errb bytes.Buffer
	code = program().Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpVersionList(t *testing.T) {
	code, out, _ := runChaos(t, "--help")
	if code != cli.ExitOK || !strings.Contains(out, "chaos list") || !strings.Contains(out, "Commands:") {
		t.Errorf("chaos --help: code %d:\n%s", code, out)
	}
	code, out, _ = runChaos(t, "version")
	if code != cli.ExitOK || !strings.HasPrefix(out, "lockbench ") {
		t.Errorf("chaos version: code %d, %q", code, out)
	}
	code, out, _ = runChaos(t, "list")
	if code != cli.ExitOK || !strings.Contains(out, "watchdog-loss") || !strings.Contains(out, "EXPECTED VIOLATION DETECTED") ||
		strings.Count(out, "\n") != len(scenarios.All())+1 {
		t.Errorf("chaos list: code %d:\n%s", code, out)
	}
	code, out, _ = runChaos(t, "describe", "reset-storm", "--quick", "--seed", "7")
	if code != cli.ExitOK || !strings.Contains(out, "invariant:") || strings.Count(out, "reset_peer clients") != 6 {
		t.Errorf("chaos describe: code %d:\n%s", code, out)
	}
	_, again, _ := runChaos(t, "describe", "--seed", "7", "--quick", "reset-storm")
	if again != out {
		t.Error("describe with the same seed printed a different plan")
	}
}

// TestHelpTexts: each command's help gives its usage with its arguments,
// every verdict it can print, and what decides the topology.
func TestHelpTexts(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"run", []string{"Usage: chaos run NAME...|--all [flags]", "each scenario starts its own (failover a primary and a replica), so only single is accepted"}},
		{"describe", []string{"Usage: chaos describe NAME [flags]"}},
		{"matrix", []string{"the matrix chooses its cells' topologies"}},
	} {
		clitest.Help(t, program().Main, tc.cmd, tc.want, []string{"single (default)"})
	}
	help := clitest.Help(t, program().Main, "run", nil, nil)
	for _, v := range []results.Verdict{results.Pass, results.ExpectedViolation, results.Fail, results.Skipped, results.Incomplete} {
		if !strings.Contains(help, "\n  "+string(v)+" ") {
			t.Errorf("chaos run -h does not list verdict %s", v)
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explode"}, `unknown command "explode"`},
		{[]string{"list", "--bogus"}, "-bogus"},
		{[]string{"env", "--topology", "mesh"}, `--topology "mesh"`},
		{[]string{"env", "--duration", "0s"}, "--duration"},
		{[]string{"run"}, "--all"},
		{[]string{"run", "nope"}, `unknown scenario "nope"`},
		{[]string{"run", "--all", "latency"}, "not both"},
		{[]string{"run", "latency", "--seed", "-3"}, "--seed"},
		{[]string{"run", "latency", "--toxiproxy", "localhost:8474"}, "--toxiproxy"},
		{[]string{"run", "failover", "--topology", "replica"}, "--topology"},
		{[]string{"run", "latency", "--redis", "cloud"}, "--redis"},
		{[]string{"describe"}, "one scenario name"},
		{[]string{"run", "latency", "--out", "/proc/version"}, "--out"},
		{[]string{"run", "latency", "--junit", "/proc/nope/j.xml"}, "--junit"},
		{[]string{"describe", "a", "b"}, "one scenario name"},
		{[]string{"list", "extra"}, `unexpected argument "extra"`},
		{[]string{"matrix", "--only", "latency"}, `"latency" is not a matrix scenario`},
		{[]string{"matrix", "--topology", "cluster"}, "--topology cluster: the matrix chooses"},
		{[]string{"matrix", "--seed", "x"}, "--seed"},
		{[]string{"matrix", "extra"}, `unexpected argument "extra"`},
		// The matrix kills and fails over the lock's Redis: not yours.
		{[]string{"matrix", "--redis-url", "redis://127.0.0.1:1"}, "--redis-url: the matrix starts the lock's Redis itself"},
		{[]string{"matrix", "--redis", "redis://127.0.0.1:1"}, "drop --redis-url"},
		// No fencing cell of these rows is gated: the planted bug would pass.
		{[]string{"matrix", "--plant-broken-fencing", "--only", "redis-restart,failover,cluster-failover"},
			"--plant-broken-fencing with --only redis-restart,failover,cluster-failover: no cell of these scenarios is held to 0 lost updates by fencing alone, so the planted bug could not fail the matrix; include watchdog-loss, client-freeze, lease-expiry or node-clock-jump"},
		{[]string{"matrix", "--guard-url", "http://u:pw@h:1"}, `--guard-url "http://u:xxxxx@h:1": field scheme`},
		{[]string{"run", "watchdog-loss", "--guard", "plain", "--guard-url", "redis://h:notaport"}, `--guard-url "redis://h:notaport": field host`},
		// Every scenario would be skipped: nothing would run, and a CI
		// reading exit 0 would see green.
		{[]string{"run", "redis-pause", "redis-restart", "--redis-url", "redis://127.0.0.1:1"}, "nothing to run: redis-pause: needs process faults"},
		{[]string{"run", "latency", "--junit", "/proc/self"}, "--junit /proc/self: is a directory"},
	} {
		code, _, errOut := runChaos(t, tc.args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("chaos %v: code %d, stderr:\n%s", tc.args, code, errOut)
		}
	}
}

// TestServerNotAServerRefused: a --server that is no server is bad input
// in chaos as in bench: one line, exit 2, before any scenario or cell
// runs (a program that exits at once would make the first scenario FAIL).
func TestServerNotAServerRefused(t *testing.T) {
	silent := filepath.Join(t.TempDir(), "silent")
	if err := os.WriteFile(silent, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "redis-pause", "--quick", "--out", "", "--server", silent},
		{"matrix", "--quick", "--only", "client-freeze", "--out", "", "--server", silent},
		{"run", "redis-pause", "--quick", "--out", "", "--server", "/"},
	} {
		code, out, errOut := runChaos(t, args...)
		server := args[len(args)-1]
		if code != cli.ExitUsage || !strings.HasPrefix(errOut, `chaos: redisenv: --server "`+server+`": `+server) || strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("chaos %v: exit %d, stdout %q, stderr:\n%s\nwant exit %d, one line naming --server and nothing run", args, code, out, errOut, cli.ExitUsage)
		}
	}
}

// TestMatrixRefusesRedisURLFromEnv: a lock Redis named by $REDIS_URL is
// refused before anything runs, naming the variable and the way out.
func TestMatrixRefusesRedisURLFromEnv(t *testing.T) {
	t.Setenv("REDIS_URL", "redis://127.0.0.1:1")
	var out, errb bytes.Buffer
	code := program().Main(context.Background(), []string{"matrix", "--out", t.TempDir()}, &out, &errb)
	if code != cli.ExitUsage || !strings.Contains(errb.String(), "$REDIS_URL is set: the matrix starts the lock's Redis itself") ||
		!strings.Contains(errb.String(), "--redis local") || strings.Contains(errb.String(), "chaos: mitigation matrix") {
		t.Errorf("code %d, stderr:\n%s", code, errb.String())
	}
	// --redis local ignores $REDIS_URL: past that check, refused only for
	// what follows it.
	errb.Reset()
	code = program().Main(context.Background(), []string{"matrix", "--redis", "local", "--plant-broken-fencing", "--only", "failover"}, &out, &errb)
	if code != cli.ExitUsage || !strings.HasPrefix(errb.String(), "chaos: --plant-broken-fencing with --only failover") {
		t.Errorf("--redis local with $REDIS_URL set: code %d, stderr:\n%s", code, errb.String())
	}
}

// TestRedissonJarRefused: a $LOCKBENCH_REDISSON_JAR that is no jar is
// refused before any scenario or matrix starts (exit 2, one line), not
// met by Redisson's variants midway.
func TestRedissonJarRefused(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java on PATH: the jar is looked at only where a JVM could run it")
	}
	text := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(text, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(redisson.JarEnv, text)
	for _, args := range [][]string{
		{"run", "lease-expiry", "--quick", "--redis-url", "redis://127.0.0.1:1", "--out", t.TempDir()},
		{"matrix", "--quick", "--only", "lease-expiry", "--no-costs", "--out", t.TempDir()},
	} {
		code, _, errOut := runChaos(t, args...)
		want := "chaos: redisson: $" + redisson.JarEnv + "=" + text + ": is not a jar"
		if code != cli.ExitUsage || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("chaos %v: code %d, stderr:\n%s\nwant exit %d and one line starting %q", args, code, errOut, cli.ExitUsage, want)
		}
	}
}

// TestEnvReplica brings up the primary+replica setup the failover
// scenarios will use, as `make chaos` does.
func TestEnvReplica(t *testing.T) {
	code, out, errOut := runChaos(t, "env", "--redis", "local", "--topology", "replica", "--duration", "200ms")
	if code != cli.ExitOK {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "node:     primary") || !strings.Contains(out, "node:     replica") {
		t.Errorf("output lacks the two nodes:\n%s", out)
	}
	if !strings.Contains(errOut, "replica at 127.0.0.1:") {
		t.Errorf("backend line lacks the replica:\n%s", errOut)
	}
}

// TestRunWritesReportsAndJUnit runs a quick scenario end to end through
// the CLI: verdict on stdout, report, results and JUnit on disk, exit 0.
func TestRunWritesReportsAndJUnit(t *testing.T) {
	redisenvtest.Long(t, "a chaos scenario")
	out := t.TempDir()
	junit := filepath.Join(out, "junit.xml")
	code, stdout, stderr := runChaos(t, "run", "redis-pause", "--quick", "--redis", "local", "--out", out, "--junit", junit)
	if code != cli.ExitOK {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "redis-pause          PASS") || !strings.Contains(stdout, "1 PASS, 0 EXPECTED VIOLATION DETECTED, 0 FAIL") {
		t.Errorf("stdout:\n%s", stdout)
	}
	// One scenario is one, not "1 scenarios".
	if !strings.Contains(stderr, "chaos: 1 scenario, quick timings") || !strings.Contains(stdout, "\n1 scenario in ") {
		t.Errorf("the counts of one scenario:\n%s\n%s", stdout, stderr)
	}
	reports, _ := filepath.Glob(filepath.Join(out, "redis-pause-*.chaos.json"))
	runs, _ := filepath.Glob(filepath.Join(out, "chaos-redis-pause.*.json"))
	if len(reports) != 1 || len(runs) != 1 {
		t.Fatalf("files: reports %v, runs %v", reports, runs)
	}
	rep, err := results.ReadChaosReport(reports[0])
	if err != nil || rep.Verdict != results.Pass || len(rep.Runs) != 1 || len(rep.Runs[0].Events) != 1 {
		t.Errorf("report: %v %+v", err, rep)
	}
	if b, err := os.ReadFile(junit); err != nil || !strings.Contains(string(b), `<testcase name="redis-pause" classname="chaos"`) {
		t.Errorf("junit: %v\n%s", err, b)
	}
	// The suite's HTML report: verdict table, the run's charts (spectrum,
	// throughput with the pause shaded, holder timeline).
	pages, _ := filepath.Glob(filepath.Join(out, "chaos-*.html"))
	if len(pages) != 1 {
		t.Fatalf("html reports %v, want 1", pages)
	}
	b, err := os.ReadFile(pages[0])
	if err != nil || !strings.Contains(string(b), `<td class="ok">PASS</td>`) || strings.Count(string(b), "data:image/png") < 3 {
		t.Errorf("html report: %v, %d charts", err, strings.Count(string(b), "data:image/png"))
	}
	if !strings.Contains(stdout, "html report: "+pages[0]) {
		t.Errorf("stdout does not name the html report:\n%s", stdout)
	}
}

// TestRunInterrupted: Ctrl-C mid-scenario exits 130 with the report
// written, marked partial, and nothing left running.
func TestRunInterrupted(t *testing.T) {
	redisenvtest.Long(t, "a chaos scenario")
	out := t.TempDir()
	code, stdout, stderr := clitest.Interrupt(t, program().Main, []string{"run", "watchdog-loss", "--quick", "--redis", "local", "--out", out}, "injected", 60*time.Second)
	if code != cli.ExitInterrupted {
		t.Fatalf("code %d, want 130\n%s\n%s", code, stdout, stderr)
	}
	reports, _ := filepath.Glob(filepath.Join(out, "watchdog-loss-*.chaos.json"))
	if len(reports) != 1 {
		t.Fatalf("reports %v", reports)
	}
	rep, err := results.ReadChaosReport(reports[0])
	if err != nil || !rep.Partial || rep.Verdict != results.Incomplete {
		t.Errorf("report: %v, partial %v, verdict %s", err, rep.Partial, rep.Verdict)
	}
}

// TestNoEmptyOutBehind: a suite refused before it starts leaves no --out
// (or --junit directory) it created; one the user had stays.
func TestNoEmptyOutBehind(t *testing.T) {
	dir := t.TempDir()
	out, junit := filepath.Join(dir, "new", "out"), filepath.Join(dir, "ci", "chaos.xml")
	code, _, errOut := runChaos(t, "run", "redis-pause", "--redis-url", "redis://127.0.0.1:1", "--out", out, "--junit", junit)
	if code != cli.ExitUsage {
		t.Fatalf("exit %d, want %d:\n%s", code, cli.ExitUsage, errOut)
	}
	for _, p := range []string{filepath.Join(dir, "new"), filepath.Join(dir, "ci")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind by a suite that never started", p)
		}
	}
	code, _, errOut = runChaos(t, "run", "redis-pause", "--redis-url", "redis://127.0.0.1:1", "--out", dir)
	if _, err := os.Stat(dir); code != cli.ExitUsage || err != nil {
		t.Errorf("exit %d; the user's own --out: %v\n%s", code, err, errOut)
	}
}
