package harness

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/scenarios"
	"github.com/lockbench/lockbench/workloads"
)

// RunOptions is one benchmark run on a Redis already started.
type RunOptions struct {
	Profile      workloads.Profile
	Impl         workloads.Impl
	MaxOps       int
	MaxErrorRate float64
	// SpinWaits spins every wait to its deadline (workloads.Config).
	SpinWaits bool
	// Meta describes the run in its result (see Meta).
	Meta     results.Meta
	Logf     func(format string, args ...any)
	Progress func(workloads.Progress)
	// Guard is the guarded store of a profile with guard on; nil starts
	// one (StartGuard with GuardURL and GuardKey) for the run.
	Guard              *GuardStore
	GuardURL, GuardKey string
	// Worker, when set, runs this machine's share of a run spread over
	// several (see WorkerOptions).
	Worker *WorkerOptions
}

// Run drives o.Profile against env: the locks spread over the shards of a
// cluster, and whatever go-redis logged meanwhile kept in the result
// instead of on the terminal. It returns what workloads.Run returns.
func Run(ctx context.Context, env *redisenv.Env, o RunOptions) (*results.Result, error) {
	names, of, err := env.ShardMap(ctx)
	if err != nil {
		return nil, err
	}
	if ri := impls.RedissonOf(o.Impl); ri != nil {
		// Redisson's clients connect as an application on Redisson would
		// to this run's deployment (each run's: a sweep may start another),
		// not to one address of it.
		s, err := scenarios.RedissonServers(env, "")
		if err != nil {
			return nil, &usageError{fmt.Errorf("--impl redisson: %w", err)}
		}
		ri.Servers = &s
	}
	if gm, _ := guard.ParseMode(o.Profile.Guard); gm != guard.Off && o.Guard == nil {
		gs, err := StartGuard(ctx, gm, o.GuardURL, o.GuardKey, env.Binary())
		if err != nil {
			return nil, err
		}
		defer gs.Close()
		if o.Logf != nil {
			o.Logf("guarded counters (%s) at %s, key %s", gm, gs.Where, gs.Store.Key())
		}
		o.Guard = gs
	}
	cfg := workloads.Config{
		Profile: o.Profile, Impl: o.Impl, NewRedis: env.NewPool, MaxOps: o.MaxOps, MaxErrorRate: o.MaxErrorRate,
		ShardNames: names, ShardOf: of, Meta: o.Meta, Logf: o.Logf, Progress: o.Progress, Topology: string(env.Topology()),
		Guard: o.Guard.store(), GuardStore: o.Guard.where(), SpinWaits: o.SpinWaits,
	}
	if o.Worker != nil {
		lock := env.NewPool(1)
		defer lock.Close()
		if err := o.Worker.configure(&cfg, o, lock); err != nil {
			return nil, err
		}
	}
	mark := redisenv.ClientLogMark()
	defer workloads.LimitMemory(o.Profile.Clients * o.Profile.Owners)()
	res, err := workloads.Run(ctx, cfg)
	if res != nil {
		res.ClientLog, res.ClientLogDropped = redisenv.ClientLogSince(mark)
	}
	return res, err
}
