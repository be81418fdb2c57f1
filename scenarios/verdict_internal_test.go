package scenarios

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
)

// TestVerdicts: the verdict follows the checks and the expectation; a
// panic is a FAIL that still reverts the injected fault.
func TestVerdicts(t *testing.T) {
	skew := func(r *rig) faults.Fault { return faults.ClockSkew("client:0", r.clocks[0], 1) }
	plan := func(Timing, *rand.Rand) []Planned {
		return []Planned{{Kind: "clock_skew", Target: "client:0", build: skew}}
	}
	var seen *faults.Clock
	body := func(ok bool, boom bool) func(r *rig) error {
		return func(r *rig) error {
			if err := r.start(1, nil); err != nil {
				return err
			}
			seen = r.clocks[0]
			r.newStage([]string{"a"}, []string{"l"}) // starts the plan
			r.sched.Wait()                           // the skew is in (For 0: reverted at once), nothing pending
			r.check("the check", "yes", "whatever", ok)
			if boom {
				panic("boom")
			}
			return nil
		}
	}
	for _, tc := range []struct {
		name      string
		expectV   bool
		ok, boom  bool
		want      results.Verdict
		reasonHas string
	}{
		{"pass", false, true, false, results.Pass, ""},
		{"expected violation", true, true, false, results.ExpectedViolation, ""},
		{"mismatch", false, false, false, results.Fail, "the check: want yes, got whatever"},
		{"mismatch of a violation scenario", true, false, false, results.Fail, "the check"},
		{"panic", false, true, true, results.Fail, "panic in t.v: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Scenario{Name: "t", ExpectViolation: tc.expectV, Variants: []Variant{{Name: "v", Plan: plan, run: body(tc.ok, tc.boom)}}}
			tp := faults.NewEmbedded()
			defer tp.Close()
			rep := Run(context.Background(), s, Options{Redis: redisenv.Config{Backend: redisenv.BackendLocal, Server: redisenvtest.Server(), Dir: t.TempDir()}, Toxiproxy: tp, Quick: true})
			if rep.Verdict != tc.want || !strings.Contains(rep.Reason, tc.reasonHas) {
				t.Errorf("verdict %s (%q), want %s containing %q", rep.Verdict, rep.Reason, tc.want, tc.reasonHas)
			}
			if rep.OK() != (tc.want != results.Fail) {
				t.Errorf("OK() = %v for %s", rep.OK(), rep.Verdict)
			}
			if seen == nil || seen.Offset() != 0 {
				t.Errorf("the fault was not reverted: clock offset %v", seen.Offset())
			}
		})
	}
}

// TestBestSecond: "throughput recovers" takes the best whole second after
// the fault, so a host slowed for some seconds passes and a stall fails.
func TestBestSecond(t *testing.T) {
	pts := func(ops ...int64) []results.Point {
		var s []results.Point
		for i, n := range ops {
			s = append(s, results.Point{T: float64(i + 1), Ops: n})
		}
		return append(s, results.Point{T: float64(len(ops)) + 0.3, Ops: 500}) // a sliver: not a whole second
	}
	for _, c := range []struct {
		name   string
		series []results.Point
		want   float64
	}{
		{"recovered on a host busy with other work", pts(300, 300, 0, 0, 20, 90, 40), 90},
		{"stalled after the fault", pts(300, 300, 0, 0, 0, 0, 0), 0},
		{"only the fault's seconds were good", pts(300, 300, 300, 0, 0, 0, 0), 0},
	} {
		if got := bestSecond(c.series, 3); got != c.want {
			t.Errorf("%s: bestSecond = %v, want %v", c.name, got, c.want)
		}
	}
}

// slowRestart is a node whose restarts return d after they begin, as a
// container's on a loaded host do. The server itself starts at once and
// the clients' proxies stay down until the restart returns, so the restart
// ends when planned however long this host takes to start a server (as
// long as it is under d).
type slowRestart struct {
	redisenv.Node
	d time.Duration
}

func (n slowRestart) Restart(ctx context.Context) error {
	done := time.Now().Add(n.d)
	if err := n.Node.Restart(ctx); err != nil {
		return err
	}
	time.Sleep(time.Until(done))
	return nil
}

// TestRedisRestartSlowRestart: a restart that ends just after the holders'
// next renewal came due still leaves the contenders a window in which the
// holders do not know, so the checker sees the violation. Reaching the
// server together, the holders' renewal, retrying since it came due, found
// the loss as the contenders took the locks.
func TestRedisRestartSlowRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("a chaos scenario")
	}
	tim := restartTiming(TimingFor(true))
	// The kill is just after the first renewal; this restart ends after
	// the second, and later than the default quick lease (3 s) would
	// have lasted, as a container's restart on a loaded host can.
	slow := max(tim.Watchdog/3-tim.Watchdog/24+100*time.Millisecond, 4*time.Second)
	s := *redisRestartScenario
	s.Variants = []Variant{{Name: "no-persistence", run: func(r *rig) error { return redisRestart(r, false) }, timing: restartTiming,
		Plan: func(t Timing, _ *rand.Rand) []Planned {
			return []Planned{{At: restartKillAt(t), Kind: "kill", Target: "redis:primary", Detail: "SIGKILL, a slow restart",
				build: func(r *rig) faults.Fault { return restartFault(r, slowRestart{r.env.Primary(), slow}) }}}
		}}}
	tp := faults.NewEmbedded()
	defer tp.Close()
	rep := Run(context.Background(), &s, Options{Redis: redisenv.Config{Backend: redisenv.BackendLocal, Server: redisenvtest.Server(), Dir: t.TempDir()}, Toxiproxy: tp, Quick: true})
	if rep.Verdict != results.ExpectedViolation {
		t.Errorf("verdict %s (%s), want %s", rep.Verdict, rep.Reason, results.ExpectedViolation)
	}
	for _, f := range rep.Figures {
		t.Logf("%s: %.3f %s", f.Name, f.Value, f.Unit)
	}
}
