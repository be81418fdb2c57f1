package scenarios

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/redisenv"
)

var redisRestartScenario = &Scenario{
	Name:    "redis-restart",
	Summary: "Redis killed and restarted while locks are held: lost locks and violations without persistence; AOF always keeps them",
	Description: "Two holders on two clients hold watchdog locks while contenders poll for them. Redis is " +
		"killed (SIGKILL) just after a watchdog renewal and restarted at once. Without " +
		"persistence the restarted server is empty: contenders take the locks at once, and the holders " +
		"learn of the loss only at their next renewal, so the checker must see two owners in that window; " +
		"the holders' clients reach the server 1.5 s after the contenders', so that a restart slower than " +
		"the time to that renewal still leaves one. " +
		"With appendonly and appendfsync always, every acknowledged write is on disk: the locks survive.",
	Invariant:       "no-persistence: loss and violation detected; aof-always: no loss, zero violations",
	ExpectViolation: true,
	Process:         true,
	Variants: []Variant{
		{Name: "no-persistence", Plan: killPlan, run: func(r *rig) error { return redisRestart(r, false) }, timing: restartTiming},
		{Name: "aof-always", Plan: aofKillPlan, run: func(r *rig) error { return redisRestart(r, true) }, timing: restartTiming},
	},
}

// restartTiming lengthens the quick watchdog so that the holders' lease,
// renewed just before the kill, outlasts a slow restart: a container's
// takes seconds on a loaded host. Were the restart to end after the lease,
// the holders would stop before any contender could take the locks, and
// neither variant would show what it is for.
func restartTiming(t Timing) Timing {
	if t.Quick {
		t.Watchdog = 8 * time.Second
	}
	return t
}

// restartKillAt is just after the watchdog's first renewal, so that a
// quick restart is over well before the next one: the holders learn of the
// loss only then, and the contenders have the time in between.
func restartKillAt(t Timing) time.Duration { return t.Watchdog/3 + t.Watchdog/24 }

// restartLag is how much later than the contenders the holders reach the
// restarted server, without persistence. A restart slow enough to end after
// the holders' next renewal (a container's on a loaded host) would
// otherwise let that renewal, retrying since it came due, find the loss as
// soon as the contenders could take the locks, leaving them no window at
// all. It exceeds the second go-redis's pool waits between redials once
// dials were refused, so the contenders' clients are back first.
const restartLag = 1500 * time.Millisecond

func killPlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: restartKillAt(t), For: 0, Kind: "kill", Target: "redis:primary", Detail: "SIGKILL, restart at once",
		build: func(r *rig) faults.Fault { return restartFault(r, r.env.Primary()) }}}
}

// restartFault kills and restarts node with the duel's contenders (on the
// rig's last client) reaching it again restartLag before its holders (the
// others).
func restartFault(r *rig, node redisenv.Node) faults.Fault {
	n := len(r.proxies) - 1
	return faults.WithProxiesDownStaggered(faults.KillRestart(node), r.proxies[n:], r.proxies[:n], restartLag)
}

// aofKillPlan is killPlan with every client back as soon as the server is:
// with persistence the holders must renew before their leases run out.
func aofKillPlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: restartKillAt(t), For: 0, Kind: "kill", Target: "redis:primary", Detail: "SIGKILL, restart at once",
		build: func(r *rig) faults.Fault {
			return faults.WithProxiesDown(faults.KillRestart(r.env.Primary()), r.proxies)
		}}}
}

func redisRestart(r *rig, aof bool) error { return redisRestartBy(r, aof, true) }

func redisRestartBy(r *rig, aof, honour bool) error {
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
	out, err := r.restartDuel(honour, false)
	if err != nil {
		return err
	}
	res := out.res
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

// restartDuel runs the restart's duel (two pairs, until a watchdog
// timeout after the kill) with lockimpl or Redisson holders, and records
// the safety figures and how long the restart took.
func (r *rig) restartDuel(honour, redisson bool) (*duelOutcome, error) {
	end := restartKillAt(r.t) + r.t.Watchdog
	out, err := r.runDuel(duel{pairs: 2, holdUntil: end, honour: honour, until: end, poll: 20 * time.Millisecond, contHold: 50 * time.Millisecond, redisson: redisson})
	if err != nil {
		return nil, err
	}
	r.safetyFigures(out.res)
	for _, e := range out.res.Events {
		if e.Kind == "kill" {
			r.figure("kill to restarted", (e.RevertStart-e.Start)*1e3, "ms")
		}
	}
	return out, nil
}
