package workloads

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// Locker is what the driver needs of one owner's handle on one lock in
// one mode. The default drives lockimpl; tests plant broken lockers, and
// other lock libraries can be measured by the same driver.
type Locker interface {
	// Acquire takes the lock, waiting at most wait (0: until ctx ends),
	// with a fixed lease (0: a watchdog lease). It reports false, nil when
	// wait passed with the lock held by others.
	Acquire(ctx context.Context, wait, lease time.Duration) (bool, error)
	// Release gives back one acquisition; an error matching ErrNotHeld
	// says the owner held nothing to give back.
	Release(ctx context.Context) error
	// Lost is closed when the holder learns its hold is lost.
	Lost() <-chan struct{}
}

// Owner is one lock owner (a thread in Redisson's terms).
type Owner interface {
	// ID names the owner in results.
	ID() string
	// Locker returns the owner's handle on lock name in mode m.
	Locker(name string, m results.Mode) Locker
}

// Config is what Run needs beyond the profile.
type Config struct {
	Profile Profile
	// NewRedis returns a new client with its own pool of poolSize
	// connections. Run calls it once per profile client (and once for its
	// PING sampler) and closes every client it gets.
	NewRedis func(poolSize int) redis.UniversalClient
	// ClientRedis, when set, is used instead of NewRedis and is told which
	// profile client (0..Clients-1) the connection pool is for, -1 for the
	// PING sampler: chaos routes each client through its own proxy.
	ClientRedis func(client, poolSize int) redis.UniversalClient
	// Lock is the lockimpl options every client gets (each its own ID).
	Lock lockimpl.Options
	// LockFor, when set, gives client c its own options instead of Lock
	// (chaos skews one client's clock).
	LockFor func(client int) lockimpl.Options
	// IgnoreLost makes holders behave like applications on Redisson's API,
	// which tells them nothing when a hold is lost: they keep their critical
	// section to its planned end. The safety checker then sees what that
	// costs. By default holders stop at Lost, as lockimpl lets them.
	IgnoreLost bool
	// Timeline keeps one lock's holder timeline in the result (chaos
	// charts draw it; see results.BuildTimeline).
	Timeline bool
	// Impl, when set, is the implementation driven instead of lockimpl
	// (Lock and LockFor then do not apply). Run refuses a profile it
	// cannot serve (Impl.Check).
	Impl Impl
	// NewOwner, when set, replaces lockimpl and Impl: it returns owner o
	// of client c (tests plant broken lockers with it). The PING sampler
	// still uses NewRedis when that is set.
	NewOwner func(c, o int) Owner
	// Meta is copied into the result.
	Meta results.Meta
	// Progress, when set, is called once a second with the last interval.
	Progress func(Progress)
	// MaxOps bounds the operations kept for analysis (default
	// results.DefaultMaxOps).
	MaxOps int
	// KeyPrefix starts every lock name; default "lockbench:<profile>:<run>:"
	// with a random run ID, so runs never share a lock.
	KeyPrefix string
	// ShardNames and ShardOf, when set, sort the locks by the Redis Cluster
	// shard serving them (ShardOf returns an index into ShardNames), and the
	// result reports throughput per shard (results.Result.PerShard).
	ShardNames []string
	ShardOf    func(lock string) int
	// PingEvery is the PING sampler's period (default 10ms).
	PingEvery time.Duration
	// Started, when set, is called with the run's time base just before
	// the load starts: every time in the result is relative to it (chaos
	// starts its fault schedule on it).
	Started func(base time.Time)
}

// Progress is the live view of a run.
type Progress struct {
	Elapsed    time.Duration
	Total      time.Duration // planned warmup + duration; 0 when ops-bounded only
	Warmup     bool
	Interval   results.Point
	Ops        int64   // finished so far, warmup included
	Errors     int64   // so far, warmup included
	AcquireP99 float64 // µs, every measured acquisition so far
}

// ErrNoRedis is returned when Config has neither NewRedis nor NewOwner.
var ErrNoRedis = errors.New("workloads: Config needs NewRedis, ClientRedis or NewOwner")

type run struct {
	p         Profile
	cfg       Config
	col       *results.Collector
	names     []string
	warmEnd   time.Time
	loadStart time.Time

	ctx      context.Context // cancelled when the load stops
	stopLoad context.CancelFunc
	relCtx   context.Context // for releases: outlives the load
	issued   atomic.Int64
	stopped  atomic.Bool
	// completed: the planned end came (duration or operation count), so a
	// cancellation after it does not make the result partial.
	completed atomic.Bool
}

func (r *run) stop() {
	r.stopped.Store(true)
	r.stopLoad()
}

func (r *run) complete() {
	r.completed.Store(true)
	r.stop()
}

// Run drives the profile until its duration or operation count is
// reached, or ctx ends. Every worker releases what it holds before Run
// returns. When ctx ended first the result is marked partial and Run
// returns it together with ctx's error; a nil result comes only with a
// setup error (bad profile, no Redis).
func Run(ctx context.Context, cfg Config) (*results.Result, error) {
	p := cfg.Profile
	if err := p.Validate(); err != nil {
		return nil, err
	}
	implName, implNote := "lockimpl", ""
	if cfg.Impl != nil && cfg.NewOwner == nil {
		var err error
		if implNote, err = cfg.Impl.Check(p); err != nil {
			return nil, err
		}
		implName = cfg.Impl.Name()
	}
	if cfg.ClientRedis == nil && cfg.NewRedis != nil {
		newRedis := cfg.NewRedis
		cfg.ClientRedis = func(_, poolSize int) redis.UniversalClient { return newRedis(poolSize) }
	}
	if cfg.ClientRedis == nil && cfg.NewOwner == nil {
		return nil, ErrNoRedis
	}
	if cfg.PingEvery <= 0 {
		cfg.PingEvery = 10 * time.Millisecond
	}
	g0 := runtime.NumGoroutine()
	owners, labels, closeAll, err := setup(cfg)
	if err != nil {
		return nil, err
	}
	prefix := cfg.KeyPrefix
	if prefix == "" {
		prefix = fmt.Sprintf("lockbench:%s:%s:", p.Name, runID())
	}
	names := make([]string, p.LockCount())
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	if len(cfg.ShardNames) > 1 && cfg.ShardOf != nil {
		spreadNames(names, len(cfg.ShardNames), cfg.ShardOf)
	}
	labels.Locks = names

	nShards := min(len(owners), 4*runtime.GOMAXPROCS(0))
	start := time.Now()
	col := results.NewCollector(start, nShards, cfg.MaxOps)
	if len(cfg.ShardNames) > 0 && cfg.ShardOf != nil {
		groupOf := make([]int32, len(names))
		for i, n := range names {
			g := cfg.ShardOf(n)
			if g < 0 || g >= len(cfg.ShardNames) {
				closeAll()
				return nil, fmt.Errorf("workloads: ShardOf(%q) = %d, want 0..%d", n, g, len(cfg.ShardNames)-1)
			}
			groupOf[i] = int32(g)
		}
		col.GroupLocks(groupOf, cfg.ShardNames)
	}
	r := &run{p: p, cfg: cfg, col: col, names: names, loadStart: start}
	r.warmEnd = start.Add(time.Duration(p.Warmup))
	loadCtx, stopLoad := context.WithCancel(context.Background())
	r.ctx, r.stopLoad = loadCtx, stopLoad
	r.relCtx = context.WithoutCancel(ctx)
	var total time.Duration
	if p.Duration > 0 {
		total = time.Duration(p.Warmup + p.Duration)
	}

	// The load stops at the planned end, on ctx's end, or (ops-bounded)
	// when the last operation is issued.
	var interrupted atomic.Bool
	endTimer := (*time.Timer)(nil)
	if total > 0 {
		endTimer = time.AfterFunc(total, r.complete)
	}
	stopOnCtx := context.AfterFunc(ctx, func() {
		if !r.completed.Load() {
			interrupted.Store(true)
		}
		r.stop()
	})

	if cfg.Started != nil {
		cfg.Started(start)
	}
	var wg sync.WaitGroup
	for i, o := range owners {
		w := newWorker(r, i, o)
		wg.Go(w.loop)
	}
	var aux sync.WaitGroup
	if cfg.ClientRedis != nil {
		pinger := cfg.ClientRedis(-1, 1)
		aux.Go(func() { r.ping(pinger, col.Shard(0)); _ = pinger.Close() })
	}
	var gMax atomic.Int64
	aux.Go(func() { r.tick(total, &gMax) })

	wg.Wait()
	r.stop()
	aux.Wait()
	if endTimer != nil {
		endTimer.Stop()
	}
	stopOnCtx()
	end := time.Now()

	g := runtime.NumGoroutine()
	gMax.Store(max(gMax.Load(), int64(g)))
	a := results.Analysis{Labels: labels, MeasureFrom: int64(time.Duration(p.Warmup)), FIFO: p.Kind == Fair, Timeline: r.cfg.Timeline}
	if end.Before(r.warmEnd) {
		a.MeasureFrom = col.Since(end)
	}
	res := col.Finish(end, end.Before(r.warmEnd), g, a)
	res.Meta = cfg.Meta
	res.Meta.Profile = p.Name
	res.Meta.Workload = p.Summary()
	if cfg.NewOwner == nil {
		res.Meta.Impl, res.Meta.ImplNote = implName, implNote
	}
	res.Profile = p
	res.Throughput.TargetRate = p.Rate
	closeAll()
	res.Runtime = results.Runtime{
		PeakRSSBytes:    peakRSS(),
		GoroutinesStart: g0,
		GoroutinesMax:   int(gMax.Load()),
		GoroutinesEnd:   runtime.NumGoroutine(),
		Shards:          nShards,
	}
	if interrupted.Load() {
		res.Partial = true
		res.PartialReason = fmt.Sprintf("interrupted after %.1fs", end.Sub(start).Seconds())
		if total > 0 {
			res.PartialReason += fmt.Sprintf(" of %.1fs", total.Seconds())
		}
		return res, ctx.Err()
	}
	return res, nil
}

// setup makes the clients and owners.
func setup(cfg Config) ([]Owner, results.Labels, func(), error) {
	p := cfg.Profile
	var owners []Owner
	var labels results.Labels
	var clients []*lockimpl.Client
	var others []ImplClient
	var rdbs []redis.UniversalClient
	closeAll := func() {
		for _, c := range clients {
			_ = c.Close()
		}
		for _, c := range others {
			_ = c.Close()
		}
		for _, r := range rdbs {
			_ = r.Close()
		}
	}
	for c := range p.Clients {
		var lc *lockimpl.Client
		var ic ImplClient
		switch {
		case cfg.NewOwner != nil:
		case cfg.Impl != nil:
			rdb := cfg.ClientRedis(c, max(p.Owners+4, 10))
			rdbs = append(rdbs, rdb)
			var err error
			if ic, err = cfg.Impl.NewClient(rdb, p); err != nil {
				closeAll()
				return nil, labels, nil, fmt.Errorf("%s: %w", cfg.Impl.Name(), err)
			}
			others = append(others, ic)
		default:
			rdb := cfg.ClientRedis(c, max(p.Owners+4, 10))
			rdbs = append(rdbs, rdb)
			opts := cfg.Lock
			if cfg.LockFor != nil {
				opts = cfg.LockFor(c)
			}
			var err error
			if lc, err = lockimpl.NewClient(rdb, opts); err != nil {
				closeAll()
				return nil, labels, nil, err
			}
			clients = append(clients, lc)
		}
		for o := range p.Owners {
			var ow Owner
			switch {
			case cfg.NewOwner != nil:
				ow = cfg.NewOwner(c, o)
			case ic != nil:
				ow = ic.NewOwner()
			default:
				ow = lockimplOwner{o: lc.NewOwner(), kind: p.Kind}
			}
			owners = append(owners, ow)
			labels.Owners = append(labels.Owners, ow.ID())
		}
	}
	return owners, labels, closeAll, nil
}

func runID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tick closes an interval each second and reports progress.
func (r *run) tick(total time.Duration, gMax *atomic.Int64) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case now := <-t.C:
			g := runtime.NumGoroutine()
			gMax.Store(max(gMax.Load(), int64(g)))
			pt := r.col.Tick(now, now.Before(r.warmEnd), g)
			if r.cfg.Progress != nil {
				ops, errs := r.col.Totals()
				r.cfg.Progress(Progress{
					Elapsed: now.Sub(r.loadStart), Total: total, Warmup: pt.Warmup,
					Interval: pt, Ops: ops, Errors: errs, AcquireP99: r.col.AcquireP99(),
				})
			}
		}
	}
}

// ping samples the PING round trip on its own connection: the floor under
// every lock operation, measured in the same run.
func (r *run) ping(rdb redis.UniversalClient, sh *results.Shard) {
	t := time.NewTicker(r.cfg.PingEvery)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
		t0 := time.Now()
		if err := rdb.Ping(r.ctx).Err(); err != nil {
			continue
		}
		if t0.After(r.warmEnd) {
			sh.RecordValue(results.Ping, int64(time.Since(t0)))
		}
	}
}

// classify sorts an acquire or release error.
func classify(err error) results.ErrClass {
	var ne net.Error
	switch {
	case err == nil:
		return results.NoErr
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return results.ErrCtx
	case errors.Is(err, lockimpl.ErrClosed), errors.Is(err, lockimpl.ErrSubscribeTimeout),
		errors.Is(err, redis.ErrClosed), errors.Is(err, redis.ErrPoolTimeout),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne):
		return results.ErrConn
	}
	return results.ErrOther
}

// String is the one-line progress display: elapsed, phase, throughput of
// the last second, p99 so far, errors.
func (p Progress) String() string {
	phase := "measuring"
	if p.Warmup {
		phase = "warming up"
	}
	elapsed := fmt.Sprintf("%5.1fs", p.Elapsed.Seconds())
	if p.Total > 0 {
		elapsed += fmt.Sprintf("/%.0fs", p.Total.Seconds())
	}
	p99 := "-"
	if p.AcquireP99 > 0 {
		p99 = time.Duration(p.AcquireP99 * float64(time.Microsecond)).Round(time.Microsecond).String()
	}
	return fmt.Sprintf("%s %-10s %8.0f ops/s  acquire p99 %-8s errors %d", elapsed, phase, p.Interval.OpsPerSec, p99, p.Errors)
}

// spreadNames renames the locks so that lock i is served by shard i mod
// shards: hashing alone leaves a few locks unevenly spread (32 locks on 3
// shards may split 8/8/16), which would measure the spread, not the shards.
// A name that lands elsewhere gets a suffix until it lands right; with
// slots split evenly that takes about `shards` tries.
func spreadNames(names []string, shards int, shardOf func(string) int) {
	for i, base := range names {
		want := i % shards
		n := base
		for k := 1; shardOf(n) != want && k < 100*shards; k++ {
			n = fmt.Sprintf("%s~%d", base, k)
		}
		names[i] = n
	}
}
