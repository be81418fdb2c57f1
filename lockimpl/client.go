package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/lockimpl/internal/wire"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client is one lock-service instance, like a RedissonClient: it owns the
// client UUID, the watchdog that renews its owners' holds, and the pub/sub
// subscriptions its waiters share. Make one per process (per connection
// pool); it is safe for concurrent use.
type Client struct {
	rdb redis.UniversalClient // as given: pub/sub, renewals, latch cleanup
	// cmds carries acquisitions, unlocks and reads: rdb, or the
	// autopipeliner riding it (Options.AutoPipeline).
	cmds redis.UniversalClient
	// direct is rdb when it is a *redis.Client or *redis.ClusterClient,
	// which can pipeline a WAIT on an acquisition's connection and map
	// slots to primaries; nil when rdb is an autopipeliner.
	direct redis.UniversalClient
	acq    redis.Scripter // Options.AcquireClient; nil: cmds, never resent
	// pipelined: cmds batches commands. Every lock command then goes
	// unresendable, since an autopipeliner splits a batch that mixes
	// resendable and unresendable commands into one round trip per run.
	pipelined bool
	// crowd, when lockimpl made cmds, is a second autopipeliner of rdb that
	// holds each batch back for the callers the last one woke: the lock
	// commands sent while more than crowdSize others of this client are in
	// flight ride it (see DefaultAutoPipelineOptions).
	crowd    *redis.AutoPipeliner
	inflight atomic.Int64 // lock commands in flight on cmds or crowd
	turn     turnaround   // how soon owners send again after a reply
	crowded  atomic.Int64 // lock commands that rode crowd
	id       string
	opts     Options
	reqIDs   wire.RequestIDs
	// leaseArg, latchArg and publishArg are the watchdog lease and
	// LatchTimeout in ms, and publish, as interface values made once for
	// every call that sends them.
	leaseArg, latchArg, publishArg any

	publish string // "PUBLISH" or "SPUBLISH"
	sharded bool

	owners  atomic.Int64
	subs    *subscriber
	wd      *watchdog
	latches *janitor
	repl    replicaCache
	// waitTwins are twins of the primaries' clients whose reads outlast a
	// replica-sync WAIT (see waitReader), by address.
	waitTwins sync.Map
	late      lateness // how late the holds' deadline timers have fired lately

	mu      sync.Mutex
	active  map[*hold]struct{} // holds not yet released or lost
	closing bool               // Close has begun: no new background retries
	retries sync.WaitGroup     // background retries of lost unlocks

	base       context.Context // cancelled by Close: background calls use it
	cancelBase context.CancelFunc
	closed     chan struct{}
	closeOnce  sync.Once
	wg         sync.WaitGroup
}

// NewClient returns a Client that runs its scripts through rdb. ctx bounds
// what NewClient asks the server (on a Redis Cluster with PublishAuto,
// whether it answers sharded pub/sub).
//
// Acquire scripts are not idempotent (a re-entry counts twice if it runs
// twice), so, as Redisson does, they are never resent: each goes as a
// command that go-redis does not retry, whatever rdb's MaxRetries.
// Unlock scripts are made idempotent by the unlock latch: on a plain
// client go-redis retries them as rdb's MaxRetries says; once lockimpl
// sends through an autopipeliner (which resends whole batches, so
// lockimpl marks every lock command as not to be resent), lockimpl itself
// re-sends an unlock whose connection failed, up to 3 times, whatever
// MaxRetries. rdb may be a *redis.AutoPipeliner, or Options.AutoPipeline
// makes one of a *redis.Client or *redis.ClusterClient: commands of all
// owners then share batches (see Options.AutoPipeline). An autopipeliner
// over a Redis Cluster is refused as rdb: lockimpl could not see the
// cluster behind it to publish and clean up per slot; pass the
// *redis.ClusterClient with Options.AutoPipeline instead.
func NewClient(ctx context.Context, rdb redis.UniversalClient, opts Options) (*Client, error) {
	if rdb == nil {
		return nil, errors.New("lockimpl: NewClient: nil redis client")
	}
	if opts.LostMargin < 0 {
		return nil, fmt.Errorf("%w: Options.LostMargin %v is negative (0 means the default margin)", ErrInvalidOptions, opts.LostMargin)
	}
	if opts.MinReplicaAcks < 0 || opts.MinReplicaAcks > 0 && opts.SkipReplicaSync {
		return nil, fmt.Errorf("%w: Options.MinReplicaAcks %d: must be 0 (the default check), or above 0 without SkipReplicaSync", ErrInvalidOptions, opts.MinReplicaAcks)
	}
	opts = opts.withDefaults()
	c := &Client{
		rdb:      rdb,
		cmds:     rdb,
		id:       opts.ID,
		opts:     opts,
		active:   map[*hold]struct{}{},
		closed:   make(chan struct{}),
		leaseArg: ms(opts.WatchdogTimeout),
		latchArg: ms(opts.LatchTimeout),
	}
	if c.id == "" {
		c.id = wire.NewUUID()
	}
	c.reqIDs.Init()
	switch rdb.(type) {
	case *redis.Client, *redis.ClusterClient:
		c.direct = rdb
	case *redis.AutoPipeliner:
		c.pipelined = true
		if clusterBehind(ctx, rdb) {
			return nil, fmt.Errorf("%w: rdb is an autopipeliner over a Redis Cluster, whose slots lockimpl cannot see through it (sharded pub/sub, latch cleanup per slot); give NewClient the *redis.ClusterClient and set Options.AutoPipeline", ErrInvalidOptions)
		}
	}
	if opts.AcquireClient != nil {
		c.acq = opts.AcquireClient
	}
	if opts.AutoPipeline && !c.pipelined {
		if c.direct == nil {
			return nil, fmt.Errorf("%w: Options.AutoPipeline needs a *redis.Client or *redis.ClusterClient (or a *redis.AutoPipeliner as rdb), not a %T", ErrInvalidOptions, rdb)
		}
		apOpts, crowd := pipelineOptions(rdb)
		ap, err := rdb.AsyncAutoPipelineWithOptions(apOpts)
		if err != nil {
			return nil, fmt.Errorf("lockimpl: NewClient: %w", err)
		}
		c.cmds, c.pipelined = ap, true
		if crowd {
			if c.crowd, err = rdb.AutoPipelineWithOptions(redis.DefaultBlockingAutoPipelineOptions()); err != nil {
				return nil, fmt.Errorf("lockimpl: NewClient: %w", err)
			}
		}
	}
	if !opts.SkipReplicaSync && c.acq != nil {
		if _, ok := c.acq.(node); !ok {
			return nil, errNoPipeline
		}
	}

	switch opts.PublishMode {
	case PublishSharded:
		c.sharded = true
	case PublishAuto:
		c.sharded = detectSharded(ctx, rdb)
	}
	c.publish = "PUBLISH"
	if c.sharded {
		c.publish = "SPUBLISH"
	}
	c.publishArg = c.publish
	c.base, c.cancelBase = context.WithCancel(context.Background())
	c.subs = newSubscriber(c)
	c.wd = newWatchdog(c)
	c.latches = newJanitor(c)
	c.wg.Add(2)
	go c.wd.run()
	go c.latches.run()
	return c, nil
}

// crowdSize is how many lock commands of one client may be in flight
// before the next rides the crowd autopipeliner (Client.crowd).
const crowdSize = 3

// pipelineOptions configures the autopipeliner Options.AutoPipeline
// makes: rdb's own AutoPipelineOptions when it has them, else
// DefaultAutoPipelineOptions and a crowd autopipeliner beside it.
func pipelineOptions(rdb redis.UniversalClient) (opts *redis.AutoPipelineOptions, crowd bool) {
	switch r := rdb.(type) {
	case *redis.Client:
		if o := r.Options().AutoPipelineOptions; o != nil {
			return o, false
		}
	case *redis.ClusterClient:
		if o := r.Options().AutoPipelineOptions; o != nil {
			return o, false
		}
	}
	return DefaultAutoPipelineOptions(), true
}

// DefaultAutoPipelineOptions are the options of the autopipeliner
// Options.AutoPipeline makes on a client that sets none: go-redis's
// defaults without their coalescing wait, so that a command flushes at
// once, or rides the next batch while one is in flight. go-redis's wait
// holds a batch back until the callers the last one woke have sent again,
// as a closed loop of single commands does; lock traffic often does not (a
// woken waiter's acquire, an unlock whose holder goes on to work), and
// there the wait lands on handoffs. It pays where many owners of a client
// keep sending, so a command sent while more than crowdSize others are in
// flight rides a second autopipeliner with go-redis's defaults.
func DefaultAutoPipelineOptions() *redis.AutoPipelineOptions {
	o := redis.DefaultAutoPipelineOptions()
	o.MaxBatchSize = 1 // flush at once: no wait for more
	return o
}

// topologyHint asks a cluster client to reread the slot map after an error
// that may mean a shard's primary changed: go-redis follows MOVED by
// itself, but after a dead primary it keeps dialling it until its next
// periodic reload (a minute by default). Redisson rescans the topology on
// its own for the same reason. Reloads are coalesced by go-redis.
func (c *Client) topologyHint(err error) {
	cc, ok := c.rdb.(*redis.ClusterClient)
	if !ok || err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return
	}
	var rerr redis.Error
	if errors.As(err, &rerr) && !strings.HasPrefix(rerr.Error(), "CLUSTERDOWN") &&
		!strings.HasPrefix(rerr.Error(), "READONLY") && !strings.HasPrefix(rerr.Error(), "TRYAGAIN") {
		return // a script's own error: the topology is not in question
	}
	cc.ReloadState(c.base)
}

// detectSharded reports whether rdb is a Redis Cluster that answers the
// sharded pub/sub commands (Redis 7+), as Redisson's shardedSubscriptionMode AUTO.
func detectSharded(ctx context.Context, rdb redis.UniversalClient) bool {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return cc.PubSubShardNumSub(ctx, "lockimpl-probe").Err() == nil
}

// clusterBehind reports whether the server behind rdb says it is a
// cluster node (INFO cluster). When it cannot be asked, the answer is no:
// replica sync, on by default, asks again before each acquisition and
// refuses a cluster behind an autopipeliner then.
func clusterBehind(ctx context.Context, rdb redis.UniversalClient) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := rdb.Info(ctx, "cluster").Result()
	return err == nil && strings.Contains(info, "cluster_enabled:1")
}

// ID is the client UUID, the first part of every owner id.
func (c *Client) ID() string { return c.id }

// NewOwner returns a new owner, the unit of reentrancy (Redisson's thread).
// Owner ids are "<client id>:<n>" with n counting from 1.
func (c *Client) NewOwner() *Owner {
	n := c.owners.Add(1)
	id := c.id + ":" + strconv.FormatInt(n, 10)
	return &Owner{c: c, id: id, fieldArg: id}
}

// Close stops the watchdog and every subscription, wakes waiters with
// ErrClosed, and closes the Lost channel of every hold (no longer renewed,
// they will expire: locks are not released, as with Redisson's shutdown).
// It is idempotent.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		close(c.closed)
		c.cancelBase()
		c.retries.Wait()
		c.subs.close()
		c.wg.Wait()
		c.mu.Lock()
		holds := make([]*hold, 0, len(c.active))
		for h := range c.active {
			holds = append(holds, h)
		}
		c.mu.Unlock()
		for _, h := range holds {
			h.lose()
		}
	})
	return nil
}

// retryLater runs f in the background until it returns or the client
// closes (Close waits for it).
func (c *Client) retryLater(f func()) bool {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return false
	}
	c.retries.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.retries.Done()
		f()
	}()
	return true
}

func (c *Client) checkOpen() error {
	select {
	case <-c.closed:
		return ErrClosed
	default:
		return nil
	}
}

// Owner is the unit of reentrancy, Redisson's thread: its id is the hash
// field its holds are counted under. Give each goroutine its own owner, as
// each Java thread is its own: an owner refuses a second acquisition of a
// lock it holds (ErrHeld), and re-entry goes through the Hold.
type Owner struct {
	c        *Client
	id       string
	fieldArg any // id as an interface value, made once for every call that sends it

	// replied is when this owner's last lock command returned, in
	// nanoseconds on the turnaround clock; 0 before the first.
	replied atomic.Int64

	mu sync.Mutex
	// What the owner knows of its locks: most owners know one at a time,
	// kept in one, beside a map for the rest made only when needed, so an
	// owner stays small whatever it does.
	one   holdEntry
	holds map[holdKey]ownerHold
	// resending are the locks whose last unlock is being re-sent in the
	// background (its outcome unknown), each closed when that ends. The
	// unlock script knows the owner, not the hold: a re-sent unlock that
	// arrived after a new acquisition would give that one back.
	resending map[holdKey]chan struct{}
}

// startResend records that k's last unlock is being re-sent; the returned
// func records its end.
func (o *Owner) startResend(k holdKey) (done func()) {
	ch := make(chan struct{})
	o.mu.Lock()
	if o.resending == nil {
		o.resending = map[holdKey]chan struct{}{}
	}
	o.resending[k] = ch
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		if o.resending[k] == ch {
			delete(o.resending, k)
		}
		o.mu.Unlock()
		close(ch)
	}
}

// resendOf is the re-send of k's last unlock in progress, nil for none.
func (o *Owner) resendOf(k holdKey) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.resending[k]
}

// ID is "<client id>:<n>", the hash field Redisson would write for a thread.
func (o *Owner) ID() string { return o.id }

// Client is the client the owner belongs to.
func (o *Owner) Client() *Client { return o.c }

// LockOf returns the owner's lock of kind k named name: the lock the
// kind's own method (Lock, FairLock, ReadWriteLock's halves, ...) returns.
func (o *Owner) LockOf(k Kind, name string) *Lock {
	w := wire.LockOf(k, name, o.id)
	return &Lock{owner: o, kind: k, family: w.Family, name: name, field: w.Field, channel: w.Channel}
}

// Lock returns the owner's reentrant lock (RLock) named name.
func (o *Owner) Lock(name string) *Lock { return o.LockOf(Reentrant, name) }

// FairLock returns the owner's fair lock (RFairLock) named name: waiters
// acquire in the order they queued, across clients.
func (o *Owner) FairLock(name string) *Lock { return o.LockOf(Fair, name) }

// FencedLock returns the owner's fenced lock (RFencedLock) named name: a
// reentrant lock whose every acquisition, re-entries included, gets the
// next fencing token of the name (Hold.Token). Guard a resource with it by
// having the resource refuse writes carrying a token lower than the
// highest it has seen. Like Redisson's, the token counter
// (redisson_lock_token:{name}) never expires, so that tokens never go
// backwards: a name used once costs one small key for ever. Delete the
// counters of names retired for good, and only when no holder or
// resource can still compare with their tokens.
func (o *Owner) FencedLock(name string) *Lock { return o.LockOf(Fenced, name) }

// TokenKey is the key of name's fencing-token counter (see FencedLock),
// for a caller done with the name for good to expire.
func TokenKey(name string) string { return wire.TokenKey(name) }

// SpinLock returns the owner's spin lock named name: the reentrant lock's
// data, but its waiters poll with exponential backoff (Options.SpinInitialDelay
// to SpinMaxDelay) instead of subscribing, and unlocks publish nothing.
// It suits many short-lived names on a cluster, where every pub/sub
// subscription and message costs each node; a waiter may sleep up to
// SpinMaxDelay past an unlock.
func (o *Owner) SpinLock(name string) *Lock { return o.LockOf(Spin, name) }

// NonReentrantLock returns the owner's non-reentrant lock named name:
// the reentrant lock's data, but the holder asking for it again gets
// ErrNonReentrant at once, as does Hold.Reenter.
func (o *Owner) NonReentrantLock(name string) *Lock { return o.LockOf(NonReentrant, name) }

// NonReentrantFairLock returns the owner's non-reentrant fair lock named
// name: the fair lock, but the holder asking again gets ErrNonReentrant.
func (o *Owner) NonReentrantFairLock(name string) *Lock { return o.LockOf(NonReentrantFair, name) }

// ReadWriteLock returns the owner's read-write lock (RReadWriteLock) named name.
func (o *Owner) ReadWriteLock(name string) *ReadWriteLock {
	return &ReadWriteLock{owner: o, name: name}
}

// ReadWriteLock pairs the read and write locks of one name.
type ReadWriteLock struct {
	owner *Owner
	name  string
}

// ReadLock is shared with other readers, and with this owner's own write hold.
func (rw *ReadWriteLock) ReadLock() *Lock { return rw.owner.LockOf(Read, rw.name) }

// WriteLock excludes every other owner, readers and writers.
func (rw *ReadWriteLock) WriteLock() *Lock { return rw.owner.LockOf(Write, rw.name) }

type holdKey struct {
	kind Kind
	name string
}

// ownerHold is what an owner knows of one lock: its live hold, and whether
// an acquisition of it is in flight. One map holds both, so that an owner
// costs one map whatever it does.
type ownerHold struct {
	h         *hold
	acquiring bool
}

// holdEntry is one lock's ownerHold and its key.
type holdEntry struct {
	k  holdKey
	st ownerHold
}

// getLocked is what the owner knows of k.
func (o *Owner) getLocked(k holdKey) ownerHold {
	if o.one.k == k {
		return o.one.st
	}
	return o.holds[k]
}

// setLocked stores st for k, forgetting k when st says nothing.
func (o *Owner) setLocked(k holdKey, st ownerHold) {
	empty := st == ownerHold{}
	switch {
	case o.one.k == k:
		o.one.st = st
		if empty {
			o.one = holdEntry{}
		}
	case empty:
		delete(o.holds, k)
	case o.one.st == ownerHold{} && o.holds[k] == ownerHold{}:
		o.one = holdEntry{k, st}
	default:
		if o.holds == nil {
			o.holds = map[holdKey]ownerHold{}
		}
		o.holds[k] = st
	}
}

// claim marks an acquisition of k in flight, refusing one when the owner
// already holds k or is acquiring it: two goroutines sharing an owner
// would otherwise re-enter each other's hold and never exclude each other.
func (o *Owner) claim(k holdKey) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	st := o.getLocked(k)
	if st.acquiring || (st.h != nil && !st.h.isDone()) {
		return ErrHeld
	}
	st.acquiring = true
	o.setLocked(k, st)
	return nil
}

// unclaim ends the acquisition claim marked.
func (o *Owner) unclaim(k holdKey) {
	o.mu.Lock()
	st := o.getLocked(k)
	st.acquiring = false
	o.setLocked(k, st)
	o.mu.Unlock()
}

// current reports whether h is still the owner's hold of its key (not
// released, nor replaced by a newer acquisition after it was lost).
func (o *Owner) current(h *hold) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.getLocked(h.key).h == h
}

// hold returns the owner's live hold of (kind, name), or nil.
func (o *Owner) hold(k holdKey) *hold {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.getLocked(k).h
}

// acquired records a successful acquisition sent at send with lease
// (watchdog when lease <= 0) and fencing token (0: none) and returns the hold.
func (o *Owner) acquired(l *Lock, send time.Time, lease time.Duration, token int64) *hold {
	k := holdKey{l.kind, l.name}
	o.mu.Lock()
	st := o.getLocked(k)
	h := st.h
	fresh := h == nil || h.isDone()
	if fresh {
		h = newHold(o, l)
		st.h = h
		o.setLocked(k, st)
	}
	o.mu.Unlock()
	if fresh {
		o.c.mu.Lock()
		o.c.active[h] = struct{}{}
		o.c.mu.Unlock()
	}
	h.acquired(send, lease, token)
	return h
}

// drop forgets h (released, or found not held by Unlock).
func (o *Owner) drop(h *hold) {
	o.mu.Lock()
	if st := o.getLocked(h.key); st.h == h {
		st.h = nil
		o.setLocked(h.key, st)
	}
	o.mu.Unlock()
	o.c.mu.Lock()
	delete(o.c.active, h)
	o.c.mu.Unlock()
}

// String names the lock for errors: kind, name and owner.
func (l *Lock) String() string {
	return fmt.Sprintf("%s lock %q of %s", l.kind, l.name, l.owner.id)
}
