package workloads

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

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
	// KeysTTL is how long the run's keys that outlive it stay after it:
	// the guarded store's (a store the run's machines share outlives the
	// run) and the fenced lock's token counters, which the lock never
	// expires. Zero means DefaultKeysTTL.
	KeysTTL time.Duration
	// Logf, when set, is told what the run does besides its load (stale
	// fair-lock queues of killed runs cleared, bookkeeping that failed).
	Logf func(format string, args ...any)
	// Share, when set, runs one worker's part of a profile split over
	// several machines (Profile.Split); Profile must be Share.Profile.
	// Owners then seed their choices, take their open-loop slots and
	// (popularity per-owner) their lock names by their index in the
	// whole, and the result describes the whole profile with the share
	// in its Worker field. KeyPrefix must be the one every worker gives.
	Share *Share
	// Rendezvous, when set, is called once the run is set up, just before
	// its load: it returns when the load starts (a worker waits there for
	// the others), and the Worker fields the result records. An error
	// ends the run before any load.
	Rendezvous func(ctx context.Context) (time.Time, results.Worker, error)
	// SpinWaits makes every wait (holds, think times, open-loop pacing)
	// spin its last stretch to the deadline, as exact as the clock, at the
	// cost of up to a core taken from the host (and from Redis where it
	// shares it). By default waits sleep on a high-resolution timer, and
	// holds spin at most their last tens of microseconds, only while the
	// host has an idle core.
	SpinWaits bool
	// Topology is the topology the run is on (single, replica, sentinel
	// or cluster), as its environment knows it: the result's profile records
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

// DefaultKeysTTL is Config.KeysTTL's default: a day, for a collector or
// a curious user to come.
const DefaultKeysTTL = 24 * time.Hour

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

// run is one run under way: its environment, and the state of its load.
type run struct {
	*runEnv
	p     Profile
	cfg   Config
	total time.Duration // planned warmup + duration; 0 when ops-bounded only

	warmEnd  time.Time
	ctx      context.Context // cancelled when the load stops
	stopLoad context.CancelFunc
	relCtx   context.Context // for releases: outlives the load
	guard    guardTally
	waits    *waits
	issued   atomic.Int64
	stopped  atomic.Bool
	// completed: the planned end came (duration or operation count), so a
	// cancellation after it does not make the result partial.
	completed atomic.Bool
	gMax      atomic.Int64 // the most goroutines seen
	handleCap int          // the handles each owner caches (handleCap)
}

func (r *run) stop() {
	r.stopped.Store(true)
	r.stopLoad()
}

func (r *run) complete() {
	r.completed.Store(true)
	r.stop()
}

func (r *run) noteGoroutines(g int) {
	r.gMax.Store(max(r.gMax.Load(), int64(g)))
}

// Run drives the profile until its duration or operation count is
// reached, or ctx ends. Every worker releases what it holds before Run
// returns. When ctx ended first the result is marked partial and Run
// returns it together with ctx's error; a nil result comes only with a
// setup error (bad profile, no Redis).
func Run(ctx context.Context, cfg Config) (*results.Result, error) {
	cfg, implNote, err := checkConfig(cfg)
	if err != nil {
		return nil, err
	}
	if s, ok := cfg.Impl.(SelfDriven); ok && cfg.NewOwner == nil {
		return s.RunSelf(ctx, cfg)
	}
	g0 := runtime.NumGoroutine()
	env, err := newRunEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := newRun(ctx, cfg, env)
	l := r.drive(ctx)
	res := r.analyse(l)
	r.describe(res, implNote)
	r.finishBookkeeping(res, l.stall)
	r.closeClients(res, g0)
	l.markPartial(res, r.loadStart, r.total)
	if l.interrupted {
		return res, ctx.Err()
	}
	return res, nil
}

// checkConfig refuses a profile or configuration the run cannot serve and
// fills in the defaults. It returns the implementation's note on how it
// meets the profile.
func checkConfig(cfg Config) (Config, string, error) {
	p := cfg.Profile
	if err := p.Validate(); err != nil {
		return cfg, "", err
	}
	if cfg.Impl == nil {
		cfg.Impl = Lockimpl{}
	}
	implNote := ""
	if cfg.NewOwner == nil {
		var err error
		if implNote, err = cfg.Impl.Check(p); err != nil {
			return cfg, "", err
		}
	}
	if gm, _ := guard.ParseMode(p.Guard); gm != guard.Off && (cfg.Guard == nil || cfg.Guard.Mode() != gm) {
		return cfg, "", &FieldError{Field: "guard", Value: p.Guard, Fix: "the run has no guarded store in that mode; bench and chaos start one (or give --guard-url)"}
	}
	if s := cfg.Share; s != nil && (s.Profile.Clients != p.Clients || s.Profile.Owners != p.Owners || cfg.KeyPrefix == "") {
		return cfg, "", errors.New("workloads: Config.Share needs Profile = Share.Profile and the KeyPrefix every worker gives")
	}
	if cfg.ClientRedis == nil && cfg.NewRedis != nil {
		newRedis := cfg.NewRedis
		cfg.ClientRedis = func(_, poolSize int) redis.UniversalClient { return newRedis(poolSize) }
	}
	if cfg.ClientRedis == nil && cfg.NewOwner == nil {
		return cfg, "", ErrNoRedis
	}
	if cfg.PingEvery <= 0 {
		cfg.PingEvery = 10 * time.Millisecond
	}
	return cfg, implNote, nil
}

// newRun readies the load on env: its time marks and its contexts.
func newRun(ctx context.Context, cfg Config, env *runEnv) *run {
	p := cfg.Profile
	r := &run{runEnv: env, p: p, cfg: cfg, handleCap: handleCap(len(env.owners))}
	r.warmEnd = r.loadStart.Add(time.Duration(p.Warmup))
	r.waits = newWaits(r.nShards, cfg.SpinWaits)
	r.cpu.onHost = r.waits.hostSampled
	r.ctx, r.stopLoad = context.WithCancel(context.Background())
	r.relCtx = context.WithoutCancel(ctx)
	if p.Duration > 0 {
		r.total = time.Duration(p.Warmup + p.Duration)
	}
	return r
}

// loadEnd is how the load ended.
type loadEnd struct {
	end         time.Time
	stall       *results.Stall // nil when every worker finished in time
	interrupted bool           // ctx ended before the planned end
}

// drive runs the load: the workers and, beside them, the PING sampler, the
// ticker and the CPU meter. The load stops at the planned end, on ctx's
// end, or (ops-bounded) when the last operation is issued; drive returns
// once every worker finished or was cut at the stall bound.
func (r *run) drive(ctx context.Context) loadEnd {
	var interrupted atomic.Bool
	endTimer := (*time.Timer)(nil)
	if r.total > 0 {
		endTimer = time.AfterFunc(r.total, r.complete)
	}
	stopOnCtx := context.AfterFunc(ctx, func() {
		if !r.completed.Load() {
			interrupted.Store(true)
		}
		r.stop()
	})

	if r.cfg.Started != nil {
		r.cfg.Started(r.loadStart)
	}
	var wg sync.WaitGroup
	workers := make([]*worker, len(r.owners))
	for i, o := range r.owners {
		workers[i] = newWorker(r, i, o)
		wg.Go(workers[i].loop)
	}
	var aux sync.WaitGroup
	if r.pinger != nil {
		pingCtx, stopPing := context.WithCancel(r.relCtx)
		defer stopPing()
		r.clients.beforeClose = stopPing
		aux.Go(func() { r.ping(pingCtx, r.pinger, r.col.Shard(0)) })
	}
	aux.Go(r.tick)
	aux.Go(func() { r.cpu.run(r.ctx, r.warmEnd) })
	warmEnd := time.AfterFunc(time.Until(r.warmEnd), r.waits.warmEnded)
	defer warmEnd.Stop()

	stall := r.wait(&wg, workers, interrupted.Load)
	// The load ends with its last operation, not when the samplers beside
	// it have stopped: a PING still out on a slow server must not stretch
	// the measured time.
	end := time.Now()
	r.stop()
	// The PING sampler may itself be waiting on a stalled server.
	auxDone := make(chan struct{})
	go func() { aux.Wait(); close(auxDone) }()
	select {
	case <-auxDone:
	case <-time.After(time.Second):
		r.clients.closeRedis()
		<-auxDone
	}
	if endTimer != nil {
		endTimer.Stop()
	}
	stopOnCtx()
	r.cpu.sample(r.relCtx)
	return loadEnd{end: end, stall: stall, interrupted: interrupted.Load()}
}

// analyse takes the collector's analysis of every recorded operation.
func (r *run) analyse(l loadEnd) *results.Result {
	p, labels, col, end := r.p, r.labels, r.col, l.end
	g := runtime.NumGoroutine()
	r.noteGoroutines(g)
	a := results.Analysis{Labels: labels, MeasureFrom: int64(time.Duration(p.Warmup)), FIFO: p.Kind.Fair(), Timeline: r.cfg.Timeline}
	if end.Before(r.warmEnd) {
		a.MeasureFrom = col.Since(end)
	}
	return col.Finish(end, end.Before(r.warmEnd), g, a)
}

// describe says what ran: meta, the profile as run, what it asked that
// had no effect, CPU, the target rate and the error limit.
func (r *run) describe(res *results.Result, implNote string) {
	p, cfg := r.p, r.cfg
	res.Meta = cfg.Meta
	if cfg.Rendezvous != nil {
		// The load started when the others had come, not when the
		// caller described the run.
		res.Meta.Start = r.loadStart
	}
	res.Meta.Profile = p.Name
	whole := p
	if cfg.Share != nil {
		whole = cfg.Share.Whole
		res.Worker = r.worker
	}
	res.Meta.Workload = whole.Summary()
	if cfg.NewOwner == nil {
		res.Meta.Impl, res.Meta.ImplNote = cfg.Impl.Name(), implNote
	}
	ran := whole
	if cfg.Topology != "" {
		ran.Topology = cfg.Topology
	}
	if ran.Topology == "single" && r.replicas > 0 {
		// An external primary whose replicas the URL did not name.
		ran.Topology = "replica"
		if res.Meta.RedisTopology == "single" {
			res.Meta.RedisTopology = "replica"
		}
	}
	res.Profile = ran
	if cfg.NewOwner == nil && r.replicas >= 0 {
		if what, _ := ReplicaSyncGap(cfg.Impl, p, r.replicas); what != "" {
			res.NoEffect = append(res.NoEffect, "replica_sync: "+what)
		}
	}
	res.CPU = r.cpu.result(r.warmEnd, loadCores(cfg.Impl), sharedHost(cfg.Meta))
	res.Waits = r.waits.result(res.CPU, res.Measured)
	res.Throughput.TargetRate = p.Rate
	limit := errorLimit(cfg.MaxErrorRate)
	res.MaxErrorRate = &limit
}

// finishBookkeeping ends what the run kept in Redis beside its locks: a
// fair run's queue registration (left for a later run when the run
// stalled) and the guarded counter's tally.
func (r *run) finishBookkeeping(res *results.Result, stall *results.Stall) {
	// A worker of several leaves the shared queues to the lapse of their
	// registration: the others may still be waiting in them.
	if r.fair != nil && stall == nil && (r.cfg.Share == nil || r.cfg.Share.Workers == 1) {
		if err := r.fair.finish(r.relCtx); err != nil {
			r.logf("fair-lock queue bookkeeping: %v (a later run clears them)", err)
		}
	}
	if r.cfg.Guard != nil {
		g, err := r.guard.result(r.relCtx, r.cfg.Guard, r.cfg.GuardStore, r.col.Since(time.Now()))
		if err != nil {
			r.logf("guarded counter: %v", err)
		}
		// Within one process the clock checker judges exclusion; what the
		// store missed leaves the verdict incomplete.
		res.Guard, res.Safety.Unwitnessed = g, g.Missing()
		if err == nil {
			if err := r.cfg.Guard.Expire(r.relCtx, r.names, r.keysTTL()); err != nil {
				r.logf("guarded counter: %v (its keys stay)", err)
			}
		}
	}
	if stall == nil {
		r.expireTokens()
	}
}

func (r *run) keysTTL() time.Duration { return keysTTL(r.cfg) }

// keysTTL is cfg.KeysTTL with its default.
func keysTTL(cfg Config) time.Duration {
	if cfg.KeysTTL > 0 {
		return cfg.KeysTTL
	}
	return DefaultKeysTTL
}

// expireTokens gives the fenced lock's token counters of the run's names
// their time to live from the run's end: the lock never expires them (a
// name's tokens must not go back while it is in use), and the run is done
// with its names.
func (r *run) expireTokens() {
	r.tokenKeys(r.relCtx, r.cfg, func(p redis.Pipeliner, key string, ttl time.Duration) { p.PExpire(r.relCtx, key, ttl) },
		"they keep the time to live they were made with")
}

// primeTokens makes the fenced lock's token counters of the run's names
// before the load, each with the run's keys' time to live and counting
// from 0 as a missing one does: the lock's INCR keeps it, so that a run
// killed or stalled before its end leaves none without one. A counter some
// worker of the run made already is left as it is.
func (e *runEnv) primeTokens(ctx context.Context, cfg Config) {
	e.tokenKeys(ctx, cfg, func(p redis.Pipeliner, key string, ttl time.Duration) { p.SetNX(ctx, key, 0, ttl) },
		"they are made by the lock without a time to live")
}

// tokenKeys sends set for every fenced token counter of the run's names,
// in pipelines bounded by the stall bound, and logs what failed with what
// it means (then).
func (e *runEnv) tokenKeys(ctx context.Context, cfg Config, set func(p redis.Pipeliner, key string, ttl time.Duration), then string) {
	if lock, _ := cfg.Profile.Kind.Lock(results.Exclusive); !lock.Fenced() || e.servers == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultStallBound)
	defer cancel()
	const batch = 10_000
	ttl := keysTTL(cfg)
	for i := 0; i < len(e.names); i += batch {
		_, err := e.servers.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, n := range e.names[i:min(i+batch, len(e.names))] {
				set(p, lockimpl.TokenKey(n), ttl)
			}
			return nil
		})
		if err != nil {
			e.logf("fencing token counters: %v (%s)", err, then)
			return
		}
	}
}

// closeClients closes every client, counts what the lock clients still
// held and records the run's own footprint.
func (r *run) closeClients(res *results.Result, g0 int) {
	r.clients.closeAll()
	res.Throughput.Unreleased += int64(r.clients.heldAtClose)
	res.Runtime = results.Runtime{
		PeakRSSBytes:    peakRSS(),
		GoroutinesStart: g0,
		GoroutinesMax:   int(r.gMax.Load()),
		GoroutinesEnd:   runtime.NumGoroutine(),
		Shards:          r.nShards,
	}
}

// markPartial marks the result partial when the load was interrupted or
// stalled, saying why.
func (l loadEnd) markPartial(res *results.Result, start time.Time, total time.Duration) {
	var reasons []string
	if l.interrupted {
		why := fmt.Sprintf("interrupted after %.1fs", l.end.Sub(start).Seconds())
		if total > 0 {
			why += fmt.Sprintf(" of %.1fs", total.Seconds())
		}
		reasons = append(reasons, why)
	}
	if l.stall != nil {
		res.Stall = l.stall
		reasons = append(reasons, l.stall.Reason())
	}
	if len(reasons) > 0 {
		res.Partial = true
		res.PartialReason = strings.Join(reasons, "; ")
	}
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
