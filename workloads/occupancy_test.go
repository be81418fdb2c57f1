package workloads_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// requireAllLeft fails unless no holder is inside any of the run's lock
// names in the store: every section that entered left, whether it wrote,
// stopped at a lost hold, or was cut by the run's end.
func requireAllLeft(t *testing.T, s *guard.Store, prefix string, p workloads.Profile) {
	t.Helper()
	for i := range p.LockCount() {
		name := fmt.Sprintf("%s%d", prefix, i)
		in, err := s.Inside(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if len(in) > 0 {
			t.Errorf("%s: %v still inside after the run; every section must leave", name, in)
		}
	}
}

// TestOccupancyCatchesPlantedViolation: owners of a locker that never
// excludes enter the guarded store's section together, and the store
// counts it, naming two different owners in each example.
func TestOccupancyCatchesPlantedViolation(t *testing.T) {
	store := redisenvtest.Start(t)
	p := plantedProfile(t, "mutex")
	p.Guard = string(guard.Plain)
	prefix := uniquePrefix(t)
	s := guard.New(store.NewClient(), "occ:"+prefix, guard.Plain)
	res := runOK(t, workloads.Config{
		Profile: p, KeyPrefix: prefix, Guard: s, GuardStore: "test",
		NewOwner: func(c, o int) workloads.Owner {
			lost := make(chan struct{})
			return testOwner{id: ownerID(c, o), locker: func(string, results.Mode) workloads.Locker { return brokenLocker{lost} }}
		},
	})
	g := res.Guard
	if g == nil || !g.Occupancy {
		t.Fatalf("guard %+v: want the store's occupancy counted", g)
	}
	t.Logf("%d overlaps in %d sections; clock checker: %d violations", g.Overlaps, g.Sections, res.Safety.Violations)
	if g.Overlaps <= 0 || g.Overlaps > g.Sections || len(g.OverlapExamples) == 0 || len(g.OverlapExamples) > results.MaxOverlapExamples {
		t.Fatalf("%d overlaps in %d sections, %d examples: a locker that never excludes passed the store", g.Overlaps, g.Sections, len(g.OverlapExamples))
	}
	ids := allOwnerIDs(p)
	for _, o := range g.OverlapExamples {
		if o.Name != prefix+"0" || !slices.Contains(ids, o.Entered) || len(o.Inside) == 0 || slices.Contains(o.Inside, o.Entered) {
			t.Errorf("example %+v: want lock %s0, an owner entering beside others", o, prefix)
		}
		for _, in := range o.Inside {
			if !slices.Contains(ids, in) {
				t.Errorf("example %+v: %q is no owner of the run (%v)", o, in, ids)
			}
		}
	}
	requireAllLeft(t, s, prefix, p)
}

// TestOccupancyAcrossMachines: two runs, as two machines, each with a
// lock that excludes only its own owners, share one guarded store. Each
// clock checker finds nothing and the merged one cannot judge across
// them; the store sees the overlaps, every one between the two machines,
// and the merged verdict is VIOLATED by them.
func TestOccupancyAcrossMachines(t *testing.T) {
	store := redisenvtest.Start(t)
	p := plantedProfile(t, "mutex")
	p.Guard = string(guard.Plain)
	prefix := uniquePrefix(t) // one set of lock names, as one profile on two machines
	key := "occ:" + prefix
	var (
		wg   sync.WaitGroup
		runs [2]*results.Result
		errs [2]error
	)
	for m := range runs {
		var locks memLocks // this machine's own: excludes nobody on the other
		cfg := workloads.Config{
			Profile: p, KeyPrefix: prefix, Guard: guard.New(store.NewClient(), key, guard.Plain), GuardStore: "test",
			NewOwner: func(c, o int) workloads.Owner {
				lost := make(chan struct{})
				return testOwner{id: fmt.Sprintf("m%d-%s", m, ownerID(c, o)), locker: func(name string, _ results.Mode) workloads.Locker {
					return memLocker{sem: locks.get(name), lost: lost}
				}}
			},
		}
		wg.Go(func() { runs[m], errs[m] = workloads.Run(testkit.Context(t), cfg) })
	}
	wg.Wait()
	hists := make([]map[string]*hdr.Histogram, len(runs))
	for m, r := range runs {
		if errs[m] != nil {
			t.Fatalf("machine %d: %v", m, errs[m])
		}
		if r.Safety.Violations != 0 {
			t.Fatalf("machine %d: %d violations among its own owners, whose lock excludes them", m, r.Safety.Violations)
		}
		var err error
		if hists[m], err = results.ReadIntervalLog(bytes.NewReader(r.IntervalLog())); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := results.Merge(runs[:], hists)
	if err != nil {
		t.Fatal(err)
	}
	g := merged.Guard
	if s := merged.Safety; s.Violations != 0 || s.Witness != results.WitnessStore || s.StoreOverlaps != merged.Guard.Overlaps || s.Verdict() != results.SafetyViolated {
		t.Errorf("merged safety %+v; want the clock checkers' none, and VIOLATED by the store's overlaps", s)
	}
	if g == nil || !g.Occupancy || g.Overlaps == 0 || len(g.OverlapExamples) == 0 {
		t.Fatalf("merged guard %+v: want the store's overlaps between the machines", g)
	}
	t.Logf("store: %d overlaps in %d sections", g.Overlaps, g.Sections)
	machine := func(id string) string { return id[:2] }
	for _, o := range g.OverlapExamples {
		for _, in := range o.Inside {
			if machine(in) == machine(o.Entered) {
				t.Errorf("example %+v: %s and %s are of one machine, whose lock excludes them", o, in, o.Entered)
			}
		}
	}
	var safety []string
	for _, f := range merged.Failures() {
		if f.Kind == results.FailSafety {
			safety = append(safety, f.Text)
		}
	}
	if len(safety) != 1 || !strings.Contains(safety[0], "guarded store") {
		t.Errorf("merged failures %q; want the store's overlaps as the safety failure", merged.Failures())
	}
	requireAllLeft(t, guard.New(store.NewClient(), key, guard.Plain), prefix, p)
}

// TestOccupancyRealLock: owners of lockimpl's lock on a real Redis leave
// the store's section on every path. Holds within their lease never
// overlap; holds that outlive it overlap when the holder ignores Lost,
// and the store sees it; a holder that honours Lost leaves when it stops.
func TestOccupancyRealLock(t *testing.T) {
	env, store := redisenvtest.Start(t), redisenvtest.Start(t)
	for _, c := range []struct {
		name         string
		lease, hold  string
		ignoreLost   bool
		wantOverlaps bool
	}{
		{"holds within the lease", "10s", "2ms", false, false},
		{"holds past the lease, ignoring Lost", "100ms", "250ms", true, true},
		{"holds past the lease, honouring Lost", "100ms", "uniform(20ms,250ms)", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := short(t, "mutex", 2, 2, 0, 1500*time.Millisecond)
			p.Kind, p.Locks, p.Guard = workloads.KindOf(kind.Reentrant), 1, string(guard.Plain)
			for f, v := range map[string]string{"lease": c.lease, "hold": c.hold, "think": "1ms", "wait": "0"} {
				if err := p.Set(f, v); err != nil {
					t.Fatal(err)
				}
			}
			prefix := uniquePrefix(t)
			s := guard.New(store.NewClient(), "occ:"+prefix, guard.Plain)
			res := runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: prefix,
				IgnoreLost: c.ignoreLost, Guard: s, GuardStore: "test"})
			g := res.Guard
			if g == nil || !g.Occupancy || g.Sections == 0 || g.Failed != 0 {
				t.Fatalf("guard %+v: want sections counted for occupancy, no failures", g)
			}
			t.Logf("%d overlaps in %d sections; clock checker: %d violations", g.Overlaps, g.Sections, res.Safety.Violations)
			switch {
			case c.wantOverlaps && g.Overlaps == 0:
				t.Errorf("holders ignoring a lost lock overlapped (%d violations by the clock) but the store saw no overlap", res.Safety.Violations)
			case !c.wantOverlaps && c.lease == "10s" && g.Overlaps != 0:
				t.Errorf("%d overlaps under a lock that held: %v", g.Overlaps, g.OverlapExamples)
			}
			requireAllLeft(t, s, prefix, p)
		})
	}
}

// TestOccupancyReaders: readers enter the store's sections beside
// writers. Under lockimpl's read-write lock on a real Redis readers share
// and writers exclude: every section enters and leaves, and the store
// sees no overlap. Under a planted lock whose readers never wait (its
// writers exclude each other), the store counts the overlaps, each
// between a reader and a writer, as the clock checker does.
func TestOccupancyReaders(t *testing.T) {
	env, store := redisenvtest.Start(t), redisenvtest.Start(t)
	for _, planted := range []bool{false, true} {
		name := "lockimpl"
		if planted {
			name = "planted"
		}
		t.Run(name, func(t *testing.T) {
			p := counted(short(t, "rw90", 2, 3, 0, 0), 400)
			p.Locks, p.Guard, p.ReadRatio = 2, string(guard.Plain), 0.7
			p.Hold, p.Think = workloads.FixedDist(time.Millisecond), workloads.FixedDist(200*time.Microsecond)
			prefix := uniquePrefix(t)
			s := guard.New(store.NewClient(), "occ:"+prefix, guard.Plain)
			cfg := workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: prefix, Guard: s, GuardStore: "test"}
			if planted {
				var writers memLocks
				cfg.NewOwner = func(c, o int) workloads.Owner {
					lost := make(chan struct{})
					return testOwner{id: ownerID(c, o), locker: func(name string, m results.Mode) workloads.Locker {
						if m == results.Read {
							return brokenLocker{lost}
						}
						return memLocker{sem: writers.get(name), lost: lost}
					}}
				}
			}
			res := runOK(t, cfg)
			g := res.Guard
			if g == nil || !g.Occupancy || g.Failed != 0 || g.Sections != res.Safety.Sections || g.Unwitnessed != 0 {
				t.Fatalf("guard %+v; want every one of the %d sections witnessed, none failed", g, res.Safety.Sections)
			}
			if g.Reads == 0 || g.Written == 0 || g.Written+g.Reads != g.Sections {
				t.Fatalf("%d reads, %d writes of %d sections; want readers entering beside writers, and every writer writing", g.Reads, g.Written, g.Sections)
			}
			t.Logf("%d overlaps in %d sections; clock checker: %d violations", g.Overlaps, g.Sections, res.Safety.Violations)
			requireAllLeft(t, s, prefix, p)
			if !planted {
				if g.Overlaps != 0 || res.Safety.Violations != 0 {
					t.Errorf("read-write lock: %d overlaps (%v), %d violations; want none", g.Overlaps, g.OverlapExamples, res.Safety.Violations)
				}
				return
			}
			if g.Overlaps == 0 || res.Safety.Violations == 0 || len(g.OverlapExamples) == 0 {
				t.Fatalf("readers that never wait: %d overlaps, %d violations; want both checkers to see them", g.Overlaps, res.Safety.Violations)
			}
			for _, o := range g.OverlapExamples {
				// Writers exclude each other: each overlap pairs a reader
				// entering beside writers, or a writer beside readers only.
				if o.EnteredRead && (len(o.Inside) == 0 || len(o.Readers) > 0) || !o.EnteredRead && (len(o.Readers) == 0 || len(o.Inside) > 0) {
					t.Errorf("example %+v: want a reader and a writer, nobody else", o)
				}
			}
		})
	}
}
