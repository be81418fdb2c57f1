package faults

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/results"
)

// RevertTimeout bounds each revert. Reverts run on a context of their own,
// so a cancelled run still undoes every fault it injected.
const RevertTimeout = 30 * time.Second

// Step is one fault of a plan: injected At after the schedule's start and
// reverted For later (For 0: reverted at once, e.g. kill then restart).
type Step struct {
	At    time.Duration
	For   time.Duration
	Fault Fault
}

// String is the step as the plan shows it.
func (s Step) String() string {
	return fmt.Sprintf("at %v for %v: %s %s (%s)", s.At, s.For, s.Fault.Kind(), s.Fault.Target(), s.Fault.Detail())
}

// Schedule runs a plan of steps against a clock start, records each
// injection as an event, and guarantees every injected fault is reverted:
// at its planned end, on Stop, or when the context given to Start ends.
type Schedule struct {
	start  time.Time
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	events []results.Event
	logf   func(string, ...any)
}

// Start runs steps in the background, each at start+At. logf (optional)
// gets one line per injection and revert.
func Start(ctx context.Context, start time.Time, steps []Step, logf func(string, ...any)) *Schedule {
	ctx, cancel := context.WithCancel(ctx)
	s := &Schedule{start: start, cancel: cancel, logf: logf}
	for _, st := range steps {
		s.wg.Go(func() { s.run(ctx, st) })
	}
	return s
}

func (s *Schedule) log(format string, args ...any) {
	if s.logf != nil {
		s.logf(format, args...)
	}
}

func (s *Schedule) since(t time.Time) float64 { return t.Sub(s.start).Seconds() }

func (s *Schedule) run(ctx context.Context, st Step) {
	t := time.NewTimer(time.Until(s.start.Add(st.At)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return // never injected: nothing to record or undo
	case <-t.C:
	}
	ev := results.Event{Kind: st.Fault.Kind(), Target: st.Fault.Target(), Detail: st.Fault.Detail()}
	began := time.Now()
	ev.Start = s.since(began)
	// Injection runs on a context of its own: a Stop during a kill must
	// not leave it half done and unrecorded.
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RevertTimeout)
	revert, err := st.Fault.Inject(ictx)
	cancel()
	if err != nil && revert == nil {
		ev.End, ev.Err = ev.Start, err.Error()
		s.log("fault %s %s at %.2fs: FAILED: %v", ev.Kind, ev.Target, ev.Start, err)
		s.record(ev)
		return
	}
	if err != nil {
		// Partly injected (a failover whose clients could not be
		// repointed): recorded as failed, and still undone below.
		ev.Err = err.Error()
		s.log("fault %s %s at %.2fs: partly injected: %v", ev.Kind, ev.Target, ev.Start, err)
	}
	if err == nil {
		s.log("fault %s %s at %.2fs: injected (%s)", ev.Kind, ev.Target, ev.Start, ev.Detail)
	}
	// The revert is deferred so that even a panic in this goroutine's
	// waiting leaves nothing injected; it runs on its own context.
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RevertTimeout)
		defer cancel()
		ev.RevertStart = s.since(time.Now())
		rerr := revert(rctx)
		ev.End = s.since(time.Now())
		if rerr != nil {
			ev.Err = strings.TrimPrefix(ev.Err+"; revert: "+rerr.Error(), "; ")
			s.log("fault %s %s at %.2fs: revert FAILED: %v", ev.Kind, ev.Target, ev.End, rerr)
		} else {
			s.log("fault %s %s at %.2fs: reverted", ev.Kind, ev.Target, ev.End)
		}
		s.record(ev)
	}()
	if st.For > 0 {
		t.Reset(time.Until(began.Add(st.For)))
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
}

func (s *Schedule) record(ev results.Event) {
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
}

// Wait returns when every step has been injected and reverted (or skipped
// because the schedule was stopped first).
func (s *Schedule) Wait() { s.wg.Wait() }

// Stop reverts whatever is injected now, skips steps not yet started, and
// waits for the reverts. It is idempotent.
func (s *Schedule) Stop() {
	s.cancel()
	s.wg.Wait()
}

// Events is the timeline so far, in start order.
func (s *Schedule) Events() []results.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	evs := slices.Clone(s.events)
	slices.SortStableFunc(evs, func(a, b results.Event) int { return cmp.Compare(a.Start, b.Start) })
	return evs
}

// Describe lists a plan, one step per line.
func Describe(steps []Step) string {
	var b strings.Builder
	for _, st := range steps {
		fmt.Fprintf(&b, "  %s\n", st)
	}
	return b.String()
}
