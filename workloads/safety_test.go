package workloads_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// testOwner is an owner whose lockers the test supplies.
type testOwner struct {
	id     string
	locker func(name string, m results.Mode) workloads.Locker
}

func (o testOwner) ID() string { return o.id }

func (o testOwner) Locker(name string, m results.Mode) workloads.Locker { return o.locker(name, m) }

// brokenLocker never excludes anyone: every acquire succeeds at once.
type brokenLocker struct{ lost chan struct{} }

func (b brokenLocker) Acquire(context.Context, time.Duration, time.Duration) (bool, error) {
	return true, nil
}
func (b brokenLocker) Release(context.Context) error { return nil }
func (b brokenLocker) Lost() <-chan struct{}         { return b.lost } // never closed

// memLocks is a correct in-process exclusive lock per name, shared by all
// owners: a one-slot semaphore, so an acquire can give up on its wait or
// its context.
type memLocks struct {
	mu  sync.Mutex
	sem map[string]chan struct{}
}

func (l *memLocks) get(name string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sem == nil {
		l.sem = map[string]chan struct{}{}
	}
	s, ok := l.sem[name]
	if !ok {
		s = make(chan struct{}, 1)
		l.sem[name] = s
	}
	return s
}

type memLocker struct {
	sem  chan struct{}
	lost chan struct{}
}

func (m memLocker) Acquire(ctx context.Context, wait, _ time.Duration) (bool, error) {
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case m.sem <- struct{}{}:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	case <-timeout:
		return false, nil
	}
}

func (m memLocker) Release(context.Context) error {
	select {
	case <-m.sem:
		return nil
	default:
		return errors.New("memLocker: release of a lock not held")
	}
}

func (m memLocker) Lost() <-chan struct{} { return m.lost }

// plantedProfile is a closed-loop profile on one name with holds long
// enough to overlap if nothing excludes.
func plantedProfile(t *testing.T, name string) workloads.Profile {
	p := short(t, name, 2, 2, 100*time.Millisecond, 400*time.Millisecond)
	p.Locks = 1
	p.Popularity = workloads.PopUniform
	p.Hold = workloads.FixedDist(time.Millisecond)
	p.Think = workloads.FixedDist(200 * time.Microsecond)
	return p
}

// ownerIDs are the names NewOwner gives: client and owner index.
func ownerID(c, o int) string { return fmt.Sprintf("planted-c%d-o%d", c, o) }

func allOwnerIDs(p workloads.Profile) []string {
	var ids []string
	for c := range p.Clients {
		for o := range p.Owners {
			ids = append(ids, ownerID(c, o))
		}
	}
	return ids
}

func TestSafetyCatchesPlantedViolation(t *testing.T) {
	p := plantedProfile(t, "mutex")
	prefix := uniquePrefix(t)
	var mu sync.Mutex
	made := map[string]bool{}
	res := runOK(t, workloads.Config{
		Profile:   p,
		KeyPrefix: prefix,
		NewOwner: func(c, o int) workloads.Owner {
			mu.Lock()
			made[ownerID(c, o)] = true
			mu.Unlock()
			lost := make(chan struct{})
			return testOwner{id: ownerID(c, o), locker: func(string, results.Mode) workloads.Locker { return brokenLocker{lost} }}
		},
	})
	ids := allOwnerIDs(p)
	if len(made) != len(ids) {
		t.Errorf("NewOwner made %v, want one each of %v", made, ids)
	}
	s := res.Safety
	if s.Violations <= 0 || s.OK() {
		t.Fatalf("a locker that never excludes passed the safety check: %+v", s)
	}
	if len(s.Examples) == 0 || int64(len(s.Examples)) > s.Violations || len(s.Examples) > 20 {
		t.Fatalf("%d violations, %d examples", s.Violations, len(s.Examples))
	}
	if s.MaxOverlapUs <= 0 {
		t.Errorf("max overlap %.1fµs", s.MaxOverlapUs)
	}
	for _, v := range s.Examples {
		if v.Lock != prefix+"0" {
			t.Errorf("violation names lock %q, want %q", v.Lock, prefix+"0")
		}
		if v.First.Owner == v.Second.Owner || !slices.Contains(ids, v.First.Owner) || !slices.Contains(ids, v.Second.Owner) {
			t.Errorf("violation between %q and %q: want two different planted owners", v.First.Owner, v.Second.Owner)
		}
		if v.First.Mode != "exclusive" || v.Second.Mode != "exclusive" {
			t.Errorf("violation modes %s/%s", v.First.Mode, v.Second.Mode)
		}
		if v.OverlapUs <= 0 || v.OverlapEnd <= v.OverlapStart || v.Second.Acquired < v.First.Acquired {
			t.Errorf("violation %+v", v)
		}
	}
	// No Redis at all: no PING sampler.
	if _, ok := res.Latency["ping"]; ok {
		t.Errorf("ping latency without NewRedis: %+v", res.Latency["ping"])
	}
	if res.Fairness.Owners != len(ids) {
		t.Errorf("fairness owners %d, want %d", res.Fairness.Owners, len(ids))
	}
}

func TestSafetyPassesCorrectLocker(t *testing.T) {
	p := plantedProfile(t, "mutex")
	var locks memLocks
	res := runOK(t, workloads.Config{
		Profile:   p,
		KeyPrefix: uniquePrefix(t),
		NewOwner: func(c, o int) workloads.Owner {
			lost := make(chan struct{})
			return testOwner{id: ownerID(c, o), locker: func(name string, _ results.Mode) workloads.Locker {
				return memLocker{sem: locks.get(name), lost: lost}
			}}
		},
	})
	requireSafe(t, res)
	requireNoErrors(t, res)
	// The lock was contended, so the clean verdict means something.
	requireLatency(t, res, "acquire_exclusive", "wait", "handoff", "hold", "release")
	if res.Throughput.Acquisitions["exclusive"] <= 0 {
		t.Errorf("acquisitions %v", res.Throughput.Acquisitions)
	}
	// Each hold is the fixed 1ms (but the last ones, cut by the end).
	if h := res.Latency["hold"]; h.P50 < 900 {
		t.Errorf("hold latency %+v, want a 1ms median", h)
	}
	if _, ok := res.Latency["ping"]; ok {
		t.Errorf("ping latency without NewRedis")
	}
}

// Reads may overlap; a locker that lets everyone in is caught only where a
// write is involved.
func TestSafetyReadsMayOverlap(t *testing.T) {
	p := plantedProfile(t, "rw90")
	newOwner := func(c, o int) workloads.Owner {
		lost := make(chan struct{})
		return testOwner{id: ownerID(c, o), locker: func(string, results.Mode) workloads.Locker { return brokenLocker{lost} }}
	}

	p.ReadRatio = 1
	res := runOK(t, workloads.Config{Profile: p, KeyPrefix: uniquePrefix(t), NewOwner: newOwner})
	if res.Throughput.Acquisitions["read"] <= 0 || res.Throughput.Acquisitions["write"] != 0 {
		t.Fatalf("acquisitions %v: want reads only", res.Throughput.Acquisitions)
	}
	requireSafe(t, res)

	p.ReadRatio = 0.5
	res = runOK(t, workloads.Config{Profile: p, KeyPrefix: uniquePrefix(t), NewOwner: newOwner})
	if res.Safety.Violations <= 0 || len(res.Safety.Examples) == 0 {
		t.Fatalf("overlapping writes not caught: %+v", res.Safety)
	}
	for _, v := range res.Safety.Examples {
		if v.First.Mode != "write" && v.Second.Mode != "write" {
			t.Errorf("violation between two reads: %+v", v)
		}
	}
}

// multiOwner is a testOwner whose multi-lock handle the test supplies.
type multiOwner struct {
	testOwner
	multi func(names []string) workloads.Locker
}

func (o multiOwner) MultiLocker(names []string) workloads.Locker { return o.multi(names) }

// A multi-lock that takes only its first name: operations whose first
// names differ run together on their other names, which only the parts
// the driver files for those names can show.
func TestSafetyCatchesMultiPartViolation(t *testing.T) {
	p := plantedProfile(t, "multi")
	p.Locks = 2
	var locks memLocks
	res := runOK(t, workloads.Config{
		Profile:   p,
		KeyPrefix: uniquePrefix(t),
		NewOwner: func(c, o int) workloads.Owner {
			lost := make(chan struct{})
			return multiOwner{
				testOwner: testOwner{id: ownerID(c, o)},
				multi: func(names []string) workloads.Locker {
					if len(names) != 2 || names[0] == names[1] {
						t.Errorf("multi-lock names %v, want 2 distinct", names)
					}
					return memLocker{sem: locks.get(names[0]), lost: lost}
				},
			}
		},
	})
	if res.Safety.Violations == 0 {
		t.Fatalf("a multi-lock that ignores its second name passed the safety check: %+v", res.Safety)
	}
	// Each operation counts once, although it holds two names (besides
	// the operations done, the run's end may have cut a hold or a wait).
	if got, th := res.Throughput.Acquisitions["exclusive"], res.Throughput; got < th.Ops || got > th.Ops+th.Cut {
		t.Errorf("acquisitions %d for %d operations (%d cut)", got, th.Ops, th.Cut)
	}
}
