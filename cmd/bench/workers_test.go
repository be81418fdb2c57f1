package main

import (
	"bufio"
	"context"
	"encoding/json"
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

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/results"
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
	return spreadRunCtx(t, testkit.Context(t), watch, args...)
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
// exit 2, before any load.
func TestWorkerFlagsRefused(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "")
	t.Setenv("LOCKBENCH_RUN_ID", "")
	for name, tc := range map[string]struct {
		args []string
		flag string
	}{
		"no index":          {[]string{"--workers", "2", "--run-id", "r1", "--redis-url", "redis://127.0.0.1:1"}, "--worker-index"},
		"index too high":    {[]string{"--workers", "2", "--worker-index", "2", "--run-id", "r1", "--redis-url", "redis://127.0.0.1:1"}, "--worker-index"},
		"no run id":         {[]string{"--workers", "2", "--worker-index", "0", "--redis-url", "redis://127.0.0.1:1"}, "--run-id"},
		"run id with brace": {[]string{"--workers", "2", "--worker-index", "0", "--run-id", "a{b", "--redis-url", "redis://127.0.0.1:1"}, "run-id"},
		"own redis":         {[]string{"--workers", "2", "--worker-index", "0", "--run-id", "r1"}, "--redis-url"},
		"more than clients": {[]string{"--workers", "5", "--clients", "4", "--spawn-local"}, "workers"},
		"spawn one":         {[]string{"--workers", "1", "--spawn-local"}, "--spawn-local"},
		"spawn with index":  {[]string{"--workers", "2", "--spawn-local", "--worker-index", "1"}, "--worker-index"},
		"guard unshared":    {[]string{"--workers", "2", "--worker-index", "0", "--run-id", "r1", "--redis-url", "redis://127.0.0.1:1", "--guard", "plain"}, "--guard-url"},
		"collect no run id": {[]string{"collect"}, "--run-id"},
		"collect bad wait":  {[]string{"collect", "--run-id", "r1", "--wait", "-1s"}, "--wait"},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"run", "--profile", "mutex"}, tc.args...)
			if tc.args[0] == "collect" {
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

// TestSpawnLocalInterrupted: an interrupt reaches every worker once; each
// keeps and pushes what it ran, and the merged result is partial with
// every worker's row, and the run exits as an interrupted one.
func TestSpawnLocalInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(testkit.Context(t))
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
