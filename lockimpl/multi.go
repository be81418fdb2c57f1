package lockimpl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// MultiLock takes several locks of one owner as one (Redisson's
// RedissonMultiLock): all of them or none, released together. The locks
// may have different names, kinds and Redis Cluster slots; each is taken
// with its own script, so peers see ordinary holds of each.
//
// Unlike Redisson, which takes them in the order given, a MultiLock takes
// them in one order by name (then kind), whatever order they were given
// in: two multi-locks over overlapping names then never wait for each
// other in a cycle. Beside Redisson clients, give Redisson's multi-locks
// their names sorted too: a Java multi-lock holding b while waiting for a,
// and a Go one holding a while waiting for b, both wait until a round's
// per-lock wait (1.5 s) runs out, give back and try again.
type MultiLock struct {
	locks []*Lock
}

// NewMultiLock groups locks. They must be at least one, belong to one
// Owner, and not repeat a (kind, name).
func (o *Owner) NewMultiLock(locks ...*Lock) (*MultiLock, error) {
	if len(locks) == 0 {
		return nil, fmt.Errorf("%w: NewMultiLock needs at least one lock", ErrInvalidOptions)
	}
	sorted := slices.Clone(locks)
	slices.SortFunc(sorted, func(a, b *Lock) int {
		return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(a.kind, b.kind))
	})
	for i, l := range sorted {
		if l == nil || l.owner != o {
			return nil, fmt.Errorf("%w: NewMultiLock: every lock must come from owner %s", ErrInvalidOptions, o.id)
		}
		if i > 0 && l.name == sorted[i-1].name && l.kind == sorted[i-1].kind {
			return nil, fmt.Errorf("%w: NewMultiLock: %s lock %q is given twice", ErrInvalidOptions, l.kind, l.name)
		}
	}
	return &MultiLock{locks: sorted}, nil
}

// Locks are the locks, in the order they are taken.
func (m *MultiLock) Locks() []*Lock { return slices.Clone(m.locks) }

// multiRound is how long Lock lets one round wait per lock before giving
// back what it holds and starting again (Redisson: 1.5 s per lock), so
// that a cycle with a lock taken outside the multi-lock cannot last.
const multiRound = 1500 * time.Millisecond

// Lock waits until every lock is held and returns the hold of them all.
// Each round waits up to 1.5 s per lock (less a random part, as Redisson's
// lock() does); a round that cannot complete gives back what it took and
// starts again, until ctx ends.
func (m *MultiLock) Lock(ctx context.Context, opts LockOptions) (*MultiHold, error) {
	if opts.Lease < 0 {
		return nil, m.fail(ctx, fmt.Errorf("%w: LockOptions.Lease %v is negative (0 means a watchdog lease)", ErrInvalidOptions, opts.Lease))
	}
	base := time.Duration(len(m.locks)) * multiRound
	for {
		round := base/2 + rand.N(base/2)
		mh, err := m.tryRound(ctx, round, opts.Lease)
		if !errors.Is(err, ErrNotAcquired) {
			return mh, err
		}
	}
}

// TryLock tries to take every lock within opts.Wait (zero: one attempt
// at each). It returns ErrNotAcquired when that passed without all of them
// held, having given back any it took.
func (m *MultiLock) TryLock(ctx context.Context, opts TryLockOptions) (*MultiHold, error) {
	switch {
	case opts.Wait < 0:
		return nil, m.fail(ctx, fmt.Errorf("%w: TryLockOptions.Wait %v is negative (0 makes one attempt)", ErrInvalidOptions, opts.Wait))
	case opts.Lease < 0:
		return nil, m.fail(ctx, fmt.Errorf("%w: TryLockOptions.Lease %v is negative (0 means a watchdog lease)", ErrInvalidOptions, opts.Lease))
	}
	return m.tryRound(ctx, opts.Wait, opts.Lease)
}

// tryRound takes the locks in order, each within what is left of wait.
// On any failure it gives back what it took. A fixed lease runs from each
// lock's own acquisition; a round that ends with one of them already lost
// (its lease ran out while later ones were awaited) fails too, so a
// MultiHold is never returned with a part already gone.
func (m *MultiLock) tryRound(ctx context.Context, wait, lease time.Duration) (*MultiHold, error) {
	start := time.Now()
	holds := make([]*Hold, 0, len(m.locks))
	giveBack := func() {
		for _, h := range slices.Backward(holds) {
			_ = h.Unlock(context.WithoutCancel(ctx))
		}
	}
	for _, l := range m.locks {
		left := max(0, wait-time.Since(start))
		h, err := l.TryLock(ctx, TryLockOptions{Wait: left, Lease: lease})
		if err != nil {
			giveBack()
			return nil, err
		}
		holds = append(holds, h)
	}
	for _, h := range holds {
		if h.h.loseIfDue(); h.h.isDone() {
			giveBack()
			return nil, m.fail(ctx, ErrNotAcquired)
		}
	}
	return newMultiHold(m, holds), nil
}

func (m *MultiLock) fail(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w: %w", cerr, err)
	}
	return &opError{what: fmt.Sprintf("multi-lock of %d locks", len(m.locks)), err: err}
}

// MultiHold is the hold of every lock of a MultiLock.
type MultiHold struct {
	m     *MultiLock
	holds []*Hold
	once  sync.Once
	lost  chan struct{}
}

func newMultiHold(m *MultiLock, holds []*Hold) *MultiHold {
	mh := &MultiHold{m: m, holds: holds, lost: make(chan struct{})}
	for _, h := range holds {
		h.h.whenLost(func() { mh.once.Do(func() { close(mh.lost) }) })
	}
	return mh
}

// Holds are the holds of each lock, in the order they were taken; their
// tokens (Hold.Token) are there for fenced locks.
func (mh *MultiHold) Holds() []*Hold { return slices.Clone(mh.holds) }

// Lost closes when any of the holds is lost: the critical section the
// multi-lock guards is then no longer exclusive.
func (mh *MultiHold) Lost() <-chan struct{} {
	for _, h := range mh.holds {
		// A part another goroutine is losing has its own channel closed
		// already; ours must not lag behind it.
		select {
		case <-h.Lost():
			mh.once.Do(func() { close(mh.lost) })
		default:
		}
	}
	return mh.lost
}

// Deadline is the earliest of the holds' deadlines (Hold.Deadline): when
// Lost closes unless renewals move it.
func (mh *MultiHold) Deadline() time.Time {
	d := mh.holds[0].Deadline()
	for _, h := range mh.holds[1:] {
		if e := h.Deadline(); e.Before(d) {
			d = e
		}
	}
	return d
}

// Context returns a context derived from parent that ends when the first
// of the holds ends: lost (its cause is ErrLost) or released by Unlock.
// Call cancel once it is no longer needed.
func (mh *MultiHold) Context(parent context.Context) (context.Context, context.CancelFunc) {
	parts := make([]*hold, len(mh.holds))
	for i, h := range mh.holds {
		parts[i] = h.h
	}
	return endsWith(parent, parts...)
}

// Unlock releases every hold, in reverse order, and returns their errors
// joined (ErrNotHeld for any already lost or released).
func (mh *MultiHold) Unlock(ctx context.Context) error {
	var errs []error
	for _, h := range slices.Backward(mh.holds) {
		errs = append(errs, h.Unlock(ctx))
	}
	return errors.Join(errs...)
}
