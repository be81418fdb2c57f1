package scenarios

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
)

// All is the catalogue, in the order chaos list shows and --all runs.
func All() []*Scenario { return catalog }

var catalog = []*Scenario{
	{
		Name:    "watchdog-keepalive",
		Summary: "a watchdog lock held for 3× the watchdog timeout on a healthy network is never lost",
		Description: "One client takes a lock without a lease and holds it for three watchdog timeouts while a " +
			"second client keeps trying to take it. The watchdog must renew the lease every third of the " +
			"timeout, so the key's TTL never runs out, the holder is never told it lost the lock, and the " +
			"contender gets it only after the holder lets go.",
		Invariant: "holder never lost; TTL stays above a third of the timeout; contender acquires only after the release; zero violations",
		Variants:  []Variant{{Name: "run", Plan: noFaults, run: keepalive}},
	},
	{
		Name:    "watchdog-loss",
		Summary: "holder partitioned past the watchdog timeout: violation when it ignores Lost, none when it honours it",
		Description: "The holder's client is cut off from Redis (all its traffic dropped) for twice the watchdog " +
			"timeout while its application keeps working. Its renewals cannot arrive, the key expires, and a " +
			"second client takes the lock. An application on Redisson's API gets no signal and keeps going, " +
			"so two owners work at once: the checker must detect it and time the unsafe window. With " +
			"lockimpl's Lost channel honoured, the holder stops before the key can have expired: zero violations.",
		Invariant:       "ignore-lost: the violation is detected and timed; honour-lost: zero violations, and the contender still gets the lock during the partition",
		ExpectViolation: true,
		Variants: []Variant{
			{Name: "ignore-lost", Plan: partitionHolder, run: func(r *rig) error { return watchdogLoss(r, false) }},
			{Name: "honour-lost", Plan: partitionHolder, run: func(r *rig) error { return watchdogLoss(r, true) }},
		},
	},
	{
		Name:    "lease-expiry",
		Summary: "fixed lease shorter than the hold: violations detected, counted and timed",
		Description: "Four owners on two clients contend for one lock with a fixed lease of L while each holds it " +
			"for 2.5 L. The lease runs out in the middle of every hold, the next owner takes the lock, and " +
			"holders that do not check carry on. The checker counts the overlaps and sums how long the lock " +
			"had two owners; holders that honour Lost stop at the lease's end instead.",
		Invariant:       "ignore-lost: violations detected, counted and timed; honour-lost: zero violations",
		ExpectViolation: true,
		Variants: []Variant{
			{Name: "ignore-lost", Plan: noFaults, run: func(r *rig) error { return leaseExpiry(r, false) }},
			{Name: "honour-lost", Plan: noFaults, run: func(r *rig) error { return leaseExpiry(r, true) }},
		},
	},
	{
		Name:    "latency",
		Summary: "50–200 ms latency with jitter on every client: safe, and the cost in throughput and p99 measured",
		Description: "The rw90 workload runs once on a clean network and once with 125 ms ± 75 ms latency added " +
			"to every client's connection in both directions. The lock must stay safe; the report gives the " +
			"throughput and acquire p99 of both runs and their ratio.",
		Invariant: "zero violations in both runs; throughput under latency above zero",
		Variants: []Variant{
			{Name: "baseline", Plan: noFaults, run: func(r *rig) error { return latency(r, false) }},
			{Name: "latency", Plan: latencyPlan, run: func(r *rig) error { return latency(r, true) }},
		},
	},
	{
		Name:    "partition-heal",
		Summary: "every client cut off for seconds, then healed: safe, every lock acquirable, nothing stuck or leaked",
		Description: "A contended mutex workload over four locks runs while every client's traffic is dropped for " +
			"a few seconds. Holds expire or are given up; waiters time out and retry. After the heal the " +
			"workload must recover, every lock must be acquirable by a fresh client, the run must end on " +
			"time (no waiter stuck), and no key of the run may remain without a TTL.",
		Invariant: "zero violations; throughput recovers after the heal; every lock acquirable; run ends on time; no leaked keys",
		Variants:  []Variant{{Name: "run", Plan: partitionAll, run: partitionHeal}},
	},
	{
		Name:    "reset-storm",
		Summary: "repeated connection resets: clients recover, goroutines do not grow, zero violations",
		Description: "The rw90 workload runs while bursts of TCP resets (reset_peer) hit every client's " +
			"connections at seeded random times. Every operation in flight fails; the clients must " +
			"reconnect and carry on, the harness and lockimpl must not leak goroutines, and the lock must stay safe.",
		Invariant: "zero violations; throughput back once a lease has passed after the storm; no goroutine left once the clients close",
		Variants:  []Variant{{Name: "run", Plan: resetPlan, run: resetStorm}},
	},
	{
		Name:    "redis-restart",
		Summary: "Redis killed and restarted while locks are held: lost locks and violations without persistence; AOF always keeps them",
		Description: "Two holders on two clients hold watchdog locks while contenders poll for them. Redis is " +
			"killed (SIGKILL) halfway between two watchdog renewals and restarted at once. Without " +
			"persistence the restarted server is empty: contenders take the locks at once, and the holders " +
			"learn of the loss only at their next renewal, so the checker must see two owners in that window. " +
			"With appendonly and appendfsync always, every acknowledged write is on disk: the locks survive.",
		Invariant:       "no-persistence: loss and violation detected; aof-always: no loss, zero violations",
		ExpectViolation: true,
		Process:         true,
		Variants: []Variant{
			{Name: "no-persistence", Plan: killPlan, run: func(r *rig) error { return redisRestart(r, false) }},
			{Name: "aof-always", Plan: killPlan, run: func(r *rig) error { return redisRestart(r, true) }},
		},
	},
	{
		Name:    "redis-pause",
		Summary: "Redis paused past the lease, then resumed: what happens to the holder and the TTL",
		Description: "A holder keeps a watchdog lock while a contender waits. Redis is frozen (SIGSTOP) for 1.5× " +
			"the watchdog timeout. The server's clock runs on while it is stopped, so on resume (SIGCONT) " +
			"the key is already past its expiry. The report shows the TTL before the pause, when the holder " +
			"learned of the loss, what the first reply after the resume said, and when the contender got the lock.",
		Invariant: "holder told of the loss before the resume; holder's hold gone after the resume; contender acquires; zero violations",
		Process:   true,
		Variants:  []Variant{{Name: "run", Plan: pausePlan, run: redisPause}},
	},
	{
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
		Variants:        []Variant{{Name: "run", Plan: failoverPlan, run: failover}},
	},
	{
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
	},
	{
		Name:    "slot-migration",
		Summary: "a held, contended lock's slot moved to another primary: no violation, waiters still woken",
		Description: "A Redis Cluster of 3 primaries. Holders take their locks and keep them while contenders block on " +
			"them (pub/sub waiters on SSUBSCRIBE). The first lock's slot then moves to another primary: SETSLOT " +
			"IMPORTING and MIGRATING, MIGRATE of its keys (the held lock among them), and SETSLOT NODE, kept " +
			"half-moved meanwhile so that renewals and retries meet ASK redirects. The source drops the waiters' " +
			"sharded subscriptions when the slot leaves it (SUNSUBSCRIBE); they must subscribe again at the new " +
			"owner. The holders let go after the move: the contenders must take the locks at once, woken by the " +
			"unlock message, not by the TTL.",
		Invariant: "zero violations; no holder loses its lock; every contender acquires within 500 ms of the release",
		Process:   true,
		Topology:  redisenv.TopologyCluster,
		Variants:  []Variant{{Name: "run", Plan: migrationPlan, run: slotMigration}},
	},
	{
		Name:    "fair-clock-skew",
		Summary: "one client's clock skewed by minutes: fair-lock FIFO violations and starvation measured",
		Description: "The fair lock sends each client's wall clock to Redis as \"now\" for queue deadlines. Round " +
			"after round, a holder keeps the lock while one waiter queues and, clearly later, a second one; then " +
			"the holder lets go and the round records who got the lock first. Without skew the first waiter " +
			"always does. With the second waiter's clock 10 minutes ahead, its attempt finds the first " +
			"waiter's deadline passed and drops it from the queue: it jumps the queue. With the first " +
			"waiter's clock 10 minutes behind, the deadline it queues with is already past for everyone " +
			"else, and the second waiter's attempt drops it. Mutual exclusion does not depend on clocks and must hold.",
		Invariant:       "zero violations in every run; no overtake without skew; the later waiter overtakes under either skew",
		ExpectViolation: true,
		Variants: []Variant{
			{Name: "no-skew", Plan: noFaults, run: func(r *rig) error { return clockSkew(r, 0) }},
			{Name: "ahead", Plan: skewPlan(2, skew), run: func(r *rig) error { return clockSkew(r, skew) }},
			{Name: "behind", Plan: skewPlan(1, -skew), run: func(r *rig) error { return clockSkew(r, -skew) }},
		},
	},
	{
		Name:    "client-freeze",
		Summary: "holder frozen longer than the lease (GC pause): violation unless it checks Lost after waking",
		Description: "The holder's client stops entirely for 1.5× the watchdog timeout, as in a long " +
			"stop-the-world GC pause: its application halts and nothing it sends reaches Redis, its watchdog " +
			"included. The key expires and a contender takes the lock. On waking, a holder that just carries " +
			"on works alongside the new owner; one that checks Lost first stops.",
		Invariant:       "ignore-lost: the violation is detected; honour-lost: zero violations, and the contender gets the lock during the freeze",
		ExpectViolation: true,
		Variants: []Variant{
			{Name: "ignore-lost", Plan: freezePlan, run: func(r *rig) error { return clientFreeze(r, false) }},
			{Name: "honour-lost", Plan: freezePlan, run: func(r *rig) error { return clientFreeze(r, true) }},
		},
	},
}

// skew is the clock offset of fair-clock-skew: far larger than the
// waiters' queue deadlines (the lock's TTL plus their 10 s wait).
const skew = 10 * time.Minute

func noFaults(Timing, *rand.Rand) []Planned { return nil }

// faultStart is when the holder-targeted faults begin: the holder has
// acquired by then.
const faultStart = 500 * time.Millisecond

func partitionHolder(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: faultStart, For: 2 * t.Watchdog, Kind: "blackhole", Target: "client:0", Detail: "drop all data both",
		build: func(r *rig) faults.Fault { return faults.Blackhole("client:0", r.proxies[:1], faults.Both) }}}
}

func freezePlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: faultStart, For: t.Watchdog * 3 / 2, Kind: "freeze", Target: "client:0", Detail: "application paused, all traffic dropped",
		build: func(r *rig) faults.Fault { return faults.Freeze("client:0", r.gates[0], r.proxies[:1]) }}}
}

func latencyPlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: 0, For: latencyRun(t) + time.Minute, Kind: "latency", Target: "clients", Detail: "125ms ±75ms both",
		build: func(r *rig) faults.Fault {
			return faults.Latency("clients", r.proxies, 125*time.Millisecond, 75*time.Millisecond, faults.Both)
		}}}
}

func latencyRun(t Timing) time.Duration { return t.pick(20*time.Second, 4*time.Second) }

func partitionWindow(t Timing) (at, dur time.Duration) {
	return t.pick(5*time.Second, 2*time.Second), t.pick(10*time.Second, 3*time.Second)
}

func partitionAll(t Timing, _ *rand.Rand) []Planned {
	at, dur := partitionWindow(t)
	return []Planned{{At: at, For: dur, Kind: "blackhole", Target: "clients", Detail: "drop all data both",
		build: func(r *rig) faults.Fault { return faults.Blackhole("clients", r.proxies, faults.Both) }}}
}

// resetRun is the storm's run; bursts fall in the first resetWindow after
// 1 s, leaving more than a watchdog timeout to recover (a lock whose
// unlock a reset swallowed stays held until its lease runs out).
func resetRun(t Timing) time.Duration    { return t.pick(60*time.Second, 12*time.Second) }
func resetWindow(t Timing) time.Duration { return t.pick(24*time.Second, 4*time.Second) }

// resetPlan draws the burst times from the seed: same seed, same storm.
func resetPlan(t Timing, rng *rand.Rand) []Planned {
	n := 20
	if t.Quick {
		n = 6
	}
	var ats []time.Duration
	for range n {
		ats = append(ats, time.Second+time.Duration(rng.Int64N(int64(resetWindow(t)))).Truncate(time.Millisecond))
	}
	slices.Sort(ats)
	var ps []Planned
	for _, at := range ats {
		ps = append(ps, Planned{At: at, For: 200 * time.Millisecond, Kind: "reset_peer", Target: "clients", Detail: "RST after 0s",
			build: func(r *rig) faults.Fault { return faults.ResetPeer("clients", r.proxies, 0) }})
	}
	return ps
}

// killAt is halfway between the watchdog's first and second renewals
// (clients are made just before the plan starts): the holders learn of a
// loss no sooner than a sixth of the timeout later.
func killAt(t Timing) time.Duration { return t.Watchdog / 2 }

func killPlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: killAt(t), For: 0, Kind: "kill", Target: "redis:primary", Detail: "SIGKILL, restart at once",
		build: func(r *rig) faults.Fault {
			return faults.WithProxiesDown(faults.KillRestart(r.env.Primary()), r.proxies)
		}}}
}

func pauseFor(t Timing) time.Duration { return t.Watchdog * 3 / 2 }

func pausePlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: faultStart, For: pauseFor(t), Kind: "pause", Target: "redis:primary", Detail: "SIGSTOP, SIGCONT on revert",
		build: func(r *rig) faults.Fault { return faults.Pause(r.env.Primary()) }}}
}

func failoverPlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{
		{At: 0, For: failoverRun(t) + time.Minute, Kind: "replication_cut", Target: "redis:primary", Detail: "primary refuses PSYNC/SYNC, replica link dropped",
			build: func(r *rig) faults.Fault { return notify(faults.ReplicationCut(r.env, ""), r.ready) }},
		{At: killAt(t), For: 0, Kind: "failover", Target: "redis:primary", Detail: "SIGKILL the primary, promote the replica, repoint clients",
			build: func(r *rig) faults.Fault { return faults.Failover(r.env, r.proxies) }},
	}
}

func failoverRun(t Timing) time.Duration { return killAt(t) + t.Watchdog }

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

// migrationHold keeps the slot half-moved, so that clients meet ASK.
const migrationHold = 500 * time.Millisecond

// migrationRelease is when the holders let go: after the move is done.
func migrationRelease(t Timing) time.Duration {
	return faultStart + t.pick(10*time.Second, 3*time.Second)
}

func migrationPlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: faultStart, For: migrationRelease(t) + t.Watchdog + time.Minute, Kind: "slot_migration", Target: "redis:slot of lock-0",
		Detail: fmt.Sprintf("slot moved to another primary, held half-moved %v; moved back on revert", migrationHold),
		build:  func(r *rig) faults.Fault { return faults.SlotMigration(r.env, r.prefix+"lock-0", migrationHold) }}}
}

// skewPlan skews client c (1: the first waiter, 2: the second) from the
// start; the rounds take under a second each.
func skewPlan(c int, by time.Duration) func(Timing, *rand.Rand) []Planned {
	target := fmt.Sprintf("client:%d", c)
	return func(t Timing, _ *rand.Rand) []Planned {
		// Rounds take about a lease (1 s) each; the stage's end reverts
		// the skew whenever they are done.
		return []Planned{{At: 0, For: time.Duration(skewRounds(t))*3*time.Second + time.Minute, Kind: "clock_skew", Target: target, Detail: fmt.Sprintf("clock %+v", by),
			build: func(r *rig) faults.Fault { return notify(faults.ClockSkew(target, r.clocks[c], by), r.ready) }}}
	}
}

func skewRounds(t Timing) int {
	if t.Quick {
		return 12
	}
	return 40
}

// notified wraps a fault to close ch once its injection is over (done or
// failed: a failure is recorded and checked), so that actors can start
// after it, not after a guessed delay, and never wait for ever.
type notified struct {
	faults.Fault
	ch chan struct{}
}

func notify(f faults.Fault, ch chan struct{}) faults.Fault { return &notified{f, ch} }

func (n *notified) Inject(ctx context.Context) (func(context.Context) error, error) {
	defer close(n.ch)
	return n.Fault.Inject(ctx)
}

// ---- the scenarios ----

func keepalive(r *rig) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	if err := r.newClients(); err != nil {
		return err
	}
	w := r.t.Watchdog
	holdFor := 3 * w
	// Sample the key's TTL while it is held: its minimum shows the renewals.
	minTTL := make(chan time.Duration, 1)
	go func() {
		low := time.Duration(-1)
		defer func() { minTTL <- low }()
		name := r.prefix + "lock-0"
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		end := time.Now().Add(holdFor - 200*time.Millisecond)
		for now := range t.C {
			if now.After(end) || r.ctx.Err() != nil {
				return
			}
			if d, err := r.raw.PTTL(r.ctx, name).Result(); err == nil && d > 0 && (low < 0 || d < low) {
				low = d
			}
		}
	}()
	out, err := r.runDuel(duel{pairs: 1, holdUntil: holdFor, honour: true, until: holdFor + w, poll: w / 10, contHold: 100 * time.Millisecond})
	low := <-minTTL
	if err != nil {
		return err
	}
	res := out.res
	r.safetyFigures(res)
	r.figure("lowest TTL while held", ms(low), "ms")
	r.figure("contender first acquired", secs(out.base, out.firstContend[0]), "s")
	r.check("holder never lost", "0 losses", fmt.Sprint(out.holderLost, " losses"), out.holderLost == 0)
	r.check("TTL kept above a third of the timeout", "> "+(w/3).String(), low.String(), low > w/3)
	r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	first := out.firstContend[0]
	r.check("contender acquires after the release", fmt.Sprintf("after %v", holdFor), since(out.base, first),
		!first.IsZero() && first.Sub(out.base) >= holdFor)
	return nil
}

func watchdogLoss(r *rig, honour bool) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	if err := r.newClients(); err != nil {
		return err
	}
	w := r.t.Watchdog
	cut := faultStart + 2*w
	out, err := r.runDuel(duel{pairs: 1, holdUntil: cut + w/2, honour: honour, until: cut + w/2, contHold: w / 4})
	if err != nil {
		return err
	}
	return holderVsContender(r, out, honour, faultStart, cut, "partition")
}

func clientFreeze(r *rig, honour bool) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	if err := r.newClients(); err != nil {
		return err
	}
	w := r.t.Watchdog
	thaw := faultStart + w*3/2
	out, err := r.runDuel(duel{pairs: 1, holdUntil: thaw + time.Second, honour: honour, frozen: true, until: thaw + time.Second, contHold: w / 4})
	if err != nil {
		return err
	}
	return holderVsContender(r, out, honour, faultStart, thaw, "freeze")
}

// holderVsContender judges watchdog-loss and client-freeze: the fault
// (from..to) cut the holder off long enough for its key to expire.
func holderVsContender(r *rig, out *duelOutcome, honour bool, from, to time.Duration, what string) error {
	res := out.res
	r.safetyFigures(res)
	r.figure("holder told of the loss", secs(out.base, out.holderLostAt[0]), "s")
	r.figure("contender first acquired", secs(out.base, out.firstContend[0]), "s")
	first := out.firstContend[0]
	during := !first.IsZero() && first.Sub(out.base) > from && first.Sub(out.base) < to
	r.check("contender takes the expired lock during the "+what, fmt.Sprintf("between %v and %v", from, to), since(out.base, first), during)
	r.check("holder told of the loss", "told", fmt.Sprintf("told: %v", out.holderLost == 1), out.holderLost == 1)
	if honour {
		r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	} else {
		r.check("checker detects the violation", "≥ 1 violation", violations(res), res.Safety.Violations >= 1)
	}
	return nil
}

func leaseExpiry(r *rig, honour bool) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	lease := r.t.pick(2*time.Second, 500*time.Millisecond)
	p := profile("mutex", "clients", "2", "owners", "2", "locks", "1", "hold", (lease * 5 / 2).String(), "think", "10ms",
		"lease", lease.String(), "wait", "0", "warmup", "0", "duration", r.t.pick(30*time.Second, 5*time.Second).String())
	res, err := r.workload(p, !honour)
	if err != nil {
		return err
	}
	r.safetyFigures(res)
	r.figure("unsafe share of the run", 100*res.Safety.UnsafeUs/1e6/max(res.Measured, 1e-9), "%")
	r.figure("acquisitions", float64(res.Throughput.Ops), "")
	r.check("holds outlive their lease", "≥ 1 lost", fmt.Sprint(res.Throughput.Lost, " lost"), res.Throughput.Lost >= 1)
	if honour {
		r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	} else {
		r.check("checker detects, counts and times the violations", "≥ 1 violation with a window", violations(res),
			res.Safety.Violations >= 1 && res.Safety.UnsafeUs > 0)
	}
	return nil
}

func latency(r *rig, inject bool) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	p := profile("rw90", "clients", "2", "owners", "4", "locks", "8", "warmup", "0",
		"duration", latencyRun(r.t).String())
	res, err := r.workload(p, false)
	if err != nil {
		return err
	}
	r.figure("throughput", res.Throughput.OpsPerSec, "ops/s")
	r.figure("acquire read p99", res.Latency["acquire_read"].P99/1e3, "ms")
	r.figure("acquire write p99", res.Latency["acquire_write"].P99/1e3, "ms")
	r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	if !inject {
		return nil
	}
	r.check("progress under latency", "> 0 ops/s", fmt.Sprintf("%.0f ops/s", res.Throughput.OpsPerSec), res.Throughput.OpsPerSec > 0)
	if i := slices.IndexFunc(r.rep.Runs, func(s RunSummary) bool { return s.Variant == "baseline" }); i >= 0 {
		base := (*r.kept)[i]
		r.figure("throughput vs baseline", res.Throughput.OpsPerSec/max(base.Throughput.OpsPerSec, 1e-9), "×")
		r.figure("write p99 vs baseline", res.Latency["acquire_write"].P99/max(base.Latency["acquire_write"].P99, 1e-9), "×")
	}
	return nil
}

func partitionHeal(r *rig) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	at, dur := partitionWindow(r.t)
	total := r.t.pick(40*time.Second, 9*time.Second)
	p := profile("mutex", "clients", "2", "owners", "3", "locks", "4", "hold", "uniform(1ms,10ms)", "think", "exp(5ms)",
		"wait", "0", "warmup", "0", "duration", total.String())
	began := time.Now()
	res, err := r.workload(p, false)
	if err != nil {
		return err
	}
	elapsed := time.Since(began)
	r.safetyFigures(res)
	r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	healed := (at + dur).Seconds()
	var before, after int64
	for _, pt := range res.Series {
		switch {
		case pt.T <= at.Seconds():
			before += pt.Ops
		case pt.T > healed+1:
			after += pt.Ops
		}
	}
	r.figure("ops before the partition", float64(before), "")
	r.figure("ops from 1 s after the heal", float64(after), "")
	beforeRate, afterRate := rate(res.Series, 0, at.Seconds()), rate(res.Series, healed+1, math.Inf(1))
	r.check("throughput recovers after the heal", fmt.Sprintf("≥ a quarter of %.0f ops/s", beforeRate), fmt.Sprintf("%.0f ops/s", afterRate),
		beforeRate > 0 && afterRate >= beforeRate/4)
	limit := total + r.t.Watchdog + 5*time.Second
	r.check("run ends on time (no stuck waiter)", "≤ "+limit.String(), elapsed.Round(time.Millisecond).String(), elapsed <= limit)

	// Every lock must be free for a fresh owner within one watchdog
	// timeout (a hold cut off by the partition expires by then).
	probe := r.redisFor(0, 2)
	defer probe.Close()
	lc, err := lockimpl.NewClient(probe, r.lockOptions(0))
	if err != nil {
		return err
	}
	defer lc.Close()
	o := lc.NewOwner()
	var stuck []string
	for i := range p.Locks {
		l := o.Lock(fmt.Sprintf("%s%d", r.prefix, i))
		ok, err := l.TryLock(r.ctx, r.t.Watchdog+2*time.Second, time.Second)
		if !ok || err != nil {
			stuck = append(stuck, fmt.Sprintf("%d (%v)", i, err))
			continue
		}
		_ = l.Unlock(r.ctx)
	}
	r.check("every lock acquirable after the heal", "all "+fmt.Sprint(p.Locks), fmt.Sprintf("%d stuck %v", len(stuck), stuck), len(stuck) == 0)
	leaked, expiring, err := scanKeys(r.ctx, r.raw, r.prefix)
	if err != nil {
		return err
	}
	r.figure("keys left with a TTL (unlock latches)", float64(len(expiring)), "")
	r.check("no leaked keys", "0 keys without a TTL", fmt.Sprintf("%d %v", len(leaked), leaked), len(leaked) == 0)
	return nil
}

// scanKeys lists the run's keys: those without a TTL (leaked) and those
// that will expire by themselves.
func scanKeys(ctx context.Context, rdb redis.UniversalClient, prefix string) (leaked, expiring []string, err error) {
	iter := rdb.Scan(ctx, 0, "*"+prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		d, err := rdb.PTTL(ctx, k).Result()
		if err != nil {
			return nil, nil, err
		}
		switch {
		case d == -1 || d == -1*time.Millisecond:
			leaked = append(leaked, k)
		case d > 0:
			expiring = append(expiring, k)
		}
	}
	return leaked, expiring, iter.Err()
}

func resetStorm(r *rig) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	g0 := runtime.NumGoroutine() // Redis and proxies up, no client yet
	p := profile("rw90", "clients", "2", "owners", "4", "locks", "8", "warmup", "0", "duration", resetRun(r.t).String())
	res, err := r.workload(p, false)
	if err != nil {
		return err
	}
	r.safetyFigures(res)
	r.figure("errors", float64(res.ErrorCount()), "")
	r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	first, last := math.Inf(1), 0.0
	for _, e := range res.Events {
		first, last = min(first, e.Start), max(last, e.End)
	}
	// Before the storm, and after it plus one lease: by then a lock whose
	// unlock a reset swallowed has expired.
	calm := last + r.t.Watchdog.Seconds() + 1
	before, after := rate(res.Series, 0, first), rate(res.Series, calm, math.Inf(1))
	r.figure("ops/s before the storm", before, "ops/s")
	r.figure("ops/s one lease after the storm", after, "ops/s")
	r.check("clients recover after the storm", fmt.Sprintf("≥ a quarter of %.0f ops/s", before), fmt.Sprintf("%.0f ops/s", after), before > 0 && after >= before/4)
	// Every client is closed by now; their goroutines (and the proxies'
	// links for their connections) must all end. Wait for it, boundedly.
	g, deadline := runtime.NumGoroutine(), time.Now().Add(10*time.Second)
	for g > g0+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		g = runtime.NumGoroutine()
	}
	r.figure("goroutines before the clients", float64(g0), "")
	r.figure("goroutines at peak", float64(res.Runtime.GoroutinesMax), "")
	r.figure("goroutines after the clients closed", float64(g), "")
	r.check("no goroutine left behind", fmt.Sprintf("≤ %d (start + 2)", g0+2), fmt.Sprint(g), g <= g0+2)
	return nil
}

// rate is the mean ops/s of the series points ending in (from, to].
func rate(series []results.Point, from, to float64) float64 {
	var ops int64
	var secs float64
	prev := 0.0
	for _, pt := range series {
		if pt.T > from && pt.T <= to {
			ops += pt.Ops
			secs += pt.T - max(prev, from)
		}
		prev = pt.T
	}
	if secs <= 0 {
		return 0
	}
	return float64(ops) / secs
}

func redisRestart(r *rig, aof bool) error {
	if err := r.start(3, func(c *redisenv.Config) {
		c.AppendOnly = aof
		if aof {
			c.AppendFsync = "always"
		}
	}); err != nil {
		return err
	}
	if err := r.newClients(); err != nil {
		return err
	}
	w := r.t.Watchdog
	end := killAt(r.t) + w
	out, err := r.runDuel(duel{pairs: 2, holdUntil: end, honour: true, until: end, poll: 20 * time.Millisecond, contHold: 50 * time.Millisecond})
	if err != nil {
		return err
	}
	res := out.res
	r.safetyFigures(res)
	for _, e := range res.Events {
		if e.Kind == "kill" {
			r.figure("kill to restarted", (e.End-e.Start)*1e3, "ms")
		}
	}
	for i, t := range out.holderLostAt {
		r.figure(fmt.Sprintf("holder %d told of the loss", i), secs(out.base, t), "s")
	}
	if !aof {
		r.check("holders told of the loss", "≥ 1", fmt.Sprint(out.holderLost), out.holderLost >= 1)
		r.check("checker detects the violation", "≥ 1 violation", violations(res), res.Safety.Violations >= 1)
		return nil
	}
	r.check("locks survive the restart", "0 losses", fmt.Sprint(out.holderLost, " losses"), out.holderLost == 0)
	r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	return nil
}

func redisPause(r *rig) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	if err := r.newClients(); err != nil {
		return err
	}
	w := r.t.Watchdog
	resume := faultStart + pauseFor(r.t)
	name := r.prefix + "lock-0"
	holderField := r.clients[0].lc.ID() + ":"
	type reading struct {
		before     time.Duration // TTL just before the pause
		afterAt    time.Time     // first reply after the resume
		afterTTL   time.Duration
		holderKept bool
		base       time.Time
	}
	readings := make(chan reading, 1)
	base := time.Now()
	go func() {
		var rd reading
		rd.base = base
		defer func() { readings <- rd }()
		mon := redis.NewClient(&redis.Options{Addr: r.env.Addr(), Protocol: 2, MaxRetries: -1,
			ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond})
		defer mon.Close()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for now := range t.C {
			if r.ctx.Err() != nil || now.Sub(base) > resume+w {
				return
			}
			since := now.Sub(base)
			d, err := mon.PTTL(r.ctx, name).Result()
			switch {
			case since < faultStart-50*time.Millisecond:
				if err == nil {
					rd.before = d
				}
			case since > resume && err == nil && rd.afterAt.IsZero():
				rd.afterAt, rd.afterTTL = time.Now(), d
				fields, _ := mon.HKeys(r.ctx, name).Result()
				rd.holderKept = slices.ContainsFunc(fields, func(f string) bool { return strings.HasPrefix(f, holderField) })
				return
			}
		}
	}()
	out, err := r.runDuel(duel{pairs: 1, holdUntil: resume + w/2, honour: true, until: resume + w/2, contHold: w / 4})
	rd := <-readings
	if err != nil {
		return err
	}
	res := out.res
	r.safetyFigures(res)
	r.figure("TTL before the pause", ms(rd.before), "ms")
	r.figure("first reply after the resume", secs(out.base, rd.afterAt), "s")
	r.figure("TTL in that reply", ms(rd.afterTTL), "ms")
	r.figure("holder told of the loss", secs(out.base, out.holderLostAt[0]), "s")
	r.figure("contender first acquired", secs(out.base, out.firstContend[0]), "s")
	resumeAt := out.base.Add(resume)
	for _, e := range res.Events {
		if e.Kind == "pause" {
			resumeAt = out.base.Add(time.Duration(e.End * float64(time.Second)))
		}
	}
	lost := out.holderLostAt[0]
	r.check("holder told of the loss before the resume", "before "+resume.String(), since(out.base, lost), !lost.IsZero() && lost.Before(resumeAt))
	r.check("holder's hold gone after the resume", "no field of the holder", fmt.Sprintf("holder field present: %v (TTL %v)", rd.holderKept, rd.afterTTL),
		!rd.afterAt.IsZero() && !rd.holderKept)
	first := out.firstContend[0]
	r.check("contender acquires after the resume", "after "+resume.String(), since(out.base, first), !first.IsZero() && !first.Before(resumeAt))
	r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	return nil
}

func failover(r *rig) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	// The holder acquires once replication is cut: the cut is an ACL on
	// the primary, which works wherever the servers run (a proxy in the
	// replication path could not be reached from a replica container).
	r.ready = make(chan struct{})
	if err := r.newClients(); err != nil {
		return err
	}
	res, err := r.failoverDuel(true, "failover")
	if err != nil {
		return err
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
	r.figure("holder told of the loss", secs(out.base, out.holderLostAt[0]), "s")
	r.figure("contender first acquired", secs(out.base, out.firstContend[0]), "s")
	first := out.firstContend[0]
	r.check("contender acquires on the promoted replica", fmt.Sprintf("after %.2fs", failAt), since(out.base, first),
		!first.IsZero() && failAt > 0 && first.Sub(out.base).Seconds() > failAt)
	r.check("holder told of the loss", "1", fmt.Sprint(out.holderLost), out.holderLost == 1)
	return res, nil
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
	if err != nil {
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

func slotMigration(r *rig) error {
	const pairs = 2 // lock-0 moves; lock-1 stays put, for comparison
	if err := r.start(pairs+1, nil); err != nil {
		return err
	}
	if err := r.newClients(); err != nil {
		return err
	}
	release := migrationRelease(r.t)
	slot := redisenv.KeySlot(r.prefix + "lock-0")
	from, err := r.env.ShardOf(r.ctx, slot)
	if err != nil {
		return err
	}
	// Watch the slot's owner, to know that the move was over while the
	// lock was still held (the fault's own end is its revert).
	movedAt := make(chan time.Time, 1)
	watchCtx, stopWatch := context.WithCancel(r.ctx)
	go func() {
		defer close(movedAt)
		for watchCtx.Err() == nil {
			if sh, err := r.env.ShardOf(watchCtx, slot); err == nil && sh.ID != from.ID {
				movedAt <- time.Now()
				return
			}
			select {
			case <-watchCtx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	// Contenders block (poll 0): they are pub/sub waiters for the whole
	// hold, the move included.
	out, err := r.runDuel(duel{pairs: pairs, holdUntil: release, honour: true, until: release + r.t.Watchdog, contHold: 50 * time.Millisecond})
	stopWatch()
	moved := <-movedAt
	if err != nil {
		return err
	}
	res := out.res
	r.safetyFigures(res)
	r.figure("slot owner changed", secs(out.base, moved), "s")
	r.check("slot moved while held", fmt.Sprintf("after %.2fs, before the release at %.2fs", faultStart.Seconds(), release.Seconds()),
		since(out.base, moved), !moved.IsZero() && moved.Sub(out.base) > faultStart && moved.Sub(out.base) < release)
	r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	r.check("no holder lost its lock", "0 losses", fmt.Sprint(out.holderLost, " losses"), out.holderLost == 0)
	for i, first := range out.firstContend {
		r.figure(fmt.Sprintf("contender %d woken after the release", i), secs(out.base.Add(release), first), "s")
		wake := time.Duration(-1)
		if !first.IsZero() {
			wake = first.Sub(out.base.Add(release))
		}
		r.check(fmt.Sprintf("contender %d (lock-%d) woken by the unlock", i, i), "within 500ms of the release",
			since(out.base, first), wake >= -20*time.Millisecond && wake <= 500*time.Millisecond)
	}
	return nil
}

func clockSkew(r *rig, by time.Duration) error {
	if err := r.start(3, nil); err != nil {
		return err
	}
	if err := r.newClients(); err != nil {
		return err
	}
	name := r.prefix + "fair"
	queue := "redisson_lock_queue:{" + name + "}"
	holder := r.clients[0].lc.NewOwner().FairLock(name)
	first := r.clients[1].lc.NewOwner().FairLock(name)
	second := r.clients[2].lc.NewOwner().FairLock(name)
	r.ready = make(chan struct{})
	st := r.newStage([]string{"holder", "first", "second"}, []string{name})
	if by != 0 {
		<-r.ready // the skew is in before the first round
	}
	// queued waits (boundedly) until owner heads or sits in the queue.
	queued := func(l *lockimpl.Lock) error {
		deadline := time.Now().Add(5 * time.Second)
		for !slices.Contains(r.raw.LRange(r.ctx, queue, 0, -1).Val(), l.Owner().ID()) {
			if time.Now().After(deadline) || r.ctx.Err() != nil {
				return fmt.Errorf("%s never appeared in the queue", l.Owner().ID())
			}
			time.Sleep(2 * time.Millisecond)
		}
		return nil
	}
	rounds, overtakes := skewRounds(r.t), 0
	work := holdSpec{dur: 5 * time.Millisecond, slice: 5 * time.Millisecond, honour: true}
	for range rounds {
		if r.ctx.Err() != nil {
			break
		}
		// A short lease: a waiter dropped from the queue is not notified and
		// retries after the lock's TTL, so that TTL paces the rounds.
		called := time.Now()
		if err := holder.LockLease(r.ctx, time.Second); err != nil {
			return err
		}
		held := holderOp(st, called, time.Now())
		got := make([]time.Time, 2)
		done := make(chan error, 2)
		for i, l := range []*lockimpl.Lock{first, second} {
			go func() {
				_, err := st.section(int32(i+1), 0, l, func() (bool, error) {
					ok, err := l.TryLock(r.ctx, 10*time.Second, 0)
					got[i] = time.Now()
					return ok, err
				}, work)
				done <- err
			}()
			if err := queued(l); err != nil {
				return err
			}
			time.Sleep(20 * time.Millisecond) // the second call is clearly later
		}
		held.Released = st.at(time.Now())
		if err := holder.Unlock(r.ctx); err != nil {
			return err
		}
		held.Done = st.at(time.Now())
		st.record(held)
		for range 2 {
			if err := <-done; err != nil {
				return err
			}
		}
		if got[1].Before(got[0]) {
			overtakes++
		}
	}
	res, err := st.finish()
	if err != nil {
		return err
	}
	r.safetyFigures(res)
	r.figure("rounds", float64(rounds), "")
	r.figure("overtakes (the later waiter first)", float64(overtakes), "")
	r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	got := fmt.Sprintf("%d of %d rounds", overtakes, rounds)
	switch {
	case by == 0:
		r.check("FIFO order without skew", "0 overtakes", got, overtakes == 0)
	// How often depends on the deadlines already queued (a skewed deadline
	// is inherited by every waiter queued behind it), so any overtake is
	// the finding; the count is the figure.
	case by > 0:
		r.check("the waiter whose clock is ahead jumps the queue", "≥ 1 overtake", got, overtakes >= 1)
	default:
		r.check("the waiter whose clock is behind loses its place", "≥ 1 overtake", got, overtakes >= 1)
	}
	return nil
}

// holderOp is the holder's operation of a round, acquired at acq.
func holderOp(st *stage, called, acq time.Time) results.Op {
	return results.Op{Start: st.at(called), Called: st.at(called), Acquired: st.at(acq), Mode: results.Exclusive, Depth: 1}
}

// ---- small helpers ----

func violations(res *results.Result) string {
	if res.Safety.Sections == 0 {
		return "no critical section checked"
	}
	s := fmt.Sprintf("%d violations", res.Safety.Violations)
	if res.Safety.Incomplete != "" {
		s += " (incomplete: " + res.Safety.Incomplete + ")"
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func secs(base, t time.Time) float64 {
	if t.IsZero() {
		return -1
	}
	return t.Sub(base).Seconds()
}
