package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/results/resultstest"
	"github.com/lockbench/lockbench/workloads"
)

// spawnTestBinary makes --spawn-local's workers this test binary acting
// as bench (see TestMain).
func spawnTestBinary(args []string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(append([]string{"run"}, args...), " "))
	return cmd
}

// spreadRun runs bench run --spawn-local with args in this process, its
// stderr lines handed to watch as they come, and returns the exit code
// and the merged result it printed (--json).
func spreadRun(t *testing.T, watch func(line string), args ...string) (int, *results.Result) {
	t.Helper()
	return spreadRunCtx(t, spreadContext(t), watch, args...)
}

// spreadContext bounds a whole spread run: it starts several processes of
// this race-built binary, each its Redis clients, before a load of
// seconds, which on a loaded host can take the Patience one wait has.
func spreadContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 4*testkit.Patience)
	t.Cleanup(cancel)
	return ctx
}

// spreadRunCtx is spreadRun under ctx: its end interrupts the run.
func spreadRunCtx(t *testing.T, ctx context.Context, watch func(line string), args ...string) (int, *results.Result) {
	t.Helper()
	t.Setenv("REDIS_URL", "")
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			t.Log(sc.Text())
			if watch != nil {
				watch(sc.Text())
			}
		}
	}()
	var out strings.Builder
	args = append([]string{"run", "--redis", "local", "--spawn-local", "--json", "--out", t.TempDir()}, args...)
	code := program().Main(ctx, args, &out, pw)
	pw.Close()
	<-done
	if out.Len() == 0 {
		t.Fatalf("bench %v: exit %d and no result", args, code)
	}
	var r results.Result
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		t.Fatalf("bench %v: exit %d, stdout not a result: %v\n%s", args, code, err, out.String())
	}
	return code, &r
}

func TestSpawnLocal(t *testing.T) {
	code, r := spreadRun(t, nil, "--profile", "mutex", "--clients", "3", "--owners", "2", "--warmup", "500ms", "--duration", "2s",
		"--workers", "3", "--guard", "plain")
	if code != cli.ExitOK {
		t.Fatalf("exit %d; failures %+v", code, r.Failures())
	}
	s := r.Spread
	if s == nil || s.Workers != 3 || len(s.Rows) != 3 || len(s.MissingWorkers()) != 0 {
		t.Fatalf("spread %+v, want 3 workers, none missing", s)
	}
	var ops int64
	for i, row := range s.Rows {
		if row.Index != i || row.Ops <= 0 || row.CPU == nil {
			t.Errorf("row %d: %+v, want worker %d's operations and CPU verdict", i, row, i)
		}
		ops += row.Ops
	}
	if ops != r.Throughput.Ops || r.Partial {
		t.Errorf("merged %d ops (partial %v), the rows add up to %d", r.Throughput.Ops, r.Partial, ops)
	}
	// Every owner of the whole, each named by its worker.
	if len(r.Fairness.PerOwner) != 6 {
		t.Errorf("fairness over %d owners, want 6: %v", len(r.Fairness.PerOwner), r.Fairness.PerOwner)
	}
	for o := range r.Fairness.PerOwner {
		if !strings.HasPrefix(o, "w") {
			t.Errorf("owner %q not named by its worker", o)
		}
	}
	if g := r.Guard; g == nil || g.Lost != 0 || g.Accepted == 0 || g.Accepted != g.Sections {
		t.Errorf("guard %+v, want every section's update kept in the one store", g)
	}
	for _, p := range r.MergedFrom {
		if _, err := os.Stat(p); err != nil || !strings.Contains(filepath.ToSlash(p), s.RunID+"/w") {
			t.Errorf("worker file %s: %v, want it under <out>/%s/w<i>/", p, err, s.RunID)
		}
	}
}

// TestSpawnLocalSentinel: on a started Sentinel topology the workers
// reach the lock's Redis through the Sentinels, as the parent's clients
// do (their results say sentinel: their URL named a master, not seeds).
func TestSpawnLocalSentinel(t *testing.T) {
	code, r := spreadRun(t, nil, "--topology", "sentinel", "--profile", "mutex", "--clients", "2", "--owners", "2",
		"--warmup", "500ms", "--duration", "2s", "--workers", "2", "--guard", "plain")
	if code != cli.ExitOK {
		t.Fatalf("exit %d; failures %+v", code, r.Failures())
	}
	if s := r.Spread; s == nil || len(s.Rows) != 2 || len(s.MissingWorkers()) != 0 {
		t.Fatalf("spread %+v, want 2 workers, none missing", s)
	}
	for i, row := range r.Spread.Rows {
		if row.Ops <= 0 {
			t.Errorf("worker %d ran no operation: %+v", i, row)
		}
	}
	if r.Meta.RedisTopology != "sentinel" {
		t.Errorf("the workers ran on topology %q, want sentinel", r.Meta.RedisTopology)
	}
	if g := r.Guard; g == nil || g.Lost != 0 || g.Accepted == 0 {
		t.Errorf("guard %+v, want the workers' updates in the one store", g)
	}
}

// TestSpawnLocalWorkerKilled kills one worker mid-run: the merged result
// is partial, names it, and fails.
func TestSpawnLocalWorkerKilled(t *testing.T) {
	var pid int
	killed := false
	code, r := spreadRun(t, func(line string) {
		if rest, ok := strings.CutPrefix(line, "bench: worker 1 pid "); ok {
			pid, _ = strconv.Atoi(rest)
		}
		// A second after all arrived its load is under way (it starts half
		// a second after): kill it outright, as an OOM kill would.
		if strings.HasPrefix(line, "w1: worker 1 of 2: ") && pid > 0 && !killed {
			killed = true
			p := pid
			time.AfterFunc(time.Second, func() {
				if err := syscall.Kill(p, syscall.SIGKILL); err != nil {
					t.Errorf("kill worker 1 (pid %d): %v", p, err)
				}
			})
		}
	}, "--profile", "mutex", "--clients", "2", "--owners", "2", "--warmup", "500ms", "--duration", "3s", "--workers", "2",
		// Long holds: the killed worker likely dies inside a section, which
		// the store must not count against the survivors.
		"--guard", "plain", "--hold", "20ms", "--lease", "1s")
	if !killed {
		t.Fatal("worker 1 never said its load started")
	}
	if code != cli.ExitFailure {
		t.Errorf("exit %d, want %d", code, cli.ExitFailure)
	}
	if !r.Partial || !strings.Contains(r.PartialReason, "worker 1 of 2") {
		t.Errorf("partial %v (%q), want partial naming worker 1", r.Partial, r.PartialReason)
	}
	if got := r.Spread.MissingWorkers(); !slices.Equal(got, []int{1}) {
		t.Errorf("missing workers %v, want [1]", got)
	}
	var kinds []results.FailureKind
	for _, f := range r.Failures() {
		kinds = append(kinds, f.Kind)
	}
	if !slices.Equal(kinds, []results.FailureKind{results.FailMissingWorker}) {
		t.Errorf("failures %v, want only %s", kinds, results.FailMissingWorker)
	}
	if g := r.Guard; g == nil || !g.Occupancy || g.Unexcused() != 0 {
		t.Errorf("guard %+v, want the store's count with nothing unexcused", g)
	} else {
		t.Logf("store: %d overlaps, %d behind worker 1's open section", g.Overlaps, g.OverlapsExcused)
	}
	if r.Spread.Rows[0].Ops == 0 {
		t.Errorf("worker 0's row %+v: its operations should stand", r.Spread.Rows[0])
	}
}

// TestWorkerFlagsRefused: bad worker input is one line naming the flag,
// or the environment variable that gave the value, exit 2, before any
// load.
func TestWorkerFlagsRefused(t *testing.T) {
	profile := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(profile, []byte("kind: reentrant\nclients: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args []string
		env  map[string]string
		flag string
	}{
		"no index":          {args: []string{"--workers", "2", "--run-id", "r1", "--redis-url", "redis://127.0.0.1:1"}, flag: "--worker-index"},
		"index too high":    {args: []string{"--workers", "2", "--worker-index", "2", "--run-id", "r1", "--redis-url", "redis://127.0.0.1:1"}, flag: "--worker-index"},
		"no run id":         {args: []string{"--workers", "2", "--worker-index", "0", "--redis-url", "redis://127.0.0.1:1"}, flag: "--run-id"},
		"run id with brace": {args: []string{"--workers", "2", "--worker-index", "0", "--run-id", "a{b", "--redis-url", "redis://127.0.0.1:1"}, flag: "run-id"},
		"own redis":         {args: []string{"--workers", "2", "--worker-index", "0", "--run-id", "r1"}, flag: "--redis-url"},
		"more than clients": {args: []string{"--workers", "5", "--clients", "4", "--spawn-local"}, flag: "workers"},
		"spawn one":         {args: []string{"--workers", "1", "--spawn-local"}, flag: "--spawn-local"},
		"spawn with index":  {args: []string{"--workers", "2", "--spawn-local", "--worker-index", "1"}, flag: "--worker-index"},
		"guard unshared":    {args: []string{"--workers", "2", "--worker-index", "0", "--run-id", "r1", "--redis-url", "redis://127.0.0.1:1", "--guard", "plain"}, flag: "--guard-url"},
		"collect no run id": {args: []string{"collect"}, flag: "--run-id"},
		"collect bad wait":  {args: []string{"collect", "--run-id", "r1", "--wait", "-1s"}, flag: "--wait"},
		// Bounds: a timeout whose key expiry overflowed hung; one of
		// 100000h left keys for centuries.
		"timeout overflows": {args: []string{"--workers", "2", "--spawn-local", "--rendezvous-timeout", "2562047h47m"}, flag: "--rendezvous-timeout"},
		"timeout for years": {args: []string{"--workers", "2", "--spawn-local", "--rendezvous-timeout", "100000h"}, flag: "--rendezvous-timeout"},
		"results for years": {args: []string{"--workers", "2", "--spawn-local", "--results-ttl", "100000h"}, flag: "--results-ttl"},
		// Values from the environment: the message names the variable.
		"run id from env": {args: []string{"--workers", "2", "--worker-index", "0", "--redis-url", "redis://127.0.0.1:1"},
			env: map[string]string{"LOCKBENCH_RUN_ID": "a{b"}, flag: "$LOCKBENCH_RUN_ID"},
		"index from env": {args: []string{"--workers", "2", "--run-id", "r1", "--redis-url", "redis://127.0.0.1:1"},
			env: map[string]string{"JOB_COMPLETION_INDEX": "7"}, flag: "$JOB_COMPLETION_INDEX"},
		"env index, own redis": {args: []string{}, env: map[string]string{"JOB_COMPLETION_INDEX": "0", "LOCKBENCH_RUN_ID": "r1"}, flag: "$JOB_COMPLETION_INDEX"},
		"guard url from env": {args: []string{"--guard", "plain"},
			env: map[string]string{"LOCKBENCH_GUARD_URL": "redis://h:notaport"}, flag: "$LOCKBENCH_GUARD_URL"},
		"collect run id from env": {args: []string{"collect", "--redis-url", "redis://127.0.0.1:1"},
			env: map[string]string{"LOCKBENCH_RUN_ID": "a b"}, flag: "$LOCKBENCH_RUN_ID"},
		"collect guard url from env": {args: []string{"collect", "--run-id", "r1"},
			env: map[string]string{"LOCKBENCH_GUARD_URL": "redis://h:notaport"}, flag: "$LOCKBENCH_GUARD_URL"},
		// Conflicting profile flags: which would run was the order's
		// accident (the file won).
		"profile twice":            {args: []string{"--profile", "rw90"}, flag: `"mutex" and "rw90": give one`},
		"profile and file":         {args: []string{"--profile-file", profile}, flag: "--profile mutex and --profile-file"},
		"profile, file, profile":   {args: []string{"--profile-file", profile, "--profile", "rw90"}, flag: "-profile"},
		"profile file twice":       {args: []string{"--profile", "mutex", "--profile-file", profile, "--profile-file", profile + "x"}, flag: "-profile-file"},
		"profile file, no profile": {args: []string{"--profile-file", ""}, flag: "-profile-file"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, v := range []string{"JOB_COMPLETION_INDEX", "LOCKBENCH_RUN_ID", "LOCKBENCH_GUARD_URL"} {
				t.Setenv(v, tc.env[v])
			}
			args := append([]string{"run", "--profile", "mutex"}, tc.args...)
			if len(tc.args) > 0 && tc.args[0] == "collect" {
				args = tc.args
			}
			code, stdout, stderr := runBench(t, args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != cli.ExitUsage || len(lines) != 1 || !strings.Contains(stderr, tc.flag) || stdout != "" {
				t.Errorf("bench %v: exit %d, stderr %q; want exit 2 with one line naming %s", args, code, stderr, tc.flag)
			}
		})
	}
}

// TestProfileGivenOnceOrAlike: the same profile given twice runs, as one
// given once does.
func TestProfileGivenOnceOrAlike(t *testing.T) {
	f, _, err := runArgs([]string{"--profile", "mutex", "--profile", "mutex"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := f.load(); err != nil || p.Name != "mutex" {
		t.Errorf("--profile mutex twice: %v, %v", p.Name, err)
	}
}

// TestStrayRunIDIsNoWorker: a $LOCKBENCH_RUN_ID left in the environment
// does not make a plain run a worker of a spread run: only --workers, a
// worker index or --run-id does.
func TestStrayRunIDIsNoWorker(t *testing.T) {
	t.Setenv("LOCKBENCH_RUN_ID", "stray-"+workloads.NewRunID())
	t.Setenv("JOB_COMPLETION_INDEX", "")
	out, errOut := runBenchOK(t, "run", "--redis", "local", "--profile", "mutex", "--clients", "1", "--owners", "1",
		"--duration", "300ms", "--warmup", "0s", "--quiet", "--json", "--out", t.TempDir())
	var r results.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if r.Worker != nil {
		t.Errorf("the run became worker %+v of a spread run", r.Worker)
	}
}

// spreadArgs are a short spread run's bench run arguments on the Redis at
// url, results in out.
func spreadArgs(url, runID, out string, extra ...string) []string {
	return append([]string{"run", "--profile", "mutex", "--clients", "2", "--owners", "2", "--workers", "2", "--spawn-local",
		"--run-id", runID, "--redis-url", url, "--warmup", "0s", "--quiet", "--json", "--out", out}, extra...)
}

// TestSpawnLocalReusedRunID: a second run given a used run id is refused
// before its workers start, and reports nothing: not the earlier run's
// result as its own.
func TestSpawnLocalReusedRunID(t *testing.T) {
	env := redisenvtest.Start(t)
	url := harness.URLOf(env)
	id := "reuse-" + workloads.NewRunID()
	if out, _ := runBenchOK(t, spreadArgs(url, id, t.TempDir(), "--duration", "1s")...); !strings.Contains(out, id) {
		t.Fatalf("the first run printed no result of run %s:\n%s", id, out)
	}
	dir := t.TempDir()
	code, out, errOut := runBench(t, spreadArgs(url, id, dir, "--duration", "2s", "--hold", "1ms")...)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	last := lines[len(lines)-1]
	if code != cli.ExitUsage || out != "" || !strings.Contains(last, `run-id "`+id+`": a run with this id already ran`) {
		t.Errorf("the second run of id %s: exit %d, stdout %q, last line %q; want exit 2 refusing the id and no result", id, code, out, last)
	}
	if strings.Contains(errOut, "w0:") {
		t.Errorf("workers started:\n%s", errOut)
	}
	checkNothingUnder(t, dir)
}

// TestSpawnLocalRefusedWorkers: workers that refused their input (exit
// 2) make the parent fail naming why, and collect nothing, though the
// store holds a result of the id: another run's.
func TestSpawnLocalRefusedWorkers(t *testing.T) {
	env := redisenvtest.Start(t)
	saved := spawnCommand
	t.Cleanup(func() { spawnCommand = saved })
	spawnCommand = func([]string) *exec.Cmd {
		// A refusal that came after the parent's own check: another run
		// took the id meanwhile.
		return exec.Command("sh", "-c", `echo 'bench: run-id "x": a run with this id already ran' >&2; exit 2`)
	}
	dir := t.TempDir()
	code, out, errOut := runBench(t, spreadArgs(harness.URLOf(env), "refused-"+workloads.NewRunID(), dir, "--duration", "1s")...)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	last := lines[len(lines)-1]
	if code != cli.ExitUsage || out != "" || !strings.Contains(last, `its workers were refused, so nothing is collected: workers 0, 1: run-id "x": a run with this id already ran`) {
		t.Errorf("exit %d, stdout %q, last line %q; want exit 2 naming both workers' refusal", code, out, last)
	}
	checkNothingUnder(t, dir)
}

// TestSpawnLocalInterruptedEarly: interrupted before any worker ran its
// load, the run says so, not that the run id may be wrong.
func TestSpawnLocalInterruptedEarly(t *testing.T) {
	ctx, cancel := context.WithCancel(spreadContext(t))
	defer cancel()
	var out, errOut strings.Builder
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	t.Setenv("REDIS_URL", "")
	go func() {
		done <- program().Main(ctx, []string{"run", "--redis", "local", "--profile", "mutex", "--clients", "2", "--workers", "2", "--spawn-local",
			"--warmup", "0s", "--duration", "5m", "--json", "--out", t.TempDir()}, &out, pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		errOut.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "bench: worker 1 pid ") {
			cancel()
		}
	}
	code := <-done
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	last := lines[len(lines)-1]
	if code != cli.ExitInterrupted || !strings.HasSuffix(last, "interrupted before any worker finished its load: nothing to collect") {
		t.Errorf("exit %d, last line %q; want 130 saying it was interrupted before any worker finished\n%s", code, last, errOut.String())
	}
}

// TestCollectRefusesAnAmbiguousRunID: a run id two stores hold a run of
// is refused in one line naming both, exit 2.
func TestCollectRefusesAnAmbiguousRunID(t *testing.T) {
	lock, guarded := redisenvtest.Start(t), redisenvtest.Start(t)
	id := "ambiguous-" + workloads.NewRunID()
	for _, env := range []*redisenv.Env{lock, guarded} {
		rdb := env.NewClient()
		if err := rdb.HSet(testkit.Context(t), "lockbench:results:{"+id+"}", "workers", 1, "0:start", "then").Err(); err != nil {
			t.Fatal(err)
		}
		_ = rdb.Close()
	}
	code, out, errOut := runBench(t, "collect", "--run-id", id, "--redis-url", harness.URLOf(lock), "--guard-url", harness.URLOf(guarded), "--wait", "0", "--out", t.TempDir())
	want := fmt.Sprintf("the guarded store at %s and the lock's Redis at %s each hold a run with this id", guarded.Addr(), lock.Addr())
	if code != cli.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 with one line: %s", code, out, errOut, want)
	}
}

// TestReportShowsARunOnce: a spread run's merge written twice into one
// directory (an older collect's -merged-2 beside it) is one run in the
// report, the other named on stderr.
func TestReportShowsARunOnce(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for range 2 {
		r := resultstest.Run()
		r.Spread = &results.Spread{RunID: "job-1", Workers: 1, Rows: []results.WorkerRow{{Index: 0, Ops: 41000}}}
		r.MergedFrom = []string{"w0.json"}
		p, err := results.WriteFiles(dir, r)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	out, errOut := runBenchOK(t, "report", dir)
	if !strings.Contains(out, "(1 run, ") || !strings.Contains(errOut, "are one run") {
		t.Errorf("report of %v: stdout %q, stderr %q; want one run, and the other named", paths, out, errOut)
	}
}

// TestSpawnLocalInterrupted: an interrupt reaches every worker once; each
// keeps and pushes what it ran, and the merged result is partial with
// every worker's row, and the run exits as an interrupted one.
func TestSpawnLocalInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(spreadContext(t))
	defer cancel()
	arrived := 0
	code, r := spreadRunCtx(t, ctx, func(line string) {
		if strings.Contains(line, ": all arrived;") {
			if arrived++; arrived == 2 {
				time.AfterFunc(time.Second, cancel)
			}
		}
	}, "--profile", "mutex", "--clients", "2", "--warmup", "0s", "--duration", "5m", "--workers", "2", "--guard", "plain")
	if code != cli.ExitInterrupted {
		t.Errorf("exit %d, want %d", code, cli.ExitInterrupted)
	}
	if !r.Partial || len(r.Spread.Rows) != 2 || len(r.Spread.MissingWorkers()) != 0 {
		t.Fatalf("partial %v, spread %+v; want both workers' partial results", r.Partial, r.Spread)
	}
	for _, row := range r.Spread.Rows {
		if !row.Partial || row.Ops == 0 {
			t.Errorf("worker %d: partial %v, %d ops; want its partial measurement", row.Index, row.Partial, row.Ops)
		}
	}
	if r.Guard == nil || r.Guard.Accepted == 0 {
		t.Errorf("guard %+v, want the store's tallies", r.Guard)
	}
}
