package workloads_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// failedRun checks what every failed run must say: throughput counts
// successes only, each attempt is a success or a failure of some class,
// and Failures names why the run does not stand.
func failedRun(t *testing.T, res *results.Result, wantFailure string) {
	t.Helper()
	th := res.Throughput
	if th.Attempts != th.Ops+th.Failed {
		t.Errorf("attempts %d != ops %d + failed %d", th.Attempts, th.Ops, th.Failed)
	}
	if th.Failed != res.ErrorCount() {
		t.Errorf("failed %d, but errors by class add up to %d (%v)", th.Failed, res.ErrorCount(), res.Errors)
	}
	if res.Measured > 0 {
		if want := float64(th.Ops) / res.Measured; th.OpsPerSec > want*1.01+0.1 {
			t.Errorf("ops/s %.1f counts more than the %d successful operations in %.2fs (%.1f/s)", th.OpsPerSec, th.Ops, res.Measured, want)
		}
	}
	fails := fmt.Sprint(res.Failures())
	if !strings.Contains(fails, wantFailure) {
		t.Errorf("Failures() = %q, want it to say %q", fails, wantFailure)
	}
}

// TestRunTimeoutsAreNotThroughput: mutex with a 1 ms wait fails most of
// its tryLocks; each is an attempt, never throughput, and the run fails its
// 1% error-rate threshold.
func TestRunTimeoutsAreNotThroughput(t *testing.T) {
	env := redisenvtest.Start(t)
	p := short(t, "mutex", 2, 8, 0, time.Second)
	p.Wait = workloads.Duration(time.Millisecond)
	res := runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t)})
	th := res.Throughput
	// Every success is one acquisition; the run's end may have cut one more.
	if acq := th.Acquisitions["exclusive"]; acq < th.Ops || acq > th.Ops+th.Cut {
		t.Errorf("successful ops %d (%d cut), acquisitions %d: every success is one acquisition", th.Ops, th.Cut, acq)
	}
	if res.Errors["timeout"] == 0 || th.Ops >= th.Attempts {
		t.Fatalf("no timeouts with a 1ms wait on one lock among 16 owners: %+v %v", th, res.Errors)
	}
	failedRun(t, res, "of operations failed")
	if th.SuccessRatio <= 0 || th.SuccessRatio >= 1 {
		t.Errorf("success ratio %v, want strictly between 0 and 1", th.SuccessRatio)
	}
	// The series agrees: its successful operations add up to the total,
	// warmup aside (there is none here).
	var ops, attempts int64
	for _, pt := range res.Series {
		ops += pt.Ops
		attempts += pt.Attempts
	}
	if ops != th.Ops || attempts != th.Attempts {
		t.Errorf("series adds up to %d ops of %d attempts, the totals say %d of %d", ops, attempts, th.Ops, th.Attempts)
	}
}

// TestRunAgainstReadOnlyReplica: every acquisition fails with READONLY.
// Nothing succeeded, so there is no throughput, no safety verdict and no
// fairness, and the message says why verbatim.
func TestRunAgainstReadOnlyReplica(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal, Topology: redisenv.TopologyReplica})
	replica := env.Nodes()[1]
	p := short(t, "rw90", 2, 4, 0, time.Second)
	atReplica := func(_, pool int) redis.UniversalClient {
		o := env.Options()
		o.Addrs, o.PoolSize = []string{replica.Addr()}, pool
		return redis.NewUniversalClient(o)
	}
	res := runOK(t, workloads.Config{Profile: p, ClientRedis: atReplica, KeyPrefix: uniquePrefix(t)})
	failedRun(t, res, "no operation succeeded")
	if res.Throughput.Ops != 0 || res.Throughput.OpsPerSec != 0 || res.Errors["redis"] == 0 {
		t.Errorf("against a replica: %+v, errors %v", res.Throughput, res.Errors)
	}
	if len(res.ErrorMessages) == 0 || !strings.Contains(res.ErrorMessages[0].Message, "READONLY") {
		t.Errorf("error messages %+v, want READONLY verbatim", res.ErrorMessages)
	}
	if res.Safety.Verdict() != results.SafetyNoData || res.Safety.OK() {
		t.Errorf("safety %q (OK %v) with no critical section", res.Safety.Verdict(), res.Safety.OK())
	}
	if res.Fairness.Measured() {
		t.Errorf("fairness measured with no acquisition: %+v", res.Fairness)
	}
}

// TestRunRedisKilledMidRun: a server killed mid-run refuses every later
// connection; those attempts are failures with the refusal's message,
// and the run fails instead of reporting them as throughput, even where
// slow dials keep the failures few.
func TestRunRedisKilledMidRun(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal})
	// Six seconds: operations under way at the kill end in the seconds
	// after it (a release's dials to the dead server retry), and on a busy
	// host those can take two; the seconds after them are dead.
	p := short(t, "rw90", 2, 4, 0, 6*time.Second)
	// Killed a second into the load by the clock, not by the progress
	// ticks, which a busy host delays by seconds.
	var killer *time.Timer
	res, err := workloads.Run(testkit.Context(t), workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t),
		Started: func(base time.Time) {
			killer = time.AfterFunc(time.Until(base.Add(time.Second)), func() {
				if err := env.Nodes()[0].Kill(context.Background()); err != nil {
					t.Errorf("kill: %v", err)
				}
			})
		}})
	if killer != nil {
		killer.Stop()
	}
	if err != nil || res == nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("killed at 1s: %+v, errors %v, messages %+v", res.Throughput, res.Errors, res.ErrorMessages)
	failedRun(t, res, "Redis failed every operation for")
	if res.Errors["conn"] == 0 || res.Throughput.Ops == 0 {
		t.Errorf("killed at 1s of 6s: %+v, errors %v; want successes before and conn errors after", res.Throughput, res.Errors)
	}
	var refused bool
	for _, m := range res.ErrorMessages {
		refused = refused || m.Class == "conn" && strings.Contains(m.Message, "refused")
	}
	if !refused {
		t.Errorf("error messages %+v lack the refused connection", res.ErrorMessages)
	}
}

// TestRunRedisPausedEndsOnTime: Redis SIGSTOPped mid-run cannot stretch
// the run: it ends at its duration plus the stall bound, the calls still
// waiting are cut, counted as stalled failures with the time they waited
// in the acquire histogram, and the result is partial with the reason.
func TestRunRedisPausedEndsOnTime(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal})
	node := env.Nodes()[0]
	t.Cleanup(func() { _ = node.Resume(context.Background()) })
	const d = 3 * time.Second
	p := short(t, "rw90", 2, 4, 0, d)
	var base, paused time.Time
	var pausing sync.WaitGroup
	var timer *time.Timer
	pausing.Add(1)
	// Paused by a timer a second into the run, not by a progress report,
	// which a loaded host may deliver only as the run ends.
	res, err := workloads.Run(testkit.Context(t), workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t),
		Started: func(b time.Time) {
			base = b
			timer = time.AfterFunc(time.Until(b.Add(time.Second)), func() {
				defer pausing.Done()
				paused = time.Now()
				if err := node.Pause(context.Background()); err != nil {
					t.Errorf("pause: %v", err)
				}
			})
		}})
	ended := time.Now()
	if timer == nil || err != nil || res == nil {
		if timer != nil {
			if timer.Stop() {
				pausing.Done()
			}
			pausing.Wait()
		}
		t.Fatalf("Run: %v (started: %v)", err, timer != nil)
	}
	pausing.Wait()
	// Timed from the run's start, after its connections are made, which a
	// loaded host may take seconds over. Bounded by the duration and the
	// stall bound; the slack covers a loaded machine, and is far below
	// go-redis's own 3 s timeouts times its retries, which stretched such a
	// run to 25 s.
	if took, limit := ended.Sub(base), d+workloads.DefaultStallBound+4*time.Second; took > limit {
		t.Errorf("a %v run against a paused Redis took %v, want at most %v", d, took, limit)
	}
	if res.Stall == nil || !res.Partial || !strings.Contains(res.PartialReason, "server stalled: no reply from t=") {
		t.Fatalf("stall %+v, partial %v (%q)", res.Stall, res.Partial, res.PartialReason)
	}
	// The outage is dated from the pause (its calls began to wait then),
	// not from the end of the run when the bound cut them, nor from the
	// start of the last second of the series; and the PING then in flight
	// is in the ping histogram with the time it waited.
	pausedS := paused.Sub(base).Seconds()
	if from := res.Stall.FromS; from < pausedS-0.5 || from > pausedS+0.5 {
		t.Errorf("stall dated from t=%.1fs, want about %.1fs, when Redis was paused", from, pausedS)
	}
	for _, m := range res.ErrorMessages {
		if m.Class == "stalled" && (m.First < pausedS-0.5 || m.First > pausedS+0.5) {
			t.Errorf("stalled calls' message dated from %.1fs, want about %.1fs: %+v", m.First, pausedS, m)
		}
	}
	for _, f := range res.Failures() {
		if f.Kind == results.FailDeadTime {
			t.Errorf("the stall is dated again, from the series' last interval: %q", f)
		}
	}
	if l := res.Latency[results.Ping.String()]; l.Max < 1e6*(time.Duration(p.Duration).Seconds()-pausedS) {
		t.Errorf("ping max %v µs: the PING stalled behind the pause (from %.1fs to the run's end at %v) is missing", l.Max, pausedS, time.Duration(p.Duration))
	}
	if res.Stall.Calls == 0 || res.Stall.NoReplyS < 1 {
		t.Errorf("stall %+v: want the cut calls and how long they waited (paused ~2s before the end)", res.Stall)
	}
	if res.Errors["stalled"] == 0 {
		t.Errorf("errors %v: the cut calls must count as stalled failures", res.Errors)
	}
	failedRun(t, res, "server stalled")
	// The stuck acquisitions are in the histogram with the time they
	// waited: the worst acquire is at least the time Redis was paused
	// before the run's end.
	if l := res.Latency[results.AcquireAll]; l.Max < 1.5e6 {
		t.Errorf("acquire max %v µs: the stalled acquisitions' waits are missing", l.Max)
	}
	requireNoLeakedGoroutines(t, res, p.TotalOwners())
}

// TestRunInterruptedDuringStall: Ctrl-C while Redis is paused returns
// within the interrupt bound, not after go-redis's timeouts.
func TestRunInterruptedDuringStall(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal})
	node := env.Nodes()[0]
	t.Cleanup(func() { _ = node.Resume(context.Background()) })
	p := short(t, "rw90", 2, 4, 0, 30*time.Second)
	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	var once sync.Once
	var cancelled time.Time
	res, err := workloads.Run(ctx, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t),
		Progress: func(pr workloads.Progress) {
			if pr.Elapsed >= time.Second {
				once.Do(func() {
					if err := node.Pause(context.Background()); err != nil {
						t.Errorf("pause: %v", err)
					}
					go func() {
						time.Sleep(500 * time.Millisecond) // let calls get stuck behind the pause
						cancelled = time.Now()
						cancel()
					}()
				})
			}
		}})
	took := time.Since(cancelled)
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("Run: %v (result %v)", err, res != nil)
	}
	// The run waits InterruptBound for its calls, then up to 2 s for the
	// calls its closed clients cut, then cleans up and analyses; 5 s more
	// covers that on a loaded host, while go-redis's own timeouts and
	// retries, which a run that ignored its interrupt would wait on, take
	// longer than the whole bound.
	if limit := workloads.InterruptBound + 7*time.Second; took > limit {
		t.Errorf("Run returned %v after the cancel, want at most %v", took, limit)
	}
	if !res.Partial || !strings.Contains(res.PartialReason, "interrupted") || !strings.Contains(res.PartialReason, "server stalled") {
		t.Errorf("partial %v, reason %q", res.Partial, res.PartialReason)
	}
}

// TestRunClearsKilledRunsFairQueues: a fair run killed mid-run leaves its
// waiters' queue entries without a TTL. The next fair run clears the
// queues of registered runs whose registration lapsed, once their
// deadlines passed, and leaves a live run's alone.
func TestRunClearsKilledRunsFairQueues(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := redisenvtest.Raw(t, env)
	ctx := testkit.Context(t)
	now := time.Now()
	// As a killed run leaves it: registered, lapsed, one waiter queued on
	// each of its names with a deadline that passed a minute ago.
	seed := func(prefix string, lapse time.Time, names ...string) {
		t.Helper()
		for _, n := range names {
			q, d := "redisson_lock_queue:{"+n+"}", "redisson_lock_timeout:{"+n+"}"
			if err := rdb.RPush(ctx, q, "dead-client:1").Err(); err != nil {
				t.Fatal(err)
			}
			if err := rdb.ZAdd(ctx, d, redis.Z{Score: float64(now.Add(-time.Minute).UnixMilli()), Member: "dead-client:1"}).Err(); err != nil {
				t.Fatal(err)
			}
			if err := rdb.SAdd(ctx, "lockbench:fair-run-names:"+prefix, n).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := rdb.ZAdd(ctx, "lockbench:fair-runs", redis.Z{Score: float64(lapse.UnixMilli()), Member: prefix}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	seed("lockbench:fair:killed:", now.Add(-time.Minute), "lockbench:fair:killed:0", "lockbench:fair:killed:1")
	seed("lockbench:fair:alive:", now.Add(time.Hour), "lockbench:fair:alive:0")

	var logged []string
	p := short(t, "fair", 1, 2, 0, 500*time.Millisecond)
	runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t),
		Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})

	for _, n := range []string{"lockbench:fair:killed:0", "lockbench:fair:killed:1"} {
		if k, _ := rdb.Exists(ctx, "redisson_lock_queue:{"+n+"}", "redisson_lock_timeout:{"+n+"}").Result(); k != 0 {
			t.Errorf("the killed run's queue keys of %s are still there", n)
		}
	}
	if k, _ := rdb.Exists(ctx, "redisson_lock_queue:{lockbench:fair:alive:0}").Result(); k != 1 {
		t.Errorf("a live run's queue was cleared")
	}
	runs, _ := rdb.ZRange(ctx, "lockbench:fair-runs", 0, -1).Result()
	if len(runs) != 1 || runs[0] != "lockbench:fair:alive:" {
		t.Errorf("registered runs after the run: %q, want only the live one (the killed one and our own unregistered)", runs)
	}
	if !strings.Contains(strings.Join(logged, "\n"), "cleared the fair-lock queues of 1 earlier runs") {
		t.Errorf("the run did not say it cleared the killed run's queues: %q", logged)
	}
}
