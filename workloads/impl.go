package workloads

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// Impl is a lock implementation the driver can measure: Lockimpl (the
// default) and, in package impls, the raw-script baseline and peer Go
// libraries, so that workloads depends on none of the peers.
type Impl interface {
	// Name is what --impl calls it and what results record.
	Name() string
	// Check refuses a profile that needs a feature the implementation
	// lacks, with an error naming --impl and the feature (Refuse makes
	// it): a feature is never emulated. It returns a note for the result
	// when the implementation meets the profile differently from lockimpl,
	// such as a fixed expiry where the profile asks for a watchdog lease.
	Check(p Profile) (note string, err error)
	// NewClient returns client number client (0..Clients-1) of the
	// implementation, a process using the library, on rdb, its own
	// connection pool, for profile p. ctx bounds what it asks the server.
	NewClient(ctx context.Context, rdb redis.UniversalClient, p Profile, client int) (ImplClient, error)
}

// SelfDriven is an Impl that runs a whole profile itself, outside the
// driver's workers (a JVM running its own loop), and records every
// operation as they would: Run hands it the checked Config.
type SelfDriven interface {
	RunSelf(ctx context.Context, cfg Config) (*results.Result, error)
}

// ImplClient is one client of an Impl.
type ImplClient interface {
	// NewOwner returns a new owner (a thread) of this client.
	NewOwner() Owner
	// Close releases the client's resources (not rdb, which Run closes).
	Close() error
}

// ErrNotHeld is what a Locker's Release returns (or wraps) when the owner
// did not hold the lock: lost, expired or never taken.
var ErrNotHeld = lockimpl.ErrNotHeld

// Feature is something a profile may need of an implementation.
type Feature string

// The features profiles need beyond an exclusive lock. Each profile kind
// but reentrant needs its own (Kind.Feature): the two made of several
// locks are named here, the others come from their lock kind's Need.
const (
	NeedReadWrite  Feature = "a read-write lock (kind: rw)"
	NeedMulti      Feature = "a multi-lock taking several names all or none (kind: multi)"
	NeedReentrancy Feature = "reentrancy (depth above 1)"
	NeedWatchdog   Feature = "a watchdog lease (lease: watchdog)"
	// NeedAutoPipeline is lockimpl's batching of concurrent owners' lock
	// commands (auto_pipeline: true).
	NeedAutoPipeline Feature = "lock commands batched across owners (auto_pipeline: true)"
	// NeedLossSignal is needed by fixed-lease profiles whose holds could
	// outlive the lease (see HoldsWithinLease).
	NeedLossSignal Feature = "a loss signal (its holds can outlive the fixed lease)"
)

// Needs lists what p needs beyond an exclusive lock with a fixed lease:
// its kind's feature first.
func (p Profile) Needs() []Feature {
	var f []Feature
	if k := p.Kind.Feature(); k != "" {
		f = append(f, k)
	}
	if p.Depth.Max() > 1 {
		f = append(f, NeedReentrancy)
	}
	if p.Lease.Fixed == 0 {
		f = append(f, NeedWatchdog)
	}
	if p.AutoPipeline {
		f = append(f, NeedAutoPipeline)
	}
	return f
}

// Refuse is the error for implementation impl lacking feature f that
// profile p needs; hint says what to do instead.
func Refuse(impl string, p Profile, f Feature, hint string) error {
	return &FieldError{Field: "--impl", Value: impl,
		Fix: fmt.Sprintf("profile %s needs %s, which %s lacks (it is not emulated); %s", p.Name, f, impl, hint)}
}

// HoldsWithinLease refuses, for an implementation that tells a holder
// nothing when its lease ends, a fixed-lease profile whose holds could
// outlive half the lease: its holders would run on past the expiry and
// the safety checker would charge the implementation for the profile.
// (lockimpl and redsync say when a hold ends: Lost.)
func HoldsWithinLease(impl string, p Profile) error {
	if p.Lease.Fixed > 0 && p.Hold.Max() > p.Lease.Fixed/2 {
		return Refuse(impl, p, NeedLossSignal, fmt.Sprintf("its holds (hold %s, up to %v) could outlive the %v lease, and %s tells a holder nothing when its lease ends; shorten the holds or lengthen --lease",
			p.Hold, p.Hold.Max(), p.Lease.Fixed, impl))
	}
	return nil
}

// FixedForWatchdog decides how an implementation without a watchdog meets
// a profile with a watchdog lease: with its fixed expiry ttl, which holds
// must stay well inside (at most half of it, for the round trips and
// scheduling around them). It returns the note for the result, or the
// refusal when p's longest hold could outlive the expiry.
func FixedForWatchdog(impl string, p Profile, ttl time.Duration, source string) (string, error) {
	if longest := p.Hold.Max(); longest > ttl/2 {
		return "", Refuse(impl, p, NeedWatchdog,
			fmt.Sprintf("its holds (hold %s, up to %v) could outlive %s's %v expiry (%s); set a fixed --lease longer than the holds",
				p.Hold, longest, impl, ttl, source))
	}
	return fmt.Sprintf("lease watchdog met by a fixed %v expiry (%s), not renewed, which outlasts every hold of %s (at most %v)", ttl, source, p.Name, p.Hold.Max()), nil
}

// ReplicaSyncer is an Impl that, like Redisson's checkLockSyncedSlaves,
// can wait after each acquisition for a replica to acknowledge it (WAIT),
// and does when the profile's replica_sync says so. An Impl without it
// sends no WAIT, whatever replica_sync says.
type ReplicaSyncer interface {
	SyncsReplicas() bool
}

// SyncsReplicas is true: lockimpl waits for a replica when replica_sync
// is true and the primary has one.
func (Lockimpl) SyncsReplicas() bool { return true }

// ReplicaSyncGap says what replica_sync of p does not do with impl on
// primaries with replicas replicas each (the fewest of them), and the
// fix; "" when it does what p asks. p asks for replicas when its own
// topology is replica or cluster: elsewhere replica_sync: true (the
// default) only means "if there are any", as in Redisson. The CLIs refuse
// a gap they can see before the run (the topology they start); a run
// records one it finds (an external Redis), in Result.NoEffect.
func ReplicaSyncGap(impl Impl, p Profile, replicas int) (what, fix string) {
	s, ok := impl.(ReplicaSyncer)
	syncs := ok && s.SyncsReplicas()
	switch {
	case !p.ReplicaSync:
		return "", ""
	case replicas == 0 && (p.Topology == "replica" || p.Topology == "cluster"):
		return "no replica, nothing sent (profile " + p.Name + " is meant for topology " + p.Topology + ")",
			"run it where its primaries have replicas (drop --topology, or --topology replica), or without replica sync (--replica-sync false)"
	case replicas > 0 && !syncs:
		return impl.Name() + " sends no WAIT: no acquisition waits for a replica",
			"run it without replica sync (--replica-sync false), or with --impl lockimpl"
	}
	return "", ""
}

// primaryReplicas is the fewest replicas connected to a primary rdb
// writes to (INFO replication's connected_slaves), -1 when that cannot be
// read.
func primaryReplicas(ctx context.Context, rdb redis.UniversalClient) int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	read := func(ctx context.Context, c redis.Cmdable) int {
		info, err := c.Info(ctx, "replication").Result()
		if err != nil {
			return -1
		}
		for line := range strings.Lines(info) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); ok {
				if n, err := strconv.Atoi(v); err == nil {
					return n
				}
			}
		}
		return -1
	}
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return read(ctx, rdb)
	}
	var mu sync.Mutex
	fewest := -2 // none read yet
	err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		n := read(ctx, c)
		mu.Lock()
		defer mu.Unlock()
		if fewest == -2 || n < fewest {
			fewest = n
		}
		return nil
	})
	if err != nil || fewest < 0 {
		return -1
	}
	return fewest
}
