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
	stores := []harness.Store{{Name: "the lock's Redis", Client: lockClient}, {Name: "the guarded store", Client: store}}
	m, path, err := harness.Collect(testkit.Context(t), harness.CollectOptions{RunID: runID, Stores: stores, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("merged %s: clock checker %d violations in %d sections", path, m.Safety.Violations, m.Safety.Sections)
	// Collected again into the same directory, the run's merge replaces
	// the first: one merged result per run.
	if _, again, err := harness.Collect(testkit.Context(t), harness.CollectOptions{RunID: runID, Stores: stores, Out: dir}); err != nil || again != path {
		t.Errorf("collected again: %s, %v; want %s replaced", again, err, path)
	}
	if merged, _ := filepath.Glob(filepath.Join(dir, "*-merged*.json")); len(merged) != 1 {
		t.Errorf("merged results in the directory: %v, want one", merged)
	}
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

// TestCollectNoResults: Collect of a run no store knows says so.
func TestCollectNoResults(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	_, _, err := harness.Collect(testkit.Context(t), harness.CollectOptions{RunID: "nothing-" + workloads.NewRunID(), Stores: []harness.Store{{Name: "the store", Client: rdb}}, Out: t.TempDir()})
	if !errors.Is(err, harness.ErrNoResults) || !strings.Contains(err.Error(), "the store holds nothing of it") {
		t.Errorf("Collect of a run nobody pushed: %v, want ErrNoResults saying the store holds nothing of it", err)
	}
}

// runWorker runs worker index of workers of run runID in this process,
// on the lock's Redis lock, meeting on store (the guarded store at
// guardURL when that is set, and the counters there): the planted
// broken lock, one owner per worker, a short load. edit changes the
// profile and options before the run.
func runWorker(ctx context.Context, lock *redisenv.Env, store redis.UniversalClient, guardURL, runID string, index, workers int, edit func(*workloads.Profile, *harness.RunOptions)) (*results.Result, error) {
	p, err := workloads.Builtin("mutex")
	if err != nil {
		return nil, err
	}
	p.Clients, p.Owners, p.Locks = workers, 1, 1
	p.Warmup, p.Duration = 0, workloads.Duration(300*time.Millisecond)
	if guardURL != "" {
		p.Guard = "plain"
	}
	o := harness.RunOptions{Profile: p, Impl: brokenLock{}, GuardURL: guardURL, GuardKey: harness.GuardKey(runID), Meta: results.Meta{Host: "test"},
		Worker: &harness.WorkerOptions{RunID: runID, Index: index, Workers: workers, Timeout: testkit.Patience, Store: store}}
	if edit != nil {
		edit(&o.Profile, &o)
	}
	return harness.Run(ctx, lock, o)
}

// TestSpreadRunIDUniqueAcrossStores: a run id is one run's in every store
// a run touches. A guarded run keeps its results in the guarded store,
// yet marks its id on the lock's Redis too: a later unguarded run of the
// id there is refused before any load, and so is a guarded one. A
// collector that finds a run of the id in two stores refuses to pick.
func TestSpreadRunIDUniqueAcrossStores(t *testing.T) {
	lock, guarded := redisenvtest.Start(t), redisenvtest.Start(t)
	lockClient, guardClient := lock.NewClient(), guarded.NewClient()
	t.Cleanup(func() { _, _ = lockClient.Close(), guardClient.Close() })
	ctx := testkit.Context(t)
	id := "unique-" + workloads.NewRunID()
	w := &harness.WorkerOptions{RunID: id, Workers: 1, Timeout: testkit.Patience, Store: guardClient}
	res, err := runWorker(ctx, lock, guardClient, harness.URLOf(guarded), id, 0, 1, nil)
	if err != nil {
		t.Fatalf("the guarded run: %v", err)
	}
	dir := t.TempDir()
	path, err := results.WriteFiles(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Push(ctx, path, res); err != nil {
		t.Fatal(err)
	}

	for name, store := range map[string]redis.UniversalClient{"unguarded": lockClient, "guarded": guardClient} {
		guardURL := ""
		if name == "guarded" {
			guardURL = harness.URLOf(guarded)
		}
		_, err := runWorker(ctx, lock, store, guardURL, id, 0, 1, nil)
		var fe *workloads.FieldError
		if !errors.As(err, &fe) || fe.Field != "run-id" || !strings.Contains(err.Error(), "already ran") {
			t.Errorf("a second, %s run of id %s: %v, want it refused as a used run id", name, id, err)
		}
	}

	stores := []harness.Store{{Name: "the guarded store", Client: guardClient}, {Name: "the lock's Redis", Client: lockClient}}
	if _, _, err := harness.Collect(ctx, harness.CollectOptions{RunID: id, Stores: stores, Out: t.TempDir()}); err != nil {
		t.Fatalf("collect from both stores, one holding the run: %v", err)
	}
	// A run of the id whose results sit in the lock's Redis too (left
	// by a version that did not mark ids there): which is meant cannot
	// be told.
	if err := lockClient.HSet(ctx, "lockbench:results:{"+id+"}", "workers", 1, "0:start", "then").Err(); err != nil {
		t.Fatal(err)
	}
	_, _, err = harness.Collect(ctx, harness.CollectOptions{RunID: id, Stores: stores, Out: t.TempDir()})
	var fe *workloads.FieldError
	if !errors.As(err, &fe) || fe.Field != "run-id" || !strings.Contains(err.Error(), "the guarded store and the lock's Redis each hold a run with this id") {
		t.Errorf("collect of an id two stores hold: %v, want it refused naming both", err)
	}
	if err := harness.CheckRunIDUnused(ctx, id, stores[1]); err == nil {
		t.Errorf("CheckRunIDUnused on the lock's Redis holding the id's mark: no error")
	}
	if err := harness.CheckRunIDUnused(ctx, "fresh-"+workloads.NewRunID(), stores...); err != nil {
		t.Errorf("CheckRunIDUnused of a fresh id: %v", err)
	}
}

// TestSpreadRefusesOtherSettings: a worker whose load differs from the
// first worker's (its duration, or its guarded counters' key) is refused
// before any load, naming the setting, and the first learns at once.
func TestSpreadRefusesOtherSettings(t *testing.T) {
	lock, guarded := redisenvtest.Start(t), redisenvtest.Start(t)
	guardURL := harness.URLOf(guarded)
	for _, tc := range []struct {
		name, want string
		edit       func(*workloads.Profile, *harness.RunOptions)
	}{
		{"duration", "duration 8s differs from worker 0's 300ms", func(p *workloads.Profile, _ *harness.RunOptions) { p.Duration = workloads.Duration(8 * time.Second) }},
		{"guard key", "guard-key other differs from worker 0's lockbench:guard:", func(_ *workloads.Profile, o *harness.RunOptions) { o.GuardKey = "other" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			id := "settings-" + workloads.NewRunID()
			store0, store1 := guarded.NewClient(), guarded.NewClient()
			t.Cleanup(func() { _, _ = store0.Close(), store1.Close() })
			first := make(chan error, 1)
			go func() { _, err := runWorker(ctx, lock, store0, guardURL, id, 0, 2, nil); first <- err }()
			testkit.Eventually(t, "worker 0 arrived", func() bool {
				st, err := workloads.ReadRendezvous(ctx, store1, id)
				return err == nil && len(st.Arrived) == 1
			})
			start := time.Now()
			_, err := runWorker(ctx, lock, store1, guardURL, id, 1, 2, tc.edit)
			var se *workloads.SettingsError
			if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "worker 1: "+tc.want) {
				t.Errorf("worker 1: %v, want a SettingsError starting %q", err, "worker 1: "+tc.want)
			}
			var re *workloads.RendezvousError
			if err := <-first; !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("worker 0: %v, want the rendezvous abandoned, naming the setting", err)
			}
			if took := time.Since(start); took > testkit.Patience/2 {
				t.Errorf("worker 0 learned after %v", took)
			}
		})
	}
}

// TestCollectSaysWhy: a collector that finds no result says why: the
// workers still meet, their rendezvous was abandoned (then it does not
// wait for results that cannot come), they still run, or they were due
// to end long ago and pushed nothing.
func TestCollectSaysWhy(t *testing.T) {
	lock := redisenvtest.Start(t)
	rdb := lock.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	stores := []harness.Store{{Name: "the store", Client: rdb}}
	collect := func(id string, wait time.Duration) error {
		_, _, err := harness.Collect(testkit.Context(t), harness.CollectOptions{RunID: id, Stores: stores, Out: t.TempDir(), Wait: wait})
		if !errors.Is(err, harness.ErrNoResults) {
			t.Fatalf("collect of run %s: %v, want ErrNoResults", id, err)
		}
		t.Log(err)
		return err
	}

	// Meeting, then abandoned.
	id := "meeting-" + workloads.NewRunID()
	ctx, cancel := context.WithCancel(testkit.Context(t))
	done := make(chan error, 1)
	go func() { _, err := runWorker(ctx, lock, rdb, "", id, 0, 2, nil); done <- err }()
	testkit.Eventually(t, "worker 0 arrived", func() bool {
		st, err := workloads.ReadRendezvous(ctx, rdb, id)
		return err == nil && len(st.Arrived) == 1
	})
	if err := collect(id, 0); !strings.Contains(err.Error(), "still meeting (0 of 2 arrived, waiting for 1)") {
		t.Errorf("collect while the workers meet: %v", err)
	}
	cancel()
	<-done
	start := time.Now()
	if err := collect(id, testkit.Patience); !strings.Contains(err.Error(), "its rendezvous was abandoned, so none ran") || !strings.Contains(err.Error(), "worker 1 of 2 never arrived") {
		t.Errorf("collect after the rendezvous was abandoned: %v", err)
	}
	if took := time.Since(start); took > testkit.Patience/2 {
		t.Errorf("collect waited %v for a run whose rendezvous was abandoned", took)
	}

	// Running.
	id = "running-" + workloads.NewRunID()
	ctx, cancel = context.WithCancel(testkit.Context(t))
	defer cancel()
	go func() {
		_, err := runWorker(ctx, lock, rdb, "", id, 0, 1, func(p *workloads.Profile, _ *harness.RunOptions) { p.Duration = workloads.Duration(time.Hour) })
		done <- err
	}()
	testkit.Eventually(t, "worker 0 started", func() bool {
		n, _ := rdb.HExists(ctx, "lockbench:results:{"+id+"}", "0:start").Result()
		return n
	})
	if err := collect(id, 0); !strings.Contains(err.Error(), "worker 0 of 1 started at") || !strings.Contains(err.Error(), "is still running") {
		t.Errorf("collect while the workers run: %v", err)
	}
	cancel()
	<-done

	// Gone: due to end long ago (as Redis's clock reads), nothing pushed.
	id = "gone-" + workloads.NewRunID()
	now, err := rdb.Time(testkit.Context(t)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(testkit.Context(t), "lockbench:results:{"+id+"}", "workers", 2, "0:start", now.Add(-time.Hour).Format(time.RFC3339Nano),
		"0:end", now.Add(-50*time.Minute).Format(time.RFC3339Nano), "1:start", now.Add(-time.Hour).Format(time.RFC3339Nano),
		"1:end", now.Add(-50*time.Minute).Format(time.RFC3339Nano)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := collect(id, 0); !strings.Contains(err.Error(), "workers 0, 1 of 2 started at") || !strings.Contains(err.Error(), "they died, or could not reach the store") {
		t.Errorf("collect of workers long gone: %v", err)
	}
}
