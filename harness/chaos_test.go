package harness_test

import (
	"slices"
	"testing"

	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/scenarios"
)

// TestCheckMitigation: a matrix that could run or prove nothing is bad
// input (exit 2) before anything starts: a scenario not in the matrix, a
// lock Redis lockbench did not start, a planted fencing bug no selected
// cell could catch. A selection that can run passes.
func TestCheckMitigation(t *testing.T) {
	t.Setenv(redisenv.EnvURL, "")
	local := redisenv.Config{Backend: redisenv.BackendLocal}
	gated := scenarios.FencingGated()[0]
	var ungated string
	for _, n := range scenarios.MitigationScenarios() {
		if !slices.Contains(scenarios.FencingGated(), n) {
			ungated = n
		}
	}
	if ungated == "" {
		t.Fatal("every matrix scenario is fencing-gated: nothing to plant a bug the matrix cannot catch")
	}
	opts := func(redis redisenv.Config, plant bool, only ...string) harness.MitigationOptions {
		return harness.MitigationOptions{Run: scenarios.Options{Redis: redis}, PlantBrokenFencing: plant, Only: only}
	}
	for _, c := range []struct {
		name string
		o    harness.MitigationOptions
		ok   bool
	}{
		{"all", opts(local, false), true},
		{"planted, all", opts(local, true), true},
		{"planted, a gated one", opts(local, true, gated), true},
		{"not a matrix scenario", opts(local, false, "latency"), false},
		{"an external Redis", opts(redisenv.Config{URL: "redis://127.0.0.1:1"}, false), false},
		{"planted, none gated", opts(local, true, ungated), false},
	} {
		err := harness.CheckMitigation(c.o)
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.ok && cli.ExitCode(err) != cli.ExitUsage:
			t.Errorf("%s: %v (exit %d); want exit %d", c.name, err, cli.ExitCode(err), cli.ExitUsage)
		}
	}
	t.Setenv(redisenv.EnvURL, "redis://127.0.0.1:1")
	if err := harness.CheckMitigation(opts(redisenv.Config{}, false)); cli.ExitCode(err) != cli.ExitUsage {
		t.Errorf("with $%s set: %v; want exit %d", redisenv.EnvURL, err, cli.ExitUsage)
	}
}
