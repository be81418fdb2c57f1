package lockimpl

import (
	"errors"
)

// errReleased is the cause of a Hold.Context whose hold was released.
var errReleased = errors.New("lockimpl: the hold was released")

// Sentinel errors. Callers test them with errors.Is; errors caused by a
// context also wrap ctx.Err(), so a timeout is distinguishable from contention.
var (
	// ErrNotHeld is returned by Unlock when the owner does not hold the lock
	// (never acquired, already released, or lost: expired or force-unlocked).
	ErrNotHeld = errors.New("lockimpl: lock not held by this owner")
	// ErrNotAcquired is returned by TryLock when its wait passed with the
	// lock held by others.
	ErrNotAcquired = errors.New("lockimpl: lock not acquired within the wait")
	// ErrHeld is returned by Lock and TryLock when the owner already holds
	// the lock, or another goroutine is acquiring it for the same owner: an
	// owner is one goroutine's identity (Redisson's thread). Re-enter
	// through the Hold, or give each goroutine its own Owner.
	ErrHeld = errors.New("lockimpl: this owner already holds or is acquiring the lock (re-enter through its Hold, or give each goroutine its own Owner)")
	// ErrInvalidOptions is returned for options out of range.
	ErrInvalidOptions = errors.New("lockimpl: invalid options")
	// ErrClosed is returned by operations on a closed Client.
	ErrClosed = errors.New("lockimpl: client closed")
	// ErrUpgrade is returned when an owner holding a read lock asks for the
	// write lock of the same name: Redisson refuses read→write upgrades, so
	// waiting would wait for itself forever.
	ErrUpgrade = errors.New("lockimpl: read→write upgrade by the same owner is refused (release the read lock first)")
	// ErrNonReentrant is returned when the holder of a non-reentrant lock
	// (or an owner acquiring it) asks for it again, by Lock, TryLock or
	// Hold.Reenter: Redisson's IllegalMonitorStateException.
	ErrNonReentrant = errors.New("lockimpl: the lock is non-reentrant and this owner already holds or is acquiring it")
	// ErrReplicaSync is returned when no replica acknowledged an
	// acquisition within Options.ReplicaSyncTimeout while some were
	// connected, or fewer than Options.MinReplicaAcks did; the acquisition
	// was given back (see Options.SkipReplicaSync).
	ErrReplicaSync = errors.New("lockimpl: no replica acknowledged the acquisition")
	// ErrLost is the cause of a Hold.Context that ended because the hold
	// was lost (see Hold.Lost).
	ErrLost = errors.New("lockimpl: the hold was lost")
	// ErrSubscribeTimeout is returned when the pub/sub subscription a waiter
	// needs is not confirmed within Options.SubscribeTimeout.
	ErrSubscribeTimeout = errors.New("lockimpl: pub/sub subscription not confirmed in time")
)
