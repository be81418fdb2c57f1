package scenarios

import (
	"fmt"
	"time"
)

var watchdogKeepaliveScenario = &Scenario{
	Name:    "watchdog-keepalive",
	Summary: "a watchdog lock held for 3× the watchdog timeout on a healthy network is never lost",
	Description: "One client takes a lock without a lease and holds it for three watchdog timeouts while a " +
		"second client keeps trying to take it. The watchdog must renew the lease every third of the " +
		"timeout, so the key's TTL never runs out, the holder is never told it lost the lock, and the " +
		"contender gets it only after the holder lets go.",
	Invariant: "holder never lost; TTL stays above a third of the timeout; contender acquires only after the release; zero violations",
	Variants:  []Variant{{Name: "run", Plan: noFaults, run: keepalive}},
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
