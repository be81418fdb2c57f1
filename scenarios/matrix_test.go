package scenarios_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/scenarios"
)

// matrix runs the mitigation matrix on only, with a guarded store on a
// redis-server of its own (broken: one that accepts lower tokens).
func matrix(t *testing.T, broken, costs bool, only ...string) *results.MitigationMatrix {
	t.Helper()
	redisenvtest.Long(t, "the mitigation matrix")
	store := redisenvtest.Start(t)
	mo := scenarios.MatrixOptions{StoreAt: store.Addr(), Only: only, NoCosts: !costs, Progress: func(s string) { t.Log("matrix: " + s) },
		NewStore: func(key string, mode guard.Mode) *guard.Store {
			if broken && mode == guard.Fenced {
				return guard.NewBroken(store.NewClient(), key)
			}
			return guard.New(store.NewClient(), key, mode)
		}}
	if broken {
		mo.Planted = "a fenced store that accepts lower tokens"
	}
	m := scenarios.RunMatrix(bg, options(t), mo)
	var b strings.Builder
	results.WriteMitigationSummary(&b, m)
	t.Log("\n" + b.String())
	return m
}

// TestMitigationMatrix: on a fault the holders cause (leases shorter than
// their holds), doing nothing, replica sync and Redisson lose updates;
// honouring Lost and fencing lose none, and fencing refuses the stale
// writes; each mitigation's healthy run is clean. (chaos matrix --quick
// runs every row in make chaos.)
func TestMitigationMatrix(t *testing.T) {
	m := matrix(t, false, true, "lease-expiry")
	if !m.OK() {
		t.Fatal("the matrix did not meet its expected verdicts")
	}
	for _, s := range m.Scenarios {
		if c, _ := m.Cell(s, "fencing"); c.Rejected == 0 {
			t.Errorf("%s × fencing: no stale read or write refused", s)
		}
		if c, _ := m.Cell(s, "none"); c.Violations == 0 {
			t.Errorf("%s × none: no violation", s)
		}
	}
	want := 0
	for _, mi := range scenarios.Mitigations {
		if !mi.Redisson {
			want++
		}
	}
	if len(m.Costs) != want {
		t.Errorf("%d healthy runs, want one per lockimpl mitigation (%d)", len(m.Costs), want)
	}
	if c, ok := m.Cell("lease-expiry", "redisson"); ok && c.Skipped == "" && (c.Lost == 0 || !c.OK) {
		t.Errorf("lease-expiry × redisson: %+v; want lost updates", c)
	}
}

// TestMitigationMatrixCatchesBrokenFencing: with a fenced store that
// accepts lower tokens planted, the fencing cells lose updates and the
// matrix fails.
func TestMitigationMatrixCatchesBrokenFencing(t *testing.T) {
	m := matrix(t, true, false, "lease-expiry")
	if m.OK() {
		t.Fatal("the matrix passed with a fenced store that does not fence")
	}
	if c, _ := m.Cell("lease-expiry", "fencing"); c.OK || c.Lost == 0 {
		t.Errorf("lease-expiry × fencing with the planted bug: %+v; want lost updates and the cell failed", c)
	}
}
