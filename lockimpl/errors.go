package lockimpl

import (
	"errors"
)

// Sentinel errors. Callers test them with errors.Is; errors caused by a
// context also wrap ctx.Err(), so a timeout is distinguishable from contention.
var (
	// ErrNotHeld is returned by Unlock when the owner does not hold the lock
	// (never acquired, already released, or lost: expired or force-unlocked).
	ErrNotHeld = errors.New("lockimpl: lock not held by this owner")
	// ErrClosed is returned by operations on a closed Client.
	ErrClosed = errors.New("lockimpl: client closed")
	// ErrUpgrade is returned when an owner holding a read lock asks for the
	// write lock of the same name: Redisson refuses read→write upgrades, so
	// waiting would wait for itself forever.
	ErrUpgrade = errors.New("lockimpl: read→write upgrade by the same owner is refused (release the read lock first)")
	// ErrSubscribeTimeout is returned when the pub/sub subscription a waiter
	// needs is not confirmed within Options.SubscribeTimeout.
	ErrSubscribeTimeout = errors.New("lockimpl: pub/sub subscription not confirmed in time")
)
