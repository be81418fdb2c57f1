package scenarios

import (
	"math/rand/v2"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/redisenv"
)

var clusterFailoverScenario = &Scenario{
	Name:    "cluster-failover",
	Summary: "a cluster shard's primary killed with a lock its replica never got, replica promoted: the loss and the violation are detected",
	Description: "A Redis Cluster of 3 primaries with one replica each. Replication of the lock's shard is cut " +
		"(its primary refuses its replica's resync), then the holder takes the lock there: the primary " +
		"acknowledges it, the replica never sees it. The primary is killed halfway between renewals and its " +
		"replica promoted with CLUSTER FAILOVER FORCE; cluster clients find the new primary through MOVED " +
		"replies and topology rescans. The contender takes the lock at once on the promoted replica while the " +
		"holder still believes it holds it: a cluster shard replicates asynchronously, as a Sentinel pair does. " +
		"A holder that ignores Lost (as on Redisson's API) works on alongside the new owner; one that honours " +
		"it stops at its next renewal on the promoted replica, which finds its hold gone.",
	Invariant:       "ignore-lost: the violation is detected; both: the holder is told of its loss, and the contender gets the lock only after the failover; honour-lost: any overlap ends within one renewal period",
	ExpectViolation: true,
	Process:         true,
	Topology:        redisenv.TopologyCluster,
	Variants: []Variant{
		{Name: "ignore-lost", Plan: clusterFailoverPlan, run: func(r *rig) error { return clusterFailover(r, false) }},
		{Name: "honour-lost", Plan: clusterFailoverPlan, run: func(r *rig) error { return clusterFailover(r, true) }},
	},
}

// clusterFailoverPlan cuts the replication of the first lock's shard, then
// fails the shard over halfway between renewals.
func clusterFailoverPlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{
		{At: 0, For: failoverRun(t) + time.Minute, Kind: "replication_cut", Target: "redis:shard of lock-0", Detail: "primary refuses PSYNC/SYNC, replica links dropped",
			build: func(r *rig) faults.Fault { return notify(faults.ReplicationCut(r.env, r.prefix+"lock-0"), r.ready) }},
		{At: killAt(t), For: 0, Kind: "cluster_failover", Target: "redis:shard of lock-0", Detail: "SIGKILL the shard's primary, CLUSTER FAILOVER FORCE on its replica",
			build: func(r *rig) faults.Fault { return faults.ClusterFailover(r.env, r.prefix+"lock-0") }},
	}
}

func clusterFailover(r *rig, honour bool) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	r.ready = make(chan struct{}) // the holder acquires once replication is cut
	if err := r.newClients(); err != nil {
		return err
	}
	res, err := r.failoverDuel(honour, "cluster_failover")
	if err != nil || res == nil {
		return err
	}
	if !honour {
		r.check("checker detects the violation", "≥ 1 violation", violations(res), res.Safety.Violations >= 1)
		return nil
	}
	// The holder renews every third of the timeout; the first renewal on
	// the promoted replica tells it. Whether the contender got in before
	// that is a race; how long they overlapped is not.
	bound := r.t.Watchdog/3 + 500*time.Millisecond
	window := time.Duration(res.Safety.UnsafeUs * 1e3)
	r.check("any overlap ends within a renewal period", "≤ "+bound.String(), window.Round(time.Millisecond).String(), window <= bound)
	return nil
}
