package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
)

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
	if err := setEnabled(q.proxies, false); err != nil {
		return nil, fmt.Errorf("faults: %s: %w", q.Kind(), err)
	}
	revert, err := q.Fault.Inject(ctx)
	return revert, errors.Join(err, setEnabled(q.proxies, true))
}

// staggered is quiesced with a second group of proxies that comes back lag
// after the first.
type staggered struct {
	Fault
	first, later []*Proxy
	lag          time.Duration
}

// WithProxiesDownStaggered is WithProxiesDown whose proxies come back in
// two turns: first as soon as f's injection ends, later lag after that (in
// the revert, whose start is when the first came back): some clients reach
// the server again sooner than others, as clients with different
// reconnect backoffs do. Give the step For 0.
func WithProxiesDownStaggered(f Fault, first, later []*Proxy, lag time.Duration) Fault {
	return &staggered{f, first, later, lag}
}

func (s *staggered) Detail() string {
	return fmt.Sprintf("%s; %s back at once, %d %v later", s.Fault.Detail(), results.Count(len(s.first), "client"), len(s.later), s.lag)
}

func (s *staggered) Inject(ctx context.Context) (func(context.Context) error, error) {
	all := append(append([]*Proxy(nil), s.first...), s.later...)
	if err := setEnabled(all, false); err != nil {
		return nil, fmt.Errorf("faults: %s: %w", s.Kind(), err)
	}
	revert, err := s.Fault.Inject(ctx)
	if err != nil {
		return revert, errors.Join(err, setEnabled(all, true))
	}
	if err := setEnabled(s.first, true); err != nil {
		return revert, errors.Join(err, setEnabled(s.later, true))
	}
	return func(ctx context.Context) error {
		t := time.NewTimer(s.lag)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return errors.Join(revert(ctx), setEnabled(s.later, true))
	}, nil
}

// setEnabled turns every proxy on or off, trying them all.
func setEnabled(proxies []*Proxy, on bool) error {
	var errs []error
	for _, p := range proxies {
		errs = append(errs, p.SetEnabled(on))
	}
	return errors.Join(errs...)
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
	revert, err := killPrimary(ctx, old, "failover")
	if err != nil {
		return nil, err
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

// killPrimary kills a failover's primary and returns the revert that
// restarts it (a failover is not undone, only its casualty revived).
func killPrimary(ctx context.Context, old redisenv.Node, what string) (func(context.Context) error, error) {
	if err := old.Kill(ctx); err != nil {
		return nil, fmt.Errorf("faults: %s: kill primary: %w", what, err)
	}
	return func(ctx context.Context) error {
		if err := old.Restart(ctx); err != nil {
			return fmt.Errorf("faults: %s: restart the old primary: %w", what, err)
		}
		return nil
	}, nil
}

// SentinelFailover kills the primary of a Sentinel topology and waits,
// at most within, until the Sentinels have elected the replica: the
// clients, on Sentinel-aware connections, find it themselves. Its revert
// restarts the killed server, which the Sentinels then turn into a
// replica of the new primary. Times says how long the Sentinels took.
func SentinelFailover(env *redisenv.Env, within time.Duration) *SentinelFault {
	return &SentinelFault{env: env, within: within}
}

// SentinelFault is SentinelFailover's fault.
type SentinelFault struct {
	env    *redisenv.Env
	within time.Duration

	mu                sync.Mutex
	odown, switchedAt time.Duration // since the kill; 0 until seen
}

func (f *SentinelFault) Kind() string   { return "failover" }
func (f *SentinelFault) Target() string { return "redis:primary" }
func (f *SentinelFault) Detail() string {
	return "SIGKILL the primary; the Sentinels elect the replica and clients follow"
}

// Times are how long after the kill the Sentinels agreed the primary was
// down (+odown: detection) and had switched to the replica (+switch-master:
// election done), 0 for what was not seen.
func (f *SentinelFault) Times() (detected, elected time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.odown, f.switchedAt
}

func (f *SentinelFault) Inject(ctx context.Context) (func(context.Context) error, error) {
	ss := f.env.Sentinels()
	old, replica := f.env.Primary(), f.env.Replica()
	if len(ss) == 0 || replica == nil {
		return nil, errors.New("faults: a Sentinel failover needs the sentinel topology")
	}
	// Listen to every Sentinel's events before the kill: +odown comes
	// from those that reached objective down themselves, which need not
	// include any one of them (one can learn of the failover only from
	// the leader's +switch-master).
	events := make(chan *redis.Message)
	done := make(chan struct{})
	var forwarders sync.WaitGroup
	defer func() { close(done); forwarders.Wait() }()
	for _, sn := range ss {
		sc := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr(), MaxRetries: -1})
		defer sc.Close()
		sub := sc.PSubscribe(ctx, "+odown", "+switch-master")
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil {
			return nil, fmt.Errorf("faults: sentinel failover: listen to %s: %w", sn.Addr(), err)
		}
		ch := sub.Channel()
		forwarders.Go(func() {
			for {
				select {
				case m, ok := <-ch:
					if !ok {
						return
					}
					select {
					case events <- m:
					case <-done:
						return
					}
				case <-done:
					return
				}
			}
		})
	}
	killed := time.Now()
	revert, err := killPrimary(ctx, old, "sentinel failover")
	if err != nil {
		return nil, err
	}
	deadline := time.NewTimer(f.within)
	defer deadline.Stop()
	// The Sentinels' own answer decides; their events only time it.
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case m := <-events:
			f.mu.Lock()
			switch m.Channel {
			case "+odown":
				if f.odown == 0 { // the first Sentinel to see it
					f.odown = time.Since(killed)
				}
			case "+switch-master":
				if f.switchedAt == 0 {
					f.switchedAt = time.Since(killed)
				}
			}
			f.mu.Unlock()
		case <-poll.C:
			if f.env.Primary().Addr() == replica.Addr() {
				f.mu.Lock()
				if f.switchedAt == 0 {
					f.switchedAt = time.Since(killed)
				}
				f.mu.Unlock()
				return revert, nil
			}
		case <-deadline.C:
			return revert, fmt.Errorf("faults: sentinel failover: the Sentinels did not elect %s within %v of the kill", replica.Addr(), f.within)
		case <-ctx.Done():
			return revert, ctx.Err()
		}
	}
}

// ClockJump steps node's wall clock forward by by, as an NTP step or an
// operator's date command does on a host: keys whose TTL it passes expire
// at once, while the server's monotonic clock runs on. The node must run
// under libfaketime (redisenv.Config.FakeClock). The revert leaves the
// clock where it is: a stepped clock is not stepped back by itself, and
// stepping it back would be a fault of its own (every TTL set meanwhile
// would outlive its lease by the jump).
func ClockJump(env *redisenv.Env, n redisenv.Node, by time.Duration) Fault {
	return &nodeFault{kind: "clock_jump", node: n, detail: fmt.Sprintf("wall clock forward %v, left there", by),
		inject: func(ctx context.Context) error { return env.JumpClock(ctx, n, by) },
		revert: func(context.Context) error { return nil }}
}
