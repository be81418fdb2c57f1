package scenarios

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
)

var failoverScenario = &Scenario{
	Name:    "failover",
	Summary: "primary killed, replica promoted before the lock replicated: the loss and the violation are detected",
	Description: "A primary and a replica whose replication is cut (the primary's default user loses PSYNC and " +
		"SYNC and the replica's link is dropped: replication lag, made by an ACL so that it works on " +
		"containers too). The holder takes the lock on the primary; the write never " +
		"reaches the replica. The primary is killed halfway between renewals, the replica is promoted and " +
		"clients are pointed at it, as Sentinel would. The contender takes the lock at once on the new " +
		"primary while the holder still believes it holds it: the classic Redlock/Sentinel hazard.",
	Invariant:       "the violation caused by asynchronous replication is detected, and the holder is told of its loss",
	ExpectViolation: true,
	Process:         true,
	Topology:        redisenv.TopologyReplica,
	Variants: []Variant{
		{Name: "run", Plan: failoverPlan, run: failover},
		{Name: "sentinel", Plan: sentinelFailoverPlan, run: sentinelFailover, timing: sentinelTiming},
	},
}

// sentinelTiming gives the Sentinel variant a quick watchdog whose
// renewal period (a third of it) outlasts the election, which takes the
// Sentinels' down-after-milliseconds, a second or so to agree, and more on
// a loaded host: killed just after a renewal, the primary is replaced
// before the holder's next renewal asks the new one.
func sentinelTiming(t Timing) Timing {
	if t.Quick {
		t.Watchdog = 15 * time.Second
	}
	return t
}

// sentinelKillAt is just after the watchdog's first renewal.
func sentinelKillAt(t Timing) time.Duration { return t.Watchdog/3 + t.Watchdog/60 }

// sentinelDownAfter is the Sentinels' down-after-milliseconds: well
// inside the lease, so that the election lands while the holder still
// believes it holds (Sentinel's own default, 30 s, is as long as
// Redisson's watchdog).
func sentinelDownAfter(t Timing) time.Duration { return t.pick(5*time.Second, time.Second) }

func sentinelFailoverPlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{
		replicationCut(t),
		{At: sentinelKillAt(t), For: 0, Kind: "failover", Target: "redis:primary", Detail: "SIGKILL the primary; the Sentinels elect the replica and clients follow",
			build: func(r *rig) faults.Fault {
				r.sentinel = faults.SentinelFailover(r.env, t.Watchdog)
				return r.sentinel
			}},
	}
}

// sentinelFailover is the failover as production runs it: three Sentinels
// notice the dead primary and elect the replica, and the clients, asking
// the Sentinels, follow. Sentinel runs on the local backend only.
func sentinelFailover(r *rig) error { return sentinelFailoverBy(r, true) }

func sentinelFailoverBy(r *rig, honour bool) error {
	if r.o.Redis.Backend == redisenv.BackendContainer {
		return &skipError{why: "Sentinel runs on the local backend", variant: true}
	}
	return failoverOn(r, honour, func(c *redisenv.Config) {
		c.Topology, c.SentinelDownAfter = redisenv.TopologySentinel, sentinelDownAfter(r.t)
	})
}

func failoverPlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{
		replicationCut(t),
		{At: killAt(t), For: 0, Kind: "failover", Target: "redis:primary", Detail: "SIGKILL the primary, promote the replica, repoint clients",
			build: func(r *rig) faults.Fault { return faults.Failover(r.env, r.proxies) }},
	}
}

// replicationCut cuts the primary's replication for the whole run and
// lets the holder acquire once it is cut.
func replicationCut(t Timing) Planned {
	return Planned{At: 0, For: failoverRun(t) + time.Minute, Kind: "replication_cut", Target: "redis:primary", Detail: "primary refuses PSYNC/SYNC, replica link dropped",
		build: func(r *rig) faults.Fault { return notify(faults.ReplicationCut(r.env, ""), r.ready) }}
}

// refuses reports whether mit refuses acquisitions that no replica
// backs.
func refuses(mit *Mitigation) bool { return mit != nil && (mit.MinAcks || mit.MinReplicas) }

func failoverRun(t Timing) time.Duration { return killAt(t) + t.Watchdog }

func failover(r *rig) error { return failoverBy(r, true) }

func failoverBy(r *rig, honour bool) error { return failoverOn(r, honour, nil) }

// failoverOn runs the failover duel on the Redis mod makes of the user's
// (a replica topology by default).
func failoverOn(r *rig, honour bool, mod func(*redisenv.Config)) error {
	if err := r.start(2, mod); err != nil {
		return err
	}
	// The holder acquires once replication is cut: the cut is an ACL on
	// the primary, which works wherever the servers run (a proxy in the
	// replication path could not be reached from a replica container).
	r.ready = make(chan struct{})
	if err := r.newClients(); err != nil {
		return err
	}
	res, err := r.failoverDuel(honour, "failover")
	if err != nil {
		return err
	}
	r.sentinelFigures()
	if res == nil { // refused: no hold to overlap
		return nil
	}
	r.check("checker detects the violation", "≥ 1 violation", violations(res), res.Safety.Violations >= 1)
	return nil
}

// failoverDuel runs the failover duel (one holder from once the plan's
// first fault is in, one polling contender, both until a watchdog timeout
// after the kill) and checks what the replica and the cluster failover
// share: the contender gets the lock only after the failover (the fault
// of kind), and the holder is told of its loss.
func (r *rig) failoverDuel(honour bool, kind string) (*results.Result, error) {
	end := failoverRun(r.t)
	out, err := r.runDuel(duel{pairs: 1, holdUntil: end, honour: honour, until: end, poll: 20 * time.Millisecond, contHold: 50 * time.Millisecond, after: r.ready})
	if err != nil {
		return nil, err
	}
	res := out.res
	r.safetyFigures(res)
	var failAt float64
	for _, e := range res.Events {
		if e.Kind == kind {
			failAt = e.Start
			r.figure("failover took", (e.End-e.Start)*1e3, "ms")
		}
	}
	r.figure("contender first acquired", secs(out.base, out.firstContend[0]), "s")
	first := out.firstContend[0]
	if refuses(r.mit) {
		// A setting that refuses what replication cannot back refuses the
		// holder (its replica is cut off) and, after the failover, the
		// contender until the promoted replica has a replica of its own
		// (the old primary, restarted, rejoins as one): the contender's
		// holds, acknowledged, overlap nothing.
		r.check("the holder's acquisition is refused", "refused", fmt.Sprintf("%d of 1 refused", out.holderRefused), out.holderRefused == 1)
		r.check("the contender acquires once a replica acknowledges, overlapping nothing", "acquired, 0 violations",
			since(out.base, first)+", "+violations(res), !first.IsZero() && res.Safety.Violations == 0)
		return nil, nil
	}
	r.figure("holder told of the loss", secs(out.base, out.holderLostAt[0]), "s")
	r.check("contender acquires on the promoted replica", fmt.Sprintf("after %.2fs", failAt), since(out.base, first),
		!first.IsZero() && failAt > 0 && first.Sub(out.base).Seconds() > failAt)
	r.check("holder told of the loss", "1", fmt.Sprint(out.holderLost), out.holderLost == 1)
	return res, nil
}
