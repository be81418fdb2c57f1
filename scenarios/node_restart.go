package scenarios

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/redisenv"
)

var nodeRestartScenario = &Scenario{
	Name:    "node-restart",
	Summary: "Redlock: one of five nodes restarted empty under a holder that reached only three: two owners at once",
	Description: "Redlock (redsync v4) on five independent redis-servers without persistence, quorum 3; the " +
		"holder extends its lock every third of the expiry and stops, without writing, as soon as an " +
		"extension fails or its validity ends. In bare-majority its links to nodes 4 and 5 are down from " +
		"the start, so it acquires on nodes 1 to 3 only, a bare majority. Just after one of its extensions, " +
		"node 1 is killed and restarted empty. The contender, which reaches all five, then takes the lock " +
		"on nodes 1, 4 and 5, a quorum, while the holder still holds it; the holder can learn of it only " +
		"at its next extension, and its work ends, and it writes, before that. In all-five the holder " +
		"reaches every node, keeps four after the restart, and the contender never gets a quorum while it " +
		"holds. A restarted node kept out for longer than the expiry, or persistence with fsync always, " +
		"closes the hole; the single-primary restart is the redis-restart scenario.",
	Invariant: "bare-majority: the contender takes the lock while the holder holds it, the holder is told nothing before its write, " +
		"its unlock finds the lock gone, and the checker detects the violation; all-five: the holder keeps the lock through the restart " +
		"and the contender never takes it while held, zero violations",
	ExpectViolation: true,
	Process:         true,
	Variants: []Variant{
		{Name: "bare-majority", Plan: nodeRestartPlan(true), run: func(r *rig) error { return nodeRestart(r, true) }, timing: nodeRestartTiming},
		{Name: "all-five", Plan: nodeRestartPlan(false), run: func(r *rig) error { return nodeRestart(r, false) }, timing: nodeRestartTiming},
	},
}

// nodeRestartTiming doubles the quick watchdog: the restart must be over
// before the holder's next extension, which comes a third of the expiry
// after the last, and a container's restart on a loaded host can take
// most of a second.
func nodeRestartTiming(t Timing) Timing {
	if t.Quick {
		t.Watchdog = 6 * time.Second
	}
	return t
}

// The duel's times, from the start: the holder acquires at once (after
// the cut) and extends at a third and two thirds of the expiry; node 1
// restarts as soon as the first extension is answered (one that waits
// for the cut links' dials takes most of a second), and the holder's work
// ends, and it writes, just before the second: the last moment it still
// believes it holds.
func nodeRestartAt(t Timing) time.Duration    { return t.Watchdog / 3 }
func nodeRestartWrite(t Timing) time.Duration { return t.Watchdog*2/3 - t.Watchdog/24 }
func nodeRestartEnd(t Timing) time.Duration   { return t.Watchdog * 5 / 6 }

// nodeRestartPlan restarts node 1 empty; with cut, on the holder's bare
// majority.
func nodeRestartPlan(cut bool) func(Timing, *rand.Rand) []Planned {
	return redlockNodePlan(cut, "kill", func(Timing) string { return "SIGKILL, restarted at once without persistence, empty" },
		func(r *rig, _ Timing) faults.Fault {
			return faults.WithProxiesDown(faults.KillRestart(r.redlock.nodes[0].Primary()), r.redlock.linksTo(0))
		})
}

// redlockNodePlan is a plan of node 1's fault (kind, described by detail,
// made by fault) landing once the holder's first extension is answered;
// with cut, the holder's links to nodes 4 and 5 are down from the start,
// so that it holds a bare majority.
func redlockNodePlan(cut bool, kind string, detail func(Timing) string, fault func(*rig, Timing) faults.Fault) func(Timing, *rand.Rand) []Planned {
	return func(t Timing, _ *rand.Rand) []Planned {
		var plan []Planned
		if cut {
			plan = append(plan, Planned{At: 0, For: nodeRestartEnd(t), Kind: "down", Target: "client:0",
				Detail: "its links to nodes 4 and 5: connections closed, new ones refused",
				build: func(r *rig) faults.Fault {
					return notify(faults.Down("client:0", r.redlock.links[0][redlockQuorum:]), r.redlock.cutIn)
				}})
		}
		return append(plan, Planned{At: nodeRestartAt(t), For: 0, Kind: kind, Target: "redis:node1",
			Detail: "once the holder's extension is answered: " + detail(t),
			build: func(r *rig) faults.Fault {
				return &afterExtension{Fault: fault(r, t), s: r.redlock, c: 0, within: t.Watchdog / 3}
			}})
	}
}

// nodeRestartRedlock is the matrix's Redlock cell: the bare majority.
func nodeRestartRedlock(r *rig) error { return nodeRestart(r, true) }

func nodeRestart(r *rig, cut bool) error { return redlockNodeFault(r, cut, nil) }

// redlockNodeFault is the duel of the Redlock node faults on five nodes
// started with mod: the holder on a bare majority (cut) or on all five,
// node 1's fault just after its first extension, its work and write
// before its second; a contender on all five polls throughout.
func redlockNodeFault(r *rig, cut bool, mod func(*redisenv.Config)) error {
	if err := r.startRedlock(2, mod); err != nil {
		return err
	}
	t := r.t
	d := duel{pairs: 1, holdUntil: nodeRestartWrite(t), honour: true, until: nodeRestartEnd(t), poll: 20 * time.Millisecond,
		contHold: t.Watchdog / 12, redlock: true}
	if cut {
		d.after = r.redlock.cutIn
	}
	out, err := r.runDuel(d)
	if err != nil {
		return err
	}
	res := out.res
	r.safetyFigures(res)
	var hit time.Time
	if k, d := r.redlock.times(-1, rlNodeFault), r.redlock.times(-1, rlNodeFaultDone); len(k) == 1 && len(d) == 1 {
		hit = k[0]
		r.figure("node 1's fault", secs(out.base, hit), "s")
		r.figure("node 1's fault took", ms(d[0].Sub(hit)), "ms")
	}
	ext := r.redlock.times(0, rlExtended)
	if len(ext) > 0 {
		r.figure("holder's first extension answered", secs(out.base, ext[0]), "s")
	}
	r.figure("holder's extensions", float64(len(ext)), "")
	r.figure("holder told of the loss", secs(out.base, out.holderLostAt[0]), "s")
	r.figure("contender first acquired", secs(out.base, out.firstContend[0]), "s")
	first, write := out.firstContend[0], out.base.Add(nodeRestartWrite(t))
	gone := len(r.redlock.times(0, rlUnlockGone)) > 0
	if !cut {
		r.check("holder keeps the lock through node 1's fault", "never told of a loss, its unlock releases a quorum",
			fmt.Sprintf("told: %v, unlock found it gone: %v", out.holderLost == 1, gone), out.holderLost == 0 && !gone)
		r.check("contender never takes the lock while it is held", "only after "+since(out.base, write), since(out.base, first),
			first.IsZero() || !first.Before(write))
		r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
		return nil
	}
	r.check("contender takes the lock while the holder holds it", "between node 1's fault and "+since(out.base, write), since(out.base, first),
		!first.IsZero() && !hit.IsZero() && first.After(hit) && first.Before(write))
	r.check("holder told nothing before its write", "not told before "+since(out.base, write), since(out.base, out.holderLostAt[0]),
		out.holderLost == 0 || !out.holderLostAt[0].Before(write))
	r.check("its unlock finds the lock gone", "released on fewer than a quorum", fmt.Sprintf("found it gone: %v", gone), gone)
	r.check("checker detects the violation", "≥ 1 violation", violations(res), res.Safety.Violations >= 1)
	return nil
}

// singlePrimaryRestart is why node-restart's other columns are skipped.
const singlePrimaryRestart = "node-restart is Redlock's: on a single primary it is the redis-restart row"

// nodeRestartRow is the matrix's node-restart row: a Redlock cell, the
// others skipped for the redis-restart row.
func nodeRestartRow() matrixRow {
	return matrixRow{s: nodeRestartScenario, timing: nodeRestartTiming, onlyRedlock: singlePrimaryRestart,
		expect: expectations{
			redlock: verdict{expectSome, "the holder reached a bare majority; the restart empties one of its three nodes, the contender " +
				"takes that one and the two the holder never reached, and the holder, told nothing until its next extension, writes before it"},
		},
		redlock: nodeRestartRedlock, redlockPlan: nodeRestartPlan(true)}
}
