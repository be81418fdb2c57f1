package workloads

import (
	"math"
	"sync"
	"time"

	"github.com/lockbench/lockbench/results"
)

// wait waits for the workers to finish once the load has stopped, at most
// the stall bound; workers still in a call to Redis then are reaped (see
// reap) and the clients under them closed, so the stuck calls return. It
// returns the stall, nil when every worker finished in time.
func (r *run) wait(wg *sync.WaitGroup, workers []*worker, interrupted func() bool) *results.Stall {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-r.ctx.Done():
	}
	bound := r.cfg.StallBound
	if bound <= 0 {
		bound = DefaultStallBound
	}
	if interrupted() {
		bound = min(bound, InterruptBound)
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	}
	stall := r.reap(workers, time.Now())
	stall.BoundS = bound.Seconds()
	// Closing the connections makes the stuck calls fail at once; the
	// abandoned workers then return without recording anything. The Redis
	// clients go first, so that the lock clients' own goroutines (renewals)
	// are not left waiting on them while they close.
	r.clients.closeRedis()
	r.clients.closeLocks()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	if stall.Calls == 0 {
		return nil // only workers between calls, now gone: no stall
	}
	return stall
}

// reap records the operation of every worker still busy at now as it
// stands: an acquisition still waiting fails as stalled, with the time it
// waited as its latency (a stall shows in the histograms instead of
// vanishing from them); a hold whose release never came is kept for the
// safety check, marked unreleased. Every worker is abandoned: none records
// anything more.
func (r *run) reap(workers []*worker, now time.Time) *results.Stall {
	st := &results.Stall{}
	at := r.col.Since(now)
	from := now
	for _, w := range workers {
		w.mu.Lock()
		if !w.abandoned && w.phase != idle {
			op := w.cur
			op.Err = results.ErrStalled
			switch w.phase {
			case acquiring:
				op.Acquired, op.Released, op.Done = 0, op.Called, at
			case nesting, holding:
				op.Released, op.Done = at, at
				op.Flags |= results.ReleaseFailed
			case releasing:
				op.Done = at
				op.Flags |= results.ReleaseFailed
			}
			waitedFrom := now
			if w.phase != holding {
				st.Calls++
				st.NoReplyS = max(st.NoReplyS, now.Sub(w.phaseAt).Seconds())
				waitedFrom = minTime(w.phaseAt, now)
				from = minTime(from, waitedFrom)
			}
			w.shard.Record(op, nil, nil)
			// A call is dated from when it began waiting, where the outage
			// showed, not from when the bound gave up on it.
			w.shard.NoteError(results.ErrStalled, "no reply from Redis before the run's stall bound", r.col.Since(waitedFrom))
		}
		w.abandoned = true
		w.mu.Unlock()
	}
	st.NoReplyS = math.Round(st.NoReplyS*10) / 10
	st.FromS = math.Round(float64(r.col.Since(from))/float64(time.Second)*10) / 10
	return st
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
