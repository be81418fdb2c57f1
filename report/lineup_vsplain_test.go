package report_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestMatrixShowsAPAgainstPlain: the perf document has a row per cell
// where lockimpl+ap and plain lockimpl both ran, with its pairs, each
// ratio, the pairs' range and a verdict: a loss only beyond the pairs'
// spread.
func TestMatrixShowsAPAgainstPlain(t *testing.T) {
	spread := func(med, lo, hi float64, apart bool) results.RatioSpread {
		return results.RatioSpread{Median: med, Min: lo, Max: hi, Rounds: 8, Apart: apart}
	}
	m := &results.Lineup{Rounds: 3, Cells: []results.LineupCell{
		{Profile: "uncontended", Owners: 32, Clients: 4, Impl: "lockimpl"},
		{Profile: "uncontended", Owners: 32, Clients: 4, Impl: "lockimpl+ap", VsPlain: &results.VsPlain{Ops: spread(1.31, 1.25, 1.4, true), AcquireP99: spread(0.8, 0.7, 0.9, true)}},
		{Profile: "mutex", Owners: 8, Clients: 4, Impl: "lockimpl"},
		{Profile: "mutex", Owners: 8, Clients: 4, Impl: "lockimpl+ap", VsPlain: &results.VsPlain{Ops: spread(0.97, 0.93, 1.02, false), AcquireP99: spread(1.01, 0.95, 1.1, false)}},
		{Profile: "rw90", Owners: 32, Clients: 4, Impl: "lockimpl"},
		{Profile: "rw90", Owners: 32, Clients: 4, Impl: "lockimpl+ap", VsPlain: &results.VsPlain{Ops: spread(0.9, 0.88, 0.92, true), AcquireP99: spread(1.3, 1.2, 1.4, true)}},
		{Profile: "mutex", Owners: 64, Clients: 4, Impl: "lockimpl"},
		{Profile: "mutex", Owners: 64, Clients: 4, Impl: "lockimpl+ap", VsPlain: &results.VsPlain{Ops: results.RatioSpread{Median: 0.9, Min: 0.88, Max: 0.92, Rounds: 3, Apart: true}}},
	}}
	_, section := lineupSection(t, m, "## lockimpl+ap against plain lockimpl")
	wantIn(t, section,
		"| uncontended | 32 | 8 | 1.31× | 1.25–1.40× | 0.80× | 0.70–0.90× | no loss |",
		"| mutex | 8 | 8 | 0.97× | 0.93–1.02× | 1.01× | 0.95–1.10× | behind, within spread |",
		"| rw90 | 32 | 8 | 0.90× | 0.88–0.92× | 1.30× | 1.20–1.40× | **loses: ops/s, p99** |",
		// Worse in each of 3 pairs: too few to call a loss.
		"| mutex | 64 | 3 | 0.90× | 0.88–0.92× | — | — | too few pairs to tell (6 needed) |",
	)
	// One row per cell where both ran: the plain cells add none of their own.
	rows := 0
	for line := range strings.SplitSeq(section, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| workload") {
			rows++
		}
	}
	if rows != 4 {
		t.Errorf("%d ratio rows, want 4 (one per cell with both):\n%s", rows, section)
	}
}
