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
		{"interrupted, good so far", results.MitigationMatrix{Cells: []results.MitigationCell{good}, Partial: true}, false, "matrix: PARTIAL: interrupted after 1 cell and 0 healthy runs [", true},
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

// TestMitigationMarks: a stale write a fenced store accepted before any
// newer token reached it is what fencing allows (lease-expiry's fencing
// cell: 0 lost updates, every cell as expected) and is not called a
// failure; where nothing fences, a stale write has a mark of its own, as
// rightful holders refused do. Each mark has one symbol and one meaning,
// and the legend lists them all.
func TestMitigationMarks(t *testing.T) {
	m := &results.MitigationMatrix{Scenarios: []string{"lease-expiry", "redis-restart"}, Mitigations: []string{"none", "fencing"},
		Cells: []results.MitigationCell{
			{Scenario: "lease-expiry", Mitigation: "none", Lost: 3, Written: 9, StaleAccepted: 4, Expect: "lost updates > 0", OK: true},
			{Scenario: "lease-expiry", Mitigation: "fencing", Fenced: true, Lost: 0, Written: 9, Rejected: 17, StaleAccepted: 1, Expect: "0 lost updates", OK: true},
			{Scenario: "redis-restart", Mitigation: "none", Lost: 2, Written: 9, StaleAccepted: 2, Expect: "lost updates > 0", OK: true},
			{Scenario: "redis-restart", Mitigation: "fencing", Fenced: true, Lost: 2, Written: 9, StaleAccepted: 2, RightfulRefused: 1, Expect: "0 lost updates", Problem: "2 lost updates"},
		}}
	out := mitigationSummary(m)
	for _, want := range []string{"3 · 0 · 0ms · 0 · 4* ", "0 · 0 · 0ms · 17 · 1~ ", "2 · 0 · 0ms · 0 · 2~ · 1? BAD"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "!") || strings.Contains(out, "fencing failed") {
		t.Errorf("summary calls a stale write a fenced store accepted a failure:\n%s", out)
	}
	good := &results.MitigationMatrix{Scenarios: m.Scenarios[:1], Mitigations: m.Mitigations, Cells: m.Cells[:2]}
	if out := mitigationSummary(good); !strings.Contains(out, "matrix: every cell as expected") || strings.Contains(out, "fencing failed") {
		t.Errorf("lease-expiry's cells as expected, yet:\n%s", out)
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
	if len(legend) != len(results.MitigationMarks) {
		t.Errorf("legend %q: want one line per mark (%d)", legend, len(results.MitigationMarks))
	}
	if !strings.Contains(legend["~"], "fencing allows") || !strings.Contains(legend["*"], "no fence") || !strings.Contains(legend["?"], "rightful") {
		t.Errorf("legend %q: want ~ for stale writes fencing allows, * for unfenced stale writes, ? for rightful holders refused", legend)
	}
	words := map[string]bool{}
	for _, mk := range results.MitigationMarks {
		if words[mk.Words] {
			t.Errorf("two marks say %q", mk.Words)
		}
		words[mk.Words] = true
	}
}
