package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// workerEnv, when set, makes this test binary one worker process of a
// spread run (workerChild), described by the JSON it holds.
const workerEnv = "LOCKBENCH_HARNESS_WORKER"

// childSpec is what a worker process is told.
type childSpec struct {
	RunID, RedisURL, GuardURL, Out string
	Index, Workers                 int
}

// brokenLock excludes no one: every Acquire succeeds at once, as a lock
// whose script forgot to check the holder would.
type brokenLock struct{}

func (brokenLock) Name() string { return "broken" }
func (brokenLock) Check(workloads.Profile) (string, error) {
	return "a planted lock that excludes no one", nil
}
func (brokenLock) NewClient(_ context.Context, _ redis.UniversalClient, _ workloads.Profile, c int) (workloads.ImplClient, error) {
	return &brokenClient{id: c}, nil
}

type brokenClient struct{ id, n int }

func (c *brokenClient) NewOwner() workloads.Owner {
	c.n++
	return brokenOwner(fmt.Sprintf("broken-%d-%d-%d", os.Getpid(), c.id, c.n))
}
func (c *brokenClient) Close() error { return nil }

type brokenOwner string

func (o brokenOwner) ID() string                                   { return string(o) }
func (o brokenOwner) Locker(string, results.Mode) workloads.Locker { return brokenLocker{} }

type brokenLocker struct{}

func (brokenLocker) Acquire(context.Context, time.Duration, time.Duration) (bool, error) {
	return true, nil
}
func (brokenLocker) Release(context.Context) error { return nil }
func (brokenLocker) Lost() <-chan struct{}         { return nil }

// workerChild runs one worker of the planted broken lock's spread run:
// one owner per worker, so that each worker's own checker has no pair to
// compare and only the store sees the overlaps.
func workerChild(spec string) int {
	var s childSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience)
	defer cancel()
	err := func() error {
		cfg := redisenv.Config{Backend: redisenv.BackendExternal, URL: s.RedisURL}
		env, err := redisenv.Start(ctx, cfg)
		if err != nil {
			return err
		}
		defer env.Close()
		store, err := harness.OpenWorkerStore(ctx, cfg, s.GuardURL)
		if err != nil {
			return err
		}
		defer store.Close()
		p, err := workloads.Builtin("mutex")
		if err != nil {
			return err
		}
		p.Clients, p.Owners, p.Locks, p.Guard = s.Workers, 1, 1, "plain"
		p.Warmup, p.Duration = 0, workloads.Duration(time.Second)
		for f, v := range map[string]string{"hold": "2ms", "think": "1ms", "lease": "10s", "depth": "1"} {
			if err := p.Set(f, v); err != nil {
				return err
			}
		}
		w := &harness.WorkerOptions{RunID: s.RunID, Index: s.Index, Workers: s.Workers, Timeout: testkit.Patience, Store: store.Client()}
		res, err := harness.Run(ctx, env, harness.RunOptions{Profile: p, Impl: brokenLock{}, Worker: w,
			GuardURL: s.GuardURL, GuardKey: harness.GuardKey(s.RunID), Meta: results.Meta{Host: "child"}})
		if err != nil {
			return err
		}
		path, err := results.WriteFiles(s.Out, res)
		if err != nil {
			return err
		}
		return w.Push(ctx, path, res)
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker %d: %v\n", s.Index, err)
		return 1
	}
	return 0
}

// TestCollectCatchesCrossWorkerViolation splits a planted broken lock over
// two worker processes: each worker's clock checker finds nothing (it has
// one owner), the merge of their files by clocks cannot compare across
// them, and the store that witnessed every critical section names the
// overlaps: the one verdict, VIOLATED by the store.
func TestCollectCatchesCrossWorkerViolation(t *testing.T) {
	lockRedis, guardRedis := redisenvtest.Start(t), redisenvtest.Start(t)
	runID := "planted-" + workloads.NewRunID()
	dir := t.TempDir()
	procs := make([]*exec.Cmd, 2)
	for i := range procs {
		spec, _ := json.Marshal(childSpec{RunID: runID, Index: i, Workers: 2, Out: filepath.Join(dir, fmt.Sprint("w", i)),
			RedisURL: harness.URLOf(lockRedis), GuardURL: harness.URLOf(guardRedis)})
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerEnv+"="+string(spec))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = cmd
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	store, lockClient := guardRedis.NewClient(), lockRedis.NewClient()
	t.Cleanup(func() { _, _ = store.Close(), lockClient.Close() })
	m, path, err := harness.Collect(testkit.Context(t), harness.CollectOptions{RunID: runID, Stores: []redis.UniversalClient{lockClient, store}, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("merged %s: clock checker %d violations in %d sections", path, m.Safety.Violations, m.Safety.Sections)
	if m.Spread == nil || len(m.Spread.Rows) != 2 || len(m.Spread.MissingWorkers()) != 0 {
		t.Fatalf("spread %+v, want both workers", m.Spread)
	}
	if s := m.Safety; s.Violations != 0 || s.Witness != results.WitnessStore || s.StoreOverlaps == 0 || s.Verdict() != results.SafetyViolated {
		t.Errorf("safety %+v; want no violation by the clock checkers (one owner per worker), VIOLATED by the store's overlaps", s)
	}
	g := m.Guard
	if g == nil || !g.Occupancy || g.Overlaps == 0 || len(g.OverlapExamples) == 0 {
		t.Fatalf("guard %+v, want the store's overlaps", g)
	}
	t.Logf("store: %d overlaps, %d lost updates in %d sections", g.Overlaps, g.Lost, g.Sections)
	var summary strings.Builder
	if err := report.WriteSummary(&summary, m); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(summary.String(), "\n") {
		if strings.HasPrefix(l, "safety") || strings.HasPrefix(l, "exclusion") || strings.HasPrefix(l, "FAILED") || strings.HasPrefix(l, "guard") {
			t.Log(l)
		}
	}
	// Each overlap is one worker's holder entering while the other's was
	// inside: only the store could see it.
	for _, o := range g.OverlapExamples {
		if len(o.Inside) != 1 || o.Inside[0][:3] == o.Entered[:3] {
			t.Errorf("overlap %+v, want a holder of each worker", o)
		}
	}
	// Nothing the run left in either Redis stays for ever.
	for _, rdb := range []redis.UniversalClient{store, lockClient} {
		keys, err := rdb.Keys(testkit.Context(t), "*").Result()
		if err != nil || rdb == store && len(keys) == 0 {
			t.Fatalf("keys: %v %v", keys, err)
		}
		for _, k := range keys {
			if ttl, err := rdb.PTTL(testkit.Context(t), k).Result(); err != nil || ttl <= 0 {
				t.Errorf("key %s: ttl %v (%v), want it to expire", k, ttl, err)
			}
		}
	}
	var kinds []results.FailureKind
	for _, f := range m.Failures() {
		kinds = append(kinds, f.Kind)
	}
	if !slices.Contains(kinds, results.FailSafety) || !slices.Contains(kinds, results.FailLostUpdates) {
		t.Errorf("failures %v, want the store's safety verdict and lost updates", kinds)
	}
}

// TestCollectWaitsAndNamesTheMissing: Collect waits for results not
// pushed yet within its bounds, and names a worker that started but never
// pushed.
func TestCollectNoResults(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	_, _, err := harness.Collect(testkit.Context(t), harness.CollectOptions{RunID: "nothing-" + workloads.NewRunID(), Stores: []redis.UniversalClient{rdb}, Out: t.TempDir()})
	if !errors.Is(err, harness.ErrNoResults) {
		t.Errorf("Collect of a run nobody pushed: %v, want ErrNoResults", err)
	}
}
