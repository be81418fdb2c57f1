package scenarios

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

var fairClockSkewScenario = &Scenario{
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
}

// skew is the clock offset of fair-clock-skew: far larger than the
// waiters' queue deadlines (the lock's TTL plus their 10 s wait).
const skew = 10 * time.Minute

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
		holderHold, err := holder.Lock(r.ctx, lockimpl.LockOptions{Lease: time.Second})
		if err != nil {
			return err
		}
		held := holderOp(st, called, time.Now())
		got := make([]time.Time, 2)
		done := make(chan error, 2)
		for i, l := range []*lockimpl.Lock{first, second} {
			go func() {
				_, err := st.section(int32(i+1), 0, func() (*lockimpl.Hold, error) {
					h, err := l.TryLock(r.ctx, lockimpl.TryLockOptions{Wait: 10 * time.Second})
					got[i] = time.Now()
					return h, err
				}, work)
				done <- err
			}()
			if err := queued(l); err != nil {
				return err
			}
			time.Sleep(20 * time.Millisecond) // the second call is clearly later
		}
		held.Released = st.at(time.Now())
		if err := holderHold.Unlock(r.ctx); err != nil {
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
	got := fmt.Sprintf("%d of %s", overtakes, results.Count(rounds, "round"))
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
