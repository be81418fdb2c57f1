package workloads

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/results"
)

// runEnv is what a run works in, built once before its load starts: the
// owners and the clients under them, the servers' own clients, the lock
// names, the collector and the meters. Everything it opens closes through
// clients.
type runEnv struct {
	owners  []Owner
	labels  results.Labels
	clients *runClients
	logf    func(format string, args ...any)

	// servers is the servers' own client, nil without Redis: it reads
	// their CPU and how many replicas the primaries have (replicas, -1
	// when unknown), which decides what replica_sync did.
	servers  redis.UniversalClient
	replicas int

	prefix string
	names  []string
	fair   *fairRegistry // a fair lock's queues, registered for later runs to clean

	loadStart time.Time       // the time base of every figure in the result
	worker    *results.Worker // a share's place in the whole, once met
	col       *results.Collector
	nShards   int
	pinger    redis.UniversalClient // nil without Redis
	cpu       *cpuMeter
}

// newRunEnv builds cfg's run environment, step by step. On an error what
// it opened is closed.
func newRunEnv(ctx context.Context, cfg Config) (*runEnv, error) {
	e := &runEnv{logf: cfg.Logf, replicas: -1}
	if e.logf == nil {
		e.logf = func(string, ...any) {}
	}
	var err error
	if e.owners, e.labels, e.clients, err = newOwners(ctx, cfg); err != nil {
		return nil, err
	}
	e.connectServers(ctx, cfg)
	e.nameLocks(cfg)
	e.primeTokens(ctx, cfg)
	e.registerFair(ctx, cfg)
	if err := beginGuard(ctx, cfg); err != nil {
		e.clients.closeAll()
		return nil, err
	}
	if err := e.meet(ctx, cfg); err != nil {
		e.clients.closeAll()
		return nil, err
	}
	if err := e.collect(cfg); err != nil {
		e.clients.closeAll()
		return nil, err
	}
	e.meters(cfg)
	return e, nil
}

// serverClient is a client of the run's own, outside the profile's
// clients (-1 to ClientRedis), closed with the rest.
func (e *runEnv) serverClient(cfg Config, poolSize int) redis.UniversalClient {
	rdb := cfg.ClientRedis(-1, poolSize)
	e.clients.rdbs = append(e.clients.rdbs, rdb)
	return rdb
}

// connectServers opens the servers' own client and first asks how many
// replicas the primaries have.
func (e *runEnv) connectServers(ctx context.Context, cfg Config) {
	if cfg.ClientRedis != nil {
		e.servers = e.serverClient(cfg, 1)
		e.replicas = primaryReplicas(ctx, e.servers)
	}
}

// nameLocks names the run's locks under its key prefix, spread evenly
// over the cluster's shards when it knows them.
func (e *runEnv) nameLocks(cfg Config) {
	p := cfg.Profile
	e.prefix = cfg.KeyPrefix
	if e.prefix == "" {
		e.prefix = fmt.Sprintf("lockbench:%s:%s:", p.Name, NewRunID())
	}
	if cfg.Share != nil {
		p = cfg.Share.Whole // every worker names every lock alike
	}
	e.names = make([]string, p.LockCount())
	for i := range e.names {
		e.names[i] = fmt.Sprintf("%s%d", e.prefix, i)
	}
	if len(cfg.ShardNames) > 1 && cfg.ShardOf != nil {
		spreadNames(e.names, len(cfg.ShardNames), cfg.ShardOf)
	}
	e.labels.Locks = e.names
}

// registerFair registers a fair run's lock names, after clearing the
// queues of earlier runs that were killed; its failures are only told.
func (e *runEnv) registerFair(ctx context.Context, cfg Config) {
	p := cfg.Profile
	if p.Kind.Fair() && cfg.NewOwner == nil && cfg.ClientRedis != nil {
		rdb := e.serverClient(cfg, 2)
		reg, cleaned, err := startFairRegistry(ctx, rdb, e.prefix, e.names, time.Now())
		if cleaned > 0 {
			e.logf("cleared the fair-lock queues of %d earlier runs that were killed", cleaned)
		}
		if err != nil {
			e.logf("fair-lock queue bookkeeping: %v", err)
		}
		e.fair = reg
	}
}

// beginGuard marks the guarded store for the run, so that a store that
// loses the run's keys is told from one that kept them (guard.Begin): a
// run whose store cannot be marked has no witness, and does not start.
// An interrupt does not stop it: an interrupted run still reports what
// it ran, with the store's tallies.
func beginGuard(ctx context.Context, cfg Config) error {
	if cfg.Guard == nil {
		return nil
	}
	if err := cfg.Guard.Begin(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("guarded store: %w", err)
	}
	return nil
}

// meet waits, with a rendezvous, for the instant the load starts; the
// clients are ready by then, so the workers' loads start together, not
// their setups.
func (e *runEnv) meet(ctx context.Context, cfg Config) error {
	if cfg.Rendezvous == nil {
		return nil
	}
	start, w, err := cfg.Rendezvous(ctx)
	if err != nil {
		return err
	}
	t := time.NewTimer(time.Until(start))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	// Started later than agreed by as much as the timer was late.
	w.RedisStart = w.RedisStart.Add(time.Since(start))
	if s := cfg.Share; s != nil {
		w.Index, w.Workers, w.FirstOwner, w.Owners = s.Index, s.Workers, s.FirstOwner, s.Profile.TotalOwners()
	}
	e.worker = &w
	return nil
}

// collect sets the time base and makes the collector, its locks grouped
// by shard when the cluster's shards are known.
func (e *runEnv) collect(cfg Config) error {
	e.nShards = min(len(e.owners), 4*runtime.GOMAXPROCS(0))
	e.loadStart = time.Now()
	e.col = results.NewCollector(e.loadStart, e.nShards, cfg.MaxOps)
	if len(cfg.ShardNames) > 0 && cfg.ShardOf != nil {
		groupOf := make([]int32, len(e.names))
		for i, n := range e.names {
			g := cfg.ShardOf(n)
			if g < 0 || g >= len(cfg.ShardNames) {
				return fmt.Errorf("workloads: ShardOf(%q) = %d, want 0..%d", n, g, len(cfg.ShardNames)-1)
			}
			groupOf[i] = int32(g)
		}
		e.col.GroupLocks(groupOf, cfg.ShardNames)
	}
	return nil
}

// meters makes what samples the run beside its load: the PING sampler's
// own connection and the CPU meter of both sides.
func (e *runEnv) meters(cfg Config) {
	if cfg.ClientRedis != nil {
		e.pinger = e.serverClient(cfg, 1) // closed with the rest, or at a stall
	}
	e.cpu = newCPUMeter(e.servers, cfg.Impl, e.loadStart)
}

// runClients are a run's Redis clients and the lock clients on them.
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

// newOwners makes the profile's clients and their owners.
func newOwners(ctx context.Context, cfg Config) ([]Owner, results.Labels, *runClients, error) {
	p := cfg.Profile
	var owners []Owner
	var labels results.Labels
	cl := &runClients{}
	for c := range p.Clients {
		var ic ImplClient
		if cfg.NewOwner == nil {
			rdb := cfg.ClientRedis(c, clientPool(p.Owners))
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

// maxClientPool caps a lock client's connections. A client stands for a
// process, whose pool (Redisson's 64, go-redis's 10 per CPU) does not
// grow with its threads: without the cap, a client of 10,000 owners whose
// calls back up opens 10,000 connections, past Redis's default maxclients,
// with their buffers; with it, calls beyond the pool wait in the client
// for a connection, as an application's do.
const maxClientPool = 256

// clientPool is the pool size of a lock client with owners owners: one
// connection each and a few for the client's own calls, up to
// maxClientPool.
func clientPool(owners int) int { return min(max(owners+4, 10), maxClientPool) }

// NewRunID is a fresh random id (8 hex digits): key prefixes made with it
// keep one run's locks apart from every other run's.
func NewRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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
