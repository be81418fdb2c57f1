package impls

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// RedissonJVM is Redisson with its default configuration (as Redisson)
// whose load runs inside the JVM: each owner is a Java thread that takes
// its lock, holds it, unlocks it and thinks in a loop of its own, with no
// line on the pipe per operation, and the JVM hands every operation's
// record back when the run ends. Beside RedissonName's figures it shows
// what the pipe between the harness and the JVM costs. The records go
// through the same analysis as every run's (latencies, safety,
// fairness); what the harness's workers do beside the load (the PING
// sampler, progress) does not run. It takes closed-loop profiles with
// one acquisition per operation on uniform or per-owner names.
type RedissonJVM struct {
	Redisson
}

// ErrSelfDriven is what NewClient returns: RedissonJVM runs only as a
// whole (workloads.SelfDriven).
var ErrSelfDriven = errors.New("impls: redisson-jvm runs its load in the JVM; it has no owners for the harness's workers")

// Name is RedissonJVMName.
func (*RedissonJVM) Name() string { return RedissonJVMName }

// Check is Redisson's, and refuses what the JVM's loop does not do.
func (r *RedissonJVM) Check(p workloads.Profile) (string, error) {
	note, err := r.Redisson.Check(p)
	if err != nil {
		return "", err
	}
	refuse := func(what string) error {
		return &workloads.FieldError{Field: "--impl", Value: RedissonJVMName, Fix: fmt.Sprintf("profile %s: %s; the JVM's own loop runs closed-loop profiles of one acquisition per operation on uniform or per-owner names, for a duration; use --impl %s", p.Name, what, RedissonName)}
	}
	switch {
	case p.Kind == workloads.Multi:
		return "", refuse("kind multi")
	case p.Depth.Max() > 1:
		return "", refuse("nested acquisitions (depth above 1)")
	case p.Popularity == workloads.PopZipf:
		return "", refuse("zipf popularity")
	case p.Rate > 0:
		return "", refuse("open loop (rate)")
	case p.Ops > 0 || p.Duration <= 0:
		return "", refuse("an operation count instead of a duration")
	case p.Guard != "" && p.Guard != "off":
		return "", refuse("a guarded counter")
	}
	return note + "; the load runs in the JVM's own threads (lock, hold, unlock, think in a loop), no pipe per operation", nil
}

// NewClient returns ErrSelfDriven.
func (r *RedissonJVM) NewClient(context.Context, redis.UniversalClient, workloads.Profile, int) (workloads.ImplClient, error) {
	return nil, ErrSelfDriven
}

// dist is d in the loop's syntax (redisson.LoopSpec).
func dist(d workloads.DurationDist) string {
	switch d.Kind {
	case workloads.Uniform:
		return fmt.Sprintf("u:%d:%d", d.A, d.B)
	case workloads.Exp:
		return fmt.Sprintf("e:%d", d.A)
	}
	return fmt.Sprintf("f:%d", d.A)
}

// RunSelf runs cfg's profile in the JVM: a RedissonClient per profile
// client, each running its owners' loop, then every operation recorded
// as the harness records its own. A ctx that ends cuts the loops short:
// the result holds what they did, marked partial, with ctx's error.
func (r *RedissonJVM) RunSelf(ctx context.Context, cfg workloads.Config) (*results.Result, error) {
	p := cfg.Profile
	newRedis := cfg.ClientRedis
	if newRedis == nil {
		newRedis = func(_, n int) redis.UniversalClient { return cfg.NewRedis(n) }
	}
	rdb := newRedis(0, 2)
	defer rdb.Close()
	var clients []*redissonClient
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	for i := range p.Clients {
		c, err := r.Redisson.NewClient(ctx, rdb, p, i)
		if err != nil {
			return nil, err
		}
		clients = append(clients, c.(*redissonClient))
	}
	prefix := cfg.KeyPrefix
	if prefix == "" {
		prefix = fmt.Sprintf("lockbench:%s:jvm-%s-%d:", p.Name, processID, clientSeq.Add(1))
	}
	k := redisson.Kind(p.Kind.String())
	if l, ok := p.Kind.Lock(results.Exclusive); ok && p.Kind != workloads.RW {
		k = redisson.KindOf(l)
	}
	wait, lease := time.Duration(p.Wait), p.Lease.Fixed
	if wait <= 0 {
		wait = -1
	}
	locks := p.Locks
	if p.Popularity == workloads.PopPerOwner {
		locks = 0
	}
	base := time.Now()
	span := workloads.StartCPUOf(ctx, rdb, r)
	end := redisson.Now() + int64(time.Duration(p.Warmup+p.Duration))
	recs := make([][]redisson.LoopRecord, len(clients))
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			recs[i], errs[i] = c.d.Loop(ctx, c.name, k, prefix, wait, lease, redisson.LoopSpec{
				Threads: p.Owners, First: i * p.Owners, Locks: locks, Read: p.ReadRatio,
				Hold: dist(p.Hold), Think: dist(p.Think), End: end, Seed: p.Seed})
		})
	}
	wg.Wait()
	stop := time.Now()
	cpu := span.End(ctx)
	interrupted := ctx.Err()
	if err := errors.Join(errs...); err != nil && interrupted == nil {
		return nil, err
	}
	labels := results.Labels{}
	for i := range p.Clients * p.Owners {
		labels.Owners = append(labels.Owners, fmt.Sprintf("c%d/o%d", i/p.Owners, i))
		if locks == 0 {
			labels.Locks = append(labels.Locks, fmt.Sprintf("%so%d", prefix, i))
		}
	}
	for i := range locks {
		labels.Locks = append(labels.Locks, fmt.Sprintf("%s%d", prefix, i))
	}
	col := results.NewCollector(base, 1, cfg.MaxOps)
	warmEnd := int64(time.Duration(p.Warmup))
	rel := func(ns int64) int64 {
		if ns == 0 {
			return 0
		}
		return int64(redisson.Time(ns).Sub(base))
	}
	for _, rs := range recs {
		for _, x := range rs {
			op := results.Op{Start: rel(x.Called), Called: rel(x.Called), Acquired: rel(x.Acquired), Released: rel(x.Released),
				Done: rel(x.Done), Owner: x.Owner, Lock: x.Lock, Mode: results.Mode(x.Mode), Depth: 1}
			switch x.Outcome {
			case 1:
				op.Err = results.ErrTimeout
			case 2:
				op.Err = results.ErrOther
			}
			if op.Called < warmEnd {
				op.Flags |= results.Warmup
			}
			col.Shard(0).Record(op, nil, nil)
		}
	}
	res := col.Finish(stop, false, runtime.NumGoroutine(), results.Analysis{Labels: labels, MeasureFrom: warmEnd, FIFO: p.Kind.Fair()})
	res.Meta = cfg.Meta
	res.Meta.Profile, res.Meta.Workload = p.Name, p.Summary()
	res.Meta.Impl, res.Meta.ImplNote = r.Name(), func() string { n, _ := r.Check(p); return n }()
	res.Profile = p
	res.CPU = cpu
	if interrupted != nil {
		res.Partial = true
	}
	return res, interrupted
}

// RedissonOf is the Redisson an implementation runs (redisson,
// redisson-tuned, or redisson-jvm's), so that a caller can set where its
// clients connect; nil for the others.
func RedissonOf(impl workloads.Impl) *Redisson {
	switch r := impl.(type) {
	case *Redisson:
		return r
	case *RedissonJVM:
		return &r.Redisson
	}
	return nil
}
