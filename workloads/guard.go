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
	sections, written         int64
	rejReads, rejWrites, fail int64
	staleAccepted             int64 // applied from holders that knew they had lost the lock
	rightfulRefused           int64 // refusals of holders that knew of no loss
	overwrites                []results.Overwrite
	dropped                   int64
}

// read starts a critical section's update of lock name's counter, holder
// entering it: its value, and whether the section may write (false:
// refused as stale, or failed). A section that may write must end in
// write or leave; a failed read, whose enter may have been applied, has
// left already.
func (g *guardTally) read(ctx context.Context, s *guard.Store, name string, l Locker, holder string) (int64, bool) {
	signal, lost := lossOf(l)
	v, err := s.Read(ctx, name, tokenOf(l), holder)
	stale := errors.Is(err, guard.ErrStale)
	if err != nil && !stale {
		g.leave(ctx, s, name, holder)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sections++
	switch {
	case err == nil:
		return v, true
	case stale:
		g.rejReads++
		if signal && !lost {
			g.rightfulRefused++
		}
	default:
		g.fail++
	}
	return 0, false
}

// leave ends a section that will not write: its holder leaves the store's
// occupants, so that the next holder's enter is not an overlap.
func (g *guardTally) leave(ctx context.Context, s *guard.Store, name, holder string) {
	if err := s.Leave(ctx, name, holder); err != nil {
		g.mu.Lock()
		g.fail++
		g.mu.Unlock()
	}
}

// write ends it: the value read plus one, by writer (the holder, who
// leaves), at (ns since the run's start) for the overwrite examples.
func (g *guardTally) write(ctx context.Context, s *guard.Store, name string, l Locker, read int64, writer string, at func() int64) {
	signal, lost := lossOf(l)
	w, err := s.Write(ctx, name, read, writer, tokenOf(l))
	if err != nil && !errors.Is(err, guard.ErrStale) {
		g.leave(ctx, s, name, writer) // the write may not have run, and its leave with it
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
				g.overwrites = append(g.overwrites, results.Overwrite{By: writer, Of: w.Overwritten, Updates: w.Overwrote, At: at()})
			} else {
				g.dropped++
			}
		}
	case errors.Is(err, guard.ErrStale):
		g.rejWrites++
		if signal && !lost {
			g.rightfulRefused++
		}
	default:
		g.fail++
	}
}

// result joins the holders' tallies with the store's own.
func (g *guardTally) result(ctx context.Context, s *guard.Store, where string) (*results.Guard, error) {
	t, err := s.Totals(ctx)
	if err != nil {
		return nil, err
	}
	ov, err := s.Overlaps(ctx)
	if err != nil {
		return nil, err
	}
	by, err := s.OverlapsBy(ctx)
	if err != nil {
		return nil, err
	}
	var examples []results.Overlap
	for _, o := range ov {
		examples = append(examples, results.Overlap(o))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return &results.Guard{
		Mode: string(s.Mode()), Store: where,
		Sections: g.sections, Written: g.written,
		Accepted: t.Accepted, Final: t.Value, Lost: t.Lost(),
		RejectedReads: g.rejReads, RejectedWrites: g.rejWrites, Rejected: t.Rejected,
		Failed: g.fail, Overwrites: g.overwrites, OverwritesDropped: g.dropped, StaleAccepted: g.staleAccepted, RightfulRefused: g.rightfulRefused,
		Occupancy: true, Overlaps: t.Overlaps, OverlapExamples: examples, OverlapsBy: by,
	}, nil
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
