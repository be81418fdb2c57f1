package scenarios

import (
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/results"
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
}

// duelOutcome is what the actors saw.
type duelOutcome struct {
	res           *results.Result
	base          time.Time
	holderLost    int         // holders whose Lost closed before they let go
	holderLostAt  []time.Time // when each noticed (zero: never)
	firstContend  []time.Time // each contender's first acquisition (zero: never)
	contendTotal  int         // acquisitions by contenders
	holderAcqErrs []error     // a holder that could not even acquire
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
		holderAcqErrs: make([]error, n), lockNames: locks}
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
		hc, cc := r.clients[i], r.clients[n]
		hl := hc.lc.NewOwner().Lock(locks[i])
		cl := cc.lc.NewOwner().Lock(locks[i])
		go func() {
			defer func() { hdone <- struct{}{} }()
			spec := holdSpec{until: st.base.Add(d.holdUntil), slice: d.slice, honour: d.honour}
			if d.frozen {
				spec.gate = hc.gate
			}
			if d.after != nil {
				select {
				case <-d.after:
				case <-r.ctx.Done():
				}
			}
			var once bool
			try := func() (bool, error) {
				defer func() {
					if !once {
						once = true
						close(acquired[i])
					}
				}()
				if d.lease > 0 {
					return true, hl.LockLease(r.ctx, d.lease)
				}
				return true, hl.Lock(r.ctx)
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
				select {
				case <-hl.Lost():
					lostAt = time.Now()
				case <-watch:
				}
			}()
			var stopWatch sync.Once
			spec.onEnd = func() { stopWatch.Do(func() { close(watch); <-watched }) }
			ok, lost, err := st.sectionLost(int32(i), int32(i), hl, try, spec)
			spec.onEnd()
			if lost {
				out.holderLostAt[i] = lostAt
				if lostAt.IsZero() { // told at the very end of the work
					out.holderLostAt[i] = time.Now()
				}
			}
			if !ok {
				out.holderAcqErrs[i] = fmt.Errorf("holder %d could not acquire: %v", i, err)
			}
		}()
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
				ok, _ := st.section(int32(n+i), int32(i), cl, func() (bool, error) {
					ok, err := cl.TryLock(r.ctx, wait, 0)
					if ok {
						got = time.Now()
					}
					return ok, err
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

// since is t as seconds after base ("-" when t is zero).
func since(base, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%.2fs", t.Sub(base).Seconds())
}
