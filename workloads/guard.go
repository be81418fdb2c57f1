package workloads

import (
	"context"
	"errors"
	"sync"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/results"
)

// Tokened is a Locker whose holds carry a fencing token (kind fenced):
// Token is the current hold's, 0 when it holds nothing.
type Tokened interface {
	Token() int64
}

// maxOverwrites bounds the overwrite examples a run keeps.
const maxOverwrites = 20

// guardTally is what the run's critical sections did to the guarded
// counter, as their holders saw it.
type guardTally struct {
	mu                        sync.Mutex
	sections, written, reads  int64
	rejReads, rejWrites, fail int64
	staleAccepted             int64 // applied from holders that knew they had lost the lock
	rightfulRefused           int64 // refusals of holders that knew of no loss
	overwrites                []results.Overwrite
	dropped                   int64
	gaps                      results.Guard // Unwitnessed and Gaps only
}

// guardSection is one critical section's passage through the store.
type guardSection struct {
	name, holder string
	shared       bool  // a reader's: it writes nothing
	read         int64 // the counter at the enter
	// inside: the holder entered, and must leave (by write or leave).
	inside bool
}

// gap counts a section (sections 1) or an event (0) the store did not
// witness, at (ns since the run's start), by the cause err says.
func (g *guardTally) gap(at int64, sections int64, err error) {
	cause := results.GapFailed
	switch {
	case errors.Is(err, guard.ErrEmptied):
		cause, err = results.GapEmptied, nil
	case Classify(err) == results.ErrConn || noReply(err):
		cause = results.GapUnreachable
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gaps.AddGap(cause, float64(at)/1e9, sections, err)
}

// enter starts a critical section of lock name in the store at (ns since
// the run's start), holder entering it as a reader when shared. The
// section may hold and write only when it entered (inside); one that
// entered must end in write or leave. A failed enter, which may have been
// applied, has left already, and counts the section unwitnessed. seq is
// the holder's last enter number: one that goes back says the store lost
// some of what it witnessed.
func (g *guardTally) enter(ctx context.Context, s *guard.Store, name string, l Locker, holder string, shared bool, at int64, seq *int64) guardSection {
	signal, lost := lossOf(l)
	sec := guardSection{name: name, holder: holder, shared: shared}
	e, err := s.Enter(ctx, name, guard.Entry{Token: tokenOf(l), Holder: holder, Shared: shared})
	stale := errors.Is(err, guard.ErrStale)
	if err != nil && !stale {
		if !errors.Is(err, guard.ErrEmptied) {
			g.leave(ctx, s, sec, at, false)
		}
		g.gap(at, 1, err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sections++
	if shared {
		g.reads++
	}
	switch {
	case err == nil:
		sec.read, sec.inside = e.Value, true
		if e.Seq > 0 && e.Seq <= *seq {
			g.gaps.AddGap(results.GapWentBack, float64(at)/1e9, 0, nil)
		}
		if e.Seq > 0 {
			*seq = e.Seq
		}
	case stale:
		g.rejReads++
		if signal && !lost {
			g.rightfulRefused++
		}
	default:
		g.fail++
	}
	return sec
}

// leave ends a section that will not write (a reader's, or one that
// stopped at a lost hold) at at: its holder leaves the store's occupants,
// so that the next holder's enter is not an overlap. A leave that fails
// counts the section unwitnessed when counts says so (it entered).
func (g *guardTally) leave(ctx context.Context, s *guard.Store, sec guardSection, at int64, counts bool) {
	err := s.Leave(ctx, sec.name, sec.holder)
	if err == nil {
		return
	}
	if counts {
		g.gap(at, 1, err)
	}
	g.mu.Lock()
	g.fail++
	g.mu.Unlock()
}

// write ends a section that entered: the value read plus one, by its
// holder (who leaves), at at, when the write returned for the overwrite
// examples.
func (g *guardTally) write(ctx context.Context, s *guard.Store, sec guardSection, l Locker, at func() int64) {
	signal, lost := lossOf(l)
	w, err := s.Write(ctx, sec.name, sec.read, sec.holder, tokenOf(l))
	stale := errors.Is(err, guard.ErrStale)
	if err != nil && !stale {
		if !errors.Is(err, guard.ErrEmptied) {
			g.leave(ctx, s, sec, at(), false) // the write may not have run, and its leave with it
		}
		g.gap(at(), 1, err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case err == nil:
		g.written++
		if lost {
			g.staleAccepted++
		}
		if w.Overwrote > 0 {
			if len(g.overwrites) < maxOverwrites {
				g.overwrites = append(g.overwrites, results.Overwrite{By: sec.holder, Of: w.Overwritten, Updates: w.Overwrote, At: at()})
			} else {
				g.dropped++
			}
		}
	case stale:
		g.rejWrites++
		if signal && !lost {
			g.rightfulRefused++
		}
	default:
		g.fail++
	}
}

// result joins the holders' tallies with the store's own, read at at
// (ns since the run's start). A store that cannot be read, or lost the
// run's keys, leaves its counts out and says so in the gaps: the result
// always carries what the holders saw.
func (g *guardTally) result(ctx context.Context, s *guard.Store, where string, at int64) (*results.Guard, error) {
	g.mu.Lock()
	out := &results.Guard{
		Mode: string(s.Mode()), Store: where,
		Sections: g.sections, Written: g.written, Reads: g.reads,
		RejectedReads: g.rejReads, RejectedWrites: g.rejWrites,
		Failed: g.fail, Overwrites: g.overwrites, OverwritesDropped: g.dropped, StaleAccepted: g.staleAccepted, RightfulRefused: g.rightfulRefused,
		Unwitnessed: g.gaps.Unwitnessed, Gaps: g.gaps.Gaps,
	}
	g.mu.Unlock()
	t, err := s.Totals(ctx)
	var ov []guard.Overlap
	var by map[string]int64
	if err == nil {
		ov, err = s.Overlaps(ctx)
	}
	if err == nil {
		by, err = s.OverlapsBy(ctx)
	}
	switch {
	case err != nil:
		out.AddGap(results.GapUnread, float64(at)/1e9, 0, err)
		return out, err
	case t.Emptied:
		out.AddGap(results.GapEmptied, float64(at)/1e9, 0, nil)
		return out, nil
	}
	for _, o := range ov {
		out.OverlapExamples = append(out.OverlapExamples, results.Overlap(o))
	}
	out.Accepted, out.Final, out.Lost, out.Rejected = t.Accepted, t.Value, t.Lost(), t.Rejected
	out.Occupancy, out.Overlaps, out.OverlapsBy = true, t.Overlaps, by
	return out, nil
}

// lossOf is what l's holder knows of its hold: whether it has a loss
// signal at all (Redisson has none), and whether it was told of a loss.
func lossOf(l Locker) (signal, lost bool) {
	ch := l.Lost()
	if ch == nil {
		return false, false
	}
	select {
	case <-ch:
		return true, true
	default:
		return true, false
	}
}

func tokenOf(l Locker) int64 {
	if f, ok := l.(Tokened); ok {
		return f.Token()
	}
	return 0
}
