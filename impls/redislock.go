package impls

import (
	"context"
	"errors"
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
		"redislock with retries every 50-250ms at random (redsync's delay), bounded by the profile's wait", false)
}

// NewClient returns a redislock client on rdb.
func (Redislock) NewClient(_ context.Context, rdb redis.UniversalClient, p workloads.Profile, _ int) (workloads.ImplClient, error) {
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
	l := &redislockLocker{c: o.c, name: name}
	l.opts.RetryStrategy = &l.retry
	return l
}

// redislockLocker is used by one owner goroutine, so its retry strategy
// and options are made once, not per acquisition.
type redislockLocker struct {
	c     *redislockClient
	name  string
	held  *redislock.Lock
	retry jitter
	opts  redislock.Options
}

// jitter is redsync's retry delay for redislock, 50–250 ms at random,
// until a deadline (zero: none), after which it stops the retries.
type jitter struct{ until time.Time }

func (j *jitter) NextBackoff() time.Duration {
	d := retryDelay()
	if !j.until.IsZero() {
		left := time.Until(j.until)
		if left <= 0 {
			return 0 // redislock: no more tries, ErrNotObtained
		}
		d = min(d, left)
	}
	return d
}

// Acquire obtains the lock, retrying within the wait. The wait bounds the
// retries, not the context: a deadline on Obtain's context would also cut
// a try in flight, which could leave a lock set that nobody holds until
// its TTL. Obtain sets a deadline of the TTL on a context without one, so
// it gets one far away.
func (l *redislockLocker) Acquire(ctx context.Context, wait, _ time.Duration) (bool, error) {
	wctx, cancel := farDeadline(ctx)
	defer cancel()
	l.retry.until = time.Time{}
	if wait > 0 {
		l.retry.until = time.Now().Add(wait)
	}
	lock, err := l.c.c.Obtain(wctx, l.name, l.c.ttl, &l.opts)
	switch {
	case err == nil:
		l.held = lock
		return true, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	case errors.Is(err, redislock.ErrNotObtained):
		return false, nil // the wait passed
	}
	return false, err
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
