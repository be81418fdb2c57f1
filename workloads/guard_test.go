package workloads_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/workloads"
)

// TestGuardLostUpdates: owners whose fixed lease runs out in the middle
// of every hold update a counter in a second Redis. Carrying on past the
// loss loses updates with plain writes, and with a fenced store that
// does not fence (the planted bug); stopping at Lost, or fencing, loses
// none, and fencing refuses the stale holders' writes instead.
func TestGuardLostUpdates(t *testing.T) {
	env, store := redisenvtest.Start(t), redisenvtest.Start(t)
	for _, c := range []struct {
		name       string
		kind       workloads.Kind
		mode       guard.Mode
		broken     bool
		ignoreLost bool
		wantLost   bool
	}{
		{"plain, ignoring Lost", workloads.KindOf(kind.Reentrant), guard.Plain, false, true, true},
		{"plain, honouring Lost", workloads.KindOf(kind.Reentrant), guard.Plain, false, false, false},
		{"fenced, ignoring Lost", workloads.KindOf(kind.Fenced), guard.Fenced, false, true, false},
		{"fenced store that accepts lower tokens, ignoring Lost", workloads.KindOf(kind.Fenced), guard.Fenced, true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := short(t, "mutex", 2, 2, 0, 1500*time.Millisecond)
			p.Kind, p.Locks, p.Guard = c.kind, 1, string(c.mode)
			// Holds outlive the 100 ms lease; an honouring holder writes
			// only the sections that end inside it, so it gets some.
			hold := "250ms"
			if !c.ignoreLost {
				hold = "uniform(20ms,250ms)"
			}
			for f, v := range map[string]string{"lease": "100ms", "hold": hold, "think": "10ms", "wait": "0"} {
				if err := p.Set(f, v); err != nil {
					t.Fatal(err)
				}
			}
			key := "guard:" + strings.ReplaceAll(t.Name(), "/", "_")
			s := guard.New(store.NewClient(), key, c.mode)
			if c.broken {
				s = guard.NewBroken(store.NewClient(), key)
			}
			res := runOK(t, workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t),
				IgnoreLost: c.ignoreLost, Guard: s, GuardStore: "test"})
			g := res.Guard
			if g == nil {
				t.Fatal("no guard figures in the result")
			}
			t.Logf("guard %+v; %d violations", *g, res.Safety.Violations)
			if g.Sections == 0 || g.Accepted == 0 || g.Failed != 0 {
				t.Fatalf("guard %+v: want sections, accepted writes and no failures", g)
			}
			if g.Lost != g.Accepted-g.Final {
				t.Errorf("lost %d, want accepted − final = %d", g.Lost, g.Accepted-g.Final)
			}
			switch {
			case c.wantLost && (g.Lost == 0 || len(g.Overwrites) == 0):
				t.Errorf("want lost updates, each overwrite named; got %d lost, %d examples", g.Lost, len(g.Overwrites))
			case !c.wantLost && g.Lost != 0:
				t.Errorf("%d lost updates, want none", g.Lost)
			}
			if c.mode == guard.Fenced && !c.broken && g.RejectedReads+g.RejectedWrites == 0 {
				t.Error("fencing refused no stale read or write, though holds outlived their lease")
			}
		})
	}
}

// TestGuardNeedsStore: a profile with guard on and no store is refused
// before any load, naming the field; fenced guards need fencing tokens.
func TestGuardNeedsStore(t *testing.T) {
	p := short(t, "mutex", 1, 1, 0, time.Second)
	p.Guard = "plain"
	if _, err := workloads.Run(context.Background(), workloads.Config{Profile: p, NewRedis: func(int) redis.UniversalClient { return nil }}); err == nil || !strings.Contains(err.Error(), "guard") {
		t.Errorf("guard plain without a store: %v; want an error naming guard", err)
	}
	p.Guard = "fenced"
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "kind fenced") {
		t.Errorf("guard fenced on kind reentrant: %v; want the refusal naming kind fenced", err)
	}
	p.Kind = workloads.KindOf(kind.Fenced)
	if err := p.Validate(); err != nil {
		t.Errorf("guard fenced on kind fenced: %v", err)
	}
}
