package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// duel is the scripted shape most safety scenarios share: n holders, each
// on its own client, take one lock each at the start and work under it;
// n contenders on one more client try to take the same locks meanwhile.
// Faults hit the holders (or Redis) on the plan's schedule.
type duel struct {
	pairs     int
	holdUntil time.Duration   // holders' planned end of work, from the start
	lease     time.Duration   // holders' lease; 0 is a watchdog lease
	honour    bool            // holders stop at Lost
	frozen    bool            // holders pause at their client's gate (freeze)
	slice     time.Duration   // holders' unit of work
	until     time.Duration   // contenders stop trying at this time
	poll      time.Duration   // contenders poll with TryLock(0) this often; 0 blocks
	contHold  time.Duration   // contenders' hold per acquisition (they honour Lost)
	after     <-chan struct{} // holders start once it closes (nil: at once)
	redisson  bool            // holders are Redisson threads in the rig's JVM (startRedisson)
	redlock   bool            // holders and contenders are Redlock mutexes on the rig's five nodes (startRedlock)
}

// duelOutcome is what the actors saw.
type duelOutcome struct {
	res           *results.Result
	base          time.Time
	holderLost    int         // holders whose Lost closed before they let go
	holderLostAt  []time.Time // when each noticed (zero: never)
	firstContend  []time.Time // each contender's first acquisition (zero: never)
	redissonAt    []time.Time // each Redisson holder's acquisition (zero: never)
	contendTotal  int         // acquisitions by contenders
	holderAcqErrs []error     // a holder that could not even acquire
	// holderRefused counts holders whose acquisition a safety setting
	// refused (results.ErrRefused): not a failure of the run, and the
	// duel's other checks then have no hold to judge.
	holderRefused int
	lockNames     []string
}

// runDuel needs r.start(pairs+1, …) and r.newClients() done.
func (r *rig) runDuel(d duel) (*duelOutcome, error) {
	n := d.pairs
	var owners, locks []string
	for i := range n {
		owners = append(owners, fmt.Sprintf("holder-%d", i))
	}
	for i := range n {
		owners = append(owners, fmt.Sprintf("contender-%d", i))
		locks = append(locks, fmt.Sprintf("%slock-%d", r.prefix, i))
	}
	if d.slice <= 0 {
		d.slice = 20 * time.Millisecond
	}
	out := &duelOutcome{holderLostAt: make([]time.Time, n), firstContend: make([]time.Time, n),
		redissonAt: make([]time.Time, n), holderAcqErrs: make([]error, n), lockNames: locks}
	if r.mit != nil && r.mit.Fencing {
		if err := r.advanceTokens(locks); err != nil {
			return nil, err
		}
	}
	st := r.newStage(owners, locks)
	out.base = st.base
	acquired := make([]chan struct{}, n)
	type cres struct {
		i     int
		first time.Time
		count int
	}
	cdone := make(chan cres, n)
	hdone := make(chan struct{}, n)
	for i := range n {
		acquired[i] = make(chan struct{})
		lockHolder, tryContender := r.duelLocks(d, i, locks[i])
		if d.redisson {
			go func() {
				defer func() { hdone <- struct{}{} }()
				if d.after != nil {
					select {
					case <-d.after:
					case <-r.ctx.Done():
					}
				}
				if err := st.redissonHolder(int32(i), locks[i], st.base.Add(d.holdUntil), d.lease, acquired[i], &out.redissonAt[i]); err != nil {
					out.holderAcqErrs[i] = fmt.Errorf("redisson holder %d: %w", i, err)
				}
			}()
		} else {
			go func() {
				defer func() { hdone <- struct{}{} }()
				spec := holdSpec{until: st.base.Add(d.holdUntil), slice: d.slice, honour: d.honour}
				if d.frozen {
					spec.gate = r.gates[i]
				}
				if d.after != nil {
					select {
					case <-d.after:
					case <-r.ctx.Done():
					}
				}
				var once bool
				var held heldLock
				try := func() (heldLock, error) {
					defer func() {
						if !once {
							once = true
							close(acquired[i])
						}
					}()
					h, err := lockHolder()
					held = h
					return h, err
				}
				// Watch for the loss while holding, to time when it was
				// noticed; the watch ends with the work, before the holder's
				// own unlock (which may end the hold too).
				watch, watched := make(chan struct{}), make(chan struct{})
				var lostAt time.Time
				go func() {
					defer close(watched)
					select {
					case <-acquired[i]:
					case <-watch:
						return
					}
					if held == nil {
						return // not acquired: nothing to lose
					}
					select {
					case <-held.Lost():
						lostAt = time.Now()
					case <-watch:
					}
				}()
				var stopWatch sync.Once
				spec.onEnd = func() { stopWatch.Do(func() { close(watch); <-watched }) }
				ok, lost, err := st.sectionLost(int32(i), int32(i), try, spec)
				spec.onEnd()
				if lost {
					out.holderLostAt[i] = lostAt
					if lostAt.IsZero() { // told at the very end of the work
						out.holderLostAt[i] = time.Now()
					}
				}
				if !ok {
					out.holderAcqErrs[i] = fmt.Errorf("holder %d could not acquire: %w", i, err)
				}
			}()
		}
		go func() {
			c := cres{i: i}
			defer func() { cdone <- c }()
			select {
			case <-acquired[i]:
			case <-r.ctx.Done():
				return
			}
			end := st.base.Add(d.until)
			t := time.NewTimer(time.Hour)
			defer t.Stop()
			for time.Now().Before(end) && r.ctx.Err() == nil {
				wait := time.Duration(0)
				if d.poll <= 0 {
					wait = time.Until(end)
				}
				var got time.Time
				ok, _, _ := st.sectionLost(int32(n+i), int32(i), func() (heldLock, error) {
					h, err := tryContender(wait)
					if h != nil {
						got = time.Now()
					}
					return h, err
				}, holdSpec{dur: d.contHold, slice: d.contHold, honour: true})
				if ok {
					c.count++
					if c.first.IsZero() {
						c.first = got
					}
					continue
				}
				pause := d.poll
				if pause <= 0 {
					pause = 20 * time.Millisecond // after an error: no hot loop
				}
				t.Reset(pause)
				select {
				case <-t.C:
				case <-r.ctx.Done():
				}
			}
		}()
	}
	for range n {
		<-hdone
	}
	for i, e := range out.holderAcqErrs {
		if e != nil && workloads.Classify(e) == results.ErrRefused {
			out.holderRefused++
			out.holderAcqErrs[i] = nil
		}
	}
	for range n {
		c := <-cdone
		out.firstContend[c.i] = c.first
		out.contendTotal += c.count
	}
	for i := range n {
		if !out.holderLostAt[i].IsZero() {
			out.holderLost++
		}
	}
	res, err := st.finish()
	out.res = res
	if err != nil {
		return out, err
	}
	for _, e := range out.holderAcqErrs {
		if e != nil {
			return out, e
		}
	}
	return out, nil
}

// duelLocks are duel pair i's acquisitions of lock: the holder's (on
// client i, blocking) and the contender's (on the last client, waiting at
// most wait, 0: one try).
func (r *rig) duelLocks(d duel, i int, lock string) (holder func() (heldLock, error), contender func(wait time.Duration) (heldLock, error)) {
	n := d.pairs
	if d.redlock {
		return func() (heldLock, error) { return r.redlock.lock(r.ctx, i, lock, d.lease) },
			func(wait time.Duration) (heldLock, error) { return r.redlock.tryLock(r.ctx, n, lock, 0, wait) }
	}
	cl := r.lockOf(r.clients[n].lc.NewOwner(), lock)
	contender = func(wait time.Duration) (heldLock, error) {
		return lockimplHeld(cl.TryLock(r.ctx, lockimpl.TryLockOptions{Wait: wait}))
	}
	if d.redisson {
		return nil, contender // the holder is the JVM's (redissonHolder)
	}
	hl := r.lockOf(r.clients[i].lc.NewOwner(), lock)
	return func() (heldLock, error) { return lockimplHeld(hl.Lock(r.ctx, lockimpl.LockOptions{Lease: d.lease})) }, contender
}

// redissonHolder is duel holder i as a Redisson thread: it takes lock
// with Redisson's lock() (lease 0: the watchdog), works until until with
// no word from Redisson (which has no loss signal), and unlocks. Its
// critical section is the JVM's own, from lock()'s return to unlock()'s
// call; an unlock refused as not held marks the hold lost and ignored.
// acquired closes once the lock call has answered; at gets when lock()
// returned the lock.
func (st *stage) redissonHolder(i int32, lock string, until time.Time, lease time.Duration, acquired chan<- struct{}, at *time.Time) error {
	r := st.r
	owner := fmt.Sprintf("%s/holder-%d", redissonClient, i)
	k := kind.Reentrant
	if r.mit != nil && r.mit.Fencing {
		k = kind.Fenced
	}
	called := time.Now()
	got, err := r.jvm.Call(r.ctx, "lock", owner, redisson.KindOf(k), lock, -1, lease)
	close(acquired)
	op := results.Op{Start: st.at(called), Called: st.at(called), Owner: i, Lock: i, Mode: results.ModeOf(k), Depth: 1}
	if err != nil {
		op.Err = workloads.Classify(err)
		op.Released, op.Done = op.Called, st.at(time.Now())
		st.record(op)
		st.col.Shard(int(i)).NoteError(op.Err, err.Error(), op.Done)
		return err
	}
	op.Start, op.Called, op.Acquired = st.at(redisson.Time(got.Start)), st.at(redisson.Time(got.Start)), st.at(redisson.Time(got.End))
	*at = redisson.Time(got.End)
	// The plan's faults are meant for a holder that already holds; a JVM
	// starved past the first one acquired into it (or after it), and the
	// checks that follow would blame the lock for the host. A lock() that
	// began in time and returned late is Redisson's replica check instead:
	// it retries a lock no replica acknowledged until one does.
	var late error
	if first, ok := r.firstFault(); ok && time.Duration(op.Acquired) > first {
		if time.Duration(op.Start) < first && r.redissonChecksReplicas() {
			r.figure("Redisson's lock() held back by its replica check until", time.Duration(op.Acquired).Seconds(), "s")
		} else {
			late = fmt.Errorf("acquired at %.2fs, after the first fault (%.2fs): the host was too slow for the scenario's timing",
				time.Duration(op.Acquired).Seconds(), first.Seconds())
		}
	}
	var token int64
	if k.Fenced() {
		token, _ = strconv.ParseInt(got.Value, 10, 64)
	}
	read, mayWrite := r.guardRead(lock, token, cannotKnow)
	t := time.NewTimer(time.Until(until))
	select {
	case <-t.C:
	case <-r.ctx.Done():
		t.Stop()
		op.Flags |= results.Cut
	}
	if mayWrite { // Redisson tells it nothing: it always writes
		r.guardWrite(lock, token, read, owner, cannotKnow)
	}
	asked := time.Now()
	rel, uerr := r.jvm.Call(context.WithoutCancel(r.ctx), "unlock", owner, redisson.KindOf(k), lock, 0, 0)
	op.Released, op.Done = st.at(asked), st.at(time.Now())
	if rel.End != 0 {
		op.Released, op.Done = st.at(redisson.Time(rel.Start)), st.at(redisson.Time(rel.End))
	}
	var re *redisson.Error
	switch {
	case uerr == nil:
	case errors.As(uerr, &re) && re.NotHeld():
		op.Flags |= results.LostIgnored
	default:
		op.Err = workloads.Classify(uerr)
		op.Flags |= results.ReleaseFailed
	}
	st.record(op)
	if op.Err != results.NoErr {
		st.col.Shard(int(i)).NoteError(op.Err, uerr.Error(), op.Done)
	}
	return late
}

// redissonChecksReplicas reports whether the rig's Redisson holders
// check their locks reached a replica: checkLockSyncedSlaves on (its
// default) and servers with replicas.
func (r *rig) redissonChecksReplicas() bool {
	if r.mit != nil && r.mit.RedissonNoSync || r.env == nil {
		return false
	}
	return r.env.Topology() != redisenv.TopologySingle
}

// tokensBefore is how many acquisitions each fenced name has had before a
// duel, as a name in use for a while has: a token counter that a fault
// loses then starts again below the tokens holders carry.
const tokensBefore = 20

// advanceTokens takes and gives back each fenced lock tokensBefore times.
func (r *rig) advanceTokens(locks []string) error {
	o := r.clients[len(r.clients)-1].lc.NewOwner()
	for _, name := range locks {
		for range tokensBefore {
			h, err := o.FencedLock(name).Lock(r.ctx, lockimpl.LockOptions{})
			if err != nil {
				return fmt.Errorf("advance the fencing tokens of %s: %w", name, err)
			}
			if err := h.Unlock(r.ctx); err != nil {
				return fmt.Errorf("advance the fencing tokens of %s: %w", name, err)
			}
		}
	}
	return nil
}

// since is t as seconds after base ("-" when t is zero).
func since(base, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%.2fs", t.Sub(base).Seconds())
}

// holderVsContender judges watchdog-loss and client-freeze: the fault
// (from..to) cut the holder off long enough for its key to expire. A
// lockimpl holder is told of the loss; a Redisson holder (r.jvm) is not.
func holderVsContender(r *rig, out *duelOutcome, honour bool, from, to time.Duration, what string) error {
	res := out.res
	r.safetyFigures(res)
	r.figure("holder told of the loss", secs(out.base, out.holderLostAt[0]), "s")
	r.figure("contender first acquired", secs(out.base, out.firstContend[0]), "s")
	first := out.firstContend[0]
	during := !first.IsZero() && first.Sub(out.base) > from && first.Sub(out.base) < to
	r.check("contender takes the expired lock during the "+what, fmt.Sprintf("between %v and %v", from, to), since(out.base, first), during)
	if r.jvm != nil {
		r.check("Redisson holder told of the loss", "never (Redisson has no loss signal)", fmt.Sprintf("told: %v", out.holderLost == 1), out.holderLost == 0)
		r.check("its unlock finds the lock gone", "≥ 1 lost", fmt.Sprint(res.Throughput.Lost, " lost"), res.Throughput.Lost >= 1)
	} else {
		r.check("holder told of the loss", "told", fmt.Sprintf("told: %v", out.holderLost == 1), out.holderLost == 1)
	}
	if honour {
		r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	} else {
		r.check("checker detects the violation", "≥ 1 violation", violations(res), res.Safety.Violations >= 1)
	}
	return nil
}
