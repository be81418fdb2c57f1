package workloads

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/guard"
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

// Timed is a Locker whose calls run in another process that times them
// itself (a JVM driving Redisson): LastCall is its latest Acquire's or
// Release's start and end on that process's clock, placed on this one's,
// or zero times when the call got no answer. The driver then measures the
// lock's latencies and critical sections where the lock was taken and
// given back, not where the harness heard of it.
type Timed interface {
	LastCall() (start, end time.Time)
}

// Sectioned is a Locker that can run a whole critical section in its own
// process (acquire, hold, release) without the harness in between, whose
// round trips would otherwise lengthen every hold. The driver uses it for
// operations with no nested acquisitions; such a Locker has no loss
// signal to listen to meanwhile. Section's times are on this process's
// clock. Acquired false with a nil error means the wait ran out, with an
// error that the acquisition failed; acquired true with an error means
// the release failed (matching ErrNotHeld when nothing was held).
type Sectioned interface {
	Section(ctx context.Context, wait, lease, hold time.Duration) (SectionTimes, bool, error)
}

// SectionTimes are when a Sectioned call started, acquired (or gave up),
// sent its release and ended; zero when it got no answer. Cut says the
// hold ended early: the ctx given to Section ended, which cuts a wait or
// a hold short (a wait so cut returns ctx's error).
type SectionTimes struct {
	Start, Acquired, Released, End time.Time
	Cut                            bool
}

// HeldAtClose is an ImplClient whose process may still hold locks when it
// closes that the run never learnt it took: critical sections run whole
// in it (Sectioned) that a stall cut off, their unlock unanswered. After
// Close, HeldAtClose is how many; the run counts them as unreleased.
type HeldAtClose interface {
	HeldAtClose() int
}

// Owner is one lock owner (a thread in Redisson's terms).
type Owner interface {
	// ID names the owner in results.
	ID() string
	// Locker returns the owner's handle on lock name in mode m.
	Locker(name string, m results.Mode) Locker
}

// MultiOwner is an Owner that can take several names as one multi-lock
// (kind multi); implementations without one refuse such profiles.
type MultiOwner interface {
	// MultiLocker returns the owner's handle on names taken all or none.
	MultiLocker(names []string) Locker
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
	// IgnoreLost makes holders behave like applications on Redisson's API,
	// which tells them nothing when a hold is lost: they keep their critical
	// section to its planned end. The safety checker then sees what that
	// costs. By default holders stop at Lost, as lockimpl lets them.
	IgnoreLost bool
	// Timeline keeps one lock's holder timeline in the result (chaos
	// charts draw it; see results.BuildTimeline).
	Timeline bool
	// Impl is the implementation driven; nil means Lockimpl{}. Run
	// refuses a profile it cannot serve (Impl.Check).
	Impl Impl
	// NewOwner, when set, replaces Impl with owners that need no Redis: it
	// returns owner o of client c (tests plant broken lockers with it).
	// The PING sampler still uses NewRedis when that is set.
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
	// StallBound is how long the run waits past its planned end for the
	// calls still in flight (default DefaultStallBound; after an interrupt
	// at most InterruptBound). Calls still waiting on Redis then are cut,
	// recorded as failed (results.ErrStalled) with the time they had
	// waited, the result is marked partial, and the Redis clients under
	// them are closed: a paused or unreachable Redis cannot stretch a run.
	StallBound time.Duration
	// MaxErrorRate is the share of failed measured operations the run is
	// allowed (results.Result.Failures); 0 means
	// results.DefaultMaxErrorRate, a negative value none at all.
	MaxErrorRate float64
	// Started, when set, is called with the run's time base just before
	// the load starts: every time in the result is relative to it (chaos
	// starts its fault schedule on it).
	Started func(base time.Time)
	// Guard, when set, is the counter critical sections update (read,
	// hold, write): a profile with guard plain or fenced needs it, in that
	// mode. GuardStore names where it is, for the result.
	Guard      *guard.Store
	GuardStore string
	// Logf, when set, is told what the run does besides its load (stale
	// fair-lock queues of killed runs cleared, bookkeeping that failed).
	Logf func(format string, args ...any)
	// Topology is the topology the run is on (single, replica or
	// cluster), as its environment knows it: the result's profile records
	// it, and the profile's own topology field (what it was meant for)
	// only decides what replica_sync asks. Empty keeps the profile's.
	Topology string
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

// DefaultStallBound is how long a run waits past its planned end for
// calls Redis has not answered. Healthy calls finish within milliseconds of
// the end; one still waiting after 2 s is waiting on a server that stopped
// answering (paused, partitioned), and go-redis's own timeouts and retries
// could keep it there for tens of seconds.
const DefaultStallBound = 2 * time.Second

// InterruptBound caps the wait for in-flight calls after an interrupt, so
// Ctrl-C ends a run within a second or two whatever Redis does.
const InterruptBound = 500 * time.Millisecond

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
	clients  *runClients
	guard    guardTally
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
	if cfg.Impl == nil {
		cfg.Impl = Lockimpl{}
	}
	implName, implNote := cfg.Impl.Name(), ""
	if cfg.NewOwner == nil {
		var err error
		if implNote, err = cfg.Impl.Check(p); err != nil {
			return nil, err
		}
	}
	if gm, _ := guard.ParseMode(p.Guard); gm != guard.Off && (cfg.Guard == nil || cfg.Guard.Mode() != gm) {
		return nil, &FieldError{Field: "guard", Value: p.Guard, Fix: "the run has no guarded store in that mode; bench and chaos start one (or give --guard-url)"}
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
	owners, labels, clients, err := setup(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// The servers' own client: their CPU (below), and first how many
	// replicas the primaries have, which decides what replica_sync did.
	var cpuRdb redis.UniversalClient
	replicas := -1
	if cfg.ClientRedis != nil {
		cpuRdb = cfg.ClientRedis(-1, 1)
		clients.rdbs = append(clients.rdbs, cpuRdb)
		replicas = primaryReplicas(ctx, cpuRdb)
	}
	prefix := cfg.KeyPrefix
	if prefix == "" {
		prefix = fmt.Sprintf("lockbench:%s:%s:", p.Name, NewRunID())
	}
	names := make([]string, p.LockCount())
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	if len(cfg.ShardNames) > 1 && cfg.ShardOf != nil {
		spreadNames(names, len(cfg.ShardNames), cfg.ShardOf)
	}
	labels.Locks = names

	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	var fair *fairRegistry
	if p.Kind.Fair() && cfg.NewOwner == nil && cfg.ClientRedis != nil {
		rdb := cfg.ClientRedis(-1, 2)
		clients.rdbs = append(clients.rdbs, rdb)
		reg, cleaned, err := startFairRegistry(ctx, rdb, prefix, names, time.Now())
		if cleaned > 0 {
			logf("cleared the fair-lock queues of %d earlier runs that were killed", cleaned)
		}
		if err != nil {
			logf("fair-lock queue bookkeeping: %v", err)
		}
		fair = reg
	}

	nShards := min(len(owners), 4*runtime.GOMAXPROCS(0))
	start := time.Now()
	col := results.NewCollector(start, nShards, cfg.MaxOps)
	if len(cfg.ShardNames) > 0 && cfg.ShardOf != nil {
		groupOf := make([]int32, len(names))
		for i, n := range names {
			g := cfg.ShardOf(n)
			if g < 0 || g >= len(cfg.ShardNames) {
				clients.closeAll()
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
	r.clients = clients
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
	workers := make([]*worker, len(owners))
	for i, o := range owners {
		workers[i] = newWorker(r, i, o)
		wg.Go(workers[i].loop)
	}
	var aux sync.WaitGroup
	if cfg.ClientRedis != nil {
		pinger := cfg.ClientRedis(-1, 1)
		clients.rdbs = append(clients.rdbs, pinger) // closed with the rest, or at a stall
		pingCtx, stopPing := context.WithCancel(r.relCtx)
		defer stopPing()
		clients.beforeClose = stopPing
		aux.Go(func() { r.ping(pingCtx, pinger, col.Shard(0)) })
	}
	var gMax atomic.Int64
	aux.Go(func() { r.tick(total, &gMax, fair) })
	cpu := newCPUMeter(cpuRdb, cfg.Impl, start)
	aux.Go(func() { cpu.run(r.ctx, r.warmEnd) })

	stall := r.wait(&wg, workers, interrupted.Load)
	r.stop()
	// The PING sampler may itself be waiting on a stalled server.
	auxDone := make(chan struct{})
	go func() { aux.Wait(); close(auxDone) }()
	select {
	case <-auxDone:
	case <-time.After(time.Second):
		clients.closeRedis()
		<-auxDone
	}
	if endTimer != nil {
		endTimer.Stop()
	}
	stopOnCtx()
	end := time.Now()
	cpu.sample(r.relCtx)

	g := runtime.NumGoroutine()
	gMax.Store(max(gMax.Load(), int64(g)))
	a := results.Analysis{Labels: labels, MeasureFrom: int64(time.Duration(p.Warmup)), FIFO: p.Kind.Fair(), Timeline: r.cfg.Timeline}
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
	if fair != nil && stall == nil {
		if err := fair.finish(r.relCtx); err != nil {
			logf("fair-lock queue bookkeeping: %v (a later run clears them)", err)
		}
	}
	if cfg.Guard != nil {
		g, err := r.guard.result(r.relCtx, cfg.Guard, cfg.GuardStore)
		if err != nil {
			logf("guarded counter: %v", err)
		}
		res.Guard = g
	}
	ran := p
	if cfg.Topology != "" {
		ran.Topology = cfg.Topology
	}
	if ran.Topology == "single" && replicas > 0 {
		// An external primary whose replicas the URL did not name.
		ran.Topology = "replica"
		if res.Meta.RedisTopology == "single" {
			res.Meta.RedisTopology = "replica"
		}
	}
	res.Profile = ran
	if cfg.NewOwner == nil && replicas >= 0 {
		if what, _ := ReplicaSyncGap(cfg.Impl, p, replicas); what != "" {
			res.NoEffect = append(res.NoEffect, "replica_sync: "+what)
		}
	}
	res.CPU = cpu.result(r.warmEnd, loadCores(cfg.Impl), sharedHost(cfg.Meta))
	res.Throughput.TargetRate = p.Rate
	limit := errorLimit(cfg.MaxErrorRate)
	res.MaxErrorRate = &limit
	clients.closeAll()
	res.Throughput.Unreleased += int64(clients.heldAtClose)
	res.Runtime = results.Runtime{
		PeakRSSBytes:    peakRSS(),
		GoroutinesStart: g0,
		GoroutinesMax:   int(gMax.Load()),
		GoroutinesEnd:   runtime.NumGoroutine(),
		Shards:          nShards,
	}
	var reasons []string
	if interrupted.Load() {
		why := fmt.Sprintf("interrupted after %.1fs", end.Sub(start).Seconds())
		if total > 0 {
			why += fmt.Sprintf(" of %.1fs", total.Seconds())
		}
		reasons = append(reasons, why)
	}
	if stall != nil {
		res.Stall = stall
		reasons = append(reasons, stall.Reason())
	}
	if len(reasons) > 0 {
		res.Partial = true
		res.PartialReason = strings.Join(reasons, "; ")
	}
	if interrupted.Load() {
		return res, ctx.Err()
	}
	return res, nil
}

// errorLimit is a configured error-rate threshold with its defaults
// applied: 0 is the default, a negative value allows no failure.
func errorLimit(v float64) float64 {
	switch {
	case v == 0:
		return results.DefaultMaxErrorRate
	case v < 0:
		return 0
	}
	return v
}

// wait waits for the workers to finish once the load has stopped, at most
// the stall bound; workers still in a call to Redis then are reaped (see
// reap) and the clients under them closed, so the stuck calls return. It
// returns the stall, nil when every worker finished in time.
func (r *run) wait(wg *sync.WaitGroup, workers []*worker, interrupted func() bool) *results.Stall {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-r.ctx.Done():
	}
	bound := r.cfg.StallBound
	if bound <= 0 {
		bound = DefaultStallBound
	}
	if interrupted() {
		bound = min(bound, InterruptBound)
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	}
	stall := r.reap(workers, time.Now())
	stall.BoundS = bound.Seconds()
	// Closing the connections makes the stuck calls fail at once; the
	// abandoned workers then return without recording anything. The Redis
	// clients go first, so that the lock clients' own goroutines (renewals)
	// are not left waiting on them while they close.
	r.clients.closeRedis()
	r.clients.closeLocks()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	if stall.Calls == 0 {
		return nil // only workers between calls, now gone: no stall
	}
	return stall
}

// reap records the operation of every worker still busy at now as it
// stands: an acquisition still waiting fails as stalled, with the time it
// waited as its latency (a stall shows in the histograms instead of
// vanishing from them); a hold whose release never came is kept for the
// safety check, marked unreleased. Every worker is abandoned: none records
// anything more.
func (r *run) reap(workers []*worker, now time.Time) *results.Stall {
	st := &results.Stall{}
	at := r.col.Since(now)
	from := now
	for _, w := range workers {
		w.mu.Lock()
		if !w.abandoned && w.phase != idle {
			op := w.cur
			op.Err = results.ErrStalled
			switch w.phase {
			case acquiring:
				op.Acquired, op.Released, op.Done = 0, op.Called, at
			case nesting, holding:
				op.Released, op.Done = at, at
				op.Flags |= results.ReleaseFailed
			case releasing:
				op.Done = at
				op.Flags |= results.ReleaseFailed
			}
			waitedFrom := now
			if w.phase != holding {
				st.Calls++
				st.NoReplyS = max(st.NoReplyS, now.Sub(w.phaseAt).Seconds())
				waitedFrom = minTime(w.phaseAt, now)
				from = minTime(from, waitedFrom)
			}
			w.shard.Record(op, nil, nil)
			// A call is dated from when it began waiting, where the outage
			// showed, not from when the bound gave up on it.
			w.shard.NoteError(results.ErrStalled, "no reply from Redis before the run's stall bound", r.col.Since(waitedFrom))
		}
		w.abandoned = true
		w.mu.Unlock()
	}
	st.NoReplyS = math.Round(st.NoReplyS*10) / 10
	st.FromS = math.Round(float64(r.col.Since(from))/float64(time.Second)*10) / 10
	return st
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// runClients are what setup made: the Redis clients and the lock clients
// on them.
type runClients struct {
	rdbs []redis.UniversalClient
	// beforeClose, when set, runs once before the Redis clients close
	// (it ends the PING sampler's context, so that it asks no more).
	beforeClose func()
	lock        []ImplClient
	rdbOnce     sync.Once
	lockOnce    sync.Once
	heldAtClose int // what the lock clients held as they closed (HeldAtClose)
}

// closeRedis closes the Redis clients, which fails every call still
// waiting on them at once.
func (c *runClients) closeRedis() {
	c.rdbOnce.Do(func() {
		if c.beforeClose != nil {
			c.beforeClose()
		}
		for _, r := range c.rdbs {
			_ = r.Close()
		}
	})
}

// closeLocks closes the lock clients (lockimpl's also close the no-retry
// pool its acquisitions go through) and adds up what they still held.
func (c *runClients) closeLocks() {
	c.lockOnce.Do(func() {
		for _, l := range c.lock {
			_ = l.Close()
			if h, ok := l.(HeldAtClose); ok {
				c.heldAtClose += h.HeldAtClose()
			}
		}
	})
}

// closeAll closes the lock clients, then the Redis clients under them.
func (c *runClients) closeAll() {
	c.closeLocks()
	c.closeRedis()
}

// setup makes the clients and owners.
func setup(ctx context.Context, cfg Config) ([]Owner, results.Labels, *runClients, error) {
	p := cfg.Profile
	var owners []Owner
	var labels results.Labels
	cl := &runClients{}
	for c := range p.Clients {
		var ic ImplClient
		if cfg.NewOwner == nil {
			rdb := cfg.ClientRedis(c, max(p.Owners+4, 10))
			cl.rdbs = append(cl.rdbs, rdb)
			var err error
			if ic, err = cfg.Impl.NewClient(ctx, rdb, p, c); err != nil {
				cl.closeAll()
				if !strings.HasPrefix(err.Error(), cfg.Impl.Name()+": ") { // said once is enough
					err = fmt.Errorf("%s: %w", cfg.Impl.Name(), err)
				}
				return nil, labels, nil, err
			}
			cl.lock = append(cl.lock, ic)
		}
		for o := range p.Owners {
			var ow Owner
			if cfg.NewOwner != nil {
				ow = cfg.NewOwner(c, o)
			} else {
				ow = ic.NewOwner()
			}
			if _, ok := ow.(MultiOwner); p.Kind == Multi && !ok {
				cl.closeAll()
				return nil, labels, nil, fmt.Errorf("%s: kind multi needs owners with MultiLocker", cfg.Impl.Name())
			}
			owners = append(owners, ow)
			labels.Owners = append(labels.Owners, ow.ID())
		}
	}
	return owners, labels, cl, nil
}

// NewRunID is a fresh random id (8 hex digits): key prefixes made with it
// keep one run's locks apart from every other run's.
func NewRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tick closes an interval each second, reports progress and keeps a fair
// run's registration alive.
func (r *run) tick(total time.Duration, gMax *atomic.Int64, fair *fairRegistry) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case now := <-t.C:
			if fair != nil {
				_ = fair.renew(r.ctx, now) // a lapse only lets a later run clean up early
			}
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
// every lock operation, measured in the same run. A PING that got no
// reply (timed out, or still waiting when the run closed its clients at a
// stall) is recorded with the time it waited, as a stalled acquisition
// is: a stall shows in the ping histogram instead of leaving it. The PING
// in flight when the load stops is seen through, not cancelled (ctx ends
// only as the clients close): if Redis is stalled, that PING shows it.
func (r *run) ping(ctx context.Context, rdb redis.UniversalClient, sh *results.Shard) {
	t := time.NewTicker(r.cfg.PingEvery)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
		if r.ctx.Err() != nil {
			return
		}
		t0 := time.Now()
		err := rdb.Ping(ctx).Err()
		if err == nil || noReply(err) || ctx.Err() != nil {
			if t0.After(r.warmEnd) {
				sh.RecordValue(results.Ping, int64(time.Since(t0)))
			}
		}
		if ctx.Err() != nil || errors.Is(err, redis.ErrClosed) || errors.Is(err, net.ErrClosed) {
			return // the clients are closing: at a stall, or at the end
		}
	}
}

// noReply reports whether err says a call waited and got no answer (a
// timeout, or its client closed under it), rather than being answered
// (an error reply) or refused at once.
func noReply(err error) bool {
	var ne net.Error
	return errors.Is(err, redis.ErrClosed) || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// Classify sorts an acquire or release error into its results class: the
// driver and the chaos scenarios' scripted actors count failures alike.
func Classify(err error) results.ErrClass {
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
	var rerr redis.Error
	if errors.As(err, &rerr) && !errors.Is(err, redis.Nil) {
		return results.ErrRedis
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
