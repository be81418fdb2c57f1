package scenarios

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/redisenv"
)

var slotMigrationScenario = &Scenario{
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
