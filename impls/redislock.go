package impls

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// RedislockTTL is the TTL redislock locks get under a watchdog profile:
// redislock has no default, so it gets redsync's, for a like comparison.
const RedislockTTL = RedsyncExpiry

// Redislock drives github.com/bsm/redislock. Its retry strategies are
// fixed, linear or exponential; for a strategy comparable to redsync's it
// gets jitter: a retry after 50–250 ms, at random, bounded by the
// profile's wait (the context's deadline, which Obtain honours).
type Redislock struct{}

// Name is "redislock".
func (Redislock) Name() string { return "redislock" }

// Check refuses read-write, fair and reentrant profiles, and a watchdog
// lease whose holds could outlive the 8 s TTL.
func (r Redislock) Check(p workloads.Profile) (string, error) {
	return exclusiveOnly(r.Name(), p, RedislockTTL, "redsync's default expiry; redislock has none",
		"redislock with retries every 50-250ms at random (redsync's), bounded by the profile's wait")
}

// NewClient returns a redislock client on rdb.
func (Redislock) NewClient(rdb redis.UniversalClient, p workloads.Profile) (workloads.ImplClient, error) {
	ttl := p.Lease.Fixed
	if ttl <= 0 {
		ttl = RedislockTTL
	}
	return &redislockClient{c: redislock.New(rdb), ttl: ttl, ids: newOwnerIDs("redislock")}, nil
}

type redislockClient struct {
	c   *redislock.Client
	ttl time.Duration
	ids *ownerIDs
}

func (c *redislockClient) NewOwner() workloads.Owner {
	return &redislockOwner{c: c, id: c.ids.next()}
}

func (c *redislockClient) Close() error { return nil }

type redislockOwner struct {
	c  *redislockClient
	id string
}

func (o *redislockOwner) ID() string { return o.id }

func (o *redislockOwner) Locker(name string, _ results.Mode) workloads.Locker {
	return &redislockLocker{c: o.c, name: name}
}

type redislockLocker struct {
	c    *redislockClient
	name string
	held *redislock.Lock
}

// jitter is redsync's retry delay for redislock: 50–250 ms at random.
type jitter struct{}

func (jitter) NextBackoff() time.Duration {
	return 50*time.Millisecond + rand.N(200*time.Millisecond)
}

var retryLikeRedsync = &redislock.Options{RetryStrategy: jitter{}}

func (l *redislockLocker) Acquire(ctx context.Context, wait, _ time.Duration) (bool, error) {
	wctx, cancel := waitContext(ctx, wait)
	defer cancel()
	lock, err := l.c.c.Obtain(wctx, l.name, l.c.ttl, retryLikeRedsync)
	if err == nil {
		l.held = lock
		return true, nil
	}
	return waitOutcome(ctx, wctx, err)
}

func (l *redislockLocker) Release(ctx context.Context) error {
	lock := l.held
	l.held = nil
	err := lock.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return notHeld("redislock", err)
	}
	return err
}

// Lost is never closed: redislock tells a holder nothing of a loss (its
// users ask Lock.TTL).
func (l *redislockLocker) Lost() <-chan struct{} { return nil }
