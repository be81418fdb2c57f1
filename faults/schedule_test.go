package faults_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/testkit"
)

// probe is a fault that records when it is on.
type probe struct {
	name      string
	mu        sync.Mutex
	on        bool
	injected  int
	reverted  int
	failWith  error
	onInject  chan struct{}
	revertErr error
	revertFor time.Duration // how long the revert takes
}

func newProbe(name string) *probe { return &probe{name: name, onInject: make(chan struct{}, 8)} }

func (p *probe) Kind() string   { return p.name }
func (p *probe) Target() string { return "test" }
func (p *probe) Detail() string { return "probe" }

func (p *probe) Inject(context.Context) (func(context.Context) error, error) {
	if p.failWith != nil {
		return nil, p.failWith
	}
	p.mu.Lock()
	p.on = true
	p.injected++
	p.mu.Unlock()
	p.onInject <- struct{}{}
	return func(context.Context) error {
		time.Sleep(p.revertFor)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.on = false
		p.reverted++
		return p.revertErr
	}, nil
}

func (p *probe) state() (on bool, injected, reverted int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.on, p.injected, p.reverted
}

func TestScheduleRunsAndRecords(t *testing.T) {
	a, b := newProbe("a"), newProbe("b")
	b.revertErr = errors.New("stuck")
	a.revertFor = 30 * time.Millisecond
	start := time.Now()
	s := faults.Start(bg, start, []faults.Step{
		{At: 100 * time.Millisecond, For: 200 * time.Millisecond, Fault: b},
		{At: 0, For: 50 * time.Millisecond, Fault: a},
	}, t.Logf)
	s.Wait()
	for _, p := range []*probe{a, b} {
		if on, inj, rev := p.state(); on || inj != 1 || rev != 1 {
			t.Errorf("%s: on=%v injected=%d reverted=%d; want off, 1, 1", p.name, on, inj, rev)
		}
	}
	evs := s.Events()
	if len(evs) != 2 || evs[0].Kind != "a" || evs[1].Kind != "b" {
		t.Fatalf("events = %+v; want a then b", evs)
	}
	if evs[1].Start < 0.09 || evs[1].End-evs[1].Start < 0.19 {
		t.Errorf("b's window = [%.3f, %.3f]; want it to start at ≥ 0.1 s and last ≥ 0.2 s", evs[1].Start, evs[1].End)
	}
	// A slow revert: RevertStart marks when it began, End when it was done.
	if a := evs[0]; a.RevertStart < a.Start+0.049 || a.End-a.RevertStart < 0.029 {
		t.Errorf("a = start %.3f, revert start %.3f, end %.3f; want the revert begun ≥ 50 ms after the start and taking ≥ 30 ms",
			a.Start, a.RevertStart, a.End)
	}
	if !strings.Contains(evs[1].Err, "stuck") || evs[0].Err != "" {
		t.Errorf("errors = %q, %q; want only b's revert failure", evs[0].Err, evs[1].Err)
	}
}

// TestScheduleStopRevertsAtOnce: Ctrl-C (Stop, or the context ending)
// mid-fault reverts what is on and skips what has not started.
func TestScheduleStopRevertsAtOnce(t *testing.T) {
	for _, how := range []string{"stop", "cancel"} {
		t.Run(how, func(t *testing.T) {
			on, later := newProbe("on"), newProbe("later")
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			s := faults.Start(ctx, time.Now(), []faults.Step{
				{At: 0, For: time.Hour, Fault: on},
				{At: time.Hour, For: time.Second, Fault: later},
			}, nil)
			select {
			case <-on.onInject:
			case <-time.After(testkit.Patience):
				t.Fatal("first fault never injected")
			}
			if how == "stop" {
				s.Stop()
			} else {
				cancel()
				s.Wait()
			}
			if isOn, _, rev := on.state(); isOn || rev != 1 {
				t.Errorf("fault still on after %s", how)
			}
			if _, inj, _ := later.state(); inj != 0 {
				t.Error("a step planned for later was injected")
			}
			if evs := s.Events(); len(evs) != 1 {
				t.Errorf("events = %+v; want the one injected", evs)
			}
			s.Stop() // idempotent
		})
	}
}

// partial injects half its effect and fails: the schedule must still
// undo that half.
type partial struct{ called, undone chan struct{} }

func (p *partial) Kind() string   { return "partial" }
func (p *partial) Target() string { return "test" }
func (p *partial) Detail() string { return "half" }
func (p *partial) Inject(context.Context) (func(context.Context) error, error) {
	close(p.called)
	return func(context.Context) error { close(p.undone); return nil }, errors.New("second half failed")
}

func TestSchedulePartialInjectionReverted(t *testing.T) {
	p := &partial{called: make(chan struct{}), undone: make(chan struct{})}
	s := faults.Start(bg, time.Now(), []faults.Step{{Fault: p, For: time.Hour}}, nil)
	select {
	case <-p.called:
	case <-time.After(testkit.Patience):
		t.Fatal("never injected")
	}
	s.Stop()
	select {
	case <-p.undone:
	default:
		t.Fatal("a partly injected fault was not reverted")
	}
	if evs := s.Events(); len(evs) != 1 || !strings.Contains(evs[0].Err, "second half failed") {
		t.Errorf("events = %+v; want the failure recorded", evs)
	}
}

func TestScheduleInjectFailureRecorded(t *testing.T) {
	p := newProbe("broken")
	p.failWith = errors.New("no such node")
	s := faults.Start(bg, time.Now(), []faults.Step{{Fault: p, For: time.Second}}, nil)
	s.Wait()
	evs := s.Events()
	if len(evs) != 1 || !strings.Contains(evs[0].Err, "no such node") || evs[0].End != evs[0].Start {
		t.Errorf("events = %+v; want one failed injection", evs)
	}
}

func TestDescribe(t *testing.T) {
	got := faults.Describe([]faults.Step{{At: time.Second, For: 2 * time.Second, Fault: faults.ClockSkew("client:2", new(faults.Clock), time.Minute)}})
	want := "  at 1s for 2s: clock_skew client:2 (clock +1m0s)\n"
	if got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}
