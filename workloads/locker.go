package workloads

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/results"
)

// Locker is what the driver needs of one owner's handle on one lock in
// one mode. The default drives lockimpl; tests plant broken lockers, and
// other lock libraries can be measured by the same driver.
type Locker interface {
	// Acquire takes the lock, waiting at most wait (0: until ctx ends),
	// with a fixed lease (0: a watchdog lease). It reports false, nil when
	// wait passed with the lock held by others.
	Acquire(ctx context.Context, wait, lease time.Duration) (bool, error)
	// Release gives back one acquisition; an error matching ErrNotHeld
	// says the owner held nothing to give back.
	Release(ctx context.Context) error
	// Lost is closed when the holder learns its hold is lost.
	Lost() <-chan struct{}
}

// Timed is a Locker whose calls run in another process that times them
// itself (a JVM driving Redisson): LastCall is its latest Acquire's or
// Release's start and end on that process's clock, placed on this one's,
// or zero times when the call got no answer. The driver then measures the
// lock's latencies and critical sections where the lock was taken and
// given back, not where the harness heard of it.
type Timed interface {
	LastCall() (start, end time.Time)
}

// Sectioned is a Locker that can run a whole critical section in its own
// process (acquire, hold, release) without the harness in between, whose
// round trips would otherwise lengthen every hold. The driver uses it for
// operations with no nested acquisitions; such a Locker has no loss
// signal to listen to meanwhile. Section's times are on this process's
// clock. Acquired false with a nil error means the wait ran out, with an
// error that the acquisition failed; acquired true with an error means
// the release failed (matching ErrNotHeld when nothing was held).
type Sectioned interface {
	Section(ctx context.Context, wait, lease, hold time.Duration) (SectionTimes, bool, error)
}

// SectionTimes are when a Sectioned call started, acquired (or gave up),
// sent its release and ended; zero when it got no answer. Cut says the
// hold ended early: the ctx given to Section ended, which cuts a wait or
// a hold short (a wait so cut returns ctx's error).
type SectionTimes struct {
	Start, Acquired, Released, End time.Time
	Cut                            bool
}

// HeldAtClose is an ImplClient whose process may still hold locks when it
// closes that the run never learnt it took: critical sections run whole
// in it (Sectioned) that a stall cut off, their unlock unanswered. After
// Close, HeldAtClose is how many; the run counts them as unreleased.
type HeldAtClose interface {
	HeldAtClose() int
}

// Owner is one lock owner (a thread in Redisson's terms).
type Owner interface {
	// ID names the owner in results.
	ID() string
	// Locker returns the owner's handle on lock name in mode m.
	Locker(name string, m results.Mode) Locker
}

// MultiOwner is an Owner that can take several names as one multi-lock
// (kind multi); implementations without one refuse such profiles.
type MultiOwner interface {
	// MultiLocker returns the owner's handle on names taken all or none.
	MultiLocker(names []string) Locker
}
