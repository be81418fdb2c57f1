package perf

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/lockimpl/protocol"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// The harness's own measurements (bench perf): its overhead against
// redis-benchmark, its footprint at scale, and handoff against the round
// trip. Each returns numbers and a verdict against its target; none
// asserts anything about the machine it runs on.

// Server is where redis-benchmark connects: a server without a password,
// since redis-benchmark takes one only on its command line.
type Server struct {
	Host, Port string
}

// perfPrefix starts every key the baseline writes.
const perfPrefix = "lockbench:perf:"

// RedisBenchmark runs lockimpl's reentrant acquire and unlock Lua through
// redis-benchmark (bin) at the given concurrency, requests calls each,
// first unpipelined, then with -P 16 for the server's ceiling, reading
// the server's CPU around each. redis-benchmark repeats one command, so
// the two run one after the other: the acquire on a fresh random name per
// call (the uncontended path: a new hash and its expiry); the unlock on a
// lock pre-set to a huge count, so each call decrements, renews the expiry
// and writes its latch, as many writes as the last unlock's delete,
// publish and latch. rdb loads the scripts and removes the keys
// afterwards.
func RedisBenchmark(ctx context.Context, bin string, srv Server, rdb redis.UniversalClient, clients, requests int) (results.Baseline, error) {
	b := results.Baseline{Clients: clients, Requests: requests}
	field := protocol.NewOwnerID(1)
	acq, _, err := protocol.Calls(lockimpl.Reentrant, perfPrefix+"__rand_int__", field, lockimpl.DefaultWatchdogTimeout, "")
	if err != nil {
		return b, err
	}
	// A latch key as long as lockimpl's, its last 12 characters the random
	// number redis-benchmark puts in each call.
	latch := protocol.NewLatchKeys().Next(perfPrefix + "held")
	latch = latch[:len(latch)-12] + "__rand_int__"
	_, unl, err := protocol.Calls(lockimpl.Reentrant, perfPrefix+"held", field, lockimpl.DefaultWatchdogTimeout, latch)
	if err != nil {
		return b, err
	}
	defer cleanPerfKeys(context.WithoutCancel(ctx), rdb)
	if err := rdb.HSet(ctx, perfPrefix+"held", field, 1<<50).Err(); err != nil {
		return b, fmt.Errorf("perf: %w", err)
	}
	pair := func(pipeline, requests int) (lock, unlock rbRow, cpu *results.CPU, err error) {
		span := workloads.StartCPU(ctx, rdb)
		if lock, err = redisBenchmark(ctx, bin, srv, rdb, clients, requests, pipeline, acq); err != nil {
			return
		}
		unlock, err = redisBenchmark(ctx, bin, srv, rdb, clients, requests, pipeline, unl)
		return lock, unlock, span.End(ctx), err
	}
	lock, unlock, cpu, err := pair(1, requests)
	if err != nil {
		return b, err
	}
	b.LockPerSec, b.LockP50Us, b.LockP99Us, b.UnlockPerSec = lock.rps, lock.p50Us, lock.p99Us, unlock.rps
	b.RedisCPU, b.LoadCPU = cpu.Redis, (lock.cpu+unlock.cpu)/(lock.wall+unlock.wall)
	// Pipelined, each call costs the server a fraction of a round trip:
	// more of them keep the run about as long.
	lock, unlock, cpu, err = pair(ceilingPipeline, ceilingPipeline*requests/4)
	if err != nil {
		return b, err
	}
	b.Ceiling = results.Drive{CyclesPerSec: cycles(lock.rps, unlock.rps), RedisCPU: cpu.Redis, LoadCPU: (lock.cpu + unlock.cpu) / (lock.wall + unlock.wall)}
	return b, nil
}

// ceilingPipeline is how many commands each redis-benchmark connection
// keeps in flight for the ceiling: enough that the server's command
// thread, not round trips, is the limit.
const ceilingPipeline = 16

// cycles is lock+unlock cycles per second when each connection alternates
// the two: the harmonic combination of the two rates (Baseline.CyclesPerSec).
func cycles(lock, unlock float64) float64 {
	return results.Baseline{LockPerSec: lock, UnlockPerSec: unlock}.CyclesPerSec()
}

// rbRow is one redis-benchmark --csv row, and the CPU seconds the
// redis-benchmark process took over wall seconds.
type rbRow struct{ rps, p50Us, p99Us, cpu, wall float64 }

func redisBenchmark(ctx context.Context, bin string, srv Server, rdb redis.UniversalClient, clients, requests, pipeline int, call protocol.ScriptCall) (rbRow, error) {
	sha, err := rdb.ScriptLoad(ctx, call.Source).Result()
	if err != nil {
		return rbRow{}, fmt.Errorf("perf: SCRIPT LOAD: %w", err)
	}
	args := []string{"-h", srv.Host, "-p", srv.Port, "-c", strconv.Itoa(clients), "-n", strconv.Itoa(requests),
		"-r", "100000000", "--csv"}
	if pipeline > 1 {
		args = append(args, "-P", strconv.Itoa(pipeline))
	}
	args = append(args, "EVALSHA", sha, strconv.Itoa(len(call.Keys)))
	args = append(append(args, call.Keys...), call.Args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = time.Second
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return rbRow{}, fmt.Errorf("perf: %s: %w: %s", bin, err, strings.TrimSpace(stderr.String()))
	}
	row, err := parseRedisBenchmarkCSV(out.String())
	row.wall = time.Since(start).Seconds()
	if st := cmd.ProcessState; st != nil {
		row.cpu = (st.UserTime() + st.SystemTime()).Seconds()
	}
	return row, err
}

// parseRedisBenchmarkCSV reads the rate and, where the header names them
// (Redis 7: p50_latency_ms, p99_latency_ms), the latency percentiles.
func parseRedisBenchmarkCSV(out string) (rbRow, error) {
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		return rbRow{}, fmt.Errorf("perf: redis-benchmark --csv output: %w", err)
	}
	col := map[string]int{}
	for _, row := range rows {
		if len(row) >= 2 && row[0] == "test" {
			for i, h := range row {
				col[h] = i
			}
			continue
		}
		if len(row) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(row[1], 64)
		if err != nil || v <= 0 {
			continue
		}
		r := rbRow{rps: v}
		ms := func(name string) float64 {
			if i, ok := col[name]; ok && i < len(row) {
				if f, err := strconv.ParseFloat(row[i], 64); err == nil {
					return f * 1000
				}
			}
			return 0
		}
		r.p50Us, r.p99Us = ms("p50_latency_ms"), ms("p99_latency_ms")
		return r, nil
	}
	return rbRow{}, fmt.Errorf("perf: no rate in redis-benchmark output %q", out)
}

func cleanPerfKeys(ctx context.Context, rdb redis.UniversalClient) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, perfPrefix+"*", 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			_ = rdb.Unlink(ctx, batch...).Err()
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		_ = rdb.Unlink(ctx, batch...).Err()
	}
}

// GoRedisCycles runs the same two scripts from bare go-redis loops
// (clients × owners goroutines, no lockimpl, no recording) for warmup,
// uncounted as the lock runs' warmup is (pools dial, goroutines ramp up),
// then for d, each client on go-redis's own autopipeliner (AutoPipeline,
// its defaults) when pipelined, and reads the server's and this process's
// CPU around them: what any Go client could reach here, which splits the
// harness's overhead from the Go client's. The acquire is sent as a
// command go-redis never resends, as lockimpl sends it, and on the
// autopipeliner the unlock too, so that batches stay uniform.
//
// The baselines send lockimpl's arguments as they are shaped (a UUID
// owner id, Redisson's latch key with a 32-character request id): Redis
// spends measurably less on shorter ones, which would be counted as the
// harness's overhead.
func GoRedisCycles(ctx context.Context, newRedis func(int) redis.UniversalClient, clients, owners int, warmup, d time.Duration, pipelined bool) (results.Drive, error) {
	var wg sync.WaitGroup
	var cycles atomic.Int64
	errs := make(chan error, clients*owners)
	id := workloads.NewRunID()
	var first redis.UniversalClient
	type loop struct {
		rdb      redis.UniversalClient
		name     string
		latches  *protocol.LatchKeys
		acq, unl protocol.ScriptCall
	}
	var loops []loop
	for c := range clients {
		rdb := newRedis(owners + 2)
		defer rdb.Close()
		if first == nil {
			first = rdb
		}
		via := rdb
		if pipelined {
			ap, err := rdb.AutoPipeline()
			if err != nil {
				return results.Drive{}, fmt.Errorf("perf: go-redis autopipeliner: %w", err)
			}
			via = ap
		}
		for o := range owners {
			name := fmt.Sprintf("%sgoredis:%s:%d:%d", perfPrefix, id, c, o)
			acq, unl, err := protocol.Calls(lockimpl.Reentrant, name, protocol.NewOwnerID(o+1), lockimpl.DefaultWatchdogTimeout, "")
			if err != nil {
				return results.Drive{}, err
			}
			loops = append(loops, loop{via, name, protocol.NewLatchKeys(), acq, unl})
		}
	}
	ctx, cancel := context.WithTimeout(ctx, warmup+d)
	defer cancel()
	for _, l := range loops {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := l.acq.RunOnce(ctx, l.rdb); err != nil && err != redis.Nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
				// A fresh latch per unlock, as lockimpl sends: a reused one
				// would replay the first answer and release nothing.
				l.unl.Keys[len(l.unl.Keys)-1] = l.latches.Next(l.name)
				var err error
				if pipelined {
					err = l.unl.RunOnce(ctx, l.rdb)
				} else {
					err = l.unl.Run(ctx, l.rdb).Err()
				}
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return // an unlock the deadline cut is not a cycle
				}
				cycles.Add(1)
			}
		})
	}
	if warmup > 0 {
		t := time.NewTimer(warmup)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	// Cycles from here on count; one under way at the mark counts too.
	span := workloads.StartCPU(ctx, first)
	start := time.Now()
	cycles.Store(0)
	wg.Wait()
	took := time.Since(start)
	cpu := span.End(context.WithoutCancel(ctx))
	cleanPerfKeys(context.WithoutCancel(ctx), first)
	close(errs)
	if err := <-errs; err != nil {
		return results.Drive{}, fmt.Errorf("perf: go-redis loop: %w", err)
	}
	n := cycles.Load()
	return results.Drive{CyclesPerSec: float64(n) / took.Seconds(), Cycles: n, RedisCPU: cpu.Redis, LoadCPU: cpu.Load}, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// runBuiltin runs built-in profile name, adjusted by set, with base's
// wiring.
func runBuiltin(ctx context.Context, base workloads.Config, name string, set func(*workloads.Profile)) (*results.Result, error) {
	p, err := workloads.Builtin(name)
	if err != nil {
		return nil, err
	}
	set(&p)
	cfg := base
	cfg.Profile = p
	return workloads.Run(ctx, cfg)
}

// MeasureScale runs the rw90 shape at pt for d after a warmup, in open
// loop at rate operations a second across all owners on locks lock names,
// and measures what the owners cost (Scale.Costs). Open loop keeps the
// load the same at every point: a closed loop of 100,000 owners with a
// millisecond's think would ask for 100,000 calls in flight, and as many
// connections. A closed point runs the uncontended profile instead (a name
// per owner, no hold or think): every owner in a call at once. It resets
// the process's peak RSS first where it can, so that the point's peak is
// its own, and forces a garbage collection before the run, as the load
// starts and once midway, so that the heap it reads is the live heap.
func MeasureScale(ctx context.Context, base workloads.Config, pt ScalePoint, locks int, rate float64, d time.Duration) (Scale, error) {
	s := Scale{Point: pt, Locks: locks, Rate: rate}
	if pt.Closed {
		s.Locks, s.Rate = pt.Owners, 0
	}
	if err := pt.Check(); err != nil {
		return s, fmt.Errorf("perf: %w", err)
	}
	m := newFootprint(base, d)
	resetPeakRSS()
	shape, set := "rw90", func(p *workloads.Profile) {
		p.Name = "scale"
		p.Clients, p.Owners, p.Locks, p.Rate, p.Think = pt.Clients, pt.PerClient(), locks, rate, workloads.FixedDist(0)
		p.Duration, p.Warmup = workloads.Duration(d), workloads.Duration(m.warmup)
	}
	if pt.Closed {
		shape, set = "uncontended", func(p *workloads.Profile) {
			p.Name = "scale-closed"
			p.Clients, p.Owners = pt.Clients, pt.PerClient()
			p.Duration, p.Warmup = workloads.Duration(d), workloads.Duration(m.warmup)
		}
	}
	defer workloads.LimitMemory(pt.Owners)()
	res, err := runBuiltin(ctx, m.wire(base), shape, set)
	m.stop()
	if res == nil {
		return s, err
	}
	s.Result = res
	var measured []results.Point
	for _, pt := range res.Series {
		if !pt.Warmup {
			measured = append(measured, pt)
		}
	}
	if len(measured) > 2 {
		// The last point is the run's end, taken once the workers stopped.
		measured = measured[:len(measured)-1]
	}
	if k := max(len(measured)/10, 1); len(measured) >= 2*k {
		for _, pt := range measured[:k] {
			s.GoroutinesEarly = max(s.GoroutinesEarly, pt.Goroutines)
			s.HeapEarly = max(s.HeapEarly, pt.HeapBytes)
		}
		for _, pt := range measured[len(measured)-k:] {
			s.GoroutinesLate = max(s.GoroutinesLate, pt.Goroutines)
			s.HeapLate = max(s.HeapLate, pt.HeapBytes)
		}
	}
	s.Costs = m.costs(res)
	return s, err
}

// MeasureHandoff runs the mutex profile (owners on one lock) for d.
func MeasureHandoff(ctx context.Context, base workloads.Config, d time.Duration) (HandoffFigure, error) {
	res, err := runBuiltin(ctx, base, "mutex", func(p *workloads.Profile) {
		p.Duration, p.Warmup = workloads.Duration(d), workloads.Duration(min(d/5, 2*time.Second))
	})
	if res == nil {
		return HandoffFigure{}, err
	}
	h := HandoffFigure{Result: res, HandoffUs: res.Latency[results.Handoff.String()].P50, PingUs: res.Latency[results.Ping.String()].P50}
	if h.PingUs > 0 {
		h.Ratio = h.HandoffUs / h.PingUs
	}
	if err == nil && h.HandoffUs == 0 {
		err = errors.New("perf: the mutex run measured no handoff")
	}
	return h, err
}
