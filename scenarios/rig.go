package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// rig is one variant's world: its Redis, its proxies and clients, its
// fault schedule, and the report it adds checks and figures to.
type rig struct {
	ctx  context.Context
	s    *Scenario
	v    Variant
	name string // scenario.variant
	t    Timing
	o    Options
	rep  *results.ChaosReport
	// kept holds each of rep.Runs' results, index for index, for
	// comparisons between variants.
	kept *[]*results.Result
	plan []Planned

	env     *redisenv.Env
	n       int             // clients
	proxies []*faults.Proxy // one per client; none on a cluster or with Sentinel
	// sentinel is the variant's Sentinel failover, for its timings.
	sentinel *faults.SentinelFault
	clocks   []*faults.Clock
	gates    []*faults.Gate
	clients  []*client
	sched    *faults.Schedule
	ready    chan struct{}         // closed when the plan's first fault is in
	raw      redis.UniversalClient // straight to the primary, for inspection
	closers  []func()
	jvm      *redisson.Driver // Redisson's process, for variants with Redisson holders
	// redlock is the five independent primaries of Redlock variants and
	// every client's links to them (startRedlock); nil otherwise.
	redlock *redlockSet
	// mit and store are set by the mitigation matrix: what the cell turns
	// on, and the guarded counter critical sections update.
	mit     *Mitigation
	store   *guard.Store
	storeAt string // where the store's Redis is, for results
	gt      guardTally
	prefix  string
	base    time.Time // the current run's time base
}

// client is one lockimpl client (a process, in Redisson's terms) whose
// connections all go through its own proxy.
type client struct {
	idx   int
	rdb   redis.UniversalClient
	lc    *lockimpl.Client
	proxy *faults.Proxy
	clock *faults.Clock
	gate  *faults.Gate
}

func (r *rig) logf(format string, args ...any) {
	if r.o.Logf != nil {
		r.o.Logf(format, args...)
	}
}

// start brings up the variant's Redis (mod adjusts the user's config:
// persistence, topology) and n proxies in front of its primary.
func (r *rig) start(n int, mod func(*redisenv.Config)) error {
	cfg := r.o.Redis
	if r.s.Topology != "" {
		cfg.Topology = r.s.Topology
	}
	if mod != nil {
		mod(&cfg)
	}
	if r.mit != nil && r.mit.MinReplicas {
		cfg.ServerArgs = append(slices.Clone(cfg.ServerArgs), minReplicasArgs...)
	}
	env, err := redisenv.Start(r.ctx, cfg)
	if err != nil {
		return fmt.Errorf("start Redis: %w", err)
	}
	r.env = env
	r.closers = append(r.closers, func() { _ = env.Close() })
	if r.s.Process && env.Backend() == redisenv.BackendExternal {
		return &skipError{why: "needs process faults on a Redis lockbench starts; this one is external"}
	}
	if r.rep.Redis == "" {
		r.rep.Redis = env.String()
	}
	r.raw = env.NewClient()
	r.closers = append(r.closers, func() { _ = r.raw.Close() })
	r.prefix = fmt.Sprintf("lockbench:chaos:%s:%d:", r.name, time.Now().UnixNano())
	r.n = n
	for i := range n {
		r.clocks = append(r.clocks, new(faults.Clock))
		r.gates = append(r.gates, faults.NewGate())
		if env.Topology() == redisenv.TopologyCluster || env.Topology() == redisenv.TopologySentinel {
			// A cluster client dials every node the slot map names, and a
			// Sentinel-aware one whichever node the Sentinels name, so one
			// proxy in front of a node would not carry their traffic: these
			// scenarios fault the servers, not the client links.
			continue
		}
		p, err := r.o.Toxiproxy.NewProxy(fmt.Sprintf("%s-c%d-%d", r.name, i, time.Now().UnixNano()), env.Addr())
		if err != nil {
			return err
		}
		r.proxies = append(r.proxies, p)
	}
	return nil
}

// minReplicasArgs make a primary refuse writes unless a replica
// acknowledged within the lag: replicas acknowledge every second, so a
// lag of a few seconds refuses nothing on a healthy pair, and a replica
// that is gone (its link closed) counts at once.
var minReplicasArgs = []string{"min-replicas-to-write 1", "min-replicas-max-lag 3"}

// redisFor is client i's connection pool, through its proxy (i < 0: the
// PING sampler, straight to Redis: the floor is Redis's, not the fault's).
func (r *rig) redisFor(i, pool int) redis.UniversalClient {
	o := r.env.ClientOptions(pool)
	if i >= 0 && i < len(r.proxies) {
		o.Addrs = []string{r.proxies[i].Addr()}
	}
	return redisenv.NewUniversalClient(clientTimeouts(o))
}

// clientTimeouts sets the timeouts of every scenario client's pool.
func clientTimeouts(o *redis.UniversalOptions) *redis.UniversalOptions {
	// A request lost in a partition fails after a second instead of
	// go-redis's default 3 s, so that clients notice and retry within a
	// quick scenario's watchdog period. Retries stay at go-redis's default,
	// as users run it: lockimpl sends acquisitions through a no-retry twin
	// (a re-sent acquire would count twice) and retries unlocks safely
	// (each carries its latch).
	o.ReadTimeout, o.WriteTimeout, o.DialTimeout = time.Second, time.Second, time.Second
	// A dial to a dead server is tried twice, not go-redis's five times:
	// where a killed container's port swallows the dial instead of
	// refusing it, five one-second tries would outlast a quick scenario.
	o.DialerRetries = 2
	return o
}

// lockOptions are client i's lockimpl options: the timing's watchdog and
// the client's own (skewable) clock.
func (r *rig) lockOptions(i int) lockimpl.Options {
	o := lockimpl.Options{WatchdogTimeout: r.t.Watchdog, Clock: r.clocks[i].Now}
	if r.mit != nil {
		o.SkipReplicaSync = !r.mit.Sync && !r.mit.MinAcks
		if r.mit.MinAcks {
			o.MinReplicaAcks = 1
		}
	}
	return o
}

// lockOf is owner o's lock on name: fenced when the cell fences.
func (r *rig) lockOf(o *lockimpl.Owner, name string) *lockimpl.Lock {
	if r.mit != nil && r.mit.Fencing {
		return o.FencedLock(name)
	}
	return o.Lock(name)
}

// newClients makes one lockimpl client per proxy.
func (r *rig) newClients() error {
	for i := range r.n {
		rdb := r.redisFor(i, 16)
		lc, err := lockimpl.NewClient(r.ctx, rdb, r.lockOptions(i))
		if err != nil {
			_ = rdb.Close()
			return err
		}
		c := &client{idx: i, rdb: rdb, lc: lc, clock: r.clocks[i], gate: r.gates[i]}
		if i < len(r.proxies) {
			c.proxy = r.proxies[i]
		}
		r.clients = append(r.clients, c)
		r.closers = append(r.closers, func() { _ = lc.Close(); _ = rdb.Close() })
	}
	return nil
}

// redissonClient is the Redisson client of variants with Redisson
// holders: a RedissonClient in its own JVM.
const redissonClient = "c0"

// startRedisson starts the JVM of Redisson's holders, one RedissonClient
// in the mode the rig's Redis calls for (redissonServers) with the
// timing's watchdog, and checkLockSyncedSlaves off when the cell says so.
// Without Java or the driver's jar, or where Redisson cannot reach the
// servers, the variant is skipped, and the scenario's other variants
// still run.
func (r *rig) startRedisson() error {
	if _, err := redisson.FindJar(); err != nil {
		return &skipError{why: err.Error(), variant: true}
	}
	servers, err := r.redissonServers()
	if err != nil {
		return err
	}
	cfg, err := impls.RedissonConfig(r.env.Options().Simple())
	if err != nil {
		return err
	}
	cfg.Watchdog = r.t.Watchdog
	cfg.SkipReplicaSync = r.mit != nil && r.mit.RedissonNoSync
	d, err := redisson.Start(r.ctx, cfg)
	if err != nil {
		return err
	}
	r.jvm = d
	r.closers = append(r.closers, func() { _ = d.Close() })
	if r.rep.Redisson == "" {
		r.rep.Redisson = d.Version()
	}
	if err := d.ConnectTo(r.ctx, redissonClient, servers); err != nil {
		return err
	}
	// A cold JVM's first lock runs interpreted and loads the script: on a
	// loaded host it can take past faultStart, into the fault meant for a
	// holder that already holds.
	return d.Warm(r.ctx, redissonClient+"/warmup", r.prefix+"redisson-warmup", 200)
}

// redissonServers are where Redisson's holders connect: as
// RedissonServers says, the primary through client 0's proxy so that
// client 0's faults hit it.
func (r *rig) redissonServers() (redisson.Servers, error) {
	primary := ""
	if o := r.env.Options(); o.MasterName == "" && r.env.Topology() != redisenv.TopologyCluster {
		if len(r.proxies) == 0 {
			return redisson.Servers{}, fmt.Errorf("redisson holders need client 0's proxy; start the rig first")
		}
		primary = r.proxies[0].Addr()
	}
	s, err := RedissonServers(r.env, primary)
	if errors.Is(err, ErrRedissonUnreachable) {
		return s, &skipError{why: err.Error(), variant: true}
	}
	return s, err
}

// ErrRedissonUnreachable is RedissonServers' answer for a deployment
// Redisson cannot dial from this host.
var ErrRedissonUnreachable = errors.New("redisson: its cluster mode dials the addresses the nodes announce, inside the containers' network, which only lockbench's own dialer maps to this host; run the cluster on the local backend (--redis local)")

// RedissonServers are where a RedissonClient finds env's Redis, set up as
// an application on Redisson would be for it: the Sentinels in sentinel
// mode, the nodes in cluster mode, and otherwise the primary, in
// master-slave mode with its replica where there is one (so that Redisson
// has a replica to wait for). primary, when set, is the address to reach
// the primary by (a proxy in front of it).
func RedissonServers(env *redisenv.Env, primary string) (redisson.Servers, error) {
	switch o := env.Options(); {
	case o.MasterName != "": // the Sentinels, started here or named by a URL
		return redisson.Servers{Sentinels: o.Addrs, Master: o.MasterName}, nil
	case env.Topology() == redisenv.TopologyCluster || o.IsClusterMode:
		if o.Dialer != nil {
			return redisson.Servers{}, ErrRedissonUnreachable
		}
		return redisson.Servers{Cluster: o.Addrs}, nil
	}
	s := redisson.Servers{Addr: cmp.Or(primary, env.Addr())}
	if rep := env.Replica(); rep != nil {
		s.Replicas = []string{rep.Addr()}
	}
	return s, nil
}

// jvmPID is the Redisson JVM's process id (0 before it starts).
func (r *rig) jvmPID() int {
	if r.jvm == nil {
		return 0
	}
	return r.jvm.PID()
}

// firstFault is when the plan's earliest fault meant for holders that
// already hold starts, if it has one: a fault planned at the start (a
// replication cut) is the world they acquire in.
func (r *rig) firstFault() (time.Duration, bool) {
	first, ok := time.Duration(0), false
	for _, p := range r.plan {
		if p.At > 0 && (!ok || p.At < first) {
			first, ok = p.At, true
		}
	}
	return first, ok
}

// startFaults starts the plan's schedule against base.
func (r *rig) startFaults(base time.Time) {
	r.base = base
	steps := make([]faults.Step, len(r.plan))
	for i, p := range r.plan {
		steps[i] = faults.Step{At: p.At, For: p.For, Fault: p.build(r)}
	}
	r.sched = faults.Start(r.ctx, base, steps, func(f string, a ...any) { r.logf("%s: "+f, append([]any{r.name}, a...)...) })
}

// stopFaults reverts whatever is still injected and returns the timeline.
// A fault that failed to inject or revert, or a planned one that never ran
// (other than by an interrupt), fails the variant: a scenario must not
// pass having injected nothing.
func (r *rig) stopFaults() []results.Event {
	if r.sched == nil {
		return nil
	}
	r.sched.Stop()
	events := r.sched.Events()
	var bad []string
	for _, e := range events {
		if e.Err != "" {
			bad = append(bad, fmt.Sprintf("%s %s: %s", e.Kind, e.Target, e.Err))
		}
	}
	if len(r.plan) > 0 && r.ctx.Err() == nil {
		r.check("every planned fault injected and reverted", fmt.Sprintf("%d clean", len(r.plan)),
			fmt.Sprintf("%d of %d ran; problems: %v", len(events), len(r.plan), bad), len(bad) == 0 && len(events) == len(r.plan))
	}
	return events
}

// close undoes everything, last made first.
func (r *rig) close() {
	if r.sched != nil {
		r.sched.Stop()
	}
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	// Each variant's proxies go with it; the Toxiproxy (one per suite)
	// stays for the next.
	for _, p := range r.proxies {
		if err := r.o.Toxiproxy.Remove(p); err != nil {
			r.logf("%s: %v", r.name, err)
		}
	}
	r.proxies = nil
}

// check records an expectation.
func (r *rig) check(name, want, got string, ok bool) {
	r.rep.Checks = append(r.rep.Checks, results.Check{Name: r.v.Name + ": " + name, Want: want, Got: got, OK: ok})
	mark := "ok"
	if !ok {
		mark = "MISMATCH"
	}
	r.logf("%s: check %s: want %s, got %s [%s]", r.name, name, want, got, mark)
}

// figure records a measured number.
func (r *rig) figure(name string, v float64, unit string) {
	r.rep.Figures = append(r.rep.Figures, results.Figure{Name: r.v.Name + ": " + name, Value: v, Unit: unit})
}

// addResult files a variant's result: events attached, written to Out.
func (r *rig) addResult(res *results.Result, events []results.Event) error {
	res.Events = events
	if res.Meta.Start.IsZero() {
		res.Meta.Start = r.base
	}
	if res.Meta.Host == "" {
		res.Meta.Host, _ = os.Hostname()
		res.Meta.Go, res.Meta.GOMAXPROCS = runtime.Version(), runtime.GOMAXPROCS(0)
	}
	res.Meta.Profile = "chaos-" + r.name
	res.Meta.Server, res.Meta.RedisVersion = r.env.Server(), r.env.Version()
	res.Meta.RedisBackend = string(r.env.Backend())
	res.Meta.RedisTopology = r.env.Shape()
	res.Meta.RedisAddr = r.env.Addr()
	if r.redlock != nil {
		res.Meta.RedisTopology, res.Meta.RedisAddr = r.redlock.shape(), r.redlock.addrs()
	}
	if r.store != nil && res.Guard == nil {
		res.Guard = r.guardResult()
	}
	if g := res.Guard; g != nil {
		r.figure("lost updates", float64(g.Lost), "")
		r.figure("stale reads and writes refused", float64(g.RejectedReads+g.RejectedWrites), "")
	}
	sum := results.RunSummary{
		Variant: r.v.Name, Partial: res.Partial, Seconds: res.Measured, OpsPerSec: res.Throughput.OpsPerSec,
		Attempts: res.Throughput.Attempts, SuccessRatio: res.Throughput.SuccessRatio,
		Lost: res.Throughput.Lost, Safety: res.Safety, Events: events, Errors: res.ErrorCount(), Guard: res.Guard,
	}
	if r.o.Out != "" {
		path, err := results.WriteFiles(r.o.Out, res)
		if err != nil {
			return err
		}
		sum.File = path
	}
	r.rep.Runs = append(r.rep.Runs, sum)
	*r.kept = append(*r.kept, res)
	return nil
}

// safetyFigures records the safety numbers every variant reports.
func (r *rig) safetyFigures(res *results.Result) {
	r.figure("violations", float64(res.Safety.Violations), "")
	r.figure("unsafe window", res.Safety.UnsafeUs/1e3, "ms")
	r.figure("max overlap", res.Safety.MaxOverlapUs/1e3, "ms")
	r.figure("lost acquisitions", float64(res.Throughput.Lost), "")
}

// workload runs profile p through the variant's proxies with the plan's
// faults scheduled against the run's own clock.
func (r *rig) workload(p workloads.Profile, ignoreLost bool) (*results.Result, error) {
	return r.workloadOn(p, ignoreLost, workloads.Lockimpl{OptionsFor: r.lockOptions})
}

// workloadOn is workload on impl.
func (r *rig) workloadOn(p workloads.Profile, ignoreLost bool, impl workloads.Impl) (*results.Result, error) {
	p.Name = "chaos-" + r.name
	if r.mit != nil {
		// The cell's clients wait for replicas only under the wait and
		// min-acks mitigations (lockOptions), and Redisson's as its
		// checkLockSyncedSlaves says: the profile as run says so.
		p.ReplicaSync = r.mit.Sync || r.mit.MinAcks || r.mit.Redisson && !r.mit.RedissonNoSync
	}
	var store *guard.Store
	if r.store != nil {
		store = r.store
		p.Guard = string(store.Mode())
		if store.Mode() == guard.Fenced {
			p.Kind = workloads.KindOf(kind.Fenced)
		}
	}
	cfg := workloads.Config{
		Guard:       store,
		GuardStore:  r.storeName(),
		Profile:     p,
		ClientRedis: r.redisFor,
		Impl:        impl,
		IgnoreLost:  ignoreLost,
		Timeline:    true,
		KeyPrefix:   r.prefix,
		Started:     r.startFaults,
	}
	mark := redisenv.ClientLogMark()
	res, err := workloads.Run(r.ctx, cfg)
	events := r.stopFaults()
	if res == nil {
		return nil, err
	}
	res.ClientLog, res.ClientLogDropped = redisenv.ClientLogSince(mark)
	if during, outside, ok := faultRates(res.Series, events); ok {
		r.figure("ops/s during faults", during, "ops/s")
		r.figure("ops/s outside faults", outside, "ops/s")
	}
	if r.ctx.Err() == nil {
		r.healthChecks(res, events)
	}
	if aerr := r.addResult(res, events); aerr != nil {
		return res, aerr
	}
	return res, err
}

// profile is a built-in profile with fields set (values as in YAML).
func profile(builtin string, set ...string) workloads.Profile {
	p, err := workloads.Builtin(builtin)
	if err != nil {
		panic(err)
	}
	for i := 0; i+1 < len(set); i += 2 {
		if err := p.Set(set[i], set[i+1]); err != nil {
			panic(fmt.Sprintf("scenario profile %s: %v", builtin, err))
		}
	}
	return p
}
