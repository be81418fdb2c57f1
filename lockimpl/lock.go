package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

type kind int

const (
	kindReentrant kind = iota
	kindFair
	kindRead
	kindWrite
)

func (k kind) String() string {
	switch k {
	case kindReentrant:
		return "reentrant"
	case kindFair:
		return "fair"
	case kindRead:
		return "read"
	case kindWrite:
		return "write"
	}
	return "unknown"
}

// Lock is one owner's handle on one named lock: reentrant, fair, or the
// read or write half of a read-write lock. Handles are cheap; several
// handles of the same owner, kind and name share one hold.
type Lock struct {
	owner   *Owner
	kind    kind
	name    string
	field   string // the owner's hash field
	channel string // where this lock's waiters are woken
}

// Name is the lock's name, which is also its Redis key.
func (l *Lock) Name() string { return l.name }

// Kind is "reentrant", "fair", "read" or "write".
func (l *Lock) Kind() string { return l.kind.String() }

// Owner is the owner this handle acts for.
func (l *Lock) Owner() *Owner { return l.owner }

// Lock waits until the lock is acquired, with a lease the watchdog renews
// for as long as the owner holds it. It returns an error wrapping ctx.Err()
// when ctx ends first.
func (l *Lock) Lock(ctx context.Context) error {
	_, err := l.acquire(ctx, -1, 0)
	return err
}

// LockLease waits until the lock is acquired with a fixed lease: the hold
// expires after lease unless unlocked, and is never renewed.
func (l *Lock) LockLease(ctx context.Context, lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("lockimpl: LockLease %s: lease %v must be positive (use Lock for a watchdog lease)", l, lease)
	}
	_, err := l.acquire(ctx, -1, lease)
	return err
}

// TryLock tries to acquire the lock for at most wait (wait <= 0: one
// attempt, which for a fair lock never joins the queue). lease <= 0 means a
// watchdog lease. It reports false, nil when wait passed with the lock held
// by others, and an error wrapping ctx.Err() when ctx ended first.
func (l *Lock) TryLock(ctx context.Context, wait, lease time.Duration) (bool, error) {
	return l.acquire(ctx, max(wait, 0), lease)
}

// acquire is Redisson's tryLock/lock loop: an attempt; if refused,
// subscribe to the lock's channel (confirmed before the next attempt, so no
// unlock is missed), then attempt again after each wake-up or after the
// TTL the script replied, whichever comes first. wait < 0 waits forever.
func (l *Lock) acquire(ctx context.Context, wait, lease time.Duration) (bool, error) {
	c := l.owner.c
	if err := c.checkOpen(); err != nil {
		return false, l.fail(ctx, "lock", err)
	}
	if err := ctx.Err(); err != nil {
		return false, l.fail(ctx, "lock", err)
	}
	if h := l.owner.hold(holdKey{kindRead, l.name}); l.kind == kindWrite && h != nil && !h.isDone() {
		return false, l.fail(ctx, "lock", ErrUpgrade)
	}
	start := time.Now()
	limited := wait >= 0
	remaining := func() time.Duration { return wait - time.Since(start) }
	queueWait := c.opts.FairWaitTimeout
	if wait > 0 {
		queueWait = wait
	}
	queued := l.kind == kindFair && wait != 0
	giveUp := func() {
		if queued {
			l.leaveQueue(queueWait)
		}
	}

	_, ok, err := l.attempt(ctx, lease, queued, queueWait)
	if ok || err != nil {
		if err != nil {
			giveUp()
		}
		return ok, err
	}
	if limited && remaining() <= 0 {
		giveUp()
		return false, nil
	}

	e, err := c.subs.acquire(ctx, l.channel)
	if err != nil {
		giveUp()
		return false, l.fail(ctx, "subscribe", err)
	}
	defer c.subs.release(e)
	confirmWait := c.opts.SubscribeTimeout
	if limited {
		confirmWait = remaining()
	}
	confirmed, err := e.awaitConfirmed(ctx, c.closed, confirmWait)
	if err != nil || !confirmed {
		giveUp()
		switch {
		case err != nil:
			return false, l.fail(ctx, "subscribe", err)
		case limited:
			return false, nil
		default:
			return false, l.fail(ctx, "subscribe", fmt.Errorf("%w after %v", ErrSubscribeTimeout, confirmWait))
		}
	}

	for {
		ttl, ok, err := l.attempt(ctx, lease, queued, queueWait)
		if ok || err != nil {
			if err != nil {
				giveUp()
			}
			return ok, err
		}
		// Bounded by the TTL even if the unlock message is lost; a lock
		// without TTL (not one of ours) is retried every watchdog timeout.
		d := ttl
		if d < 0 {
			d = c.opts.WatchdogTimeout
		}
		if limited {
			r := remaining()
			if r <= 0 {
				giveUp()
				return false, nil
			}
			d = min(d, r)
		}
		if err := e.wait(ctx, c.closed, d); err != nil {
			giveUp()
			return false, l.fail(ctx, "lock", err)
		}
	}
}

// attempt runs the acquire script once. It reports the lock's remaining
// TTL (or the wait bound the fair script replies) when refused.
func (l *Lock) attempt(ctx context.Context, lease time.Duration, queued bool, queueWait time.Duration) (time.Duration, bool, error) {
	c := l.owner.c
	leaseMs := ms(c.opts.WatchdogTimeout)
	if lease > 0 {
		leaseMs = ms(lease)
	}
	send := time.Now()
	var res any
	var err error
	switch l.kind {
	case kindFair:
		s := fairTryOnce
		if queued {
			s = fairAcquire
		}
		res, err = s.Run(ctx, c.acq, []string{l.name, fairQueueKey(l.name), fairTimeoutKey(l.name)},
			leaseMs, l.field, ms(queueWait), c.opts.Clock().UnixMilli()).Result()
	default:
		a := acquireCall(l.kind, l.name, l.field, leaseMs)
		res, err = a.s.Run(ctx, c.acq, a.keys, a.args...).Result()
	}
	if errors.Is(err, redis.Nil) {
		l.owner.acquired(l, send, lease)
		return 0, true, nil
	}
	if err != nil {
		return 0, false, l.fail(ctx, "lock", err)
	}
	n, _ := res.(int64)
	return time.Duration(n) * time.Millisecond, false, nil
}

// leaveQueue takes a fair-lock waiter that gives up out of the queue
// (Redisson's acquireFailed). It runs even when the caller's context has
// ended, since a stale queue entry delays every waiter behind it.
func (l *Lock) leaveQueue(queueWait time.Duration) {
	c := l.owner.c
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.SubscribeTimeout)
	defer cancel()
	_ = fairLeave.Run(ctx, c.rdb, []string{fairQueueKey(l.name), fairTimeoutKey(l.name), l.name, lockChannel(l.name)},
		l.field, ms(queueWait), unlockMessage, c.publish).Err()
}

// Unlock releases one hold of the lock (the last one releases the lock
// and wakes waiters). It returns ErrNotHeld, changing nothing, when this
// owner does not hold the lock. Each call carries its own unlock latch, so
// a retried call answers as the first did.
func (l *Lock) Unlock(ctx context.Context) error {
	c := l.owner.c
	h := l.owner.hold(holdKey{l.kind, l.name})
	lease := c.opts.WatchdogTimeout
	if h != nil {
		h.mu.Lock()
		lease = h.lease
		h.mu.Unlock()
		h.unlocking(+1)
		defer h.unlocking(-1)
	}
	send := time.Now()
	n, err := l.unlockOnce(ctx, lease)
	switch {
	case errors.Is(err, ErrNotHeld):
		if h != nil {
			h.lose()
			l.owner.drop(h)
		}
		return l.fail(ctx, "unlock", ErrNotHeld)
	case err != nil:
		if h != nil && h.unlockFailed() {
			l.owner.drop(h)
		}
		return l.fail(ctx, "unlock", err)
	case n == 0:
		if h != nil && !h.partiallyReleased(send) {
			// Redis counts acquisitions of ours that we never learned of
			// (an acquire applied whose reply was lost). Every one we know
			// of is released: renewal stops (Redisson counts renewal per
			// acquisition too) and the orphans are given back.
			h.release()
			l.drainOrphans(ctx, lease)
		}
	default: // 1: released; 2: this owner's read holds are over, others' remain
		if h != nil {
			h.release()
		}
	}
	return nil
}

// maxOrphans bounds drainOrphans: each orphan is one lost acquire reply.
const maxOrphans = 16

// drainOrphans unlocks until Redis no longer counts this owner as a
// holder. It runs when the owner's last known acquisition is released yet
// Redis still counts more: acquisitions applied whose replies were lost.
// Left alone they would hold the lock for a lease after every re-entry of
// this owner, and for ever while it keeps re-entering. Errors leave the
// rest to expire within the lease.
func (l *Lock) drainOrphans(ctx context.Context, lease time.Duration) {
	for range maxOrphans {
		if n, err := l.unlockOnce(ctx, lease); err != nil || n != 0 {
			return
		}
	}
}

// unlockOnce runs the unlock script of l's kind once with a fresh latch:
// n is its reply (0 still held, 1 released, 2 read holds over), ErrNotHeld
// when this owner held nothing.
func (l *Lock) unlockOnce(ctx context.Context, lease time.Duration) (int64, error) {
	c := l.owner.c
	latch := unlockLatchKey(l.name, newRequestID())
	latchMs := ms(c.opts.LatchTimeout)
	var res any
	var err error
	if l.kind == kindFair {
		res, err = fairUnlock.Run(ctx, c.rdb, []string{l.name, fairQueueKey(l.name), fairTimeoutKey(l.name), lockChannel(l.name), latch},
			unlockMessage, ms(lease), l.field, c.opts.Clock().UnixMilli(), c.publish, latchMs).Result()
	} else {
		u := unlockCall(l.kind, l.name, l.field, l.channel, c.publish, latch, ms(lease), latchMs)
		res, err = u.s.Run(ctx, c.rdb, u.keys, u.args...).Result()
	}
	if err == nil || errors.Is(err, redis.Nil) {
		c.dropLatch(latch)
	}
	n, _ := res.(int64)
	switch {
	case errors.Is(err, redis.Nil) || (err == nil && n < 0):
		return 0, ErrNotHeld
	case err != nil:
		c.topologyHint(err)
		return 0, err
	}
	return n, nil
}

// dropLatch deletes a latch key once its unlock answered: in the
// background while the client runs, at once after Close.
func (c *Client) dropLatch(key string) { c.latches.add(key) }

// ForceUnlock deletes the lock whoever holds it and wakes waiters (for a
// read or write lock, only while the lock is in that mode). It reports
// whether something was deleted. Other owners' holds are then lost; their
// watchdogs or unlocks find out.
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	c := l.owner.c
	var n int64
	var err error
	switch l.kind {
	case kindReentrant:
		n, err = reentrantForceUnlock.Run(ctx, c.rdb, []string{l.name, l.channel}, unlockMessage, c.publish).Int64()
	case kindFair:
		n, err = fairForceUnlock.Run(ctx, c.rdb, []string{l.name, fairQueueKey(l.name), fairTimeoutKey(l.name), lockChannel(l.name)},
			unlockMessage, c.opts.Clock().UnixMilli(), c.publish).Int64()
	case kindRead:
		n, err = rwForceUnlock.Run(ctx, c.rdb, []string{l.name, l.channel}, unlockMessage, c.publish, "read").Int64()
	case kindWrite:
		n, err = rwForceUnlock.Run(ctx, c.rdb, []string{l.name, l.channel}, readUnlockMessage, c.publish, "write").Int64()
	}
	if err != nil {
		return false, l.fail(ctx, "force unlock", err)
	}
	if n == 1 {
		if h := l.owner.hold(holdKey{l.kind, l.name}); h != nil {
			h.release()
		}
	}
	return n == 1, nil
}

// IsLocked reports whether anyone holds the lock (for a read lock: any
// read hold; for a write lock: the write hold).
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	rdb := l.owner.c.rdb
	var locked bool
	var err error
	switch l.kind {
	case kindRead:
		var n int64
		n, err = readIsLocked.Run(ctx, rdb, []string{l.name}).Int64()
		locked = n == 1
	case kindWrite:
		var mode string
		mode, err = rdb.HGet(ctx, l.name, "mode").Result()
		if errors.Is(err, redis.Nil) {
			err = nil
		}
		locked = mode == "write"
	default:
		var n int64
		n, err = rdb.Exists(ctx, l.name).Result()
		locked = n > 0
	}
	if err != nil {
		return false, l.fail(ctx, "is locked", err)
	}
	return locked, nil
}

// IsHeldByOwner reports whether this owner holds the lock.
func (l *Lock) IsHeldByOwner(ctx context.Context) (bool, error) {
	ok, err := l.owner.c.rdb.HExists(ctx, l.name, l.field).Result()
	if err != nil {
		return false, l.fail(ctx, "is held", err)
	}
	return ok, nil
}

// HoldCount is how many times this owner holds the lock (0 when it does not).
func (l *Lock) HoldCount(ctx context.Context) (int, error) {
	n, err := l.owner.c.rdb.HGet(ctx, l.name, l.field).Int()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, l.fail(ctx, "hold count", err)
	}
	return n, nil
}

// RemainTTL is the lock key's remaining time to live: 0 when the lock does
// not exist, -1ms when it exists without expiry.
func (l *Lock) RemainTTL(ctx context.Context) (time.Duration, error) {
	d, err := l.owner.c.rdb.PTTL(ctx, l.name).Result()
	if err != nil {
		return 0, l.fail(ctx, "remain ttl", err)
	}
	switch d {
	case -2, -2 * time.Millisecond:
		return 0, nil
	case -1, -1 * time.Millisecond:
		return -time.Millisecond, nil
	}
	return d, nil
}

// Lost returns a channel closed when this owner's current hold of the lock
// is known lost (see the package doc for the rule). When the owner holds
// nothing it returns a channel that never closes; releasing a hold does not
// close its channel.
func (l *Lock) Lost() <-chan struct{} {
	if h := l.owner.hold(holdKey{l.kind, l.name}); h != nil {
		// A process that was frozen (GC pause, SIGSTOP, VM pause) checks
		// here before its deadline timer had a chance to run: the deadline
		// itself decides, so the answer is never stale.
		h.loseIfDue()
		return h.lost
	}
	return neverLost
}

// fail describes err; when ctx has ended, the error also wraps ctx.Err()
// (a network timeout past the deadline is the context's doing), so that
// callers can tell timeouts from contention with errors.Is.
func (l *Lock) fail(ctx context.Context, op string, err error) error {
	l.owner.c.topologyHint(err)
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w: %w", cerr, err)
	}
	return fmt.Errorf("lockimpl: %s %s: %w", op, l, err)
}
