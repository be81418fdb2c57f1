package guard_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
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
	a, err := s.Read(bg, "L", 0, "alice")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Read(bg, "L", 0, "bob")
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
		old, err := s.Read(bg, "L", 1, "old")
		if err != nil {
			t.Fatal(err)
		}
		cur, err := s.Read(bg, "L", 2, "new") // the next holder
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
		if _, err := s.Read(bg, "L", 1, "old"); !broken && !errors.Is(err, guard.ErrStale) {
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

func inside(t *testing.T, s *guard.Store, name string) []string {
	t.Helper()
	in, err := s.Inside(bg, name)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(in)
	return in
}

func overlaps(t *testing.T, s *guard.Store) []guard.Overlap {
	t.Helper()
	ov, err := s.Overlaps(bg)
	if err != nil {
		t.Fatal(err)
	}
	return ov
}

func read(t *testing.T, s *guard.Store, name string, token int64, holder string) int64 {
	t.Helper()
	v, err := s.Read(bg, name, token, holder)
	if err != nil {
		t.Fatalf("%s reads %s: %v", holder, name, err)
	}
	return v
}

// TestOccupancyOverlap: a holder entering while others are inside is an
// overlap, counted once per enter and recorded with who was inside; an
// enter applied twice (a retried script) and another name's holders are
// none; the writes take everyone out.
func TestOccupancyOverlap(t *testing.T) {
	env := redisenvtest.Start(t)
	s := guard.New(env.NewClient(), "g:occ", guard.Plain)
	a := read(t, s, "L", 0, "a")
	read(t, s, "M", 0, "m") // another lock: not an overlap
	b := read(t, s, "L", 0, "b")
	read(t, s, "L", 0, "b") // b's enter again: still one overlap
	c := read(t, s, "L", 0, "c")
	if tot := totals(t, s); tot.Overlaps != 2 {
		t.Errorf("overlaps %d; want 2 (b entered with a inside, c with a and b)", tot.Overlaps)
	}
	want := []guard.Overlap{{Name: "L", Inside: []string{"a"}, Entered: "b"}, {Name: "L", Inside: []string{"a", "b"}, Entered: "c"}}
	if got := overlaps(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("overlap examples %+v; want %+v", got, want)
	}
	if got := inside(t, s, "L"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("inside L: %v; want a, b, c", got)
	}
	for holder, v := range map[string]int64{"a": a, "b": b, "c": c} {
		if _, err := s.Write(bg, "L", v, holder, 0); err != nil {
			t.Fatal(err)
		}
	}
	if got := inside(t, s, "L"); len(got) != 0 {
		t.Errorf("inside L after every write: %v; want nobody", got)
	}
}

// TestOccupancySequential: holders one after another, leaving by a write
// or by Leave (twice, or without entering, harmlessly), are no overlap;
// a holder "" enters nobody.
func TestOccupancySequential(t *testing.T) {
	env := redisenvtest.Start(t)
	s := guard.New(env.NewClient(), "g:seq", guard.Plain)
	for i := range 3 {
		v := read(t, s, "L", 0, "writer")
		if _, err := s.Write(bg, "L", v, "writer", 0); err != nil {
			t.Fatal(err)
		}
		read(t, s, "L", 0, "quitter")
		for range 2 {
			if err := s.Leave(bg, "L", "quitter"); err != nil {
				t.Fatal(err)
			}
		}
		read(t, s, "L", 0, "")
		if err := s.Leave(bg, "L", fmt.Sprint("never-entered-", i)); err != nil {
			t.Fatal(err)
		}
	}
	read(t, s, "L", 0, "anonymous")
	read(t, s, "L", 0, "") // inside with anonymous, but counted by nobody
	if tot, ov := totals(t, s), overlaps(t, s); tot.Overlaps != 0 || len(ov) != 0 {
		t.Errorf("overlaps %d, examples %+v; want none", tot.Overlaps, ov)
	}
}

// TestOccupancyFenced: a read refused as stale does not enter; a write
// refused as stale still leaves, so the next holder's enter is clean.
func TestOccupancyFenced(t *testing.T) {
	env := redisenvtest.Start(t)
	s := guard.New(env.NewClient(), "g:occ-fenced", guard.Fenced)
	old := read(t, s, "L", 1, "old")
	cur := read(t, s, "L", 2, "new") // old is inside: an overlap
	if _, err := s.Write(bg, "L", cur, "new", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(bg, "L", old, "old", 1); !errors.Is(err, guard.ErrStale) {
		t.Fatalf("stale write: %v; want ErrStale", err)
	}
	if got := inside(t, s, "L"); len(got) != 0 {
		t.Errorf("inside after a stale write: %v; want nobody", got)
	}
	if _, err := s.Read(bg, "L", 1, "old"); !errors.Is(err, guard.ErrStale) {
		t.Fatalf("stale read: %v; want ErrStale", err)
	}
	if got := inside(t, s, "L"); len(got) != 0 {
		t.Errorf("inside after a stale read: %v; want nobody", got)
	}
	read(t, s, "L", 3, "next")
	if tot := totals(t, s); tot.Overlaps != 1 {
		t.Errorf("overlaps %d; want only new's enter beside old", tot.Overlaps)
	}
}

// TestOccupancyBounds: the count is exact however many pile in; the store
// keeps the first MaxOverlaps examples, each naming at most MaxInside
// holders inside, never the one entering.
func TestOccupancyBounds(t *testing.T) {
	env := redisenvtest.Start(t)
	s := guard.New(env.NewClient(), "g:bounds", guard.Plain)
	const n = guard.MaxOverlaps + 5
	for i := range n {
		read(t, s, "L", 0, fmt.Sprint("h", i))
	}
	if tot := totals(t, s); tot.Overlaps != n-1 {
		t.Errorf("overlaps %d; want %d", tot.Overlaps, n-1)
	}
	ov := overlaps(t, s)
	if len(ov) != guard.MaxOverlaps {
		t.Fatalf("%d examples; want %d", len(ov), guard.MaxOverlaps)
	}
	for i, o := range ov {
		if o.Entered != fmt.Sprint("h", i+1) || len(o.Inside) != min(i+1, guard.MaxInside) || slices.Contains(o.Inside, o.Entered) {
			t.Errorf("example %d: %+v; want h%d entering, %d others inside", i, o, i+1, min(i+1, guard.MaxInside))
		}
	}
	if err := s.Reset(bg); err != nil {
		t.Fatal(err)
	}
	if tot, ov := totals(t, s), overlaps(t, s); tot.Overlaps != 0 || len(ov) != 0 {
		t.Errorf("after Reset: overlaps %d, %d examples", tot.Overlaps, len(ov))
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
				v, err := st.Read(bg, name, int64(i+1), "w")
				if err != nil {
					t.Fatalf("%s: read %s: %v", mode, name, err)
				}
				if _, err := st.Write(bg, name, v, "w", int64(i+1)); err != nil {
					t.Fatalf("%s: write %s: %v", mode, name, err)
				}
			}
		}
		n := int64(2 * len(names))
		if tot := totals(t, other); tot.Value != n || tot.Accepted != n || tot.Lost() != 0 || tot.Overlaps != 0 {
			t.Errorf("%s: totals %+v; want %d writes counted, none lost, no overlap", mode, tot, n)
		}
		// Two machines' holders inside one name at once: the store sees it.
		for i, st := range []*guard.Store{s, other} {
			if _, err := st.Read(bg, "lb:orders", 100, fmt.Sprint("m", i)); err != nil {
				t.Fatalf("%s: overlapping read: %v", mode, err)
			}
		}
		want := []guard.Overlap{{Name: "lb:orders", Inside: []string{"m0"}, Entered: "m1"}}
		if tot, ov := totals(t, s), overlaps(t, s); tot.Overlaps != 1 || !reflect.DeepEqual(ov, want) {
			t.Errorf("%s: overlaps %d, examples %+v; want %+v", mode, tot.Overlaps, ov, want)
		}
		for i, st := range []*guard.Store{s, other} {
			if err := st.Leave(bg, "lb:orders", fmt.Sprint("m", i)); err != nil {
				t.Fatal(err)
			}
		}
		if got := inside(t, s, "lb:orders"); len(got) != 0 {
			t.Errorf("%s: inside after leaving: %v", mode, got)
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

// TestOccupancyDeadHolder: a holder that never leaves (its process died
// inside) is the oldest inside at every later overlap, and each is counted
// against it.
func TestOccupancyDeadHolder(t *testing.T) {
	env := redisenvtest.Start(t)
	s := guard.New(env.NewClient(), "g:dead", guard.Plain)
	read(t, s, "L", 0, "w1/dead")
	for _, h := range []string{"w0/a", "w0/b", "w0/a"} {
		v := read(t, s, "L", 0, h)
		if _, err := s.Write(bg, "L", v, h, 0); err != nil {
			t.Fatal(err)
		}
	}
	// Two live holders overlapping each other behind the dead one: still
	// counted against the oldest.
	read(t, s, "L", 0, "w0/a")
	read(t, s, "L", 0, "w0/b")
	by, err := s.OverlapsBy(bg)
	if err != nil {
		t.Fatal(err)
	}
	if tot := totals(t, s); tot.Overlaps != 5 || by["w1/dead"] != 5 || len(by) != 1 {
		t.Errorf("overlaps %d by %v, want 5, all counted against w1/dead", tot.Overlaps, by)
	}
	if got, err := s.Inside(bg, "L"); err != nil || !slices.Equal(got, []string{"w1/dead", "w0/a", "w0/b"}) {
		t.Errorf("inside %v (%v), want the dead holder first, then in the order they entered", got, err)
	}
}

func enter(t *testing.T, s *guard.Store, name, holder string, shared bool) guard.Entered {
	t.Helper()
	e, err := s.Enter(bg, name, guard.Entry{Holder: holder, Shared: shared})
	if err != nil {
		t.Fatalf("%s enters %s: %v", holder, name, err)
	}
	return e
}

func leave(t *testing.T, s *guard.Store, name, holder string) {
	t.Helper()
	if err := s.Leave(bg, name, holder); err != nil {
		t.Fatalf("%s leaves %s: %v", holder, name, err)
	}
}

// TestReadersShare: readers inside together are no overlap; a writer
// entering among readers is one, and so is a reader entering while a
// writer is inside, each example saying who read. Leave takes readers out
// as it takes writers.
func TestReadersShare(t *testing.T) {
	env := redisenvtest.Start(t)
	s := guard.New(env.NewClient(), "g:rw", guard.Plain)
	enter(t, s, "L", "r1", true)
	enter(t, s, "L", "r2", true)
	if tot := totals(t, s); tot.Overlaps != 0 {
		t.Fatalf("two readers: %d overlaps, want none", tot.Overlaps)
	}
	enter(t, s, "L", "w1", false) // among both readers
	enter(t, s, "L", "r3", true)  // beside the writer (the readers share with it)
	want := []guard.Overlap{
		{Name: "L", Readers: []string{"r1", "r2"}, Entered: "w1"},
		{Name: "L", Inside: []string{"w1"}, Entered: "r3", EnteredRead: true},
	}
	if tot, got := totals(t, s), overlaps(t, s); tot.Overlaps != 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("overlaps %d, examples %+v; want %+v", tot.Overlaps, got, want)
	}
	by, err := s.OverlapsBy(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(by, map[string]int64{"r1": 1, "w1": 1}) {
		t.Errorf("overlaps by %v; want each counted against the conflicting holder inside longest: r1, then w1", by)
	}
	for _, h := range []string{"r1", "r2", "w1", "r3"} {
		leave(t, s, "L", h)
	}
	if got := inside(t, s, "L"); len(got) != 0 {
		t.Errorf("inside after every leave: %v", got)
	}
	// One after another: a writer, then readers, then a writer.
	enter(t, s, "L", "w2", false)
	leave(t, s, "L", "w2")
	enter(t, s, "L", "r4", true)
	enter(t, s, "L", "r5", true)
	leave(t, s, "L", "r4")
	leave(t, s, "L", "r5")
	enter(t, s, "L", "w3", false)
	if tot := totals(t, s); tot.Overlaps != 2 {
		t.Errorf("overlaps %d after sections in turn; want still 2", tot.Overlaps)
	}
}

// TestSeq: each enter gets the next number of the store's enters; a
// retried enter keeps its own; holder "" gets none.
func TestSeq(t *testing.T) {
	env := redisenvtest.Start(t)
	s := guard.New(env.NewClient(), "g:seq-n", guard.Plain)
	var seqs []int64
	for _, h := range []string{"a", "b", "c"} {
		seqs = append(seqs, enter(t, s, "L", h, h == "b").Seq)
	}
	if again := enter(t, s, "L", "c", false).Seq; again != seqs[2] {
		t.Errorf("c's enter again: seq %d, want its own %d", again, seqs[2])
	}
	if !slices.Equal(seqs, []int64{1, 2, 3}) {
		t.Errorf("seqs %v, want 1, 2, 3", seqs)
	}
	if e := enter(t, s, "L", "", false); e.Seq != 0 {
		t.Errorf("holder \"\": seq %d, want 0", e.Seq)
	}
}

// TestEmptied: a store that began and then lost its keys (flushed here;
// restarted empty in the harness's tests) refuses every step with
// ErrEmptied and writes nothing, and Totals says so; a store that never
// began checks nothing.
func TestEmptied(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	s := guard.New(rdb, "g:emptied", guard.Plain)
	if err := s.Begin(bg); err != nil {
		t.Fatal(err)
	}
	v := read(t, s, "L", 0, "a")
	if _, err := s.Write(bg, "L", v, "a", 0); err != nil {
		t.Fatal(err)
	}
	if tot := totals(t, s); tot.Emptied || tot.Accepted != 1 {
		t.Fatalf("totals %+v; want 1 accepted, the mark there", tot)
	}
	if err := rdb.FlushAll(bg).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enter(bg, "L", guard.Entry{Holder: "b"}); !errors.Is(err, guard.ErrEmptied) {
		t.Errorf("enter after the flush: %v; want ErrEmptied", err)
	}
	if _, err := s.Write(bg, "L", 0, "b", 0); !errors.Is(err, guard.ErrEmptied) {
		t.Errorf("write after the flush: %v; want ErrEmptied", err)
	}
	if err := s.Leave(bg, "L", "b"); !errors.Is(err, guard.ErrEmptied) {
		t.Errorf("leave after the flush: %v; want ErrEmptied", err)
	}
	if n, err := rdb.DBSize(bg).Result(); err != nil || n != 0 {
		t.Errorf("%d keys after refused steps (%v); want none written", n, err)
	}
	if tot := totals(t, s); !tot.Emptied {
		t.Errorf("totals %+v; want Emptied", tot)
	}
	unmarked := guard.New(rdb, "g:emptied", guard.Plain)
	if _, err := unmarked.Read(bg, "L", 0, "c"); err != nil {
		t.Errorf("a store that never began: %v", err)
	}
	if tot := totals(t, unmarked); tot.Emptied {
		t.Errorf("a store that never began: totals %+v, want not Emptied", tot)
	}
}

// TestKeysExpire: every key the steps write has a time to live, so a
// run that dies leaves nothing for ever on a user's server.
func TestKeysExpire(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	for _, mode := range []guard.Mode{guard.Plain, guard.Fenced} {
		s := guard.New(rdb, "g:ttl:"+string(mode), mode)
		if err := s.Begin(bg); err != nil {
			t.Fatal(err)
		}
		enter(t, s, "L", "r", true)
		a := read(t, s, "L", 2, "a") // an overlap: examples and counts by holder
		read(t, s, "M", 1, "stuck")  // never leaves
		if _, err := s.Write(bg, "L", a, "a", 2); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Read(bg, "L", 1, "stale"); !errors.Is(err, guard.ErrStale) && mode == guard.Fenced {
			t.Fatalf("stale read: %v", err)
		}
	}
	keys, err := rdb.Keys(bg, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 8 {
		t.Fatalf("keys %v; want the counters, totals, occupants and overlaps of both stores", keys)
	}
	for _, k := range keys {
		if ttl, err := rdb.PTTL(bg, k).Result(); err != nil || ttl <= 0 || ttl > guard.DefaultTTL {
			t.Errorf("key %s: ttl %v (%v); want it to expire within %v", k, ttl, err, guard.DefaultTTL)
		}
	}
}
