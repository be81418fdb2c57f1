package impls

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/lockimpl/protocol"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// Raw sends lockimpl's acquire and unlock scripts (protocol.Calls) by
// EVALSHA with no client logic: no watchdog, no pub/sub, no hold
// bookkeeping, no latch cleanup (latches expire). A refused acquire sleeps
// for the TTL the script replied (capped by the wait) and tries again:
// what Redisson's loop does when no unlock message ever arrives.
type Raw struct{}

// Name is "raw".
func (Raw) Name() string { return "raw" }

// Check refuses the fair lock, whose queue needs client bookkeeping
// (leaving the queue when a wait gives up) that raw leaves out by design,
// and holds that could outlive a fixed lease (raw has no loss signal).
// Reentrant and read-write profiles run: Redis counts re-entries. A
// watchdog lease is sent as the lease Redisson's scripts get under a
// watchdog (30 s) and never renewed.
func (r Raw) Check(p workloads.Profile) (string, error) {
	note := "lockimpl's scripts by EVALSHA: no watchdog, no pub/sub; a refused acquire retries after the returned TTL"
	if err := workloads.HoldsWithinLease(r.Name(), p); err != nil {
		return "", err
	}
	for _, f := range p.Needs() {
		switch f {
		case workloads.NeedReadWrite: // runs: Redis counts the read holds
		case p.Kind.Feature(): // every other kind but reentrant
			if p.Kind.Fair() {
				return "", workloads.Refuse(r.Name(), p, f, "the fair queue needs client bookkeeping (leaving the queue on timeout) that raw leaves out; use --impl lockimpl")
			}
			return "", workloads.Refuse(r.Name(), p, f, "raw runs the reentrant and read-write scripts only; use --impl lockimpl")
		case workloads.NeedAutoPipeline:
			return "", workloads.Refuse(r.Name(), p, f, "raw is the plain client's floor; drop --auto-pipeline (or the profile's auto_pipeline: true; bench perf measures bare go-redis on the autopipeliner)")
		case workloads.NeedWatchdog:
			n, err := workloads.FixedForWatchdog(r.Name(), p, lockimpl.DefaultWatchdogTimeout, "the lease Redisson's scripts get under a watchdog")
			if err != nil {
				return "", err
			}
			note += "; " + n
		}
	}
	return note, nil
}

// NewClient returns a raw client on rdb.
func (Raw) NewClient(_ context.Context, rdb redis.UniversalClient, p workloads.Profile, _ int) (workloads.ImplClient, error) {
	lease := p.Lease.Fixed
	if lease <= 0 {
		lease = lockimpl.DefaultWatchdogTimeout
	}
	return &rawClient{rdb: rdb, kind: p.Kind, lease: lease, ids: newOwnerIDs("raw")}, nil
}

type rawClient struct {
	rdb   redis.UniversalClient
	kind  workloads.Kind
	lease time.Duration
	ids   *ownerIDs
}

func (c *rawClient) NewOwner() workloads.Owner {
	o := &rawOwner{c: c, id: c.ids.next(), timer: time.NewTimer(time.Hour)}
	o.timer.Stop()
	return o
}

func (c *rawClient) Close() error { return nil }

// rawOwner is used by one goroutine at a time, as every Owner.
type rawOwner struct {
	c       *rawClient
	id      string
	timer   *time.Timer
	unlocks int64 // numbers the latches
}

func (o *rawOwner) ID() string { return o.id }

// Locker is the owner's handle on name in mode m: the scripts of the lock
// the profile's kind takes in m.
func (o *rawOwner) Locker(name string, m results.Mode) workloads.Locker {
	k, _ := o.c.kind.Lock(m)
	acq, unl, err := protocol.Calls(k, name, o.id, o.c.lease, "")
	return &rawLocker{o: o, name: name, acq: acq, unl: unl, err: err}
}

type rawLocker struct {
	o        *rawOwner
	name     string
	acq, unl protocol.ScriptCall
	err      error // from Calls: a kind or lease Calls refused
}

func (l *rawLocker) Acquire(ctx context.Context, wait, _ time.Duration) (bool, error) {
	if l.err != nil {
		return false, l.err
	}
	start := time.Now()
	for {
		ttl, err := l.acq.Run(ctx, l.o.c.rdb).Int64()
		switch {
		case errors.Is(err, redis.Nil):
			return true, nil
		case err != nil:
			return false, err
		}
		d := time.Duration(ttl) * time.Millisecond
		if d <= 0 { // no TTL: not a lock of ours; retry after a lease
			d = l.o.c.lease
		}
		if wait > 0 {
			left := wait - time.Since(start)
			if left <= 0 {
				return false, nil
			}
			d = min(d, left)
		}
		l.o.timer.Reset(d)
		select {
		case <-l.o.timer.C:
		case <-ctx.Done():
			l.o.timer.Stop()
			return false, ctx.Err()
		}
	}
}

func (l *rawLocker) Release(ctx context.Context) error {
	if l.err != nil {
		return l.err
	}
	l.o.unlocks++
	l.unl.Keys[len(l.unl.Keys)-1] = protocol.LatchKey(l.name, l.o.id+":"+strconv.FormatInt(l.o.unlocks, 10))
	err := l.unl.Run(ctx, l.o.c.rdb).Err()
	switch {
	case errors.Is(err, redis.Nil):
		return notHeld("raw", nil)
	case err != nil:
		return fmt.Errorf("raw: unlock: %w", err)
	}
	return nil
}

// Lost is never closed: raw has no client logic that could learn of a loss.
func (l *rawLocker) Lost() <-chan struct{} { return nil }
