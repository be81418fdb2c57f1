package main

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
)

// waitGuardWrites waits until the guarded store on rdb has applied n
// writes under the one run's key it holds.
func waitGuardWrites(t *testing.T, rdb redis.UniversalClient, n int64) {
	t.Helper()
	ctx := context.Background()
	testkit.Eventually(t, "the run's writes in the guarded store", func() bool {
		keys, err := rdb.Keys(ctx, "{lockbench:guard:*}").Result()
		if err != nil || len(keys) != 1 {
			return false
		}
		v, err := rdb.HGet(ctx, keys[0], "accepted").Int64()
		return err == nil && v >= n
	})
}

// TestGuardedStoreGone: a guarded run whose store (--guard-url) is killed
// mid-run, or killed and restarted empty, does not pass: its summary
// opens with the failure naming the sections the store did not witness
// and why, the safety verdict is INCOMPLETE, the guard line stays, and
// the run exits 1.
func TestGuardedStoreGone(t *testing.T) {
	for _, c := range []struct {
		name    string
		restart bool
		words   string
	}{
		{"killed", false, "store unreachable from t="},
		{"restarted empty", true, "store lost the run's keys by t="},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := redisenvtest.Start(t)
			rdb := redisenvtest.Raw(t, store)
			var out, errOut bytes.Buffer
			done := make(chan int, 1)
			t.Setenv("REDIS_URL", "")
			go func() {
				done <- program().Main(testkit.Context(t), []string{"run", "--redis", "local", "--profile", "mutex", "--clients", "2", "--owners", "2",
					"--locks", "4", "--hold", "1ms", "--think", "200us", "--ops", "600", "--duration", "30s", "--warmup", "0s",
					"--guard", "plain", "--guard-url", harness.URLOf(store), "--quiet", "--out", t.TempDir()}, &out, &errOut)
			}()
			waitGuardWrites(t, rdb, 40)
			node := store.Primary()
			if err := node.Kill(context.Background()); err != nil {
				t.Fatal(err)
			}
			if c.restart {
				if err := node.Restart(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			code := <-done
			t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
			if code != cli.ExitFailure {
				t.Errorf("exit %d, want %d", code, cli.ExitFailure)
			}
			for _, want := range []string{"FAILED      no complete safety verdict: the guarded store witnessed ", c.words,
				"safety      INCOMPLETE: ", "guard       plain "} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("summary lacks %q", want)
				}
			}
			if !strings.Contains(errOut.String(), "run failed: no complete safety verdict: ") {
				t.Errorf("stderr lacks the failure")
			}
		})
	}
}

// TestSpreadRW90Witnessed: rw90 spread over 3 local workers, sharing a
// guarded store, ends with one complete verdict, OK by the store, which
// saw every reader and writer of every worker.
func TestSpreadRW90Witnessed(t *testing.T) {
	store := redisenvtest.Start(t)
	code, r := spreadRun(t, nil, "--profile", "rw90", "--clients", "3", "--owners", "2", "--warmup", "500ms", "--duration", "2s",
		"--workers", "3", "--guard", "plain", "--guard-url", harness.URLOf(store))
	if code != cli.ExitOK {
		t.Fatalf("exit %d; failures %+v", code, r.Failures())
	}
	s, g := r.Safety, r.Guard
	if s.Verdict() != results.SafetyOK || s.Witness != results.WitnessStore || s.Missing() != "" {
		t.Errorf("safety %+v; want OK, witnessed by the guarded store, nothing missing", s)
	}
	if g == nil || !g.Occupancy || g.Overlaps != 0 || g.Unwitnessed != 0 || g.Sections != s.Sections || g.Lost != 0 {
		t.Fatalf("guard %+v; want every one of the %d sections witnessed, no overlap, nothing lost", g, s.Sections)
	}
	if reads := r.Throughput.Acquisitions[results.Read.String()]; reads == 0 || g.Written == 0 {
		t.Errorf("%d reads, %d writes; want both witnessed", reads, g.Written)
	}
}

// TestSpreadPlantedReaderWriter: two worker processes of an rw90 run, one
// planted on a Redis of its own, so that its locks exclude its own owners
// and nobody else's. Each process's clock checker finds nothing; the
// guarded store they share sees readers of one inside with writers of the
// other, and the run is VIOLATED and fails.
func TestSpreadPlantedReaderWriter(t *testing.T) {
	other := harness.URLOf(redisenvtest.Start(t))
	defer func(f func([]string) *exec.Cmd) { spawnCommand = f }(spawnCommand)
	spawnCommand = func(args []string) *exec.Cmd {
		if i := slices.Index(args, "--worker-index"); i >= 0 && args[i+1] == "1" {
			args = append(slices.Clone(args), "--redis-url", other)
		}
		return spawnTestBinary(args)
	}
	code, r := spreadRun(t, nil, "--profile", "rw90", "--clients", "2", "--owners", "3", "--locks", "2", "--warmup", "300ms", "--duration", "2s",
		"--hold", "2ms", "--workers", "2", "--guard", "plain")
	if code != cli.ExitFailure {
		t.Errorf("exit %d, want %d", code, cli.ExitFailure)
	}
	s, g := r.Safety, r.Guard
	t.Logf("safety %+v; failures %v", s, r.Failures())
	if s.Violations != 0 {
		t.Errorf("%d violations by the clock checkers; each process's own locks exclude its own owners", s.Violations)
	}
	if s.Verdict() != results.SafetyViolated || s.Witness != results.WitnessStore || s.StoreOverlaps == 0 || g == nil || s.StoreOverlaps != g.Overlaps {
		t.Fatalf("safety %+v; want VIOLATED by the guarded store's overlaps", s)
	}
	worker := func(h string) string { return h[:strings.Index(h, "/")] }
	across := 0
	for _, o := range g.OverlapExamples {
		for _, h := range append(slices.Clone(o.Inside), o.Readers...) {
			if worker(h) == worker(o.Entered) {
				t.Errorf("example %+v: %s and %s are of one process, whose locks exclude each other", o, h, o.Entered)
			}
		}
		if o.EnteredRead && len(o.Inside) > 0 || !o.EnteredRead && len(o.Readers) > 0 {
			across++
		}
	}
	if across == 0 {
		t.Errorf("overlap examples %+v; want a reader and a writer of different processes among them", g.OverlapExamples)
	}
	if !slices.ContainsFunc(r.Failures(), func(f results.Failure) bool {
		return f.Kind == results.FailSafety && strings.Contains(f.Text, "the guarded store witnessed")
	}) {
		t.Errorf("failures %v; want the store's overlaps", r.Failures())
	}
}

// TestNoKeyWithoutTTL: everything bench writes on a user's servers
// expires: after a fenced run, guarded runs (rw90's readers too) and a
// spread run on the lock's Redis and a guarded store given by URL, no key
// on either lacks a time to live.
func TestNoKeyWithoutTTL(t *testing.T) {
	lock, store := redisenvtest.Start(t), redisenvtest.Start(t)
	lockURL, storeURL := harness.URLOf(lock), harness.URLOf(store)
	common := []string{"--redis-url", lockURL, "--clients", "2", "--owners", "2", "--duration", "1s", "--warmup", "0s", "--quiet"}
	for _, args := range [][]string{
		{"--profile", "fenced"},
		{"--profile", "fenced", "--guard", "fenced", "--guard-url", storeURL},
		{"--profile", "mutex", "--guard", "plain", "--guard-url", storeURL},
		{"--profile", "rw90", "--guard", "plain", "--guard-url", storeURL},
		{"--profile", "fenced", "--workers", "2", "--spawn-local", "--guard", "fenced", "--guard-url", storeURL},
	} {
		runBenchOK(t, append(append([]string{"run", "--out", t.TempDir()}, args...), common...)...)
	}
	ctx := context.Background()
	for name, env := range map[string]*redisenv.Env{"the lock's Redis": lock, "the guarded store": store} {
		rdb := redisenvtest.Raw(t, env)
		keys, err := rdb.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) == 0 {
			t.Errorf("%s: no key at all: the runs wrote nothing there to check", name)
		}
		for _, k := range keys {
			if ttl, err := rdb.TTL(ctx, k).Result(); err != nil || ttl == -1 {
				t.Errorf("%s: key %s has no time to live (%v)", name, k, err)
			}
		}
	}
}
