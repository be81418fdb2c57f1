package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/lockimpl/internal/wire"

	"github.com/redis/go-redis/v9"
)

// Lock is one owner's handle on one named lock of one kind (Owner.LockOf).
// Handles are cheap. Acquiring
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
	owner  *Owner // who sends it: its turnaround steers batching (Client.eval)
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
