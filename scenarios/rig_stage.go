package scenarios

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// stage records scripted actors' operations into a results collector, so
// the same safety checker judges them as judges workloads.
type stage struct {
	r      *rig
	col    *results.Collector
	labels results.Labels
	base   time.Time
	stop   chan struct{}
	once   sync.Once
	done   sync.WaitGroup
}

// stopTicking ends the per-second ticks; idempotent, and also run when
// the variant ends without finishing the stage (an error, a panic).
func (st *stage) stopTicking() {
	st.once.Do(func() { close(st.stop) })
	st.done.Wait()
}

// newStage starts recording for owners on locks, with the plan's faults
// scheduled from now.
func (r *rig) newStage(owners, locks []string) *stage {
	base := time.Now()
	st := &stage{r: r, col: results.NewCollector(base, len(owners), 0), labels: results.Labels{Owners: owners, Locks: locks},
		base: base, stop: make(chan struct{})}
	st.done.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-st.stop:
				return
			case now := <-t.C:
				st.col.Tick(now, false, runtime.NumGoroutine())
			}
		}
	})
	r.closers = append(r.closers, st.stopTicking)
	r.startFaults(base)
	return st
}

func (st *stage) at(t time.Time) int64 { return st.col.Since(t) }

func (st *stage) record(op results.Op) { st.col.Shard(int(op.Owner)).Record(op, nil, nil) }

// finish stops the faults and the recording and files the result.
func (st *stage) finish() (*results.Result, error) {
	events := st.r.stopFaults()
	st.stopTicking()
	res := st.col.Finish(time.Now(), false, runtime.NumGoroutine(), results.Analysis{Labels: st.labels, Timeline: true})
	res.Meta.Start = st.base
	res.Meta.Workload = fmt.Sprintf("scripted: %s on %s", strings.Join(st.labels.Owners, ", "), strings.Join(st.labels.Locks, ", "))
	if st.r.ctx.Err() != nil {
		res.Partial, res.PartialReason = true, "interrupted"
	}
	if err := st.r.addResult(res, events); err != nil {
		return res, err
	}
	return res, st.r.ctx.Err()
}

// holdSpec says how a scripted holder behaves while it holds.
type holdSpec struct {
	until  time.Time     // planned end of the work
	dur    time.Duration // or: work this long after acquiring
	slice  time.Duration // one unit of work
	honour bool          // stop at Lost (lockimpl) or carry on (Redisson's API)
	gate   *faults.Gate  // where a frozen client waits between units
	onEnd  func()        // called when the work ends, before the unlock
}

// heldLock is what a scripted section needs of a hold: lockimpl's Hold,
// or a Redlock mutex's (redlockHold).
type heldLock interface {
	Token() int64
	Lost() <-chan struct{}
	Unlock(ctx context.Context) error
}

// lockimplHeld is a lockimpl acquisition as a heldLock (nil when none).
func lockimplHeld(h *lockimpl.Hold, err error) (heldLock, error) {
	if h == nil {
		return nil, err
	}
	return h, err
}

// hold does units of work under held until the plan ends, the hold is
// lost (when honoured) or ctx ends. It returns the end of its last unit
// of work: the holder's critical section, as far as anything it did went.
func hold(ctx context.Context, held heldLock, h holdSpec) (last time.Time, lost bool) {
	last = time.Now()
	if h.until.IsZero() {
		h.until = last.Add(h.dur)
	}
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		if h.gate != nil && h.gate.Wait(ctx) != nil {
			return last, isClosed(held.Lost())
		}
		lostCh := held.Lost()
		if h.honour && isClosed(lostCh) {
			return last, true
		}
		now := time.Now()
		if !now.Before(h.until) || ctx.Err() != nil {
			return last, isClosed(lostCh)
		}
		if !h.honour {
			lostCh = nil
		}
		t.Reset(min(h.slice, h.until.Sub(now)))
		select {
		case <-t.C:
			last = time.Now()
		case <-lostCh:
			return time.Now(), true
		case <-ctx.Done():
			return time.Now(), isClosed(held.Lost())
		}
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// section acquires a lock for owner (index into the stage's owners) with
// try, holds it per h, unlocks, and records the operation. It reports
// whether the lock was acquired; try answers ErrNotAcquired (or a nil
// hold) when it was not.
func (st *stage) section(owner, lock int32, try func() (*lockimpl.Hold, error), h holdSpec) (bool, error) {
	ok, _, err := st.sectionLost(owner, lock, func() (heldLock, error) { return lockimplHeld(try()) }, h)
	return ok, err
}

// sectionLost is section on any heldLock, also reporting whether the
// holder was told of a loss while it held (before its unlock).
func (st *stage) sectionLost(owner, lock int32, try func() (heldLock, error), h holdSpec) (bool, bool, error) {
	called := time.Now()
	op := results.Op{Start: st.at(called), Called: st.at(called), Owner: owner, Lock: lock, Mode: results.Exclusive, Depth: 1}
	held, err := try()
	if errors.Is(err, lockimpl.ErrNotAcquired) {
		err = nil
	}
	now := time.Now()
	if held == nil || err != nil {
		op.Err = results.ErrTimeout
		if err != nil {
			op.Err = workloads.Classify(err)
		}
		op.Released, op.Done = op.Called, st.at(now)
		st.record(op)
		if err != nil {
			st.col.Shard(int(op.Owner)).NoteError(op.Err, err.Error(), op.Done)
		}
		return false, false, err
	}
	op.Acquired = st.at(now)
	read, mayWrite := st.r.guardRead(st.labels.Locks[lock], held.Token(), viewOf(isClosed(held.Lost())))
	var last time.Time
	var lost bool
	if mayWrite || st.r.store == nil {
		last, lost = hold(st.r.ctx, held, h)
	} else {
		last, lost = now, isClosed(held.Lost()) // the store refused it: no work
	}
	if mayWrite && !(lost && h.honour) {
		st.r.guardWrite(st.labels.Locks[lock], held.Token(), read, st.labels.Owners[owner], viewOf(lost || isClosed(held.Lost())))
	}
	if h.onEnd != nil {
		h.onEnd()
	}
	op.Released = st.at(last)
	switch {
	case lost && h.honour:
		op.Flags |= results.Lost
	case lost:
		op.Flags |= results.LostIgnored
	}
	uerr := held.Unlock(context.WithoutCancel(st.r.ctx))
	op.Done = st.at(time.Now())
	if uerr != nil && !lost && !errors.Is(uerr, lockimpl.ErrNotHeld) {
		op.Err = workloads.Classify(uerr)
		op.Flags |= results.ReleaseFailed
	}
	st.record(op)
	if op.Err != results.NoErr {
		st.col.Shard(int(op.Owner)).NoteError(op.Err, uerr.Error(), op.Done)
	}
	return true, lost, nil
}
