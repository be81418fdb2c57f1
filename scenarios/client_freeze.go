package scenarios

import (
	"math/rand/v2"
	"time"

	"github.com/lockbench/lockbench/faults"
)

var clientFreezeScenario = &Scenario{
	Name:    "client-freeze",
	Summary: "holder frozen longer than the lease (GC pause): violation unless it checks Lost after waking",
	Description: "The holder's client stops entirely for 1.5× the watchdog timeout, as in a long " +
		"stop-the-world GC pause: its application halts and nothing it sends reaches Redis, its watchdog " +
		"included. The key expires and a contender takes the lock. On waking, a holder that just carries " +
		"on works alongside the new owner; one that checks Lost first stops.",
	Invariant:       "ignore-lost: the violation is detected; honour-lost: zero violations, and the contender gets the lock during the freeze; redisson (a real Redisson holder's JVM stopped by SIGSTOP, a lockimpl contender): the violation is detected, the holder never told",
	ExpectViolation: true,
	Variants: []Variant{
		{Name: "ignore-lost", Plan: freezePlan, run: func(r *rig) error { return clientFreeze(r, false) }},
		{Name: "honour-lost", Plan: freezePlan, run: func(r *rig) error { return clientFreeze(r, true) }},
		{Name: "redisson", Plan: freezeJVMPlan, run: func(r *rig) error { return clientFreezeBy(r, false, true) }},
	},
}

func freezePlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: faultStart, For: t.Watchdog * 3 / 2, Kind: "freeze", Target: "client:0", Detail: "application paused, all traffic dropped",
		build: func(r *rig) faults.Fault { return faults.Freeze("client:0", r.gates[0], r.proxies[:1]) }}}
}

// freezeJVMPlan stops the Redisson holder's whole JVM, as a long
// stop-the-world GC pause does.
func freezeJVMPlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: faultStart, For: t.Watchdog * 3 / 2, Kind: "freeze", Target: "client:0", Detail: "Redisson's JVM stopped (SIGSTOP), SIGCONT on revert",
		build: func(r *rig) faults.Fault { return faults.StopProcess("client:0", r.jvmPID) }}}
}

func clientFreeze(r *rig, honour bool) error { return clientFreezeBy(r, honour, false) }

func clientFreezeBy(r *rig, honour, rs bool) error {
	if err := r.start(2, nil); err != nil {
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
	w := r.t.Watchdog
	thaw := faultStart + w*3/2
	out, err := r.runDuel(duel{pairs: 1, holdUntil: thaw + time.Second, honour: honour, frozen: !rs, until: thaw + time.Second, contHold: w / 4, redisson: rs})
	if err != nil {
		return err
	}
	return holderVsContender(r, out, honour, faultStart, thaw, "freeze")
}
