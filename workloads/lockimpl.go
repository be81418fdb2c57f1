package workloads

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// Lockimpl is the Impl of package lockimpl, the locks this harness exists
// to measure, and Run's default.
type Lockimpl struct {
	// Options are what every client gets (each its own ID).
	Options lockimpl.Options
	// OptionsFor, when set, gives client c its own options instead (chaos
	// skews one client's clock).
	OptionsFor func(client int) lockimpl.Options
}

// Name is "lockimpl".
func (Lockimpl) Name() string { return "lockimpl" }

// Check accepts every profile: lockimpl has every feature a profile asks for.
func (Lockimpl) Check(Profile) (string, error) { return "", nil }

// NewClient returns lockimpl client number client on rdb.
func (li Lockimpl) NewClient(ctx context.Context, rdb redis.UniversalClient, p Profile, client int) (ImplClient, error) {
	opts := li.Options
	if li.OptionsFor != nil {
		opts = li.OptionsFor(client)
	}
	opts.SkipReplicaSync = opts.SkipReplicaSync || !p.ReplicaSync
	opts.AutoPipeline = opts.AutoPipeline || p.AutoPipeline
	c, err := lockimpl.NewClient(ctx, rdb, opts)
	if err != nil {
		return nil, err
	}
	return lockimplClient{c: c, kind: p.Kind}, nil
}

type lockimplClient struct {
	c    *lockimpl.Client
	kind Kind
}

func (c lockimplClient) NewOwner() Owner {
	return &lockimplOwner{o: c.c.NewOwner(), kind: c.kind, holds: map[lockimplKey]*lockimplHold{}}
}

// Close closes the lockimpl client (and the no-retry pool it may have made).
func (c lockimplClient) Close() error { return c.c.Close() }

// lockimplOwner adapts a lockimpl owner to Owner. The driver asks a
// Locker to acquire again for a nested acquisition and releases each
// acquisition on its own; lockimpl re-enters through the Hold, so the
// owner keeps each lock's hold and how many acquisitions it counts. One
// worker goroutine uses it.
type lockimplOwner struct {
	o     *lockimpl.Owner
	kind  Kind
	holds map[lockimplKey]*lockimplHold
}

type lockimplKey struct {
	name string
	kind lockimpl.Kind
}

type lockimplHold struct {
	h     *lockimpl.Hold
	depth int // acquisitions not yet released
}

func (a *lockimplOwner) ID() string { return a.o.ID() }

// Locker is the owner's handle on name in mode m: lockimpl's lock of the
// kind the profile's kind takes in m.
func (a *lockimplOwner) Locker(name string, m results.Mode) Locker {
	k, _ := a.kind.Lock(m)
	return lockimplLocker{own: a, l: a.o.LockOf(k, name), key: lockimplKey{name, k}}
}

type lockimplLocker struct {
	own *lockimplOwner
	l   *lockimpl.Lock
	key lockimplKey
}

func (l lockimplLocker) Acquire(ctx context.Context, wait, lease time.Duration) (bool, error) {
	if held := l.own.holds[l.key]; held != nil {
		if err := held.h.Reenter(ctx); err != nil {
			return false, err
		}
		held.depth++
		return true, nil
	}
	var h *lockimpl.Hold
	var err error
	if wait > 0 {
		h, err = l.l.TryLock(ctx, lockimpl.TryLockOptions{Wait: wait, Lease: lease})
	} else {
		h, err = l.l.Lock(ctx, lockimpl.LockOptions{Lease: lease})
	}
	switch {
	case errors.Is(err, lockimpl.ErrNotAcquired):
		return false, nil
	case err != nil:
		return false, err
	}
	l.own.holds[l.key] = &lockimplHold{h: h, depth: 1}
	return true, nil
}

func (l lockimplLocker) Release(ctx context.Context) error {
	held := l.own.holds[l.key]
	if held == nil {
		return ErrNotHeld
	}
	if held.depth--; held.depth <= 0 {
		delete(l.own.holds, l.key)
	}
	return held.h.Unlock(ctx)
}

// Token is the fencing token of the owner's hold (kind fenced), 0 when it
// holds nothing.
func (l lockimplLocker) Token() int64 {
	if held := l.own.holds[l.key]; held != nil {
		return held.h.Token()
	}
	return 0
}

// neverLost is the Lost of a lock the owner does not hold.
var neverLost = make(chan struct{})

func (l lockimplLocker) Lost() <-chan struct{} {
	if held := l.own.holds[l.key]; held != nil {
		return held.h.Lost()
	}
	return neverLost
}

// MultiLocker is the owner's handle on names taken as one multi-lock of
// reentrant locks (kind multi).
func (a *lockimplOwner) MultiLocker(names []string) Locker {
	part, _ := a.kind.Lock(results.Exclusive)
	locks := make([]*lockimpl.Lock, len(names))
	for i, n := range names {
		locks[i] = a.o.LockOf(part, n)
	}
	m, err := a.o.NewMultiLock(locks...)
	return &lockimplMulti{m: m, err: err}
}

// lockimplMulti adapts a lockimpl multi-lock to Locker: one acquisition
// and one release of all its names.
type lockimplMulti struct {
	m   *lockimpl.MultiLock
	err error // from NewMultiLock: names repeated
	h   *lockimpl.MultiHold
}

func (l *lockimplMulti) Acquire(ctx context.Context, wait, lease time.Duration) (bool, error) {
	if l.err != nil {
		return false, l.err
	}
	var h *lockimpl.MultiHold
	var err error
	if wait > 0 {
		h, err = l.m.TryLock(ctx, lockimpl.TryLockOptions{Wait: wait, Lease: lease})
	} else {
		h, err = l.m.Lock(ctx, lockimpl.LockOptions{Lease: lease})
	}
	switch {
	case errors.Is(err, lockimpl.ErrNotAcquired):
		return false, nil
	case err != nil:
		return false, err
	}
	l.h = h
	return true, nil
}

func (l *lockimplMulti) Release(ctx context.Context) error {
	if l.h == nil {
		return ErrNotHeld
	}
	h := l.h
	l.h = nil
	return h.Unlock(ctx)
}

func (l *lockimplMulti) Lost() <-chan struct{} {
	if l.h != nil {
		return l.h.Lost()
	}
	return neverLost
}
