package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/lockimpl/internal/wire"

	"github.com/redis/go-redis/v9"
)

// Lock is one owner's handle on one named lock: reentrant, fair, or the
// read or write half of a read-write lock. Handles are cheap. Acquiring
// returns a Hold, through which the holder re-enters, unlocks and learns
// that the hold was lost.
type Lock struct {
	owner   *Owner
	kind    Kind
	family  wire.Family // whose scripts it runs (not fair)
	name    string
	field   string // the owner's hash field
	channel string // where this lock's waiters are woken

	// boxed are the name and channel as interface values, made on first
	// use: a handle serves many acquisitions, and each string boxed anew
	// would cost an allocation per call.
	boxed atomic.Pointer[[2]any]
}

// command is a script call as EVALSHA arguments (wire.Call.Command), and
// what it is for (see Client.eval).
type command struct {
	script wire.Script
	args   []any
	what   send
}

// pieces are the lock's call pieces: its name and channel boxed once per
// handle, the field once per owner.
func (l *Lock) pieces() wire.Pieces {
	b := l.boxed.Load()
	if b == nil {
		b = &[2]any{l.name, l.channel}
		l.boxed.Store(b)
	}
	field := l.owner.fieldArg
	if l.field != l.owner.id {
		field = l.field // a write lock's "<owner>:write"
	}
	return wire.NewPieces(l.family, l.name, b[0], field, b[1])
}

// leaseArg is lease in ms as an interface value: the client's for the
// watchdog's (lease <= 0 or the watchdog timeout).
func (l *Lock) leaseArg(lease time.Duration) any {
	c := l.owner.c
	if lease <= 0 || lease == c.opts.WatchdogTimeout {
		return c.leaseArg
	}
	return ms(lease)
}

// Name is the lock's name, which is also its Redis key.
func (l *Lock) Name() string { return l.name }

// Kind is which lock this is.
func (l *Lock) Kind() Kind { return l.kind }

// Owner is the owner this handle acts for.
func (l *Lock) Owner() *Owner { return l.owner }

// LockOptions configure Lock.
type LockOptions struct {
	// Lease is a fixed lease: the hold expires after it unless unlocked,
	// and is never renewed (Redisson's lock(leaseTime)). Zero means a
	// watchdog lease, renewed for as long as the hold lasts.
	Lease time.Duration
}

// TryLockOptions configure TryLock.
type TryLockOptions struct {
	// Wait is how long to wait for the lock. Zero makes one attempt,
	// which for a fair lock never joins the queue.
	Wait time.Duration
	// Lease is as LockOptions.Lease: zero means a watchdog lease.
	Lease time.Duration
}

// Lock waits until the lock is acquired and returns the hold. It returns
// an error wrapping ctx.Err() when ctx ends first, and ErrHeld when this
// owner already holds the lock or is acquiring it (re-enter through the
// Hold instead).
func (l *Lock) Lock(ctx context.Context, opts LockOptions) (*Hold, error) {
	if opts.Lease < 0 {
		return nil, l.fail(ctx, "lock", fmt.Errorf("%w: LockOptions.Lease %v is negative (0 means a watchdog lease)", ErrInvalidOptions, opts.Lease))
	}
	return l.acquire(ctx, -1, opts.Lease)
}

// TryLock tries to acquire the lock within opts.Wait and returns the
// hold. It returns ErrNotAcquired when the wait passed with the lock held
// by others, an error wrapping ctx.Err() when ctx ended first, and ErrHeld
// when this owner already holds the lock or is acquiring it.
func (l *Lock) TryLock(ctx context.Context, opts TryLockOptions) (*Hold, error) {
	switch {
	case opts.Wait < 0:
		return nil, l.fail(ctx, "try lock", fmt.Errorf("%w: TryLockOptions.Wait %v is negative (0 makes one attempt)", ErrInvalidOptions, opts.Wait))
	case opts.Lease < 0:
		return nil, l.fail(ctx, "try lock", fmt.Errorf("%w: TryLockOptions.Lease %v is negative (0 means a watchdog lease)", ErrInvalidOptions, opts.Lease))
	}
	return l.acquire(ctx, opts.Wait, opts.Lease)
}

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
	cmd.what = what
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

// Token reads the lock name's current fencing token: the one the latest
// acquisition of a Fenced lock of that name got, 0 before the first. It is
// the token to compare with a Hold's (Hold.Token) at the guarded resource.
// Only a Fenced lock has tokens.
func (l *Lock) Token(ctx context.Context) (int64, error) {
	if !l.kind.Fenced() {
		return 0, l.fail(ctx, "token", fmt.Errorf("%w: a %s lock has no fencing token (use Owner.FencedLock)", ErrInvalidOptions, l.kind))
	}
	n, err := l.owner.c.cmds.Get(ctx, wire.TokenKey(l.name)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, l.fail(ctx, "token", err)
	}
	return n, nil
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

// unlock releases one acquisition of hold h (the last one releases the
// lock and wakes waiters).
func (l *Lock) unlock(ctx context.Context, h *hold) error {
	if !l.owner.current(h) {
		// Released, or replaced by a newer hold of this owner: an unlock
		// sent now would give back that one's acquisition.
		return l.fail(ctx, "unlock", ErrNotHeld)
	}
	h.mu.Lock()
	lease := h.lease
	h.mu.Unlock()
	h.unlocking(+1)
	defer h.unlocking(-1)
	send := time.Now()
	latch := l.owner.c.reqIDs.latchKey(l.name)
	n, err := l.unlockWith(ctx, lease, latch)
	switch {
	case errors.Is(err, ErrNotHeld):
		h.lose()
		l.owner.drop(h)
		return l.fail(ctx, "unlock", ErrNotHeld)
	case err != nil:
		if h.unlockFailed() {
			l.owner.drop(h)
			done := l.owner.startResend(l.key())
			if !l.owner.c.retryLater(func() { defer done(); l.retryUnlock(lease, latch) }) {
				done()
			}
		}
		return l.fail(ctx, "unlock", err)
	case n == 0:
		if !h.partiallyReleased(send) {
			// Redis counts acquisitions of ours that we never learned of
			// (an acquire applied whose reply was lost). Every one we know
			// of is released: renewal stops (Redisson counts renewal per
			// acquisition too) and the orphans are given back.
			h.release()
			l.drainOrphans(ctx, lease)
		}
	default: // 1: released; 2: this owner's read holds are over, others' remain
		h.release()
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
	return l.unlockWith(ctx, lease, l.owner.c.reqIDs.latchKey(l.name))
}

// retryUnlock re-sends a last unlock whose outcome is unknown (a reset or
// timeout swallowed its reply, or it never left), with the same latch, so
// that one Redis already applied changes nothing, until Redis answers or
// half the latch's lifetime has passed. Without it a lock whose unlock was
// lost stays held, unrenewed, until its lease runs out, and every waiter
// sleeps out its bound: the reset-storm stall.
func (l *Lock) retryUnlock(lease time.Duration, latch string) {
	c := l.owner.c
	deadline := time.Now().Add(c.opts.LatchTimeout / 2)
	wait := 50 * time.Millisecond
	for time.Now().Before(deadline) {
		t := time.NewTimer(wait)
		select {
		case <-c.base.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
		ctx, cancel := context.WithTimeout(c.base, c.opts.SubscribeTimeout)
		_, err := l.unlockWith(ctx, lease, latch)
		cancel()
		if err == nil || errors.Is(err, ErrNotHeld) {
			return
		}
	}
}

// unlockWith runs the unlock script of l's kind with latch: once, or on
// an autopipeliner, where go-redis resends nothing lockimpl sends, again
// after a connection failure (the latch makes a repeat harmless), as
// go-redis would have.
func (l *Lock) unlockWith(ctx context.Context, lease time.Duration, latch string) (int64, error) {
	c := l.owner.c
	var cmd command
	if l.kind.Fair() {
		call := wire.Call{Script: wire.FairUnlock, Keys: []string{l.name, wire.FairQueueKey(l.name), wire.FairTimeoutKey(l.name), wire.LockChannel(l.name), latch},
			Args: []any{wire.UnlockMessage, ms(lease), l.field, c.opts.Clock().UnixMilli(), c.publishArg, c.latchArg}}
		cmd = command{script: call.Script, args: call.Command()}
	} else {
		p := l.pieces()
		cmd.script, cmd.args = wire.UnlockArgs(l.family, &p, c.publishArg, latch, l.leaseArg(lease), c.latchArg)
	}
	cmd.what = sendUnlock
	res, err := c.eval(ctx, cmd, c.pipelined)
	for n := 1; c.pipelined && n <= unlockRetries && resendable(err); n++ {
		if sleepCtx(ctx, retryBackoff(n)) != nil {
			break
		}
		res, err = c.eval(ctx, cmd, true)
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
	switch {
	case l.kind.Fair():
		n, err = wire.FairForceUnlock.Run(ctx, c.cmds, []string{l.name, wire.FairQueueKey(l.name), wire.FairTimeoutKey(l.name), wire.LockChannel(l.name)},
			wire.UnlockMessage, c.opts.Clock().UnixMilli(), c.publish).Int64()
	case l.family == wire.Spin:
		n, err = c.cmds.Del(ctx, l.name).Result()
	case l.family == wire.ReadHalf:
		n, err = wire.RwForceUnlock.Run(ctx, c.cmds, []string{l.name, l.channel}, wire.UnlockMessage, c.publish, "read").Int64()
	case l.family == wire.WriteHalf:
		n, err = wire.RwForceUnlock.Run(ctx, c.cmds, []string{l.name, l.channel}, wire.ReadUnlockMessage, c.publish, "write").Int64()
	default:
		n, err = wire.ReentrantForceUnlock.Run(ctx, c.cmds, []string{l.name, l.channel}, wire.UnlockMessage, c.publish).Int64()
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
	rdb := l.owner.c.cmds
	var locked bool
	var err error
	switch l.kind {
	case Read:
		var n int64
		n, err = wire.ReadIsLocked.Run(ctx, rdb, []string{l.name}).Int64()
		locked = n == 1
	case Write:
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
	ok, err := l.owner.c.cmds.HExists(ctx, l.name, l.field).Result()
	if err != nil {
		return false, l.fail(ctx, "is held", err)
	}
	return ok, nil
}

// HoldCount is how many times this owner holds the lock (0 when it does not).
func (l *Lock) HoldCount(ctx context.Context) (int, error) {
	n, err := l.owner.c.cmds.HGet(ctx, l.name, l.field).Int()
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
	d, err := l.owner.c.cmds.PTTL(ctx, l.name).Result()
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

// fail describes err; when ctx has ended, the error also wraps ctx.Err()
// (a network timeout past the deadline is the context's doing), so that
// callers can tell timeouts from contention with errors.Is.
func (l *Lock) fail(ctx context.Context, op string, err error) error {
	l.owner.c.topologyHint(err)
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w: %w", cerr, err)
	}
	return &opError{what: op + " " + l.String(), err: err}
}

// opError is an operation's error, "lockimpl: <operation>: <cause>": the
// cause's own "lockimpl: " prefixes (its sentinels carry one) are left
// out, since the whole message has one.
type opError struct {
	what string
	err  error
}

func (e *opError) Error() string {
	return "lockimpl: " + e.what + ": " + strings.ReplaceAll(e.err.Error(), "lockimpl: ", "")
}

func (e *opError) Unwrap() error { return e.err }
