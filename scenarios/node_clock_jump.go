package scenarios

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/redisenv"
)

var nodeClockJumpScenario = &Scenario{
	Name:    "node-clock-jump",
	Summary: "the lock's primary's wall clock jumps past the lease: the key expires at once, and the holder writes before it can learn",
	Description: "A holder holds a watchdog lock while a contender polls for it. Just after a watchdog " +
		"renewal the primary's wall clock jumps forward by more than the lease (libfaketime, as an NTP " +
		"step would move it): Redis expires keys by its wall clock, so the lock's key is gone at once and " +
		"the contender takes it. The holder learns of the loss only when it next talks to the server, and " +
		"its write at the end of its work comes before that: honouring Lost does not save it, since " +
		"nothing has told it yet. Fencing does: the token counter has no TTL, so the jump leaves it, " +
		"and the store refuses the holder's older token. The Redlock variants jump one of five nodes' clocks: " +
		"under a holder that reached a bare majority the contender makes a quorum of that node and the two " +
		"the holder never reached; under a holder on all five it cannot.",
	Invariant:       "ignore-lost and honour-lost: the contender takes the expired lock before the holder's write, the holder is not told before it, and the violation is detected; redisson (a real Redisson holder, a lockimpl contender): the same, the holder never told; redlock: the same on a bare majority; redlock-all-five: no violation",
	ExpectViolation: true,
	Process:         true,
	FakeClock:       true,
	Variants: []Variant{
		{Name: "ignore-lost", Plan: clockJumpPlan, run: func(r *rig) error { return nodeClockJumpBy(r, false) }, timing: clockJumpTiming},
		{Name: "honour-lost", Plan: clockJumpPlan, run: func(r *rig) error { return nodeClockJumpBy(r, true) }, timing: clockJumpTiming},
		{Name: "redisson", Plan: clockJumpPlan, run: nodeClockJumpRedisson, timing: clockJumpTiming},
		{Name: "redlock", Plan: redlockClockJumpPlan(true), run: nodeClockJumpRedlock, timing: clockJumpTiming},
		{Name: "redlock-all-five", Plan: redlockClockJumpPlan(false), run: redlockClockJumpAllFive, timing: clockJumpTiming},
	},
}

// clockJumpTiming lengthens the quick watchdog so that the time from the
// jump to the holder's write (a quarter of it) outlasts the second for
// which a primary with min-replicas-to-write refuses writes after the
// jump (its replica's last acknowledgement then looks a jump old): the
// contender still gets in before the holder writes.
func clockJumpTiming(t Timing) Timing {
	t.Watchdog = max(t.Watchdog, 6*time.Second)
	return t
}

// clockJumpBy is how far the primary's clock jumps: past any lease the
// watchdog has set.
func clockJumpBy(t Timing) time.Duration { return t.Watchdog * 4 / 3 }

// clockJumpWrite is when the holder ends its work and writes: just before
// its watchdog's second renewal, the first that could tell it of the loss.
func clockJumpWrite(t Timing) time.Duration { return 2*t.Watchdog/3 - t.Watchdog/24 }

// clockJumpPlan jumps the primary's clock just after the watchdog's first
// renewal (when redis-restart kills it), so that the holder's next renewal
// comes after its write.
func clockJumpPlan(t Timing, _ *rand.Rand) []Planned {
	by := clockJumpBy(t)
	return []Planned{{At: restartKillAt(t), For: 0, Kind: "clock_jump", Target: "redis:primary", Detail: fmt.Sprintf("wall clock forward %v, left there", by),
		build: func(r *rig) faults.Fault { return faults.ClockJump(r.env, r.env.Primary(), by) }}}
}

// nodeClockJumpRedisson is node-clock-jump with a Redisson holder.
func nodeClockJumpRedisson(r *rig) error { return nodeClockJump(r, false, true) }

// nodeClockJumpBy is node-clock-jump with a lockimpl holder that honours
// Lost or not: the matrix's run.
func nodeClockJumpBy(r *rig, honour bool) error { return nodeClockJump(r, honour, false) }

func nodeClockJump(r *rig, honour, rs bool) error {
	if r.o.Redis.Backend == redisenv.BackendContainer {
		return &skipError{why: fakeClockLocalOnly}
	}
	if err := r.start(2, func(c *redisenv.Config) { c.FakeClock = true }); err != nil {
		return err
	}
	if err := r.newClients(); err != nil {
		return err
	}
	if rs {
		if err := r.startRedisson(); err != nil {
			return err
		}
	}
	jump, write := restartKillAt(r.t), clockJumpWrite(r.t)
	out, err := r.runDuel(duel{pairs: 1, holdUntil: write, honour: honour, until: write, poll: 20 * time.Millisecond,
		contHold: 50 * time.Millisecond, redisson: rs})
	if err != nil {
		return err
	}
	res := out.res
	r.safetyFigures(res)
	r.figure("contender first acquired", secs(out.base, out.firstContend[0]), "s")
	first := out.firstContend[0]
	before := !first.IsZero() && first.Sub(out.base) > jump && first.Sub(out.base) < write
	r.check("contender takes the lock the jump expired, before the holder writes",
		fmt.Sprintf("between %v and %v", jump, write), since(out.base, first), before)
	r.check("holder not told before its write", "not told (its next renewal comes after)",
		fmt.Sprintf("told: %v", out.holderLost == 1), out.holderLost == 0)
	r.check("checker detects the violation", "≥ 1 violation", violations(res), res.Safety.Violations >= 1)
	return nil
}

// fakeClockLocalOnly is why the clock-jump variants skip on containers.
const fakeClockLocalOnly = "jumps a server's clock with libfaketime, which only a redis-server lockbench starts on this host can be run under (use --redis local)"
