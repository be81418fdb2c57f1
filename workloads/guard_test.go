package workloads_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
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

// storeProcess is a guarded store of the test's own: a redis-server on a
// unix socket, which the test kills and starts again. It persists nothing
// on its own, so a start after a kill is empty unless SAVE wrote a
// snapshot, which the start then loads.
type storeProcess struct {
	t         *testing.T
	bin, dir  string
	cmd       *exec.Cmd
	sock      string
	inspector *redis.Client
}

func startStore(t *testing.T) *storeProcess {
	t.Helper()
	bin, err := redisenv.FindServer(redisenvtest.Server())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &storeProcess{t: t, bin: bin, dir: dir, sock: filepath.Join(dir, "s.sock")}
	s.inspector = s.client()
	t.Cleanup(func() {
		s.kill()
		_ = s.inspector.Close()
	})
	s.start()
	return s
}

// start runs the server and waits until it answers.
func (s *storeProcess) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "--port", "0", "--unixsocket", s.sock, "--dir", s.dir, "--dbfilename", "dump.rdb", "--save", "", "--appendonly", "no")
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	testkit.Eventually(s.t, "the store to answer", func() bool { return s.inspector.Ping(context.Background()).Err() == nil })
}

// kill ends the server at once, as a crash would.
func (s *storeProcess) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// client is a client of the store as the harness makes one: no retried
// script, which would apply a step twice.
func (s *storeProcess) client() *redis.Client {
	return redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, MaxRetries: -1})
}

// waitAccepted waits until the store under key has applied n writes.
func (s *storeProcess) waitAccepted(key string, n int64) {
	s.t.Helper()
	testkit.Eventually(s.t, fmt.Sprintf("%d writes in the store", n), func() bool {
		v, err := s.inspector.HGet(context.Background(), "{"+key+"}", "accepted").Int64()
		return err == nil && v >= n
	})
}

// TestGuardStoreGone: a guarded store that goes away mid-run leaves the
// run without its witness, and the run says so instead of passing: the
// sections it did not witness are counted and the cause named, the
// safety verdict is INCOMPLETE and the run fails. Killed, the store
// answers nothing more; restarted empty, it has lost the run's keys and
// refuses every later step; restored from an older snapshot, it has gone
// back, which the holders' enter numbers show.
func TestGuardStoreGone(t *testing.T) {
	env := redisenvtest.Start(t)
	for _, c := range []struct {
		name    string
		disrupt func(s *storeProcess, key string)
		// need are the gaps the run must name, besides the steps that
		// found the store unreachable (as many as met it down), and
		// words of the verdict that names them.
		need  []string
		words string
	}{
		{"killed", func(s *storeProcess, key string) {
			s.waitAccepted(key, 40)
			s.kill()
		}, []string{results.GapUnreachable, results.GapUnread}, "store unreachable from t="},
		{"restarted empty", func(s *storeProcess, key string) {
			s.waitAccepted(key, 40)
			s.kill()
			s.start()
		}, []string{results.GapEmptied}, "store lost the run's keys by t="},
		{"restored from an older snapshot", func(s *storeProcess, key string) {
			s.waitAccepted(key, 40)
			if err := s.inspector.Save(context.Background()).Err(); err != nil {
				t.Error(err)
			}
			s.waitAccepted(key, 120)
			s.kill()
			s.start()
		}, []string{results.GapWentBack}, "store went back to an older state by t="},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := startStore(t)
			p := counted(short(t, "mutex", 2, 2, 0, 0), 600)
			p.Guard, p.Locks = string(guard.Plain), 4
			p.Hold, p.Think = workloads.FixedDist(time.Millisecond), workloads.FixedDist(200*time.Microsecond)
			key := "gone:" + uniquePrefix(t)
			rdb := store.client()
			defer rdb.Close()
			type outcome struct {
				res *results.Result
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := workloads.Run(testkit.Context(t), workloads.Config{Profile: p, NewRedis: env.NewPool, KeyPrefix: uniquePrefix(t),
					Guard: guard.New(rdb, key, guard.Plain), GuardStore: "test"})
				done <- outcome{res, err}
			}()
			c.disrupt(store, key)
			o := <-done
			if o.err != nil {
				t.Fatal(o.err)
			}
			res, g := o.res, o.res.Guard
			if g == nil {
				t.Fatal("no guard in the result: the store's absence went unsaid")
			}
			t.Logf("guard: %d sections, %d unwitnessed, gaps %+v; safety %q", g.Sections, g.Unwitnessed, g.Gaps, res.Safety.Unwitnessed)
			for _, gp := range g.Gaps {
				if gp.Cause != results.GapUnreachable && !slices.Contains(c.need, gp.Cause) {
					t.Errorf("gap %+v: want only %v, and the store unreachable", gp, c.need)
				}
			}
			for _, cause := range c.need {
				if !slices.ContainsFunc(g.Gaps, func(gp results.GuardGap) bool { return gp.Cause == cause }) {
					t.Errorf("gaps %+v: %s missing", g.Gaps, cause)
				}
			}
			if g.Unwitnessed >= g.Sections || g.CountsWhole() {
				t.Errorf("%d of %d sections unwitnessed, counts whole %v; want some witnessed, and the counts known to miss some", g.Unwitnessed, g.Sections, g.CountsWhole())
			}
			if s := res.Safety; s.Verdict() != results.SafetyIncomplete || !strings.Contains(s.Unwitnessed, c.words) ||
				g.Unwitnessed > 0 && !strings.HasPrefix(s.Unwitnessed, fmt.Sprintf("the guarded store witnessed %s of %s; %s unwitnessed: ",
					results.Commas(g.Sections-g.Unwitnessed), results.Count(g.Sections, "section"), results.Commas(g.Unwitnessed))) {
				t.Errorf("safety %s: %q; want INCOMPLETE, the unwitnessed sections counted and %q named", s.Verdict(), s.Unwitnessed, c.words)
			}
			if !slices.ContainsFunc(res.Failures(), func(f results.Failure) bool { return f.Kind == results.FailUnwitnessed }) {
				t.Errorf("failures %v; want the missing witness among them", res.Failures())
			}
		})
	}
}
