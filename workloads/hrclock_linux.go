//go:build linux

package workloads

import (
	"container/heap"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// hrClock makes the runtime's own timers fire on time. A Go timer waits in
// the runtime's epoll_wait, whose timeout counts whole milliseconds, so
// while every goroutine is idle a timer fires up to a millisecond late; a
// busy process checks its timers as it schedules and is not late. The
// clock keeps one timerfd in that same epoll set, armed for the earliest
// wait's deadline to the nanosecond: it ends the runtime's sleep then, and
// the runtime, awake, fires the timer. Waits still sleep on their Go
// timers; the clock only kicks. No thread of its own, no CPU while it
// sleeps, and one read and one re-arm each time it kicks.
type hrClock struct {
	f      *os.File // the timerfd, in the runtime's poller
	fd     int
	base   time.Time // the Go clock at baseNs
	baseNs int64     // CLOCK_MONOTONIC at base

	mu      sync.Mutex
	due     dueHeap
	setFor  time.Time // what the timerfd is armed for; zero: disarmed
	closed  bool      // takes no more waits: close was called, or the loop ended
	stopped bool      // close was called

	busy atomic.Int64 // ns the clock's goroutine spent re-arming
	done chan struct{}
}

// newHRClock starts a clock; it fails where the kernel refuses a timerfd
// (a seccomp profile may).
func newHRClock() (*hrClock, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	// The Go clock is read first: what the mapping errs by then arms a kick
	// late by that much, never early (an early kick finds no timer due).
	base := time.Now()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("clock_gettime: %w", err)
	}
	// A non-blocking descriptor goes into the runtime's poller: reading it
	// parks the goroutine in the same epoll_wait the timers sleep in.
	f := os.NewFile(uintptr(fd), "timerfd")
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		// Not in the poller (os.ErrNoDeadline): a read would not block.
		_ = f.Close()
		return nil, fmt.Errorf("timerfd in the runtime's poller: %w", err)
	}
	c := &hrClock{f: f, fd: fd, base: base, baseNs: ts.Nano(), done: make(chan struct{})}
	go c.loop()
	return c, nil
}

// loop waits for the timerfd to expire, drops the waits whose deadline
// came (their timers, due too, fire as the runtime wakes) and re-arms for
// the next, until the clock closes.
func (c *hrClock) loop() {
	defer close(c.done)
	var buf [8]byte
	for {
		_, err := c.f.Read(buf[:])
		t0 := time.Now()
		c.mu.Lock()
		if c.closed || err != nil {
			// Closed, or the kernel will not time us any more (the poller
			// retries what is transient): the waits are left to their Go
			// timers alone.
			c.closed = true
			c.mu.Unlock()
			return
		}
		for len(c.due) > 0 && !t0.Before(c.due[0].at) {
			heap.Pop(&c.due)
		}
		c.setFor = time.Time{}
		if len(c.due) > 0 {
			c.armLocked(c.due[0].at)
		}
		c.mu.Unlock()
		c.busy.Add(int64(time.Since(t0)))
	}
}

// armLocked sets the timerfd for at, a time on the Go clock.
func (c *hrClock) armLocked(at time.Time) {
	ns := c.baseNs + int64(at.Sub(c.base))
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(ns, 1))}
	if unix.TimerfdSettime(c.fd, unix.TFD_TIMER_ABSTIME, &spec, nil) == nil {
		c.setFor = at
	}
	// Cannot fail with a valid descriptor and time; were it to, the waits
	// fire on their Go timers alone, late at worst.
}

// add has the runtime awake at d.at, where d's Go timer is due.
func (c *hrClock) add(d *due) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		d.i = -1
		return
	}
	heap.Push(&c.due, d)
	if c.setFor.IsZero() || d.at.Before(c.setFor) {
		c.armLocked(d.at)
	}
}

// cancel takes d off the clock, if it is still there.
func (c *hrClock) cancel(d *due) {
	c.mu.Lock()
	if d.i >= 0 {
		heap.Remove(&c.due, d.i)
		d.i = -1
	}
	c.mu.Unlock()
}

// close stops the clock; waits still on it fire on their Go timers.
func (c *hrClock) close() {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.stopped, c.closed = true, true
	c.armLocked(c.base) // in the past: the loop wakes at once and sees closed
	c.mu.Unlock()
	<-c.done
	_ = c.f.Close()
}

// cpu is the time the clock's goroutine spent kicking: a lower bound of
// what the kicks cost, since the wake-ups themselves are the runtime's.
func (c *hrClock) cpu() time.Duration { return time.Duration(c.busy.Load()) }
