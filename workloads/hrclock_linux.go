//go:build linux

package workloads

import (
	"container/heap"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// hrClock wakes waits at their deadlines to within the scheduler's own
// wake-up. The runtime's timers wait in epoll_wait, whose timeout counts
// whole milliseconds, so an idle process's timers fire up to a millisecond
// late; a timerfd keeps no slack. One OS thread sleeps in read(2) on a
// timerfd set for the earliest deadline, then wakes every wait whose
// deadline came: sleeping costs no CPU, and a wake-up a system call.
type hrClock struct {
	fd     int
	base   time.Time // the Go clock at baseNs
	baseNs int64     // CLOCK_MONOTONIC at base

	mu     sync.Mutex
	due    dueHeap
	setFor time.Time // what the timerfd is armed for; zero: disarmed
	closed bool

	tid  atomic.Int32 // the timer thread's
	done chan struct{}
}

// newHRClock starts a clock's timer thread; it fails where the kernel
// refuses a timerfd (a seccomp profile may).
func newHRClock() (*hrClock, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("clock_gettime: %w", err)
	}
	c := &hrClock{fd: fd, base: time.Now(), baseNs: ts.Nano(), done: make(chan struct{})}
	started := make(chan struct{})
	go c.loop(started)
	<-started
	return c, nil
}

// loop is the timer thread: it reads the timerfd, which blocks until the
// earliest deadline, and wakes what came due, until the clock closes.
func (c *hrClock) loop(started chan<- struct{}) {
	// The thread is the clock's alone, so that its CPU can be read apart;
	// it ends with the goroutine.
	runtime.LockOSThread()
	c.tid.Store(int32(unix.Gettid()))
	close(started)
	defer close(c.done)
	var buf [8]byte
	for {
		_, err := unix.Read(c.fd, buf[:])
		if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			// The kernel will not time us any more: wake everything now
			// rather than leave waits asleep for ever.
			c.mu.Lock()
			c.closed = true
			c.wakeAllLocked()
			c.mu.Unlock()
			_ = unix.Close(c.fd)
			return
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			_ = unix.Close(c.fd)
			return
		}
		c.wakeLocked(time.Now())
		c.setFor = time.Time{}
		if len(c.due) > 0 {
			c.armLocked(c.due[0].at)
		}
		c.mu.Unlock()
	}
}

// wakeLocked wakes every wait due by now.
func (c *hrClock) wakeLocked(now time.Time) {
	for len(c.due) > 0 && !now.Before(c.due[0].at) {
		heap.Pop(&c.due).(*due).wake <- struct{}{}
	}
}

// wakeAllLocked wakes every wait, due or not: each finds itself woken
// early and sleeps the rest on a Go timer.
func (c *hrClock) wakeAllLocked() {
	for len(c.due) > 0 {
		heap.Pop(&c.due).(*due).wake <- struct{}{}
	}
}

// armLocked sets the timerfd for at, a time on the Go clock.
func (c *hrClock) armLocked(at time.Time) {
	ns := c.baseNs + int64(at.Sub(c.base))
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(ns, 1))}
	if err := unix.TimerfdSettime(c.fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
		// Cannot happen with a valid fd and time; were it to, waking
		// every wait hands it to a Go timer.
		c.wakeAllLocked()
		return
	}
	c.setFor = at
}

// add wakes d (its at and wake set) at d.at.
func (c *hrClock) add(d *due) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		d.i = -1
		d.wake <- struct{}{}
		return
	}
	heap.Push(&c.due, d)
	if c.setFor.IsZero() || d.at.Before(c.setFor) {
		c.armLocked(d.at)
	}
}

// cancel takes d out of the waits, or, when the clock woke it already,
// takes the wake-up from its channel, so that the next wait starts clean.
func (c *hrClock) cancel(d *due) {
	c.mu.Lock()
	woken := d.i < 0
	if !woken {
		heap.Remove(&c.due, d.i)
		d.i = -1
	}
	c.mu.Unlock()
	if woken {
		<-d.wake
	}
}

// close stops the timer thread, waking what still waits.
func (c *hrClock) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.wakeAllLocked()
	c.armLocked(c.base) // in the past: the thread wakes at once and sees closed
	c.mu.Unlock()
	<-c.done
}

// cpu is the CPU time the timer thread has used (0 once it ended).
func (c *hrClock) cpu() time.Duration { return threadCPU(int(c.tid.Load())) }

// threadCPU is the time thread tid of this process has run on a CPU, from
// /proc's schedstat (nanoseconds, unlike stat's ticks); 0 when it cannot
// be read.
func threadCPU(tid int) time.Duration {
	if tid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/schedstat")
	if err != nil {
		return 0
	}
	f, _, _ := strings.Cut(string(b), " ")
	ns, err := strconv.ParseInt(f, 10, 64)
	if err != nil {
		return 0
	}
	return time.Duration(ns)
}
