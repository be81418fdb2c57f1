package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
)

// redlockNodes is how many independent primaries a Redlock variant runs
// on; redsync's quorum is a majority of them.
const redlockNodes = 5

// redlockQuorum is the majority a Redlock acquisition or extension needs.
const redlockQuorum = redlockNodes/2 + 1

// redlockSet is a Redlock variant's servers, and every client's links
// to them: one proxy per client and node, so that a client's fault (a
// partition, a freeze) hits its links to all five, and a cut can take
// some of them only.
type redlockSet struct {
	nodes []*redisenv.Env
	links [][]*faults.Proxy // [client][node]
	pools [][]redis.UniversalClient
	rs    []*redsync.Redsync // per client, on its pools
	// expiry is the mutexes' watchdog lease: the timing's watchdog,
	// extended every third of it, as Redisson's watchdog renews.
	expiry time.Duration
	// cutIn closes once a plan's cut of the holder's links is in, for
	// holders that must acquire after it (duel.after).
	cutIn chan struct{}
	// extended[c] closes at client c's first extension.
	extended []chan struct{}
	extOnce  []sync.Once

	mu  sync.Mutex
	log []redlockEvent
}

// redlockEvent is one thing a client's mutex did.
type redlockEvent struct {
	client int
	kind   string
	at     time.Time
}

// The kinds of redlockEvent.
const (
	rlAcquired     = "acquired"
	rlExtended     = "extended"
	rlExtendFailed = "extension failed"
	rlExpired      = "validity ended"
	rlUnlocked     = "unlocked"
	rlUnlockGone   = "unlock found it gone"
	// A node's fault (client -1): when it began and its injection ended.
	rlNodeFault     = "node fault"
	rlNodeFaultDone = "node fault done"
)

func (s *redlockSet) note(c int, kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, redlockEvent{c, kind, time.Now()})
}

// times are when client c's mutexes did kind.
func (s *redlockSet) times(c int, kind string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ts []time.Time
	for _, e := range s.log {
		if e.client == c && e.kind == kind {
			ts = append(ts, e.at)
		}
	}
	return ts
}

// shape and addrs describe the five nodes for results.
func (s *redlockSet) shape() string {
	return fmt.Sprintf("redlock: %d independent primaries, quorum %d", len(s.nodes), redlockQuorum)
}

func (s *redlockSet) addrs() string {
	var a []string
	for _, n := range s.nodes {
		a = append(a, n.Addr())
	}
	return strings.Join(a, ",")
}

// linksTo are every client's links to node j.
func (s *redlockSet) linksTo(j int) []*faults.Proxy {
	var links []*faults.Proxy
	for _, l := range s.links {
		links = append(links, l[j])
	}
	return links
}

// clientPools are client c's connections, one per node (impls.Redsync's
// Nodes).
func (s *redlockSet) clientPools(c int) []redis.UniversalClient { return s.pools[c] }

// startRedlock starts five single primaries on the user's backend, with
// no persistence (mod adjusts their config further), and n clients with a
// proxied link to each; r.env is the first node, for what the rig
// reports of its Redis.
func (r *rig) startRedlock(n int, mod func(*redisenv.Config)) error {
	if by := ExternalRedis(r.o.Redis); by != "" {
		return &skipError{why: "Redlock needs five servers lockbench starts; this Redis is external (" + by + ")"}
	}
	cfg := r.o.Redis
	cfg.Topology = redisenv.TopologySingle
	cfg.AppendOnly = false
	if mod != nil {
		mod(&cfg)
	}
	envs, errs := make([]*redisenv.Env, redlockNodes), make([]error, redlockNodes)
	var wg sync.WaitGroup
	for j := range envs {
		wg.Go(func() { envs[j], errs[j] = redisenv.Start(r.ctx, cfg) })
	}
	wg.Wait()
	for _, e := range envs {
		if e != nil {
			r.closers = append(r.closers, func() { _ = e.Close() })
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("start Redlock's nodes: %w", err)
	}
	s := &redlockSet{nodes: envs, expiry: r.t.Watchdog, cutIn: make(chan struct{})}
	r.redlock, r.env = s, envs[0]
	if r.rep.Redis == "" {
		r.rep.Redis = fmt.Sprintf("%d independent primaries (Redlock, quorum %d), the first %s", redlockNodes, redlockQuorum, envs[0])
	}
	r.prefix = fmt.Sprintf("lockbench:chaos:%s:%d:", r.name, time.Now().UnixNano())
	r.n = n
	for i := range n {
		r.clocks = append(r.clocks, new(faults.Clock))
		r.gates = append(r.gates, faults.NewGate())
		var links []*faults.Proxy
		var pools []redis.UniversalClient
		var rpools []redsyncredis.Pool
		for j, e := range envs {
			p, err := r.o.Toxiproxy.NewProxy(fmt.Sprintf("%s-c%d-n%d-%d", r.name, i, j, time.Now().UnixNano()), e.Addr())
			if err != nil {
				return err
			}
			r.closers = append(r.closers, func() {
				if err := r.o.Toxiproxy.Remove(p); err != nil {
					r.logf("%s: %v", r.name, err)
				}
			})
			o := e.ClientOptions(8)
			o.Addrs = []string{p.Addr()}
			rdb := redisenv.NewUniversalClient(clientTimeouts(o))
			r.closers = append(r.closers, func() { _ = rdb.Close() })
			links, pools, rpools = append(links, p), append(pools, rdb), append(rpools, goredis.NewPool(rdb))
		}
		s.links, s.pools, s.rs = append(s.links, links), append(s.pools, pools), append(s.rs, redsync.New(rpools...))
		s.extended = append(s.extended, make(chan struct{}))
	}
	s.extOnce = make([]sync.Once, n)
	return nil
}

// lock is a holder's acquisition of name on client c: tried for up to an
// expiry, since a holder that finds no quorum in that long meets a broken
// rig, not contention. lease 0 is a watchdog lease.
func (s *redlockSet) lock(ctx context.Context, c int, name string, lease time.Duration) (heldLock, error) {
	h, err := s.tryLock(ctx, c, name, lease, s.expiry)
	if h == nil && errors.Is(err, lockimpl.ErrNotAcquired) {
		return nil, fmt.Errorf("no quorum of %d nodes within %v: %v", redlockQuorum, s.expiry, err)
	}
	return h, err
}

// tryLock tries name on client c with redsync's TryLock until it gets a
// quorum or wait has passed (0: one try), sleeping redsync's own 50-250
// ms between tries. Not acquired is lockimpl.ErrNotAcquired, with why.
func (s *redlockSet) tryLock(ctx context.Context, c int, name string, lease, wait time.Duration) (heldLock, error) {
	m := s.rs[c].NewMutex(name, redsync.WithExpiry(cmp.Or(lease, s.expiry)), redsync.WithTries(1))
	end := time.Now().Add(wait)
	for {
		err := m.TryLockContext(ctx)
		if err == nil {
			s.note(c, rlAcquired)
			return s.held(ctx, c, m, lease == 0), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		left := time.Until(end)
		if left <= 0 {
			return nil, fmt.Errorf("%w: %v", lockimpl.ErrNotAcquired, err)
		}
		t := time.NewTimer(min(time.Duration(50+rand.IntN(200))*time.Millisecond, left))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// redlockHold is a held Redlock mutex as the Redlock algorithm tells a
// client to treat it: valid until the Until redsync computed (expiry less
// the acquisition's time and the drift allowance), extended every third of
// the expiry on a watchdog lease, and lost (Lost closes) as soon as an
// extension fails to reach a quorum or the validity runs out.
type redlockHold struct {
	s          *redlockSet
	c          int
	m          *redsync.Mutex
	lost, stop chan struct{}
	done       chan struct{}
}

func (s *redlockSet) held(ctx context.Context, c int, m *redsync.Mutex, watchdog bool) *redlockHold {
	h := &redlockHold{s: s, c: c, m: m, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go h.watch(ctx, watchdog)
	return h
}

func (h *redlockHold) Token() int64          { return 0 }
func (h *redlockHold) Lost() <-chan struct{} { return h.lost }

// watch is the hold's watchdog: it alone touches the mutex until Unlock.
// An extension runs beside the validity timer, so that one slower than
// the validity left (a partition's read timeout) cannot keep the loss
// from being signalled in time.
func (h *redlockHold) watch(ctx context.Context, watchdog bool) {
	defer close(h.done)
	valid := time.NewTimer(time.Until(h.m.Until()))
	defer valid.Stop()
	var tick <-chan time.Time
	if watchdog {
		t := time.NewTicker(h.s.expiry / 3)
		defer t.Stop()
		tick = t.C
	}
	lose := func(kind string) {
		h.s.note(h.c, kind)
		close(h.lost)
	}
	for {
		select {
		case <-h.stop:
			return
		case <-ctx.Done():
			return
		case <-valid.C:
			lose(rlExpired)
			return
		case <-tick:
		}
		res := make(chan bool, 1)
		go func() {
			ok, _ := h.m.ExtendContext(ctx)
			res <- ok
		}()
		select {
		case ok := <-res:
			if !ok {
				lose(rlExtendFailed)
				return
			}
			h.s.note(h.c, rlExtended)
			h.s.extOnce[h.c].Do(func() { close(h.s.extended[h.c]) })
			valid.Reset(time.Until(h.m.Until()))
		case <-valid.C:
			lose(rlExpired)
			<-res
			return
		case <-h.stop:
			<-res
			return
		}
	}
}

// Unlock stops the watchdog and releases the mutex on every node; fewer
// than a quorum released is lockimpl.ErrNotHeld (with redsync's reasons).
func (h *redlockHold) Unlock(ctx context.Context) error {
	close(h.stop)
	<-h.done
	ok, err := h.m.UnlockContext(ctx)
	if ok {
		h.s.note(h.c, rlUnlocked)
		return nil
	}
	h.s.note(h.c, rlUnlockGone)
	return fmt.Errorf("%w: released on fewer than %d of %d nodes: %v", lockimpl.ErrNotHeld, redlockQuorum, redlockNodes, err)
}

// afterExtension holds a node fault's injection until client c's first
// extension has been answered (at most within), so that it lands just
// after one however long the extension took; it notes when it ran.
type afterExtension struct {
	faults.Fault
	s      *redlockSet
	c      int
	within time.Duration
}

func (a *afterExtension) Inject(ctx context.Context) (func(context.Context) error, error) {
	t := time.NewTimer(a.within)
	defer t.Stop()
	select {
	case <-a.s.extended[a.c]:
	case <-t.C:
	case <-ctx.Done():
	}
	a.s.note(-1, rlNodeFault)
	defer a.s.note(-1, rlNodeFaultDone)
	return a.Fault.Inject(ctx)
}

// The client-side rows' Redlock variants: the same duels and workload as
// their lockimpl cells, the holder's fault on its links to all five nodes.

// redlockPartitionHolder is partitionHolder on the holder's five links.
func redlockPartitionHolder(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: faultStart, For: 2 * t.Watchdog, Kind: "blackhole", Target: "client:0", Detail: "drop all data both, on its links to all five nodes",
		build: func(r *rig) faults.Fault { return faults.Blackhole("client:0", r.redlock.links[0], faults.Both) }}}
}

// redlockFreezePlan is freezePlan on the holder's five links.
func redlockFreezePlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: faultStart, For: t.Watchdog * 3 / 2, Kind: "freeze", Target: "client:0", Detail: "application paused, all traffic to the five nodes dropped",
		build: func(r *rig) faults.Fault { return faults.Freeze("client:0", r.gates[0], r.redlock.links[0]) }}}
}

// watchdogLossRedlock is watchdog-loss with Redlock holders: the
// partition fails the holder's next extension, and it stops there, while
// the keys it set live on until their expiry.
func watchdogLossRedlock(r *rig) error {
	if err := r.startRedlock(2, nil); err != nil {
		return err
	}
	w := r.t.Watchdog
	cut := faultStart + 2*w
	out, err := r.runDuel(duel{pairs: 1, holdUntil: cut + w/2, honour: true, until: cut + w/2, contHold: w / 4, redlock: true})
	if err != nil {
		return err
	}
	return holderVsContender(r, out, true, faultStart, cut, "partition")
}

// clientFreezeRedlock is client-freeze with Redlock holders: the
// extensions fail during the freeze, and the holder wakes to a lost hold.
func clientFreezeRedlock(r *rig) error {
	if err := r.startRedlock(2, nil); err != nil {
		return err
	}
	w := r.t.Watchdog
	thaw := faultStart + w*3/2
	out, err := r.runDuel(duel{pairs: 1, holdUntil: thaw + time.Second, honour: true, frozen: true, until: thaw + time.Second, contHold: w / 4, redlock: true})
	if err != nil {
		return err
	}
	return holderVsContender(r, out, true, faultStart, thaw, "freeze")
}

// leaseExpiryRedlock is lease-expiry's workload on redsync mutexes over
// the five nodes: each owner's loss signal is its mutex's validity, which
// ends before any node's key expires.
func leaseExpiryRedlock(r *rig) error {
	if err := r.startRedlock(2, nil); err != nil {
		return err
	}
	return leaseExpiryRun(r, true, impls.Redsync{Nodes: r.redlock.clientPools})
}
