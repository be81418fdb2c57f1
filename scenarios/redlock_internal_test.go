package scenarios

import (
	"testing"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
)

// TestNodeRestartRowSkipsSinglePrimary: node-restart's cells other than
// Redlock's are skipped, each saying the single-primary restart is the
// redis-restart row, and none starts a Redis.
func TestNodeRestartRowSkipsSinglePrimary(t *testing.T) {
	t.Setenv("REDIS_URL", "")
	mo := MitigationOptions{NewStore: func(key string, mode guard.Mode) *guard.Store { return guard.New(nil, key, mode) }}
	row := nodeRestartRow()
	for _, mi := range Mitigations {
		if mi.Redlock {
			if row.redlock == nil || row.expect.of(mi).want != expectSome {
				t.Errorf("redlock: want a Redlock variant held to lost updates, got %+v", row.expect.of(mi))
			}
			continue
		}
		c, _ := runCell(t.Context(), Options{}, mo, TimingFor(true), row, mi)
		if c.Skipped != singlePrimaryRestart {
			t.Errorf("%s: skipped %q; want skipped %q", mi.Name, c.Skipped, singlePrimaryRestart)
		}
	}
}

// TestRedlockClockJumpAllFive: one node's clock jump under a holder on all
// five nodes frees nothing the contender can use: zero violations.
func TestRedlockClockJumpAllFive(t *testing.T) {
	redisenvtest.Long(t, "a chaos scenario")
	tp := faults.NewEmbedded()
	t.Cleanup(func() { _ = tp.Close() })
	o := Options{Redis: redisenv.Config{Backend: redisenv.BackendLocal, Server: redisenvtest.Server(), Dir: t.TempDir()}, Toxiproxy: tp, Quick: true, Seed: 1, Logf: t.Logf}
	rep := &results.ChaosReport{}
	var kept []*results.Result
	v := Variant{Name: "all-five", Plan: redlockClockJumpPlan(false), run: redlockClockJumpAllFive, timing: clockJumpTiming}
	if err := runVariant(t.Context(), nodeClockJumpScenario, v, TimingFor(true), Rand(1, "x"), o, rep, &kept); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Checks {
		if !c.OK {
			t.Errorf("%s: want %s, got %s", c.Name, c.Want, c.Got)
		}
	}
	if len(kept) != 1 || kept[0].Safety.Violations != 0 {
		t.Errorf("runs %d; want one without violations", len(kept))
	}
}
