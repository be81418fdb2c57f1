package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/lockbench/lockbench/lockimpl/internal/wire"

	"github.com/redis/go-redis/v9"
)

// acquire claims the owner's slot for (kind, name), so that a second
// goroutine sharing the owner is refused instead of silently re-entering,
// then runs the acquisition loop.
func (l *Lock) acquire(ctx context.Context, wait, lease time.Duration) (*Hold, error) {
	if err := l.owner.claim(l.key()); err != nil {
		if !l.kind.Reentrant() {
			err = ErrNonReentrant
		}
		return nil, l.fail(ctx, "lock", err)
	}
	defer l.owner.unclaim(l.key())
	if resend := l.owner.resendOf(l.key()); resend != nil {
		// This owner's last unlock of the lock is still being re-sent: it
		// must land (or give up) first, or it would release the hold about
		// to be taken, another owner would take the lock, and both would
		// hold it.
		start := time.Now()
		if err := waitResend(ctx, resend, wait); err != nil {
			return nil, l.fail(ctx, "lock", err)
		}
		if wait >= 0 {
			wait = max(0, wait-time.Since(start))
		}
	}
	h, err := l.acquireLoop(ctx, wait, lease)
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, l.fail(ctx, "lock", ErrNotAcquired)
	}
	if h.pub.lock == l {
		return &h.pub, nil
	}
	return &Hold{lock: l, h: h}, nil
}

func (l *Lock) key() holdKey { return holdKey{l.kind, l.name} }

// waitResend waits for a re-sent unlock to end, within ctx and wait (wait
// < 0: no bound; the time it takes comes out of the acquisition's wait).
func waitResend(ctx context.Context, resend <-chan struct{}, wait time.Duration) error {
	var bound <-chan time.Time
	if wait >= 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		bound = t.C
	}
	select {
	case <-resend:
		return nil
	case <-bound:
		return ErrNotAcquired
	case <-ctx.Done():
		return ctx.Err()
	}
}

// acquireLoop is Redisson's tryLock/lock loop: an attempt; if refused,
// subscribe to the lock's channel (confirmed before the next attempt, so no
// unlock is missed), then attempt again after each wake-up or after the
// TTL the script replied, whichever comes first. wait < 0 waits forever;
// a nil hold with a nil error means wait passed.
func (l *Lock) acquireLoop(ctx context.Context, wait, lease time.Duration) (*hold, error) {
	c := l.owner.c
	if err := c.checkOpen(); err != nil {
		return nil, l.fail(ctx, "lock", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, l.fail(ctx, "lock", err)
	}
	if h := l.owner.hold(holdKey{Read, l.name}); l.kind == Write && h != nil && !h.isDone() {
		return nil, l.fail(ctx, "lock", ErrUpgrade)
	}
	start := time.Now()
	limited := wait >= 0
	remaining := func() time.Duration { return wait - time.Since(start) }
	queueWait := c.opts.FairWaitTimeout
	if wait > 0 {
		queueWait = wait
	}
	queued := l.kind.Fair() && wait != 0
	giveUp := func() {
		if queued {
			l.leaveQueue(queueWait)
		}
	}

	_, h, err := l.attempt(ctx, lease, queued, queueWait, sendAcquire, nil)
	if h != nil || err != nil {
		if err != nil {
			giveUp()
		}
		return h, err
	}
	if limited && remaining() <= 0 {
		giveUp()
		return nil, nil
	}
	if l.kind == Spin {
		return l.spin(ctx, lease, wait, start)
	}

	e, err := c.subs.acquire(ctx, l.channel)
	if err != nil {
		giveUp()
		return nil, l.fail(ctx, "subscribe", err)
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
			return nil, l.fail(ctx, "subscribe", err)
		case limited:
			return nil, nil
		default:
			return nil, l.fail(ctx, "subscribe", fmt.Errorf("%w after %v", ErrSubscribeTimeout, confirmWait))
		}
	}

	for {
		ttl, h, err := l.attempt(ctx, lease, queued, queueWait, sendRetry, nil)
		if h != nil || err != nil {
			if err != nil {
				giveUp()
			}
			return h, err
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
				return nil, nil
			}
			d = min(d, r)
		}
		if err := e.wait(ctx, c.closed, d); err != nil {
			giveUp()
			return nil, l.fail(ctx, "lock", err)
		}
	}
}

// spin is the spin lock's wait (Redisson's RedissonSpinLock): no pub/sub,
// attempts after sleeps that start at Options.SpinInitialDelay and double,
// with a little jitter, up to Options.SpinMaxDelay, each cut short by the
// TTL the last attempt replied and by what is left of wait (< 0: none).
func (l *Lock) spin(ctx context.Context, lease, wait time.Duration, start time.Time) (*hold, error) {
	c := l.owner.c
	next, fails := c.opts.SpinInitialDelay, 0
	for {
		d := next
		fails++
		next = min(c.opts.SpinMaxDelay, 2*next+time.Duration(rand.Int64N(int64(fails)))*time.Millisecond)
		if wait >= 0 {
			r := wait - time.Since(start)
			if r <= 0 {
				return nil, nil
			}
			d = min(d, r)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, l.fail(ctx, "lock", ctx.Err())
		case <-c.closed:
			t.Stop()
			return nil, l.fail(ctx, "lock", ErrClosed)
		case <-t.C:
		}
		ttl, h, err := l.attempt(ctx, lease, false, 0, sendRetry, nil)
		if h != nil || err != nil {
			return h, err
		}
		if ttl > 0 && ttl < next {
			next = ttl
		}
	}
}

// attempt runs the acquire script once. It returns the hold when
// acquired, else the lock's remaining TTL (or the wait bound the fair
// script replies). A re-entry names the hold it continues (into): one
// that ended or passed its deadline while the script ran gets the
// acquisition given back, and is lost.
func (l *Lock) attempt(ctx context.Context, lease time.Duration, queued bool, queueWait time.Duration, what send, into *hold) (time.Duration, *hold, error) {
	c := l.owner.c
	leaseMs := ms(c.opts.WatchdogTimeout)
	if lease > 0 {
		leaseMs = ms(lease)
	}
	var cmd command
	if l.kind.Fair() {
		s := wire.FairTryOnce
		switch {
		case l.kind == Fair && queued:
			s = wire.FairAcquire
		case l.kind == NonReentrantFair && queued:
			s = wire.NonReentrantFairAcquire
		case l.kind == NonReentrantFair:
			s = wire.NonReentrantFairTryOnce
		}
		call := wire.Call{Script: s, Keys: []string{l.name, wire.FairQueueKey(l.name), wire.FairTimeoutKey(l.name)},
			Args: []any{leaseMs, l.field, ms(queueWait), c.opts.Clock().UnixMilli(), wire.NonReentrantError}}
		cmd = command{script: call.Script, args: call.Command()}
	} else {
		p := l.pieces()
		cmd.script, cmd.args = wire.AcquireArgs(l.family, &p, l.leaseArg(lease))
	}
	cmd.what, cmd.owner = what, l.owner
	op := "lock"
	if into != nil {
		op = "re-enter"
	}
	send := time.Now()
	res, sync, err := c.runAcquire(ctx, l.name, cmd)
	acquired, token, ttl := errors.Is(err, redis.Nil), int64(0), int64(0)
	switch {
	case acquired:
	case err != nil && strings.Contains(err.Error(), wire.NonReentrantError):
		return 0, nil, l.fail(ctx, op, ErrNonReentrant)
	case err != nil:
		return 0, nil, l.fail(ctx, op, err)
	default:
		// The fenced acquire replies {-1, token} or {PTTL, -1}; the others
		// nil (acquired) or the PTTL.
		if r, ok := res.([]any); ok && len(r) == 2 {
			ttl, _ = r[0].(int64)
			token, _ = r[1].(int64)
			acquired = ttl == -1
		} else {
			ttl, _ = res.(int64)
		}
	}
	if !acquired {
		return time.Duration(ttl) * time.Millisecond, nil, nil
	}
	if sync.failed() {
		l.undoAcquire(lease)
		return 0, nil, l.fail(ctx, op, sync.err(c.opts.ReplicaSyncTimeout))
	}
	if into == nil {
		return 0, l.owner.acquired(l, send, lease, token), nil
	}
	if !into.acquired(send, lease, token) {
		l.undoAcquire(lease)
		into.lose()
		return 0, nil, l.fail(ctx, op, fmt.Errorf("%w: the hold was lost while the re-entry was in flight; the re-entry was given back", ErrNotHeld))
	}
	return 0, into, nil
}

// undoAcquire gives back an acquisition that no replica acknowledged, as
// Redisson does, so that a failover cannot hand the lock to a second
// holder while this one believes it failed. It runs even when the
// caller's context has ended.
func (l *Lock) undoAcquire(lease time.Duration) {
	c := l.owner.c
	if lease <= 0 {
		lease = c.opts.WatchdogTimeout
	}
	ctx, cancel := context.WithTimeout(c.base, c.opts.SubscribeTimeout)
	defer cancel()
	_, _ = l.unlockOnce(ctx, lease)
}

// leaveQueue takes a fair-lock waiter that gives up out of the queue
// (Redisson's acquireFailed). It runs even when the caller's context has
// ended, since a stale queue entry delays every waiter behind it.
func (l *Lock) leaveQueue(queueWait time.Duration) {
	c := l.owner.c
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.SubscribeTimeout)
	defer cancel()
	_ = wire.FairLeave.Run(ctx, c.cmds, []string{wire.FairQueueKey(l.name), wire.FairTimeoutKey(l.name), l.name, wire.LockChannel(l.name)},
		l.field, ms(queueWait), wire.UnlockMessage, c.publish).Err()
}
