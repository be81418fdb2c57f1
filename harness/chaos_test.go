package harness_test

import (
	"path/filepath"
	"slices"
	"strings"
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

// TestCheckMitigationWithoutFaketime: without libfaketime a matrix whose
// rows jump a server's clock is bad input before anything starts, unless
// those rows are left out or run on containers (where they skip).
func TestCheckMitigationWithoutFaketime(t *testing.T) {
	t.Setenv(redisenv.EnvURL, "")
	t.Setenv(redisenv.EnvFaketime, filepath.Join(t.TempDir(), "libfaketime.so.1"))
	local := redisenv.Config{Backend: redisenv.BackendLocal}
	var jumping, other string
	for _, n := range scenarios.MitigationScenarios() {
		if s, _ := scenarios.Find(n); s.FakeClock {
			jumping = n
		} else {
			other = n
		}
	}
	if jumping == "" {
		t.Fatal("no matrix row jumps a clock")
	}
	err := harness.CheckMitigation(harness.MitigationOptions{Run: scenarios.Options{Redis: local}})
	if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), jumping) || !strings.Contains(err.Error(), redisenv.EnvFaketime) {
		t.Errorf("all rows, no libfaketime: %v; want exit %d naming %s and $%s", err, cli.ExitUsage, jumping, redisenv.EnvFaketime)
	}
	if err := harness.CheckMitigation(harness.MitigationOptions{Run: scenarios.Options{Redis: local}, Only: []string{other}}); err != nil {
		t.Errorf("--only %s: %v", other, err)
	}
	container := redisenv.Config{Backend: redisenv.BackendContainer}
	if err := harness.CheckMitigation(harness.MitigationOptions{Run: scenarios.Options{Redis: container}}); err != nil {
		t.Errorf("on containers: %v", err)
	}
}
