package scenarios

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
)

// The matrix's server-side rows with Redisson holders: the same duels as
// lockimpl's cells, the holders Redisson threads (lock() with its
// watchdog, no loss signal) in the mode an application on that Redis
// runs Redisson in (rig.redissonServers), the contenders lockimpl
// clients that poll as in the lockimpl cells.

// redisRestartRedisson is redis-restart without persistence with two
// Redisson holders, whose JVM reaches the server through client 0's proxy.
func redisRestartRedisson(r *rig) error {
	if err := r.start(3, nil); err != nil {
		return err
	}
	if err := r.newClients(); err != nil {
		return err
	}
	if err := r.startRedisson(); err != nil {
		return err
	}
	out, err := r.restartDuel(false, true)
	if err != nil {
		return err
	}
	res := out.res
	for i, t := range out.firstContend {
		r.figure(fmt.Sprintf("contender %d first acquired", i), secs(out.base, t), "s")
	}
	r.redissonUnaware(out, res)
	r.check("checker detects the violation", "≥ 1 violation", violations(res), res.Safety.Violations >= 1)
	return nil
}

// sentinelFailoverRedisson is the failover on real Sentinel with a
// Redisson holder in sentinel mode, which follows the Sentinels' election.
func sentinelFailoverRedisson(r *rig) error {
	if r.o.Redis.Backend == redisenv.BackendContainer {
		return &skipError{why: "Sentinel runs on the local backend", variant: true}
	}
	return r.redissonFailover("failover", func(c *redisenv.Config) {
		c.Topology, c.SentinelDownAfter = redisenv.TopologySentinel, sentinelDownAfter(r.t)
	})
}

// clusterFailoverRedisson is cluster-failover with a Redisson holder in
// cluster mode, which finds the promoted replica by its own rescans and
// MOVED replies.
func clusterFailoverRedisson(r *rig) error { return r.redissonFailover("cluster_failover", nil) }

// redissonFailover runs the failover duel of failoverDuel with a Redisson
// holder, from once replication is cut, on the Redis mod makes (the
// scenario's topology by default); kind is the failover's fault. Where
// Redisson refuses the holder's lock (checkLockSyncedSlaves finds no
// replica synced), or its lock() retries until the failover is over,
// nothing can overlap; otherwise the contender gets the lock after the
// failover while the holder, told nothing, works on.
func (r *rig) redissonFailover(kind string, mod func(*redisenv.Config)) error {
	if err := r.start(2, mod); err != nil {
		return err
	}
	r.ready = make(chan struct{})
	if err := r.newClients(); err != nil {
		return err
	}
	if err := r.startRedisson(); err != nil {
		return err
	}
	end := failoverRun(r.t)
	out, err := r.runDuel(duel{pairs: 1, holdUntil: end, until: end, poll: 20 * time.Millisecond, contHold: 50 * time.Millisecond, after: r.ready, redisson: true})
	if err != nil {
		return err
	}
	res := out.res
	r.safetyFigures(res)
	r.sentinelFigures()
	var failAt float64
	for _, e := range res.Events {
		if e.Kind == kind {
			failAt = e.Start
			r.figure("failover took", (e.End-e.Start)*1e3, "ms")
		}
	}
	r.figure("contender first acquired", secs(out.base, out.firstContend[0]), "s")
	r.figure("holder's acquisitions refused", float64(out.holderRefused), "")
	first := out.firstContend[0]
	r.check("contender acquires only after the failover", fmt.Sprintf("after %.2fs", failAt), since(out.base, first),
		first.IsZero() || failAt > 0 && first.Sub(out.base).Seconds() > failAt)
	// Refused, or held back by Redisson's replica check until the
	// failover was over (the lock then taken on the promoted primary),
	// the holder had no lock to lose: nothing may overlap.
	if at := out.redissonAt[0]; out.holderRefused > 0 || failAt > 0 && !at.IsZero() && at.Sub(out.base).Seconds() > failAt {
		r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
		return nil
	}
	r.redissonUnaware(out, res)
	r.check("checker detects the violation", "≥ 1 violation", violations(res), res.Safety.Violations >= 1)
	return nil
}

// redissonUnaware checks what a Redisson holder that lost its lock to a
// server fault shows: nothing told it, and its unlock found the lock gone.
func (r *rig) redissonUnaware(out *duelOutcome, res *results.Result) {
	r.check("Redisson holders told of the loss", "never (Redisson has no loss signal)", fmt.Sprint(out.holderLost, " told"), out.holderLost == 0)
	r.check("their unlock finds the lock gone", "≥ 1 lost", fmt.Sprint(res.Throughput.Lost, " lost"), res.Throughput.Lost >= 1)
}

// sentinelFigures records the Sentinels' detection and election times of
// the variant's Sentinel failover, if it had one.
func (r *rig) sentinelFigures() {
	if f := r.sentinel; f != nil {
		detected, elected := f.Times()
		r.figure("primary down (+odown) after the kill", detected.Seconds()*1e3, "ms")
		r.figure("replica elected (+switch-master) after the kill", elected.Seconds()*1e3, "ms")
	}
}
