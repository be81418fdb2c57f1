package impls

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// RedsyncExpiry is redsync's default mutex expiry.
const RedsyncExpiry = 8 * time.Second

// RedsyncDeadNode is why redsync on Redlock's nodes, with its defaults,
// acquires and unlocks slowly while one node is dead, though a quorum
// answers at once: it waits for every node's answer (actOnPoolsAsync
// returns early only with WithFailFast), and the dead one's comes when the
// go-redis client gives up on it (its dial retries), which redsync cuts at
// expiry × timeout factor for an acquisition and not at all for an unlock.
const RedsyncDeadNode = "redsync waits for every node's answer to each acquisition try and unlock (WithFailFast off, its default), " +
	"and a dead node answers only when its go-redis client gives up on it (after its dial retries; redsync cuts a try's wait at expiry × 0.05, 400ms at the 8s expiry, an unlock's not at all), " +
	"so the owners queue behind that wait; redsync.WithFailFast(true) returns as soon as a quorum has answered"

// Redsync drives github.com/go-redsync/redsync/v4 on the one Redis (a
// single pool, so its quorum is that node) with its defaults: 8 s expiry,
// drift factor 0.01, and between tries the delay its LockContext uses
// (50–250 ms at random). The tries are redsync's TryLockContext in a loop
// bounded by the profile's wait instead of LockContext's 32 tries: a wait
// then means the same for every implementation, Redis errors that deny a
// quorum end the wait at once instead of being hidden until the last try
// (nodes that only answered too late for a try are tried again, as
// LockContext does, and a wait that runs out on them ends in their error),
// and the wait's end never cancels a try in flight (which could leave a
// lock set that nobody holds until its expiry).
//
// On Redlock's nodes, with its defaults, a dead node slows every
// acquisition and unlock: RedsyncDeadNode says why, and what changes it.
type Redsync struct {
	// Nodes, when set, are client i's connections to independent
	// primaries, one pool each: Redlock, its quorum a majority of them,
	// instead of the one Redis the run gives the client.
	Nodes func(client int) []redis.UniversalClient
}

// Name is "redsync".
func (Redsync) Name() string { return "redsync" }

// Check refuses read-write, fair and reentrant profiles, and a watchdog
// lease whose holds could outlive the 8 s expiry.
func (r Redsync) Check(p workloads.Profile) (string, error) {
	nodes := "one node"
	if r.Nodes != nil {
		n := len(r.Nodes(0))
		nodes = fmt.Sprintf("Redlock on %d nodes, quorum %d", n, n/2+1)
	}
	return exclusiveOnly(r.Name(), p, RedsyncExpiry, "redsync's default expiry",
		"redsync v4 TryLock with its defaults ("+nodes+", drift 0.01), retried after its 50-250ms delay until the profile's wait (not its 32 tries)", true)
}

// NewClient returns a redsync instance on rdb, or on Nodes(client).
func (r Redsync) NewClient(_ context.Context, rdb redis.UniversalClient, p workloads.Profile, client int) (workloads.ImplClient, error) {
	pools := []redsyncredis.Pool{goredis.NewPool(rdb)}
	if r.Nodes != nil {
		pools = nil
		for _, n := range r.Nodes(client) {
			pools = append(pools, goredis.NewPool(n))
		}
	}
	c := &redsyncClient{rs: redsync.New(pools...), ids: newOwnerIDs("redsync"), nodes: len(pools)}
	if p.Lease.Fixed > 0 {
		c.opts = append(c.opts, redsync.WithExpiry(p.Lease.Fixed))
	}
	return c, nil
}

type redsyncClient struct {
	rs    *redsync.Redsync
	opts  []redsync.Option
	ids   *ownerIDs
	nodes int // its pools; redsync's quorum is a majority of them
}

// quorumLost reports, for a failed try's err (a *redsync.RedisError per
// failed node, joined), whether failed nodes leave too few for a quorum
// whoever holds the lock. refused counts the nodes that answered with an
// error or refused the connection: no later try can win, and the wait
// ends. unanswered counts those and the nodes that did not answer within
// redsync's try budget (expiry × 0.05, 25 ms at a 500 ms expiry, which a
// busy host can miss): redsync's own LockContext tries again after them,
// and so does the owner, within its wait. Fewer, as a dead node among
// five is, leave a quorum to win.
func (c *redsyncClient) quorumLost(err error) (refused, unanswered bool) {
	failed, slow := redisErrorNodes(err)
	spare := c.nodes - (c.nodes/2 + 1)
	return failed-slow > spare, failed > spare
}

// redisErrorNodes counts the *redsync.RedisError in err, joined or not,
// and of them the ones whose node timed out.
func redisErrorNodes(err error) (failed, slow int) {
	var re *redsync.RedisError
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		for _, x := range e.Unwrap() {
			f, s := redisErrorNodes(x)
			failed, slow = failed+f, slow+s
		}
		return failed, slow
	case nil:
		return 0, 0
	default:
		if !errors.As(err, &re) {
			return 0, 0
		}
		if workloads.TimedOut(re.Err) {
			return 1, 1
		}
		return 1, 0
	}
}

func (c *redsyncClient) NewOwner() workloads.Owner {
	return &redsyncOwner{c: c, id: c.ids.next(), sleep: newSleeper()}
}

func (c *redsyncClient) Close() error { return nil }

type redsyncOwner struct {
	c     *redsyncClient
	id    string
	sleep *sleeper
}

func (o *redsyncOwner) ID() string { return o.id }

// Locker is the owner's mutex on name; redsync has one mode.
func (o *redsyncOwner) Locker(name string, _ results.Mode) workloads.Locker {
	return &redsyncLocker{o: o, m: o.c.rs.NewMutex(name, o.c.opts...)}
}

type redsyncLocker struct {
	o    *redsyncOwner
	m    *redsync.Mutex
	lost *lostSignal // nil until Lost is first asked for this hold
}

// lostSignal closes ch once: at the hold's Until by a timer, or earlier
// when Lost is asked after Until and the timer has not fired (a loaded
// host runs timers late; the deadline is what tells).
type lostSignal struct {
	ch    chan struct{}
	until time.Time
	timer *time.Timer
	once  sync.Once
}

func newLostSignal(until time.Time) *lostSignal {
	s := &lostSignal{ch: make(chan struct{}), until: until}
	s.timer = time.AfterFunc(time.Until(until), s.close)
	return s
}

func (s *lostSignal) close() { s.once.Do(func() { close(s.ch) }) }

// signal is the channel, closed first if the hold's Until has passed.
func (s *lostSignal) signal() <-chan struct{} {
	if !time.Now().Before(s.until) {
		s.close()
	}
	return s.ch
}

func (l *redsyncLocker) Acquire(ctx context.Context, wait, _ time.Duration) (bool, error) {
	start := time.Now()
	for {
		err := l.m.TryLockContext(ctx)
		if err == nil {
			l.lost = nil
			return true, nil
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		refused, unanswered := l.o.c.quorumLost(err)
		if refused {
			return false, err
		}
		// Taken, short of a quorum with a minority of nodes failing, or
		// nodes too slow for this try: try again after redsync's own
		// delay, within the wait. A wait that ends on unanswered nodes
		// ends in their error, not as contention.
		d := retryDelay()
		if wait > 0 {
			left := wait - time.Since(start)
			if left <= 0 {
				if unanswered {
					return false, err
				}
				return false, nil
			}
			d = min(d, left)
		}
		if err := l.o.sleep.sleep(ctx, d); err != nil {
			return false, err
		}
	}
}

func (l *redsyncLocker) Release(ctx context.Context) error {
	if l.lost != nil {
		l.lost.timer.Stop()
		l.lost = nil
	}
	ok, err := l.m.UnlockContext(ctx)
	if ok {
		return nil
	}
	var re *redsync.RedisError
	if errors.As(err, &re) {
		return err
	}
	return notHeld("redsync", err) // expired, or taken by another
}

// Lost closes at the mutex's Until: the end of validity redsync computes
// (expiry less the acquire's duration and the drift allowance), the one
// loss signal the library gives; asked after Until, it is closed already,
// however late its timer.
func (l *redsyncLocker) Lost() <-chan struct{} {
	if l.lost == nil {
		l.lost = newLostSignal(l.m.Until())
	}
	return l.lost.signal()
}
