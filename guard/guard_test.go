package guard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
)

func TestMain(m *testing.M) { redisenvtest.Main(m) }

var bg = context.Background()

// TestFencedModeName: the fenced mode is named after the lock kind whose
// tokens it carries, and results reads it by that name from a result file.
func TestFencedModeName(t *testing.T) {
	if string(guard.Fenced) != kind.Fenced.String() || string(guard.Fenced) != results.GuardFenced {
		t.Errorf("guard.Fenced is %q, kind.Fenced %q, results.GuardFenced %q", guard.Fenced, kind.Fenced, results.GuardFenced)
	}
}

func totals(t *testing.T, s *guard.Store) guard.Totals {
	t.Helper()
	tot, err := s.Totals(bg)
	if err != nil {
		t.Fatal(err)
	}
	return tot
}

// TestPlainLostUpdate: two holders that read the same value both write;
// the store counts two writes, the counter one, and the second write says
// whose update it undid.
func TestPlainLostUpdate(t *testing.T) {
	env := redisenvtest.Start(t)
	s := guard.New(env.NewClient(), "g:plain", guard.Plain)
	a, err := s.Read(bg, "L", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Read(bg, "L", 0)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := s.Write(bg, "L", a, "alice", 0); err != nil || w.Overwrote != 0 {
		t.Fatalf("first write: %+v, %v; want nothing overwritten", w, err)
	}
	w, err := s.Write(bg, "L", b, "bob", 0)
	if err != nil {
		t.Fatal(err)
	}
	if w.Overwrote != 1 || w.Overwritten != "alice" {
		t.Errorf("stale write: %+v; want 1 update of alice overwritten", w)
	}
	tot := totals(t, s)
	if tot.Value != 1 || tot.Accepted != 2 || tot.Lost() != 1 {
		t.Errorf("totals %+v (lost %d); want value 1, 2 accepted, 1 lost", tot, tot.Lost())
	}
}

// TestFencedRefusesStale: a holder whose lock was taken over (a higher
// token has read) is refused at its write; nothing is lost. A store with
// the planted bug accepts it and loses the update.
func TestFencedRefusesStale(t *testing.T) {
	env := redisenvtest.Start(t)
	for _, broken := range []bool{false, true} {
		s := guard.New(env.NewClient(), "g:fenced", guard.Fenced)
		if broken {
			s = guard.NewBroken(env.NewClient(), "g:broken")
		}
		old, err := s.Read(bg, "L", 1)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := s.Read(bg, "L", 2) // the next holder
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(bg, "L", cur, "new", 2); err != nil {
			t.Fatal(err)
		}
		_, err = s.Write(bg, "L", old, "old", 1)
		tot := totals(t, s)
		switch {
		case !broken && (!errors.Is(err, guard.ErrStale) || tot.Lost() != 0 || tot.Rejected != 1 || tot.Value != 1):
			t.Errorf("fenced: stale write %v, totals %+v; want ErrStale, 0 lost, 1 rejected", err, tot)
		case broken && (err != nil || tot.Lost() != 1 || tot.Token != 2):
			t.Errorf("planted bug: stale write %v, totals %+v; want it accepted, 1 lost, highest token kept at 2", err, tot)
		}
		if _, err := s.Read(bg, "L", 1); !broken && !errors.Is(err, guard.ErrStale) {
			t.Errorf("fenced: read with a lower token: %v; want ErrStale", err)
		}
		// The matrix tells fencing's stale writes from a non-fence's by it.
		if s.Fences() == broken {
			t.Errorf("broken %v: Fences() = %v", broken, s.Fences())
		}
	}
	if guard.New(env.NewClient(), "g:plain", guard.Plain).Fences() {
		t.Error("a plain store Fences()")
	}
}

// TestClusterStore: on a Redis Cluster each script's keys (a name's
// counter and the totals) share a slot, whatever slot the name would hash
// to: reads, writes and totals work, fenced too, and a second Store on
// the same key (another machine of the run) meets the same counters.
func TestClusterStore(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyCluster})
	rdb := redisenvtest.Raw(t, env)
	names := []string{"a", "b", "lb:orders", "lb:users", "{x}"}
	for _, mode := range []guard.Mode{guard.Plain, guard.Fenced} {
		key := "g:cluster:" + string(mode)
		s, other := guard.New(rdb, key, mode), guard.New(rdb, key, mode)
		if err := s.Reset(bg); err != nil {
			t.Fatal(err)
		}
		for i, name := range names {
			for _, st := range []*guard.Store{s, other} {
				v, err := st.Read(bg, name, int64(i+1))
				if err != nil {
					t.Fatalf("%s: read %s: %v", mode, name, err)
				}
				if _, err := st.Write(bg, name, v, "w", int64(i+1)); err != nil {
					t.Fatalf("%s: write %s: %v", mode, name, err)
				}
			}
		}
		n := int64(2 * len(names))
		if tot := totals(t, other); tot.Value != n || tot.Accepted != n || tot.Lost() != 0 {
			t.Errorf("%s: totals %+v; want %d writes counted, none lost", mode, tot, n)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]guard.Mode{"": guard.Off, "off": guard.Off, "plain": guard.Plain, "fenced": guard.Fenced} {
		if got, err := guard.ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := guard.ParseMode("fence"); err == nil {
		t.Error(`ParseMode("fence") accepted`)
	}
}
