package faults

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Clock is a client's wall clock with an adjustable offset, for
// lockimpl.Options.Clock: skewing it moves the "now" the fair lock sends
// to Redis, as an NTP-less host drifting would.
type Clock struct{ offset atomic.Int64 }

// Now is the real time plus the current offset.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Set moves the clock by d from now on (negative: behind).
func (c *Clock) Set(d time.Duration) { c.offset.Store(int64(d)) }

// Offset is the current skew.
func (c *Clock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

type skewFault struct {
	target string
	clock  *Clock
	by     time.Duration
}

// ClockSkew moves clock by `by` (negative: behind) until reverted. Skews
// of one clock must not overlap: each revert restores the offset it found.
func ClockSkew(target string, c *Clock, by time.Duration) Fault { return &skewFault{target, c, by} }

func (f *skewFault) Kind() string   { return "clock_skew" }
func (f *skewFault) Target() string { return f.target }
func (f *skewFault) Detail() string {
	if f.by > 0 {
		return fmt.Sprintf("clock +%v", f.by)
	}
	return fmt.Sprintf("clock %v", f.by)
}

func (f *skewFault) Inject(context.Context) (func(context.Context) error, error) {
	prev := f.clock.offset.Swap(int64(f.by))
	return func(context.Context) error { f.clock.offset.Store(prev); return nil }, nil
}

// Gate is what a frozen client's application code waits at: while closed,
// Wait blocks, as every thread of a process in a stop-the-world pause does.
type Gate struct {
	mu   sync.Mutex
	open chan struct{} // closed while the gate is open
}

// NewGate returns an open gate.
func NewGate() *Gate {
	ch := make(chan struct{})
	close(ch)
	return &Gate{open: ch}
}

// Wait returns at once when the gate is open, else when it opens or ctx ends.
func (g *Gate) Wait(ctx context.Context) error {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Frozen reports whether the gate is closed.
func (g *Gate) Frozen() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		return false
	default:
		return true
	}
}

func (g *Gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

func (g *Gate) reopen() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

type freezeFault struct {
	target string
	gate   *Gate
	net    Fault
}

// Freeze stops a client as a long GC pause would (freezes of one client
// must not overlap: the gate has no count): its application code
// blocks at gate, and nothing it sends reaches Redis (its watchdog's
// renewals included) because its proxy drops all data both ways. On
// revert the gate opens and the client carries on, believing whatever it
// believed before.
func Freeze(target string, gate *Gate, ps []*Proxy) Fault {
	return &freezeFault{target: target, gate: gate, net: Blackhole(target, ps, Both)}
}

func (f *freezeFault) Kind() string   { return "freeze" }
func (f *freezeFault) Target() string { return f.target }
func (f *freezeFault) Detail() string {
	return "application paused, all traffic dropped (watchdog included)"
}

func (f *freezeFault) Inject(ctx context.Context) (func(context.Context) error, error) {
	undoNet, err := f.net.Inject(ctx)
	if err != nil {
		return nil, err
	}
	f.gate.close()
	return func(ctx context.Context) error {
		err := undoNet(ctx)
		f.gate.reopen()
		return err
	}, nil
}

type stopFault struct {
	target string
	pid    func() int
}

// StopProcess freezes a client process whole (SIGSTOP) until reverted
// (SIGCONT), as a long stop-the-world GC pause freezes a JVM: its threads,
// its watchdog's timers and its sockets' readers all stand still while
// the kernel keeps its connections open. pid is read at injection, so the
// fault can be planned before the process starts.
func StopProcess(target string, pid func() int) Fault { return &stopFault{target, pid} }

func (f *stopFault) Kind() string   { return "freeze" }
func (f *stopFault) Target() string { return f.target }
func (f *stopFault) Detail() string { return "process stopped (SIGSTOP), SIGCONT on revert" }

func (f *stopFault) Inject(context.Context) (func(context.Context) error, error) {
	pid := f.pid()
	if pid <= 0 {
		return nil, fmt.Errorf("faults: freeze %s: no process to stop", f.target)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("faults: freeze %s: SIGSTOP %d: %w", f.target, pid, err)
	}
	return func(context.Context) error {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			return fmt.Errorf("faults: thaw %s: SIGCONT %d: %w", f.target, pid, err)
		}
		return nil
	}, nil
}
