package scenarios

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/results"
)

// guardTally is what scripted holders did to the guarded counter.
type guardTally struct {
	mu                          sync.Mutex
	sections, written           int64
	rejReads, rejWrites, failed int64
	staleAccepted               int64 // writes applied from holders that knew they had lost the lock
	rightfulRefused             int64 // refusals of holders that knew of no loss
	overwrites                  []results.Overwrite
	overwritesDropped           int64
}

// lossView is what a holder knows of its hold when it reads or writes.
type lossView uint8

const (
	knowsHeld  lossView = iota // it believes it holds the lock
	knowsLost                  // it was told the hold is lost
	cannotKnow                 // it has no loss signal (Redisson)
)

func viewOf(lost bool) lossView {
	if lost {
		return knowsLost
	}
	return knowsHeld
}

// guardTimeout bounds one read or write of the counter: the store is not
// faulted, so a slow answer is a broken store.
const guardTimeout = 5 * time.Second

// guardRead starts a scripted critical section's update of lock name's
// counter, with the hold's fencing token and what the holder knows of its
// hold: the value, and whether the holder may go on to write it.
func (r *rig) guardRead(name string, token int64, view lossView) (int64, bool) {
	if r.store == nil {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), guardTimeout)
	defer cancel()
	v, err := r.store.Read(ctx, name, token, "") // scripted holders enter no occupancy
	r.gt.mu.Lock()
	defer r.gt.mu.Unlock()
	r.gt.sections++
	switch {
	case err == nil:
		return v, true
	case errors.Is(err, guard.ErrStale):
		r.gt.rejReads++
		if view == knowsHeld {
			r.gt.rightfulRefused++
		}
	default:
		r.gt.failed++
	}
	return 0, false
}

// guardWrite ends it: the value read plus one, by writer.
func (r *rig) guardWrite(name string, token, read int64, writer string, view lossView) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), guardTimeout)
	defer cancel()
	w, err := r.store.Write(ctx, name, read, writer, token)
	r.gt.mu.Lock()
	defer r.gt.mu.Unlock()
	switch {
	case err == nil:
		r.gt.written++
		if view == knowsLost {
			r.gt.staleAccepted++
		}
		if w.Overwrote > 0 {
			if len(r.gt.overwrites) < 20 {
				r.gt.overwrites = append(r.gt.overwrites, results.Overwrite{By: writer, Of: w.Overwritten, Updates: w.Overwrote, At: int64(time.Since(r.base))})
			} else {
				r.gt.overwritesDropped++
			}
		}
	case errors.Is(err, guard.ErrStale):
		r.gt.rejWrites++
		if view == knowsHeld {
			r.gt.rightfulRefused++
		}
	default:
		r.gt.failed++
	}
}

// storeName names the guarded counter for results.
func (r *rig) storeName() string {
	if r.store == nil {
		return ""
	}
	return r.storeAt + " " + r.store.Key()
}

// guardResult is the scripted holders' guard figures with the store's
// own tallies (nil when the store cannot be read).
func (r *rig) guardResult() *results.Guard {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), guardTimeout)
	defer cancel()
	t, err := r.store.Totals(ctx)
	if err != nil {
		r.logf("%s: guarded counter: %v", r.name, err)
		return nil
	}
	r.gt.mu.Lock()
	defer r.gt.mu.Unlock()
	return &results.Guard{
		Mode: string(r.store.Mode()), Store: r.storeName(),
		Sections: r.gt.sections, Written: r.gt.written,
		Accepted: t.Accepted, Final: t.Value, Lost: t.Lost(),
		RejectedReads: r.gt.rejReads, RejectedWrites: r.gt.rejWrites, Rejected: t.Rejected,
		Failed: r.gt.failed, Overwrites: r.gt.overwrites, OverwritesDropped: r.gt.overwritesDropped,
		StaleAccepted: r.gt.staleAccepted, RightfulRefused: r.gt.rightfulRefused,
	}
}
