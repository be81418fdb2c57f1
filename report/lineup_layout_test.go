package report_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestMatrixGroupsUnderTheirHeadings: each group's table follows its own
// owners heading, so no owners heading is left without a table before the
// next workload's heading.
func TestMatrixGroupsUnderTheirHeadings(t *testing.T) {
	var cells []results.LineupCell
	for _, p := range []string{"uncontended", "mutex"} {
		for _, owners := range []int{8, 32} {
			cells = append(cells, results.LineupCell{Profile: p, Owners: owners, Clients: 4, Impl: "lockimpl",
				Median: results.LineupRound{OpsPerSec: 1000}})
		}
	}
	md := lineupMarkdown(t, &results.Lineup{Cells: cells})
	var last string // the last heading or table line seen
	groups := 0
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### "):
			if strings.HasPrefix(last, "### ") && strings.Contains(last, "owners (") {
				t.Errorf("%q has no table before %q", last, line)
			}
			last = line
			if strings.HasPrefix(line, "### ") && strings.Contains(line, "owners (") {
				groups++
			}
		case strings.HasPrefix(line, "|"):
			last = line
		}
	}
	if groups != 4 {
		t.Errorf("%d owners headings, want 4:\n%s", groups, md)
	}
}
