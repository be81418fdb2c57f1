package scenarios

import (
	"math/rand/v2"

	"github.com/lockbench/lockbench/faults"
)

var watchdogLossScenario = &Scenario{
	Name:    "watchdog-loss",
	Summary: "holder partitioned past the watchdog timeout: violation when it ignores Lost, none when it honours it",
	Description: "The holder's client is cut off from Redis (all its traffic dropped) for twice the watchdog " +
		"timeout while its application keeps working. Its renewals cannot arrive, the key expires, and a " +
		"second client takes the lock. An application on Redisson's API gets no signal and keeps going, " +
		"so two owners work at once: the checker must detect it and time the unsafe window. With " +
		"lockimpl's Lost channel honoured, the holder stops before the key can have expired: zero violations.",
	Invariant:       "ignore-lost: the violation is detected and timed; honour-lost: zero violations, and the contender still gets the lock during the partition; redisson (a real Redisson holder, a lockimpl contender): the violation is detected and timed, the holder never told",
	ExpectViolation: true,
	Variants: []Variant{
		{Name: "ignore-lost", Plan: partitionHolder, run: func(r *rig) error { return watchdogLoss(r, false) }},
		{Name: "honour-lost", Plan: partitionHolder, run: func(r *rig) error { return watchdogLoss(r, true) }},
		{Name: "redisson", Plan: partitionHolder, run: watchdogLossRedisson},
	},
}

func partitionHolder(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: faultStart, For: 2 * t.Watchdog, Kind: "blackhole", Target: "client:0", Detail: "drop all data both",
		build: func(r *rig) faults.Fault { return faults.Blackhole("client:0", r.proxies[:1], faults.Both) }}}
}

func watchdogLoss(r *rig, honour bool) error { return watchdogLossBy(r, honour, false) }

// watchdogLossRedisson is watchdog-loss with a Redisson holder: its
// watchdog's renewals are what the partition drops.
func watchdogLossRedisson(r *rig) error { return watchdogLossBy(r, false, true) }

func watchdogLossBy(r *rig, honour, rs bool) error {
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
	cut := faultStart + 2*w
	out, err := r.runDuel(duel{pairs: 1, holdUntil: cut + w/2, honour: honour, until: cut + w/2, contHold: w / 4, redisson: rs})
	if err != nil {
		return err
	}
	return holderVsContender(r, out, honour, faultStart, cut, "partition")
}
