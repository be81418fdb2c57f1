package scenarios_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/scenarios"
)

// matrix runs the mitigation matrix on only, with a guarded store on a
// redis-server of its own (broken: one that accepts lower tokens).
func matrix(t *testing.T, broken, costs bool, only ...string) *results.MitigationMatrix {
	t.Helper()
	redisenvtest.Long(t, "the mitigation matrix")
	store := redisenvtest.Start(t)
	mo := scenarios.MitigationOptions{StoreAt: store.Addr(), Only: only, NoCosts: !costs, Progress: func(s string) { t.Log("matrix: " + s) },
		NewStore: func(key string, mode guard.Mode) *guard.Store {
			if broken && mode == guard.Fenced {
				return guard.NewBroken(store.NewClient(), key)
			}
			return guard.New(store.NewClient(), key, mode)
		}}
	if broken {
		mo.Planted = "a fenced store that accepts lower tokens"
	}
	m := scenarios.RunMitigation(bg, options(t), mo)
	var b strings.Builder
	report.WriteMitigationSummary(&b, m)
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
		if c, _ := m.Cell(s, "fencing"); c.Rejected == 0 || !c.Fenced {
			t.Errorf("%s × fencing: %d stale reads or writes refused, fenced %v; want some, fenced", s, c.Rejected, c.Fenced)
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
		t.Errorf("%d healthy runs, want one per mitigation but Redisson's (%d)", len(m.Costs), want)
	}
	// A figure far below healthy comes with its cause: the refusals of
	// min-acks and min-replicas, and redsync waiting for Redlock's dead
	// node.
	for _, c := range m.Costs {
		d := c.ReplicaDown
		if d == nil || !d.FarBelow(c) {
			continue
		}
		if d.Cause == "" || c.Mitigation == "redlock" && !strings.Contains(d.Cause, "WithFailFast(true)") {
			t.Errorf("%s: %.1f ops/s with the replica (one node) down against %.1f healthy, cause %q", c.Mitigation, d.OpsPerSec, c.OpsPerSec, d.Cause)
		}
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
	c, _ := m.Cell("lease-expiry", "fencing")
	if c.OK || c.Lost == 0 {
		t.Errorf("lease-expiry × fencing with the planted bug: %+v; want lost updates and the cell failed", c)
	}
	// Its stale writes landed where no fence refused them: they are not
	// the ones a fence allows.
	for _, mk := range c.Marks() {
		if c.Fenced || mk.Symbol == "~" {
			t.Errorf("lease-expiry × fencing with the planted bug: marked %q (%s), fenced %v; want stale writes marked unfenced", mk.Symbol, mk.Words, c.Fenced)
		}
	}
}

// externalMatrix runs the matrix's redis-restart row against an external
// Redis (every cell skipped at once), calling cut when each cell starts.
func externalMatrix(t *testing.T, ctx context.Context, costs bool, cut func(string)) *results.MitigationMatrix {
	t.Helper()
	env := redisenvtest.Start(t)
	o := options(t)
	o.Redis = redisenv.Config{Backend: redisenv.BackendExternal, URL: "redis://" + env.Addr()}
	mo := scenarios.MitigationOptions{Only: []string{"redis-restart"}, NoCosts: !costs, Progress: cut,
		NewStore: func(string, guard.Mode) *guard.Store { t.Fatal("a skipped cell asked for a store"); return nil }}
	return scenarios.RunMitigation(ctx, o, mo)
}

// TestMatrixInterruptedInItsLastCell: Ctrl-C during the last cell, with
// no healthy run after it, still marks the matrix partial, never as a
// verdict.
func TestMatrixInterruptedInItsLastCell(t *testing.T) {
	last := scenarios.Mitigations[len(scenarios.Mitigations)-1].Name
	for _, costs := range []bool{false, true} {
		ctx, cancel := context.WithCancel(bg)
		m := externalMatrix(t, ctx, costs, func(s string) {
			if strings.HasSuffix(s, "× "+last) {
				cancel()
			}
		})
		cancel()
		if !m.Partial || m.OK() {
			t.Errorf("costs %v: interrupted in the last cell: partial %v, ok %v; want partial, not ok", costs, m.Partial, m.OK())
		}
		var b strings.Builder
		report.WriteMitigationSummary(&b, m)
		if !strings.Contains(b.String(), "PARTIAL") {
			t.Errorf("costs %v: the summary does not say partial:\n%s", costs, b.String())
		}
	}
}

// TestMatrixOnExternalRedis: the matrix kills and fails over the lock's
// Redis, so on an external one every cell is skipped, naming why, and a
// matrix in which nothing ran fails.
func TestMatrixOnExternalRedis(t *testing.T) {
	m := externalMatrix(t, bg, true, nil)
	if len(m.Cells) != len(scenarios.Mitigations) || m.Ran() != 0 || len(m.Costs) != 0 {
		t.Fatalf("%d cells, %d ran, %d healthy runs; want every cell skipped, no healthy run", len(m.Cells), m.Ran(), len(m.Costs))
	}
	for _, c := range m.Cells {
		if !strings.Contains(c.Skipped, "external (--redis-url)") {
			t.Errorf("%s × %s: skipped %q; want the external Redis named", c.Scenario, c.Mitigation, c.Skipped)
		}
	}
	if m.OK() || m.Partial {
		t.Errorf("nothing ran: ok %v, partial %v; want a failed matrix, not a partial one", m.OK(), m.Partial)
	}
	var b strings.Builder
	report.WriteMitigationSummary(&b, m)
	if !strings.Contains(b.String(), "FAIL: nothing ran: every cell was skipped") {
		t.Errorf("summary:\n%s", b.String())
	}
}
