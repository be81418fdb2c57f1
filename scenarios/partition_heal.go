package scenarios

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/lockimpl"
)

var partitionHealScenario = &Scenario{
	Name:    "partition-heal",
	Summary: "every client cut off for seconds, then healed: safe, every lock acquirable, nothing stuck or leaked",
	Description: "A contended mutex workload over four locks runs while every client's traffic is dropped for " +
		"a few seconds. Holds expire or are given up; waiters time out and retry. After the heal the " +
		"workload must recover, every lock must be acquirable by a fresh client, the run must end on " +
		"time (no waiter stuck), and no key of the run may remain without a TTL.",
	Invariant: "zero violations; throughput recovers after the heal; every lock acquirable; run ends on time; no leaked keys",
	Variants:  []Variant{{Name: "run", Plan: partitionAll, run: partitionHeal}},
}

func partitionWindow(t Timing) (at, dur time.Duration) {
	return t.pick(5*time.Second, 2*time.Second), t.pick(10*time.Second, 3*time.Second)
}

func partitionAll(t Timing, _ *rand.Rand) []Planned {
	at, dur := partitionWindow(t)
	return []Planned{{At: at, For: dur, Kind: "blackhole", Target: "clients", Detail: "drop all data both",
		build: func(r *rig) faults.Fault { return faults.Blackhole("clients", r.proxies, faults.Both) }}}
}

func partitionHeal(r *rig) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	at, dur := partitionWindow(r.t)
	total := r.t.pick(40*time.Second, 11*time.Second)
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
	best := bestSecond(res.Series, healed+1)
	r.figure("ops/s from 1 s after the heal", afterRate, "ops/s")
	r.check("throughput recovers after the heal", fmt.Sprintf("a second at ≥ a quarter of %.0f ops/s", beforeRate), fmt.Sprintf("best second %.0f ops/s", best),
		beforeRate > 0 && best >= beforeRate/4)
	limit := total + r.t.Watchdog + 5*time.Second
	r.check("run ends on time (no stuck waiter)", "≤ "+limit.String(), elapsed.Round(time.Millisecond).String(), elapsed <= limit)

	// Every lock must be free for a fresh owner within one watchdog
	// timeout (a hold cut off by the partition expires by then).
	probe := r.redisFor(0, 2)
	defer probe.Close()
	lc, err := lockimpl.NewClient(r.ctx, probe, r.lockOptions(0))
	if err != nil {
		return err
	}
	defer lc.Close()
	o := lc.NewOwner()
	var stuck []string
	for i := range p.Locks {
		l := o.Lock(fmt.Sprintf("%s%d", r.prefix, i))
		h, err := l.TryLock(r.ctx, lockimpl.TryLockOptions{Wait: r.t.Watchdog + 2*time.Second, Lease: time.Second})
		if err != nil {
			stuck = append(stuck, fmt.Sprintf("%d (%v)", i, err))
			continue
		}
		_ = h.Unlock(r.ctx)
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
