package workloads_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// requireNoLeakedGoroutines checks the result's own goroutine accounting:
// clients closed, workers gone.
func requireNoLeakedGoroutines(t *testing.T, res *results.Result, workers int) {
	t.Helper()
	rt := res.Runtime
	if rt.GoroutinesStart <= 0 || rt.GoroutinesEnd <= 0 {
		t.Errorf("runtime goroutine counts not filled: %+v", rt)
	}
	// Goroutines of closed connections may still be on their way out when
	// Run counts them, the more so on a busy host; a leak stays.
	if rt.GoroutinesEnd > rt.GoroutinesStart+5 {
		t.Logf("goroutines: %d at start, %d at the end; waiting for stragglers", rt.GoroutinesStart, rt.GoroutinesEnd)
		testkit.Eventually(t, fmt.Sprintf("goroutines back to %d + 5", rt.GoroutinesStart), func() bool {
			return runtime.NumGoroutine() <= rt.GoroutinesStart+5
		})
	}
	if rt.GoroutinesMax < rt.GoroutinesStart+workers {
		t.Errorf("goroutines max %d < start %d + %d workers", rt.GoroutinesMax, rt.GoroutinesStart, workers)
	}
}

func TestRunMutex(t *testing.T) {
	env := redisenvtest.Start(t)
	p := short(t, "mutex", 2, 4, 200*time.Millisecond, time.Second)
	prefix := uniquePrefix(t)
	var ticks atomic.Int32
	meta := results.Meta{Host: "test-host", RedisAddr: env.Addr()}
	res := runOK(t, workloads.Config{
		Profile:  p,
		NewRedis: env.NewPool,
		Meta:     meta,
		Progress: func(pr workloads.Progress) {
			ticks.Add(1)
			if pr.Total != 1200*time.Millisecond || pr.Elapsed <= 0 {
				t.Errorf("progress %+v: want total 1.2s and elapsed > 0", pr)
			}
		},
		KeyPrefix: prefix,
	})

	th := res.Throughput
	if th.Ops <= 0 || th.OpsPerSec <= 0 {
		t.Errorf("throughput %+v: want ops", th)
	}
	if th.Acquisitions["exclusive"] <= 0 || th.Acquisitions["read"] != 0 || th.Acquisitions["write"] != 0 {
		t.Errorf("acquisitions %v: want exclusive only", th.Acquisitions)
	}
	// Every acquisition is an operation done, or one the run's end cut.
	if th.Acquisitions["exclusive"] > th.Ops+th.Cut || th.Nested != 0 || th.Lost != 0 || th.TargetRate != 0 {
		t.Errorf("throughput %+v", th)
	}
	requireNoErrors(t, res)
	requireSafe(t, res)
	requireLatency(t, res, "acquire_exclusive", "release", "hold", "ping", "wait", "handoff")
	if l := res.Latency["acquire_exclusive"]; l.Count != th.Acquisitions["exclusive"] {
		t.Errorf("acquire_exclusive count %d, acquisitions %d", l.Count, th.Acquisitions["exclusive"])
	}
	if l := res.Latency["acquire_read"]; l.Count != 0 {
		t.Errorf("a mutex run measured read acquisitions: %+v", l)
	}
	// Contended: a good share of acquisitions waited for a holder.
	if w := res.Latency["wait"].Count; w*10 < th.Acquisitions["exclusive"] {
		t.Errorf("only %d of %d acquisitions waited on one contended name", w, th.Acquisitions["exclusive"])
	}

	f := res.Fairness
	if f.Owners != 8 || f.Max <= 0 || f.Jain <= 0 || f.Jain > 1 || f.Min > f.Max {
		t.Errorf("fairness %+v: want 8 owners with acquisitions", f)
	}
	if f.FIFO != nil {
		t.Errorf("FIFO check on a reentrant lock: %+v", f.FIFO)
	}

	if res.Partial || res.PartialReason != "" {
		t.Errorf("partial %v %q", res.Partial, res.PartialReason)
	}
	if res.Schema != results.Schema {
		t.Errorf("schema %q", res.Schema)
	}
	if res.Warmup < 0.19 || res.Warmup > 0.21 || res.Measured < 0.9 || res.Measured > 5 {
		t.Errorf("warmup %.3fs, measured %.3fs: want 0.2s and about 1s", res.Warmup, res.Measured)
	}
	if res.Meta.Host != "test-host" || res.Meta.RedisAddr != env.Addr() || res.Meta.Profile != "mutex" || res.Meta.Workload != p.Summary() {
		t.Errorf("meta %+v", res.Meta)
	}
	if got, ok := res.Profile.(workloads.Profile); !ok || !reflect.DeepEqual(got, p) {
		t.Errorf("result profile %#v, want %+v", res.Profile, p)
	}
	if len(res.Series) < 2 || res.Series[0].T < 0.9 || res.Series[0].Warmup {
		t.Errorf("series %+v: want a measured point at 1s and the final one", res.Series)
	}
	var seriesOps int64
	for _, pt := range res.Series {
		seriesOps += pt.Ops
	}
	if seriesOps < th.Ops {
		t.Errorf("series counts %d ops, throughput %d measured", seriesOps, th.Ops)
	}
	if n := ticks.Load(); n < 1 || int(n) >= len(res.Series) {
		t.Errorf("%d progress calls, %d series points: want one per second", n, len(res.Series))
	}
	if len(res.IntervalLog()) == 0 || !strings.Contains(string(res.IntervalLog()), "acquire_exclusive") {
		t.Errorf("interval log lacks acquire_exclusive:\n%s", res.IntervalLog())
	}
	if res.Runtime.Shards != min(8, 4*runtime.GOMAXPROCS(0)) || res.Runtime.PeakRSSBytes <= 0 {
		t.Errorf("runtime %+v", res.Runtime)
	}
	requireNoLeakedGoroutines(t, res, 8)
	if held := heldLocks(t, redisenvtest.Raw(t, env), prefix); len(held) != 0 {
		t.Errorf("locks still held after the run: %v", held)
	}
}

func TestRunRW90(t *testing.T) {
	env := redisenvtest.Start(t)
	p := counted(short(t, "rw90", 2, 4, 200*time.Millisecond, 0), 400)
	p.Locks = 4 // more contention per name
	res := runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t)})
	acq := res.Throughput.Acquisitions
	reads, writes := acq["read"], acq["write"]
	if reads <= 0 || writes <= 0 || acq["exclusive"] != 0 {
		t.Fatalf("acquisitions %v: want reads and writes", acq)
	}
	if share := float64(reads) / float64(reads+writes); share < 0.8 || share > 0.97 {
		t.Errorf("read share %.3f (%d reads, %d writes), want about 0.9", share, reads, writes)
	}
	requireNoErrors(t, res)
	requireSafe(t, res)
	requireLatency(t, res, "acquire_read", "acquire_write", "release", "hold", "ping")
	requireNoLeakedGoroutines(t, res, 8)
}

// maxOvertakenShare bounds the share of a fair lock's acquisitions that a
// later caller overtook. The check orders waiters by when the client took
// their call time, but the queue is ordered where the call reached Redis:
// a goroutine descheduled between the two on a busy host lands behind
// every caller in between, a rare waiter passed by several. A lock that
// does not queue its waiters passes most of them under the same load
// (TestRunFairCheckCatchesBarging).
const maxOvertakenShare = 0.03

// fifoHeld reports why a fair lock's FIFO verdict shows more overtaken
// waiters than maxOvertakenShare allows, or nil when the order held.
func fifoHeld(f *results.FIFO) error {
	switch {
	case f == nil:
		return errors.New("a fair run has no FIFO verdict")
	case f.Checked <= 0 || f.SlackUs <= 0:
		return fmt.Errorf("FIFO checked nothing: %+v", *f)
	case float64(f.Overtaken) > maxOvertakenShare*float64(f.Checked):
		return fmt.Errorf("FIFO: %d of %d acquisitions overtaken (%d overtakes, slack %.0fµs), more than %.0f%%: %+v",
			f.Overtaken, f.Checked, f.Violations, f.SlackUs, 100*maxOvertakenShare, f.Examples)
	}
	return nil
}

// fairContention is the load both FIFO tests put on one fair lock name.
func fairContention(t *testing.T) workloads.Profile {
	return counted(short(t, "fair", 2, 3, 200*time.Millisecond, 0), 100)
}

func TestRunFair(t *testing.T) {
	env := redisenvtest.Start(t)
	p := fairContention(t)
	res := runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t)})
	if res.Throughput.Acquisitions["exclusive"] <= 0 {
		t.Fatalf("acquisitions %v", res.Throughput.Acquisitions)
	}
	if f := res.Fairness.FIFO; f != nil {
		t.Logf("fair lock: %d overtakes of %d waiters in %d acquisitions", f.Violations, f.Overtaken, f.Checked)
	}
	if err := fifoHeld(res.Fairness.FIFO); err != nil {
		t.Error(err)
	}
	if res.Fairness.Owners != 6 {
		t.Errorf("fairness owners %d, want 6", res.Fairness.Owners)
	}
	requireNoErrors(t, res)
	requireSafe(t, res)
	requireLatency(t, res, "acquire_exclusive", "release", "hold", "handoff")
	requireNoLeakedGoroutines(t, res, 6)
}

// TestRunFairCheckCatchesBarging shows TestRunFair's FIFO assertion can
// fail: the same fair profile under the same contention, its owners
// planted with lockimpl's reentrant lock, which lets a newcomer take a lock
// that falls free ahead of those already waiting.
func TestRunFairCheckCatchesBarging(t *testing.T) {
	env := redisenvtest.Start(t)
	p := fairContention(t)
	barging := short(t, "mutex", p.Clients, p.Owners, 0, 0)
	ctx := testkit.Context(t)
	var clients []workloads.ImplClient
	t.Cleanup(func() {
		for _, c := range clients {
			_ = c.Close()
		}
	})
	newOwner := func(c, _ int) workloads.Owner {
		for len(clients) <= c {
			rdb := env.NewPool(p.Owners + 4)
			t.Cleanup(func() { _ = rdb.Close() })
			ic, err := workloads.Lockimpl{}.NewClient(ctx, rdb, barging, len(clients))
			if err != nil {
				t.Fatalf("reentrant lock client: %v", err)
			}
			clients = append(clients, ic)
		}
		return clients[c].NewOwner()
	}
	res := runOK(t, workloads.Config{Profile: p, NewOwner: newOwner, KeyPrefix: uniquePrefix(t)})
	requireSafe(t, res)
	if res.Fairness.FIFO == nil || res.Fairness.FIFO.Checked <= 0 {
		t.Fatalf("FIFO verdict %+v: the check did not run", res.Fairness.FIFO)
	}
	f := res.Fairness.FIFO
	t.Logf("reentrant lock: %d overtakes of %d waiters in %d acquisitions", f.Violations, f.Overtaken, f.Checked)
	if fifoHeld(res.Fairness.FIFO) == nil {
		t.Errorf("a lock that lets newcomers barge passed the FIFO assertion: %+v", *res.Fairness.FIFO)
	}
}

func TestRunReentrantDeep(t *testing.T) {
	env := redisenvtest.Start(t)
	p := counted(short(t, "reentrant-deep", 2, 3, 200*time.Millisecond, 0), 100)
	if p.Depth.Max() != 5 {
		t.Fatalf("reentrant-deep depth %v, want 5", p.Depth)
	}
	res := runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t)})
	acq, nested := res.Throughput.Acquisitions["exclusive"], res.Throughput.Nested
	// Each operation nests 4 more; only one per owner can be cut short by
	// the run's end.
	if nested <= 0 || nested > 4*acq || nested < 4*acq-4*6 {
		t.Errorf("nested %d for %d outermost acquisitions at depth 5: want about 4 each", nested, acq)
	}
	requireLatency(t, res, "acquire_exclusive", "acquire_nested", "release", "hold")
	if l := res.Latency["acquire_nested"]; l.Count != nested {
		t.Errorf("acquire_nested count %d, nested %d", l.Count, nested)
	}
	// Every nested hold is released too: one release per acquisition.
	if l := res.Latency["release"]; l.Count < acq+nested-4*6 {
		t.Errorf("release count %d for %d acquisitions", l.Count, acq+nested)
	}
	requireNoErrors(t, res)
	requireSafe(t, res)
}

func TestRunUncontended(t *testing.T) {
	env := redisenvtest.Start(t)
	p := short(t, "uncontended", 2, 3, 200*time.Millisecond, time.Second)
	res := runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t)})
	if res.Throughput.Acquisitions["exclusive"] <= 0 {
		t.Fatalf("acquisitions %v", res.Throughput.Acquisitions)
	}
	for _, m := range []string{"wait", "handoff"} {
		if l, ok := res.Latency[m]; ok && l.Count != 0 {
			t.Errorf("an uncontended run measured %s: %+v", m, l)
		}
	}
	if f := res.Fairness; f.Owners != 6 || f.Starved != 0 || f.Min <= 0 {
		t.Errorf("fairness %+v: every owner has its own lock, none should starve", f)
	}
	requireNoErrors(t, res)
	requireSafe(t, res)
	requireLatency(t, res, "acquire_exclusive", "release", "ping")
}

// TestRunRecordsCPU: a run reads Redis's CPU (INFO) and its own, over the
// measured time and per second, and names what saturated; both sides did
// work, so neither reads 0.
func TestRunRecordsCPU(t *testing.T) {
	env := redisenvtest.Start(t)
	p := short(t, "uncontended", 2, 3, 500*time.Millisecond, 2*time.Second)
	res := runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t),
		Meta: results.Meta{RedisBackend: "local", RedisAddr: env.Addr()}})
	c := res.CPU
	if c == nil {
		t.Fatal("no CPU in the result")
	}
	if c.Unread != "" || c.Redis <= 0 || c.RedisTotal < 0.99*c.Redis || c.RedisNode != env.Addr() {
		t.Errorf("Redis CPU %+v: want a positive reading of %s", c, env.Addr())
	}
	if c.Load <= 0 || c.Helper != 0 || c.LoadLimit != float64(runtime.GOMAXPROCS(0)) || c.HostCores < runtime.NumCPU() || !c.SharedHost {
		t.Errorf("load CPU %+v: want a positive reading, no helper's, GOMAXPROCS as its limit, a shared host", c)
	}
	if len(c.Series) < 2 {
		t.Errorf("CPU series %v: want a point per second at least", c.Series)
	}
	// The host's busy time counts this process and Redis among the rest
	// (the host's CPUs are all /proc/stat sums, at least those this
	// process may run on); its reading and its clock are taken apart, so
	// a busy host may read a little past its cores.
	if runtime.GOOS == "linux" && (c.Host <= 0 || c.Host < 0.5*(c.Load+c.RedisTotal) || c.Host > float64(c.HostCores)*1.15) {
		t.Errorf("host CPU %.2f cores: want a reading of /proc/stat at least about Redis's and lockbench's %.2f and at most %d cores", c.Host, c.Load+c.RedisTotal, c.HostCores)
	}
	var b strings.Builder
	if err := report.WriteSummary(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "cpu         redis ") {
		t.Errorf("summary has no cpu line:\n%s", b.String())
	}
}

// The other built-ins run safely too (hotkey covers zipf popularity).
func TestRunOtherBuiltins(t *testing.T) {
	env := redisenvtest.Start(t)
	for _, name := range []string{"hotkey", "rw50", "rw10", "fenced", "spin", "mutex-nonreentrant", "multi"} {
		t.Run(name, func(t *testing.T) {
			p := counted(short(t, name, 2, 3, 100*time.Millisecond, 0), 50)
			res := runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t)})
			if res.Throughput.Ops <= 0 {
				t.Errorf("no operations")
			}
			requireNoErrors(t, res)
			requireSafe(t, res)
		})
	}
}

func TestRunOpenLoop(t *testing.T) {
	env := redisenvtest.Start(t)
	res := runOpenLoop(t, env.NewPool)
	requireLatency(t, res, "acquire_read", "release")
}

// TestRunOpenLoopBehind slows every command to Redis so that the owners
// cannot keep the schedule: the lag must show in the latencies.
func TestRunOpenLoopBehind(t *testing.T) {
	env := redisenvtest.Start(t)
	slow := func(n int) redis.UniversalClient {
		rdb := env.NewPool(n)
		rdb.AddHook(delayHook(25 * time.Millisecond))
		return rdb
	}
	if behind := openLoopBehind(runOpenLoop(t, slow)); behind < 0.2 {
		t.Errorf("commands slowed to 25 ms left the schedule %.3fs behind; want the owners unable to keep it", behind)
	}
}

const openRate, openOps = 400, 200

// runOpenLoop runs open-rw90 for openOps operations at openRate and checks
// what holds at any speed of host and server: the schedule never runs
// ahead, and however far behind it falls shows in the latencies, measured
// from when each operation was due (no coordinated omission).
func runOpenLoop(t *testing.T, newRedis func(int) redis.UniversalClient) *results.Result {
	t.Helper()
	p := counted(short(t, "open-rw90", 2, 4, 200*time.Millisecond, 0), openOps)
	p.Rate = openRate
	res := runOK(t, workloads.Config{Profile: p, NewRedis: newRedis, KeyPrefix: uniquePrefix(t)})
	th := res.Throughput
	if th.TargetRate != openRate || th.Ops != openOps {
		t.Errorf("target rate %g, %d ops; want %d and %d", th.TargetRate, th.Ops, openRate, openOps)
	}
	// The last operation was due no sooner than (ops − owners) / rate into
	// the measured time.
	if least := float64(openOps-p.TotalOwners()) / openRate; res.Measured < least {
		t.Errorf("%d ops at %d ops/s in %.3fs measured; the schedule allows no less than %.3fs", openOps, openRate, res.Measured, least)
	}
	behind := openLoopBehind(res)
	worst := max(res.Latency["acquire_read"].Max, res.Latency["acquire_write"].Max) / 1e6
	t.Logf("measured %.3fs for %d ops due in %.3fs: %.3fs behind, worst acquisition %.3fs", res.Measured, openOps, float64(openOps)/openRate, behind, worst)
	if behind > 0.1 && worst < behind/2 {
		t.Errorf("the run fell %.3fs behind its schedule, yet no acquisition took more than %.3fs from when it was due", behind, worst)
	}
	requireNoErrors(t, res)
	requireSafe(t, res)
	return res
}

// openLoopBehind is how far, in seconds, an open-loop run of openOps fell
// behind its schedule by the end.
func openLoopBehind(res *results.Result) float64 {
	return res.Measured - float64(openOps)/openRate
}

// delayHook delays every command and pipeline by d before sending it.
type delayHook time.Duration

func (delayHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (d delayHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		time.Sleep(time.Duration(d))
		return next(ctx, cmd)
	}
}

func (d delayHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		time.Sleep(time.Duration(d))
		return next(ctx, cmds)
	}
}

func TestRunOpsBounded(t *testing.T) {
	env := redisenvtest.Start(t)

	// One owner: the 300th operation is the last one, and the run ends
	// right after it.
	p := short(t, "uncontended", 1, 1, 100*time.Millisecond, 0)
	p.Ops = 300
	res := runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t)})
	if res.Throughput.Ops != 300 || res.Throughput.Cut != 0 {
		t.Errorf("ops-bounded run, one owner: %d ops, %d cut; want exactly 300", res.Throughput.Ops, res.Throughput.Cut)
	}

	// Several owners on one name: once 300 are issued no more start, and
	// those in flight finish instead of being cancelled.
	p = short(t, "mutex", 2, 4, 100*time.Millisecond, 0)
	p.Ops = 300
	start := time.Now()
	res = runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t)})
	th := res.Throughput
	if th.Ops != 300 || th.Cut != 0 {
		t.Errorf("ops-bounded run: %d finished, %d cut; want exactly 300 finished", th.Ops, th.Cut)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the run did not end once its 300 operations were done (took %v)", d)
	}
	requireSafe(t, res)
	requireNoErrors(t, res)
}

func TestRunCancelFromProgress(t *testing.T) {
	env := redisenvtest.Start(t)
	p := short(t, "mutex", 2, 4, 200*time.Millisecond, 30*time.Second)
	prefix := uniquePrefix(t)
	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	// Before cancelling, see the lock held in Redis at least once, so the
	// check that none is left after the run means something.
	rdb := redisenvtest.Raw(t, env)
	var sawHeld atomic.Bool
	var once sync.Once
	start := time.Now()
	res, err := workloads.Run(ctx, workloads.Config{
		Profile:   p,
		NewRedis:  env.NewPool,
		KeyPrefix: prefix,
		Progress: func(workloads.Progress) {
			once.Do(func() {
				for range 1000 {
					if n, err := rdb.Exists(ctx, prefix+"0").Result(); err == nil && n == 1 {
						sawHeld.Store(true)
						break
					}
				}
				cancel()
			})
		},
	})
	took := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run cancelled mid-run: err %v, want context.Canceled", err)
	}
	if res == nil {
		t.Fatal("Run cancelled mid-run returned no result")
	}
	if took > 10*time.Second {
		t.Errorf("Run took %v to return after the cancel at ~1s", took)
	}
	if !res.Partial || !strings.Contains(res.PartialReason, "interrupted") || !strings.Contains(res.PartialReason, "of 30.2s") {
		t.Errorf("partial %v, reason %q", res.Partial, res.PartialReason)
	}
	if res.Throughput.Ops <= 0 || res.Measured <= 0 || res.Measured > 10 {
		t.Errorf("interrupted run measured %d ops in %.2fs", res.Throughput.Ops, res.Measured)
	}
	requireSafe(t, res)
	requireNoLeakedGoroutines(t, res, 8)
	if !sawHeld.Load() {
		t.Errorf("never saw %s0 held during the run", prefix)
	}
	// Every worker released what it held: no lock hash remains.
	if held := heldLocks(t, rdb, prefix); len(held) != 0 {
		t.Errorf("locks still held after the interrupted run: %v", held)
	}
}

func TestRunCancelledBeforeStart(t *testing.T) {
	env := redisenvtest.Start(t)
	p := short(t, "mutex", 1, 4, time.Second, 30*time.Second)
	prefix := uniquePrefix(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	res, err := workloads.Run(ctx, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: prefix})
	if !errors.Is(err, context.Canceled) || res == nil || !res.Partial {
		t.Fatalf("Run with a cancelled context: %v, result %v", err, res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run with a cancelled context took %v", d)
	}
	if res.Throughput.Ops != 0 || res.Measured != 0 {
		t.Errorf("nothing should be measured: %d ops in %.3fs", res.Throughput.Ops, res.Measured)
	}
	if held := heldLocks(t, redisenvtest.Raw(t, env), prefix); len(held) != 0 {
		t.Errorf("locks held: %v", held)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	p := workloads.Default()
	p.Owners = 0
	res, err := workloads.Run(context.Background(), workloads.Config{Profile: p, NewOwner: func(c, o int) workloads.Owner { panic("called") }})
	if res != nil {
		t.Errorf("a bad profile returned a result")
	}
	requireFieldError(t, err, "owners")

	res, err = workloads.Run(context.Background(), workloads.Config{Profile: workloads.Default()})
	if res != nil || !errors.Is(err, workloads.ErrNoRedis) {
		t.Errorf("no NewRedis nor NewOwner: %v, %v; want ErrNoRedis", res, err)
	}
}

func TestProgressString(t *testing.T) {
	pr := workloads.Progress{Elapsed: 1500 * time.Millisecond, Total: 10 * time.Second, Warmup: true,
		Interval: results.Point{OpsPerSec: 1234}, Errors: 3, AcquireP99: 1500}
	s := pr.String()
	for _, want := range []string{"1.5s/10s", "warming up", "1234 ops/s", "acquire p99 1.5ms", "errors 3"} {
		if !strings.Contains(s, want) {
			t.Errorf("Progress.String() = %q, lacks %q", s, want)
		}
	}
	pr.Warmup, pr.Total, pr.AcquireP99 = false, 0, 0
	s = pr.String()
	if !strings.Contains(s, "measuring") || strings.Contains(s, "1.5s/") || !strings.Contains(s, "acquire p99 -") {
		t.Errorf("Progress.String() = %q", s)
	}
}

// TestRunFencedTokensExpireFromTheStart: a fenced run's token counters have
// a time to live before its load starts, so that a run killed or stalled
// before its end leaves none without one; at its end they have the run's.
func TestRunFencedTokensExpireFromTheStart(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := redisenvtest.Raw(t, env)
	prefix := uniquePrefix(t)
	p := counted(short(t, "fenced", 2, 3, 0, 0), 50)
	ttls := func(when string) {
		t.Helper()
		keys, err := rdb.Keys(context.Background(), "redisson_lock_token:{"+prefix+"*").Result()
		if err != nil || len(keys) != p.LockCount() {
			t.Fatalf("%s: token counters %v (%v); want one per name, %d", when, keys, err, p.LockCount())
		}
		for _, k := range keys {
			if ttl := rdb.PTTL(context.Background(), k).Val(); ttl <= 0 || ttl > workloads.DefaultKeysTTL {
				t.Errorf("%s: %s has a time to live of %v, want one up to %v", when, k, ttl, workloads.DefaultKeysTTL)
			}
		}
	}
	res := runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: prefix,
		Started: func(time.Time) { ttls("before the load") }})
	if res.Throughput.Ops == 0 {
		t.Fatal("no operation")
	}
	ttls("after the run")
}
