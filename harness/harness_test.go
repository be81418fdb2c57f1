package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/scenarios"
	"github.com/lockbench/lockbench/workloads"
)

func TestMain(m *testing.M) {
	if spec, ok := os.LookupEnv(workerEnv); ok {
		os.Exit(workerChild(spec))
	}
	redisenvtest.Main(m)
}

func TestRedactArgs(t *testing.T) {
	got := strings.Join(harness.RedactArgs([]string{"--redis-url", "redis://u:secret@h:1/0", "--redis=redis://:secret@h:2", "--owners", "4"}), " ")
	if strings.Contains(got, "secret") || !strings.Contains(got, "h:1") || !strings.Contains(got, "--owners 4") {
		t.Errorf("RedactArgs = %q", got)
	}
}

// TestSweepInProcess drives a two-point sweep without a program around
// it: every point's result, the sweep, charts and report are written, the
// Redis each point ran on is closed, and the metadata hides the password
// given on the command line.
func TestSweepInProcess(t *testing.T) {
	p, err := workloads.Builtin("rw90")
	if err != nil {
		t.Fatal(err)
	}
	p.Clients, p.Owners, p.Warmup = 1, 2, 0
	p.Duration = workloads.Duration(500 * time.Millisecond)
	out := t.TempDir()
	var mu sync.Mutex
	var pids []int
	var lines []string
	o, err := harness.Sweep(context.Background(), harness.SweepOptions{
		Plan:    workloads.SweepPlan{Base: p, Clients: []int{1, 2}, SLO: time.Second},
		Impl:    workloads.Lockimpl{},
		Redis:   redisenv.Config{Backend: redisenv.BackendLocal, Dir: t.TempDir()},
		Out:     out,
		Version: "test",
		Args:    []string{"sweep", "--redis-url", "redis://:hunter2@h:1"},
		StartEnv: func(ctx context.Context, cfg redisenv.Config) (*redisenv.Env, error) {
			env, err := redisenv.Start(ctx, cfg)
			if err == nil {
				mu.Lock()
				pids = append(pids, env.Primary().PID())
				mu.Unlock()
			}
			return env, err
		},
		Logf: func(format string, a ...any) {
			mu.Lock()
			lines = append(lines, format)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatalf("sweep: %v (logged %q)", err, lines)
	}
	if len(o.Sweep.Points) != 2 || o.Report == "" || len(o.Charts) != 3 {
		t.Fatalf("output %+v", o)
	}
	if !slices.ContainsFunc(o.Charts, func(p string) bool { return filepath.Base(p) == "capacity-cpu.png" }) {
		t.Errorf("charts %v: no capacity-cpu.png, though every point measured its CPU", o.Charts)
	}
	for _, pt := range o.Sweep.Points {
		r, err := results.ReadFile(filepath.Join(out, pt.File))
		if err != nil {
			t.Fatal(err)
		}
		if r.Meta.Lockbench != "test" || r.Meta.Impl != "lockimpl" || strings.Contains(strings.Join(r.Meta.Args, " "), "hunter2") {
			t.Errorf("point meta %+v", r.Meta)
		}
	}
	if _, err := os.Stat(o.Path); err != nil {
		t.Error(err)
	}
	if len(pids) != 1 || pids[0] <= 0 {
		t.Fatalf("two points on one Redis started servers %v, want one", pids)
	}
	redisenvtest.WaitProcessGone(t, pids[0], 15*time.Second)
}

// TestChaosSuiteFiles runs a suite whose scenario the chosen Redis cannot
// host (process faults on an external server): it is reported SKIPPED at
// once, and the suite still writes its report, JUnit and HTML.
func TestChaosSuiteFiles(t *testing.T) {
	env := redisenvtest.Start(t)
	s, ok := scenarios.Find("redis-pause")
	if !ok {
		t.Fatal("no scenario redis-pause")
	}
	out := t.TempDir()
	junit := filepath.Join(out, "junit.xml")
	var done []string
	o, err := harness.Chaos(context.Background(), harness.ChaosOptions{
		Scenarios: []*scenarios.Scenario{s},
		Run:       scenarios.Options{Redis: redisenv.Config{Backend: redisenv.BackendExternal, URL: "redis://" + env.Addr()}, Quick: true, Seed: 1},
		Out:       out, JUnit: junit, Version: "test",
		Done: func(rep *results.ChaosReport, path string) { done = append(done, rep.Scenario+" "+path) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Reports) != 1 || o.Reports[0].Verdict != results.Skipped || len(done) != 1 || !strings.HasSuffix(done[0], ".chaos.json") {
		t.Fatalf("reports %+v, done %q", o.Reports, done)
	}
	back, err := results.ReadChaosReport(strings.Fields(done[0])[1])
	if err != nil || back.Verdict != results.Skipped {
		t.Fatalf("report read back: %v, %v", back, err)
	}
	for _, f := range []string{junit, o.HTML} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if o.HTMLErr != nil {
		t.Error(o.HTMLErr)
	}
}
