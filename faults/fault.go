package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/redisenv"
)

// Fault is one misbehaviour that can be switched on and, through the
// returned revert, off again. Kind, Target and Detail describe it for the
// timeline and the plan.
type Fault interface {
	Kind() string   // latency, bandwidth, blackhole, reset_peer, down, slicer, slow_close, pause, kill, failover, clock_skew, freeze
	Target() string // e.g. client:0, clients, redis:primary
	Detail() string // parameters, human-readable
	// Inject starts the fault. On success it returns the function that
	// undoes it (never nil). On error it returns nil when nothing is left
	// injected, or the revert of what was (a partial injection).
	Inject(ctx context.Context) (revert func(context.Context) error, err error)
}

// Stream says which direction of a proxied connection a toxic acts on.
type Stream string

// The directions: client→Redis, Redis→client, or both.
const (
	Upstream   Stream = "upstream"
	Downstream Stream = "downstream"
	Both       Stream = "both"
)

func (s Stream) streams() []string {
	switch s {
	case Upstream, Downstream:
		return []string{string(s)}
	}
	return []string{string(Upstream), string(Downstream)}
}

// toxicFault adds the same toxic to every proxy of a target, in each
// direction asked, and removes them all on revert.
type toxicFault struct {
	kind, target, detail string
	proxies              []*Proxy
	stream               Stream
	attrs                map[string]int64
	toxicity             float32
}

// seq makes toxic names unique, so overlapping faults never collide.
var seq atomic.Int64

func (f *toxicFault) Kind() string   { return f.kind }
func (f *toxicFault) Target() string { return f.target }
func (f *toxicFault) Detail() string { return f.detail }

func (f *toxicFault) Inject(ctx context.Context) (func(context.Context) error, error) {
	typ := f.kind
	if typ == "blackhole" {
		typ = "timeout"
	}
	type added struct {
		p    *Proxy
		name string
	}
	var done []added
	revert := func(ctx context.Context) error {
		var errs []error
		for _, a := range done {
			errs = append(errs, a.p.RemoveToxic(ctx, a.name))
		}
		return errors.Join(errs...)
	}
	n := seq.Add(1)
	for _, p := range f.proxies {
		for _, s := range f.stream.streams() {
			name := fmt.Sprintf("%s_%s_%d", f.kind, s, n)
			if err := p.AddToxic(Toxic{Name: name, Type: typ, Stream: s, Toxicity: f.toxicity, Attributes: f.attrs}); err != nil {
				return nil, errors.Join(err, revert(ctx))
			}
			done = append(done, added{p, name})
		}
	}
	return revert, nil
}

func millis(d time.Duration) int64 { return d.Milliseconds() }

// Latency delays every chunk of data by latency ± jitter (uniform).
func Latency(target string, ps []*Proxy, latency, jitter time.Duration, s Stream) Fault {
	return &toxicFault{kind: "latency", target: target, proxies: ps, stream: s,
		detail: fmt.Sprintf("%v ±%v %s", latency, jitter, s),
		attrs:  map[string]int64{"latency": millis(latency), "jitter": millis(jitter)}}
}

// Bandwidth limits throughput to kbps kilobytes per second.
func Bandwidth(target string, ps []*Proxy, kbps int64, s Stream) Fault {
	return &toxicFault{kind: "bandwidth", target: target, proxies: ps, stream: s,
		detail: fmt.Sprintf("%d KB/s %s", kbps, s), attrs: map[string]int64{"rate": kbps}}
}

// Blackhole drops all data while connections stay open: requests vanish
// and callers wait for their timeouts, as in a network partition. When it
// is reverted, toxiproxy closes the connections it held.
func Blackhole(target string, ps []*Proxy, s Stream) Fault {
	return &toxicFault{kind: "blackhole", target: target, proxies: ps, stream: s,
		detail: fmt.Sprintf("drop all data %s", s), attrs: map[string]int64{"timeout": 0}}
}

// ResetPeer resets (TCP RST) each connection after after on its first data.
func ResetPeer(target string, ps []*Proxy, after time.Duration) Fault {
	return &toxicFault{kind: "reset_peer", target: target, proxies: ps, stream: Upstream,
		detail: fmt.Sprintf("RST after %v", after), attrs: map[string]int64{"timeout": millis(after)}}
}

// Slicer cuts data into chunks of about avg bytes (± variation), each
// delayed by delay: stresses partial reads in the client's protocol parser.
func Slicer(target string, ps []*Proxy, avg, variation int64, delay time.Duration, s Stream) Fault {
	return &toxicFault{kind: "slicer", target: target, proxies: ps, stream: s,
		detail: fmt.Sprintf("%d±%d B chunks every %v %s", avg, variation, delay, s),
		attrs:  map[string]int64{"average_size": avg, "size_variation": variation, "delay": delay.Microseconds()}}
}

// SlowClose delays the close of each connection by delay after EOF.
func SlowClose(target string, ps []*Proxy, delay time.Duration) Fault {
	return &toxicFault{kind: "slow_close", target: target, proxies: ps, stream: Downstream,
		detail: fmt.Sprintf("close delayed %v", delay), attrs: map[string]int64{"delay": millis(delay)}}
}

// downFault disables proxies: connections close, new ones are refused.
type downFault struct {
	target  string
	proxies []*Proxy
}

// Down takes the link down: every connection is closed and new ones are
// refused until it is reverted (a partition that clients notice at once,
// unlike Blackhole).
func Down(target string, ps []*Proxy) Fault { return &downFault{target, ps} }

func (f *downFault) Kind() string   { return "down" }
func (f *downFault) Target() string { return f.target }
func (f *downFault) Detail() string { return "connections closed, new ones refused" }

func (f *downFault) Inject(context.Context) (func(context.Context) error, error) {
	revert := func(context.Context) error {
		var errs []error
		for _, p := range f.proxies {
			errs = append(errs, p.SetEnabled(true))
		}
		return errors.Join(errs...)
	}
	for _, p := range f.proxies {
		if err := p.SetEnabled(false); err != nil {
			return nil, errors.Join(err, revert(context.Background()))
		}
	}
	return revert, nil
}

// nodeFault acts on one Redis process.
type nodeFault struct {
	kind, detail string
	node         redisenv.Node
	inject       func(ctx context.Context) error
	revert       func(ctx context.Context) error
}

func (f *nodeFault) Kind() string   { return f.kind }
func (f *nodeFault) Target() string { return "redis:" + f.node.Name() }
func (f *nodeFault) Detail() string { return f.detail }

func (f *nodeFault) Inject(ctx context.Context) (func(context.Context) error, error) {
	if err := f.inject(ctx); err != nil {
		return nil, fmt.Errorf("faults: %s %s: %w", f.kind, f.Target(), err)
	}
	return func(ctx context.Context) error {
		if err := f.revert(ctx); err != nil {
			return fmt.Errorf("faults: undo %s %s: %w", f.kind, f.Target(), err)
		}
		return nil
	}, nil
}

// Pause freezes the Redis process (SIGSTOP) until reverted (SIGCONT):
// connections stay open, nothing answers, the server's clock runs on.
func Pause(n redisenv.Node) Fault {
	return &nodeFault{kind: "pause", node: n, detail: "SIGSTOP, SIGCONT on revert", inject: n.Pause, revert: n.Resume}
}

// Kill ends the Redis process at once (SIGKILL) and restarts it on the same
// address and data directory on revert: what it reloads depends on its
// persistence settings (none, or AOF).
func Kill(n redisenv.Node) Fault {
	return &nodeFault{kind: "kill", node: n, detail: "SIGKILL, restart on revert", inject: n.Kill, revert: n.Restart}
}

// KillRestart is a crash: the Redis process killed (SIGKILL) and started
// again on the same address at once, in one step, so that a wrapper (see
// WithProxiesDown) can keep the clients away from the whole of it. What
// the server reloads depends on its persistence settings.
func KillRestart(n redisenv.Node) Fault {
	return &nodeFault{kind: "kill", node: n, detail: "SIGKILL, restart at once",
		inject: func(ctx context.Context) error {
			if err := n.Kill(ctx); err != nil {
				return err
			}
			return n.Restart(ctx)
		},
		revert: func(context.Context) error { return nil }}
}

// quiesced runs a fault's injection with the clients' proxies down.
type quiesced struct {
	Fault
	proxies []*Proxy
}

// WithProxiesDown takes proxies down while f is injected and brings them
// back up after, on their upstream then. A proxy dials its upstream from
// its accept loop without a timeout, and a dial into a container being
// killed can hang for the kernel's connect timeout (minutes), holding the
// proxy that long; down, the proxies refuse clients as a dead server
// would. Faults that kill a server use it.
func WithProxiesDown(f Fault, proxies []*Proxy) Fault { return &quiesced{f, proxies} }

func (q *quiesced) Inject(ctx context.Context) (func(context.Context) error, error) {
	for _, p := range q.proxies {
		if err := p.SetEnabled(false); err != nil {
			return nil, fmt.Errorf("faults: %s: %w", q.Kind(), err)
		}
	}
	revert, err := q.Fault.Inject(ctx)
	var up []error
	for _, p := range q.proxies {
		up = append(up, p.SetEnabled(true))
	}
	return revert, errors.Join(append([]error{err}, up...)...)
}

// failoverFault kills the primary and promotes the replica.
type failoverFault struct {
	env     *redisenv.Env
	repoint []*Proxy
}

// Failover kills the primary of a replica topology, promotes the replica
// (REPLICAOF NO ONE) and points the given proxies at it, as Sentinel and
// client discovery would. Its revert restarts the killed server (as a
// primary with whatever it persisted), and leaves the promoted replica in
// charge: a failover is not undone, only its casualty revived.
func Failover(env *redisenv.Env, repoint []*Proxy) Fault {
	return WithProxiesDown(&failoverFault{env: env, repoint: repoint}, repoint)
}

func (f *failoverFault) Kind() string   { return "failover" }
func (f *failoverFault) Target() string { return "redis:primary" }
func (f *failoverFault) Detail() string {
	return "SIGKILL the primary, promote the replica, repoint clients"
}

func (f *failoverFault) Inject(ctx context.Context) (func(context.Context) error, error) {
	old := f.env.Primary()
	if f.env.Replica() == nil {
		return nil, errors.New("faults: failover needs the replica topology")
	}
	if err := old.Kill(ctx); err != nil {
		return nil, fmt.Errorf("faults: failover: kill primary: %w", err)
	}
	revert := func(ctx context.Context) error {
		if err := old.Restart(ctx); err != nil {
			return fmt.Errorf("faults: failover: restart the old primary: %w", err)
		}
		return nil
	}
	if err := f.env.Promote(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("faults: failover: %w", err), revert(ctx))
	}
	var errs []error
	for _, p := range f.repoint {
		errs = append(errs, p.SetUpstream(f.env.Primary().Addr()))
	}
	// The failover happened: keep it, and report a proxy that failed.
	return revert, errors.Join(errs...)
}

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
