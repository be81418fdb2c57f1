package results_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

func mitigationSummary(m *results.MitigationMatrix) string {
	var b strings.Builder
	results.WriteMitigationSummary(&b, m)
	return b.String()
}

// TestMitigationSummaryVerdicts: the summary's last line says what the
// matrix is: as expected, failed, interrupted (PARTIAL, first and last,
// even when every cell so far met its verdict), or nothing run.
func TestMitigationSummaryVerdicts(t *testing.T) {
	good := results.MitigationCell{Scenario: "lease-expiry", Mitigation: "none", Lost: 3, Written: 9, Expect: "lost updates > 0", OK: true}
	bad := results.MitigationCell{Scenario: "lease-expiry", Mitigation: "fencing", Lost: 2, Written: 9, Expect: "0 lost updates", Problem: "2 lost updates"}
	skipped := results.MitigationCell{Scenario: "lease-expiry", Mitigation: "redisson", Skipped: "no Redisson variant"}
	for _, tc := range []struct {
		name    string
		m       results.MitigationMatrix
		ok      bool
		last    string
		partial bool
	}{
		{"as expected", results.MitigationMatrix{Cells: []results.MitigationCell{good, skipped}}, true, "matrix: every cell as expected", false},
		{"a bad cell", results.MitigationMatrix{Cells: []results.MitigationCell{good, bad}}, false, "matrix: FAIL: some cell", false},
		{"interrupted, good so far", results.MitigationMatrix{Cells: []results.MitigationCell{good}, Partial: true}, false, "matrix: PARTIAL: interrupted after 1 cells and 0 healthy runs [", true},
		{"interrupted, a bad cell", results.MitigationMatrix{Cells: []results.MitigationCell{good, bad}, Partial: true}, false, "matrix: PARTIAL: interrupted after 2 cells and 0 healthy runs; FAIL: 1 of them not as expected", true},
		{"every cell skipped", results.MitigationMatrix{Cells: []results.MitigationCell{skipped}}, false, "matrix: FAIL: nothing ran: every cell was skipped", false},
		{"no cell", results.MitigationMatrix{}, false, "matrix: FAIL: nothing ran", false},
	} {
		tc.m.Scenarios, tc.m.Mitigations = []string{"lease-expiry"}, []string{"none", "fencing", "redisson"}
		out := mitigationSummary(&tc.m)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if tc.m.OK() != tc.ok || !strings.HasPrefix(lines[len(lines)-1], tc.last) {
			t.Errorf("%s: ok %v (want %v), last line %q, want it to start %q", tc.name, tc.m.OK(), tc.ok, lines[len(lines)-1], tc.last)
		}
		if got := strings.HasPrefix(out, results.PartialNote); got != tc.partial {
			t.Errorf("%s: PARTIAL banner first: %v, want %v:\n%s", tc.name, got, tc.partial, out)
		}
	}
}

// TestMitigationMarks: stale writes accepted mean fencing failed in a
// fenced column and nothing more than no fence in an unfenced one: each
// has its own mark, and the legend gives each mark one meaning.
func TestMitigationMarks(t *testing.T) {
	m := &results.MitigationMatrix{Scenarios: []string{"watchdog-loss"}, Mitigations: []string{"none", "fencing"},
		Cells: []results.MitigationCell{
			{Scenario: "watchdog-loss", Mitigation: "none", Lost: 3, Written: 9, StaleAccepted: 4, Expect: "lost updates > 0", OK: true},
			{Scenario: "watchdog-loss", Mitigation: "fencing", Fenced: true, Lost: 2, Written: 9, StaleAccepted: 2, RightfulRefused: 1, Expect: "0 lost updates", Problem: "2 lost updates"},
		}}
	out := mitigationSummary(m)
	for _, want := range []string{"3 · 0 · 0ms · 0 · 4* ", "2 · 0 · 0ms · 0 · 2! · 1? BAD"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	legend := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "  N"); ok && len(rest) > 2 {
			mark := rest[:1]
			if prev, seen := legend[mark]; seen {
				t.Errorf("mark %q explained twice: %q and %q", mark, prev, rest)
			}
			legend[mark] = rest[2:]
		}
	}
	if !strings.Contains(legend["!"], "fencing failed") || !strings.Contains(legend["*"], "no fence") || !strings.Contains(legend["?"], "rightful") {
		t.Errorf("legend %q: want ! for fencing failed, * for unfenced stale writes, ? for rightful holders refused", legend)
	}
}
