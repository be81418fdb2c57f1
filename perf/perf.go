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

// Server is where redis-benchmark connects.
type Server struct {
	Host, Port, Password string
}

// perfPrefix starts every key the baseline writes.
const perfPrefix = "lockbench:perf:"

// RedisBenchmark runs lockimpl's reentrant acquire and unlock Lua through
// redis-benchmark (bin) at the given concurrency, requests calls each.
// redis-benchmark repeats one command, so the two run one after the
// other: the acquire on a fresh random name per call (the uncontended
// path: a new hash and its expiry); the unlock on a lock pre-set to a huge
// count, so each call decrements, renews the expiry and writes its latch,
// as many writes as the last unlock's delete, publish and latch. rdb loads
// the scripts and removes the keys afterwards.
func RedisBenchmark(ctx context.Context, bin string, srv Server, rdb redis.UniversalClient, clients, requests int) (results.Baseline, error) {
	b := results.Baseline{Clients: clients, Requests: requests}
	field := "perf-" + workloads.NewRunID() + ":1"
	acq, _, err := protocol.Calls(lockimpl.Reentrant, perfPrefix+"__rand_int__", field, lockimpl.DefaultWatchdogTimeout, "")
	if err != nil {
		return b, err
	}
	_, unl, err := protocol.Calls(lockimpl.Reentrant, perfPrefix+"held", field, lockimpl.DefaultWatchdogTimeout, perfPrefix+"latch:__rand_int__")
	if err != nil {
		return b, err
	}
	defer cleanPerfKeys(context.WithoutCancel(ctx), rdb)
	if err := rdb.HSet(ctx, perfPrefix+"held", field, 1<<50).Err(); err != nil {
		return b, fmt.Errorf("perf: %w", err)
	}
	lock, err := redisBenchmark(ctx, bin, srv, rdb, clients, requests, acq)
	if err != nil {
		return b, err
	}
	b.LockPerSec, b.LockP50Us, b.LockP99Us = lock.rps, lock.p50Us, lock.p99Us
	unlock, err := redisBenchmark(ctx, bin, srv, rdb, clients, requests, unl)
	b.UnlockPerSec = unlock.rps
	return b, err
}

// rbRow is one redis-benchmark --csv row.
type rbRow struct{ rps, p50Us, p99Us float64 }

func redisBenchmark(ctx context.Context, bin string, srv Server, rdb redis.UniversalClient, clients, requests int, call protocol.ScriptCall) (rbRow, error) {
	sha, err := rdb.ScriptLoad(ctx, call.Source).Result()
	if err != nil {
		return rbRow{}, fmt.Errorf("perf: SCRIPT LOAD: %w", err)
	}
	args := []string{"-h", srv.Host, "-p", srv.Port, "-c", strconv.Itoa(clients), "-n", strconv.Itoa(requests),
		"-r", "100000000", "--csv"}
	if srv.Password != "" {
		args = append(args, "-a", srv.Password, "--no-auth-warning")
	}
	args = append(args, "EVALSHA", sha, strconv.Itoa(len(call.Keys)))
	args = append(append(args, call.Keys...), call.Args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = time.Second
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return rbRow{}, fmt.Errorf("perf: %s: %w: %s", bin, err, strings.TrimSpace(stderr.String()))
	}
	return parseRedisBenchmarkCSV(out.String())
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

// MeasureOverhead runs rounds × (uncontended profile for d, then the
// redis-benchmark pair at the same owner count). base supplies NewRedis
// and Meta.
func MeasureOverhead(ctx context.Context, base workloads.Config, bin string, srv Server, rounds int, d time.Duration) (results.Overhead, error) {
	p, err := workloads.Builtin("uncontended")
	if err != nil {
		return results.Overhead{}, err
	}
	p.Duration, p.Warmup = workloads.Duration(d), workloads.Duration(d/5)
	o := results.Overhead{Owners: p.TotalOwners()}
	rdb := base.NewRedis(2)
	defer rdb.Close()
	var lb, gr, bl []float64
	for range rounds {
		cfg := base
		cfg.Profile = p
		res, err := workloads.Run(ctx, cfg)
		if err != nil {
			return o, err
		}
		if res.Safety.Violations > 0 {
			return o, fmt.Errorf("perf: uncontended run reported %d safety violations", res.Safety.Violations)
		}
		// Per-second requests comparable to redis-benchmark's: about d's worth.
		n := max(int(res.Throughput.OpsPerSec*d.Seconds()), 20000)
		b, err := RedisBenchmark(ctx, bin, srv, rdb, o.Owners, n)
		if err != nil {
			return o, err
		}
		g, err := GoRedisCycles(ctx, base.NewRedis, p.Clients, p.Owners, d)
		if err != nil {
			return o, err
		}
		o.Rounds = append(o.Rounds, results.OverheadRound{Lockbench: res.Throughput.OpsPerSec, GoRedis: g, Baseline: b})
		lb = append(lb, res.Throughput.OpsPerSec)
		gr = append(gr, g)
		bl = append(bl, b.CyclesPerSec())
	}
	o.Lockbench, o.GoRedis, o.Baseline = median(lb), median(gr), median(bl)
	var ratios, goRatios []float64
	for _, r := range o.Rounds {
		if b := r.Baseline.CyclesPerSec(); b > 0 {
			ratios = append(ratios, r.Lockbench/b)
		}
		if r.GoRedis > 0 {
			goRatios = append(goRatios, r.Lockbench/r.GoRedis)
		}
	}
	if len(ratios) > 0 {
		o.Ratio, o.RatioMin, o.RatioMax = median(ratios), slices.Min(ratios), slices.Max(ratios)
	}
	o.GoRedisRatio = median(goRatios)
	return o, nil
}

// GoRedisCycles runs the same two scripts from bare go-redis loops
// (clients × owners goroutines, no lockimpl, no recording) for d: what any
// Go client could reach here, which splits the harness's overhead from
// the Go client's.
func GoRedisCycles(ctx context.Context, newRedis func(int) redis.UniversalClient, clients, owners int, d time.Duration) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	var cycles atomic.Int64
	errs := make(chan error, clients*owners)
	id := workloads.NewRunID()
	var first redis.UniversalClient
	for c := range clients {
		rdb := newRedis(owners + 2)
		defer rdb.Close()
		if first == nil {
			first = rdb
		}
		for o := range owners {
			name := fmt.Sprintf("%sgoredis:%s:%d:%d", perfPrefix, id, c, o)
			acq, unl, err := protocol.Calls(lockimpl.Reentrant, name, "goredis:1", lockimpl.DefaultWatchdogTimeout, "")
			if err != nil {
				return 0, err
			}
			wg.Go(func() {
				for i := 0; ctx.Err() == nil; i++ {
					if err := acq.Run(ctx, rdb).Err(); err != nil && err != redis.Nil {
						if ctx.Err() == nil {
							errs <- err
						}
						return
					}
					// A fresh latch per unlock, as lockimpl sends: a reused one
					// would replay the first answer and release nothing.
					unl.Keys[len(unl.Keys)-1] = name + ":latch:" + strconv.Itoa(i)
					if err := unl.Run(ctx, rdb).Err(); err != nil {
						if ctx.Err() == nil {
							errs <- err
						}
						return // an unlock the deadline cut is not a cycle
					}
					cycles.Add(1)
				}
			})
		}
	}
	wg.Wait()
	cleanPerfKeys(context.WithoutCancel(ctx), first)
	close(errs)
	if err := <-errs; err != nil {
		return 0, fmt.Errorf("perf: go-redis loop: %w", err)
	}
	return float64(cycles.Load()) / d.Seconds(), nil
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

// MeasureScale runs the rw90 shape with clients × owners for d.
func MeasureScale(ctx context.Context, base workloads.Config, clients, owners, locks int, d time.Duration) (results.Scale, error) {
	res, err := runBuiltin(ctx, base, "rw90", func(p *workloads.Profile) {
		p.Name = "scale"
		p.Clients, p.Owners, p.Locks = clients, owners, locks
		p.Duration, p.Warmup = workloads.Duration(d), workloads.Duration(min(d/10, 5*time.Second))
	})
	if res == nil {
		return results.Scale{}, err
	}
	s := results.Scale{Result: res}
	var measured []results.Point
	for _, pt := range res.Series {
		if !pt.Warmup {
			measured = append(measured, pt)
		}
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
	return s, err
}

// MeasureHandoff runs the mutex profile (owners on one lock) for d.
func MeasureHandoff(ctx context.Context, base workloads.Config, d time.Duration) (results.HandoffFigure, error) {
	res, err := runBuiltin(ctx, base, "mutex", func(p *workloads.Profile) {
		p.Duration, p.Warmup = workloads.Duration(d), workloads.Duration(min(d/5, 2*time.Second))
	})
	if res == nil {
		return results.HandoffFigure{}, err
	}
	h := results.HandoffFigure{Result: res, HandoffUs: res.Latency[results.Handoff.String()].P50, PingUs: res.Latency[results.Ping.String()].P50}
	if h.PingUs > 0 {
		h.Ratio = h.HandoffUs / h.PingUs
	}
	if err == nil && h.HandoffUs == 0 {
		err = errors.New("perf: the mutex run measured no handoff")
	}
	return h, err
}
