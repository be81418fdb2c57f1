package perf_test

import (
	"context"
	"fmt"
	"math"
	"net"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// go-redis probes a refused address once a second from a goroutine of its
// own, which exits at its next probe after the pool is closed: the
// library's, not ours, and bounded.
func TestMain(m *testing.M) {
	redisenvtest.Main(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}

func TestBaselineCyclesPerSec(t *testing.T) {
	for _, c := range []struct {
		lock, unlock, want float64
	}{
		{1000, 1000, 500},
		{1000, 3000, 750},
		{3000, 1000, 750},
		{200000, 50000, 40000},
		{0, 1000, 0},
		{1000, 0, 0},
		{-5, 1000, 0},
		{0, 0, 0},
	} {
		got := results.Baseline{LockPerSec: c.lock, UnlockPerSec: c.unlock}.CyclesPerSec()
		if math.Abs(got-c.want) > 1e-9*math.Max(1, c.want) {
			t.Errorf("CyclesPerSec(lock %g, unlock %g) = %g, want %g", c.lock, c.unlock, got, c.want)
		}
	}
}

func TestScaleGrew(t *testing.T) {
	for _, c := range []struct {
		early, late int
		want        bool
	}{
		{100, 100, false},
		{100, 106, false}, // over 5% but only 6 more
		{100, 130, true},
		{1000, 1040, false}, // 40 more but under 5%
		{1000, 1060, true},
		{0, 0, false},
	} {
		if got := (perf.Scale{GoroutinesEarly: c.early, GoroutinesLate: c.late}).Grew(); got != c.want {
			t.Errorf("Grew(early %d, late %d) = %v, want %v", c.early, c.late, got, c.want)
		}
	}
}

// perfKeys lists the keys the perf baselines may write.
func perfKeys(t *testing.T, rdb redis.UniversalClient) []string {
	t.Helper()
	ctx := testkit.Context(t)
	keys, err := rdb.Keys(ctx, "lockbench:perf:*").Result()
	if err != nil {
		t.Fatalf("KEYS lockbench:perf:*: %v", err)
	}
	return keys
}

func benchServer(t *testing.T, env *redisenv.Env) perf.Server {
	t.Helper()
	host, port, err := net.SplitHostPort(env.Addr())
	if err != nil {
		t.Fatal(err)
	}
	return perf.Server{Host: host, Port: port}
}

func TestRedisBenchmark(t *testing.T) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark not on PATH")
	}
	env := redisenvtest.Start(t)
	rdb := redisenvtest.Raw(t, env)
	b, err := perf.RedisBenchmark(testkit.Context(t), bin, benchServer(t, env), rdb, 4, 2000)
	if err != nil {
		t.Fatalf("RedisBenchmark: %v", err)
	}
	t.Logf("redis-benchmark: lock %.0f/s, unlock %.0f/s, cycles %.0f/s", b.LockPerSec, b.UnlockPerSec, b.CyclesPerSec())
	if b.Clients != 4 || b.Requests != 2000 {
		t.Errorf("baseline %+v: want clients 4, requests 2000", b)
	}
	if b.LockPerSec <= 0 || b.UnlockPerSec <= 0 {
		t.Errorf("baseline rates %+v: want both > 0", b)
	}
	if b.LockP50Us <= 0 || b.LockP99Us < b.LockP50Us {
		t.Errorf("baseline acquire latency p50 %gµs, p99 %gµs: want 0 < p50 <= p99", b.LockP50Us, b.LockP99Us)
	}
	if c := b.CyclesPerSec(); c <= 0 || c >= min(b.LockPerSec, b.UnlockPerSec) {
		t.Errorf("cycles %g/s with lock %g/s and unlock %g/s", c, b.LockPerSec, b.UnlockPerSec)
	}
	if b.RedisCPU <= 0 || b.LoadCPU <= 0 || b.Ceiling.CyclesPerSec <= 0 || b.Ceiling.RedisCPU <= 0 || b.Ceiling.LoadCPU <= 0 {
		t.Errorf("baseline %+v: want the server's and redis-benchmark's CPU, and the pipelined ceiling with its CPU", b)
	}
	if keys := perfKeys(t, rdb); len(keys) != 0 {
		t.Errorf("RedisBenchmark left %d keys, e.g. %v", len(keys), keys[:min(len(keys), 5)])
	}
}

func TestRedisBenchmarkFailureCleansUp(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := redisenvtest.Raw(t, env)
	_, err := perf.RedisBenchmark(testkit.Context(t), "/nonexistent/redis-benchmark", benchServer(t, env), rdb, 2, 100)
	if err == nil {
		t.Fatal("RedisBenchmark with a missing binary succeeded")
	}
	if keys := perfKeys(t, rdb); len(keys) != 0 {
		t.Errorf("failed RedisBenchmark left keys %v", keys)
	}
}

// TestGoRedisCycles: the bare loops, plain and on the autopipeliner,
// really lock and unlock (every last unlock publishes; a replayed one, from
// a reused latch, would not), clean up, read the server's CPU, and stop at
// once on a cancelled context.
func TestGoRedisCycles(t *testing.T) {
	env := redisenvtest.Start(t)
	for _, pipelined := range []bool{false, true} {
		t.Run(fmt.Sprintf("pipelined=%v", pipelined), func(t *testing.T) {
			sub := redisenvtest.Raw(t, env).PSubscribe(testkit.Context(t), "redisson_lock__channel:{lockbench:perf:goredis:*")
			defer sub.Close()
			if _, err := sub.Receive(testkit.Context(t)); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			d, err := perf.GoRedisCycles(testkit.Context(t), env.NewPool, 1, 2, 100*time.Millisecond, 300*time.Millisecond, pipelined)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("GoRedisCycles: %v", err)
			}
			if d.CyclesPerSec <= 0 || d.Cycles <= 0 || d.RedisCPU <= 0 || d.LoadCPU <= 0 {
				t.Errorf("GoRedisCycles %+v: want a rate and both sides' CPU", d)
			}
			// Every measured cycle's unlock published (warmup's did too).
			cycles := int(d.Cycles)
			published := 0
			for published < cycles {
				ctx, cancel := context.WithTimeout(testkit.Context(t), 5*time.Second)
				_, err := sub.ReceiveMessage(ctx)
				cancel()
				if err != nil {
					break
				}
				published++
			}
			if published < cycles {
				t.Errorf("%d cycles but only %d unlock messages: the unlocks did not release", cycles, published)
			}
			if keys := perfKeys(t, redisenvtest.Raw(t, env)); len(keys) != 0 {
				t.Errorf("GoRedisCycles left keys: %v", keys)
			}
			if took < 400*time.Millisecond || took > 10*time.Second {
				t.Errorf("GoRedisCycles for 100ms + 300ms took %v", took)
			}
			t.Logf("go-redis: %.0f cycles/s", d.CyclesPerSec)
		})
	}

	// A cancelled context ends it at once, with no error and no cycles
	// to speak of.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := perf.GoRedisCycles(ctx, env.NewPool, 1, 2, time.Second, 5*time.Second, true); err != nil {
		t.Errorf("GoRedisCycles with a cancelled context: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("GoRedisCycles with a cancelled context took %v", d)
	}
}

func TestMeasureHandoff(t *testing.T) {
	env := redisenvtest.Start(t)
	h, err := perf.MeasureHandoff(testkit.Context(t), workloads.Config{NewRedis: env.NewPool}, time.Second)
	if err != nil {
		t.Fatalf("MeasureHandoff: %v", err)
	}
	if h.Result == nil || h.HandoffUs <= 0 || h.PingUs <= 0 {
		t.Fatalf("handoff %+v", h)
	}
	if math.Abs(h.Ratio-h.HandoffUs/h.PingUs) > 1e-9 {
		t.Errorf("ratio %g, want %g / %g", h.Ratio, h.HandoffUs, h.PingUs)
	}
	if h.Result.Meta.Profile != "mutex" || h.Result.Safety.Violations != 0 {
		t.Errorf("handoff run: profile %q, safety %+v", h.Result.Meta.Profile, h.Result.Safety)
	}
	t.Logf("handoff p50 %.0fµs, ping p50 %.0fµs, ratio %.1f", h.HandoffUs, h.PingUs, h.Ratio)
}

func TestMeasureScale(t *testing.T) {
	env := redisenvtest.Start(t)
	pt := perf.ScalePoint{Clients: 2, Owners: 8}
	s, err := perf.MeasureScale(testkit.Context(t), workloads.Config{NewRedis: env.NewPool}, pt, 8, 400, 2*time.Second)
	if err != nil {
		t.Fatalf("MeasureScale: %v", err)
	}
	res := s.Result
	if res == nil || res.Meta.Profile != "scale" || res.Fairness.Owners != 8 || res.Throughput.TargetRate != 400 {
		t.Fatalf("scale result %+v", res)
	}
	if res.Safety.Sections == 0 || !res.Safety.OK() {
		t.Errorf("safety: %d violations in %d sections (%s)", res.Safety.Violations, res.Safety.Sections, res.Safety.Incomplete)
	}
	if s.GoroutinesEarly <= 0 || s.GoroutinesLate <= 0 {
		t.Errorf("scale goroutines early %d, late %d: want both measured (series %+v)", s.GoroutinesEarly, s.GoroutinesLate, res.Series)
	}
	if s.Grew() {
		t.Errorf("goroutines grew from %d to %d in a 2s run", s.GoroutinesEarly, s.GoroutinesLate)
	}
	checkScaleRow(t, s.Row("saved.json"), pt)
}

// checkScaleRow checks a point's row against its point and itself: every
// figure measured, the costs listed and adding up to no more than peak RSS.
func checkScaleRow(t *testing.T, r results.ScaleRow, pt perf.ScalePoint) {
	t.Helper()
	if r.Owners != pt.Owners || r.Clients != pt.Clients || r.Fairness.Owners != pt.Owners {
		t.Errorf("row of %d owners over %d clients (fairness over %d); want %+v", r.Owners, r.Clients, r.Fairness.Owners, pt)
	}
	if r.PeakRSSBytes <= 0 || r.OpsPerSec <= 0 || r.Goroutines < pt.Owners || r.HeapLate <= 0 {
		t.Errorf("row %+v: want peak RSS, ops/s, the heap and at least a goroutine per owner", r)
	}
	if got, want := r.RSSPerOwner(), float64(r.PeakRSSBytes)/float64(pt.Owners); got != want {
		t.Errorf("RSS per owner %g, want %g", got, want)
	}
	if !r.Judged() || r.Safety.Examples != nil || r.Fairness.PerOwner != nil {
		t.Errorf("row safety %+v, fairness %+v: want judged, without the per-owner detail the result file keeps", r.Safety, r.Fairness)
	}
	byName := map[string]int64{}
	var sum int64
	for _, c := range r.Costs {
		if c.Bytes < 0 || c.How == "" {
			t.Errorf("cost %+v: want bytes and how they were had", c)
		}
		byName[c.Component] = c.Bytes
		if c.Component != "safety and fairness checks" {
			sum += c.Bytes
		}
	}
	for _, name := range []string{"goroutine stacks", "operation records", "workers and calls in flight", "safety and fairness checks"} {
		if byName[name] <= 0 {
			t.Errorf("cost %q: %d bytes; want it measured (costs %+v)", name, byName[name], r.Costs)
		}
	}
	// Each owner is a goroutine, and no goroutine's stack is below 2 KiB.
	if got := byName["goroutine stacks"]; got < 2048*int64(pt.Owners) {
		t.Errorf("goroutine stacks %d bytes at %d owners; want 2 KiB each at least", got, pt.Owners)
	}
	if _, ok := byName["owners and lock clients"]; !ok {
		t.Errorf("costs %+v: no setup cost", r.Costs)
	}
	if sum > r.PeakRSSBytes && byName["the rest of peak RSS"] > 0 {
		t.Errorf("costs add up to %d bytes, past peak RSS %d, and still leave a rest", sum, r.PeakRSSBytes)
	}
}

func TestScalePoints(t *testing.T) {
	pts, err := perf.ScalePoints(10, []int{100_000, 1_000, 10_000, 1_000}, []int{10_000, 10_000})
	want := []perf.ScalePoint{{10, 1_000, false}, {10, 10_000, false}, {10, 10_000, true}, {10, 100_000, false}}
	if err != nil || !slices.Equal(pts, want) {
		t.Errorf("ScalePoints = %v, %v; want %v, fewest owners first, open before closed, once each", pts, err, want)
	}
	for _, owners := range []int{15, 5, 0} {
		if _, err := perf.ScalePoints(10, []int{owners}, nil); err == nil {
			t.Errorf("ScalePoints(10 clients, %d owners): no error; want one (uneven split)", owners)
		}
		if _, err := perf.ScalePoints(10, nil, []int{owners}); err == nil {
			t.Errorf("ScalePoints(10 clients, %d closed owners): no error; want one (uneven split)", owners)
		}
	}
	if pt := (perf.ScalePoint{Clients: 10, Owners: 100_000}); pt.PerClient() != 10_000 {
		t.Errorf("PerClient of %+v = %d", pt, pt.PerClient())
	}
}
