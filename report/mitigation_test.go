package report_test

import (
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

// fixture is a full-size matrix (11 mitigations × 8 scenarios) with lost
// updates, refused acquisitions, skipped cells sharing reasons, a planted
// bug's failure, and costs with the replica stopped.
const fixture = "testdata/mitigations-full.json"

func readFixture(t *testing.T) *results.MitigationMatrix {
	t.Helper()
	m, err := results.ReadMitigationMatrix(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// htmlCell is a matrix cell as the page renders it.
type htmlCell struct {
	classes []string
	verdict string // the verdict mark's class: "pass", "miss" or ""
	lines   []string
}

var (
	matrixTable = regexp.MustCompile(`(?s)<table class="matrix">\n(.*?)</table>`)
	headCell    = regexp.MustCompile(`<th>(.*?)</th>`)
	bodyRow     = regexp.MustCompile(`(?s)<tr>(<td.*?)</tr>`)
	bodyCell    = regexp.MustCompile(`<td(?: class="([^"]*)")?(?: title="[^"]*")?>(?:<span class="verdict ([a-z]+)">[^<]*</span>)?(.*?)</td>`)
	titleAttr   = regexp.MustCompile(` title="[^"]*"`)
)

// renderMatrix writes m's HTML report and reads its matrix back, by
// scenario and mitigation; it returns the page too.
func renderMatrix(t *testing.T, m *results.MitigationMatrix) (map[[2]string]htmlCell, string) {
	t.Helper()
	dir := t.TempDir()
	path, err := results.WriteMitigationMatrix(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	in, err := report.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.html")
	if err := report.Write(out, in, report.Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	tm := matrixTable.FindStringSubmatch(page)
	if tm == nil {
		t.Fatal("no matrix table in the page")
	}
	var head []string
	for _, h := range headCell.FindAllStringSubmatch(tm[1], -1) {
		head = append(head, html.UnescapeString(strings.ReplaceAll(h[1], "<wbr>", "")))
	}
	if !slices.Equal(head, append([]string{"scenario"}, m.Mitigations...)) {
		t.Fatalf("matrix head %q: want scenario, then the mitigations in order", head)
	}
	cells := map[[2]string]htmlCell{}
	for _, r := range bodyRow.FindAllStringSubmatch(tm[1], -1) {
		tds := bodyCell.FindAllStringSubmatch(r[1], -1)
		if len(tds) != len(head) {
			t.Fatalf("a row of %d cells, want %d: %s", len(tds), len(head), r[1])
		}
		s := html.UnescapeString(tds[0][3])
		for i, td := range tds[1:] {
			cells[[2]string{s, head[i+1]}] = htmlCell{classes: strings.Fields(td[1]), verdict: td[2],
				lines: strings.Split(html.UnescapeString(td[3]), "<br>")}
		}
	}
	if len(cells) != len(m.Scenarios)*len(m.Mitigations) {
		t.Fatalf("%d cells read, want %d", len(cells), len(m.Scenarios)*len(m.Mitigations))
	}
	return cells, page
}

// TestMitigationMatrixHTML: each cell is coloured by what happened (an
// expected lost update is still "lost"), carries its verdict as a mark
// of its own, and labels each figure on a line of its own.
func TestMitigationMatrixHTML(t *testing.T) {
	m := readFixture(t)
	cells, _ := renderMatrix(t, m)
	outcomes := map[results.Outcome]int{}
	for _, c := range m.Cells {
		got := cells[[2]string{c.Scenario, c.Mitigation}]
		o := c.Outcome()
		outcomes[o]++
		if !slices.Contains(got.classes, "cell") || !slices.Contains(got.classes, string(o)) {
			t.Errorf("%s × %s: classes %q, want cell and %s", c.Scenario, c.Mitigation, got.classes, o)
		}
		miss := c.Skipped == "" && !c.OK
		if slices.Contains(got.classes, "miss") != miss {
			t.Errorf("%s × %s: classes %q; miss wanted: %v", c.Scenario, c.Mitigation, got.classes, miss)
		}
		wantVerdict := map[bool]string{true: "pass", false: "miss"}[c.OK]
		if c.Skipped != "" {
			wantVerdict = ""
		}
		if got.verdict != wantVerdict {
			t.Errorf("%s × %s: verdict mark %q, want %q", c.Scenario, c.Mitigation, got.verdict, wantVerdict)
		}
		if c.Skipped != "" {
			if len(got.lines) != 1 || !strings.HasPrefix(got.lines[0], "skipped") || strings.Contains(got.lines[0], c.Skipped) {
				t.Errorf("%s × %s: %q; want a short skipped and a footnote mark, not the reason", c.Scenario, c.Mitigation, got.lines)
			}
			continue
		}
		// Each figure labelled, one per line: lost updates first, the
		// others where there were any.
		want := []string{results.Count(c.Lost, "lost update")}
		if c.Violations > 0 {
			want = append(want, results.Count(c.Violations, "violation"))
		}
		if got.lines[0] != want[0] || len(want) > 1 && got.lines[1] != want[1] {
			t.Errorf("%s × %s: lines %q, want them to start %q", c.Scenario, c.Mitigation, got.lines, want)
		}
		for _, l := range got.lines {
			if strings.Contains(l, "·") || !regexp.MustCompile(`^[0-9,.]+ [a-z]|^unsafe [0-9.]+ m?s$|^no writes$`).MatchString(l) {
				t.Errorf("%s × %s: line %q is not a labelled figure", c.Scenario, c.Mitigation, l)
			}
		}
		if c.Refused > 0 && !slices.Contains(got.lines, results.Commas(c.Refused)+" refused") {
			t.Errorf("%s × %s: lines %q lack its %d refused acquisitions", c.Scenario, c.Mitigation, got.lines, c.Refused)
		}
	}
	// The fixture has every outcome; in particular a lost update where
	// lost updates were expected is red, and passes.
	for _, o := range []results.Outcome{results.OutcomeLost, results.OutcomeOverlap, results.OutcomeRefused, results.OutcomeClean, results.OutcomeSkipped} {
		if outcomes[o] == 0 {
			t.Errorf("the fixture has no %s cell", o)
		}
	}
	if c := cells[[2]string{"lease-expiry", "none"}]; !slices.Contains(c.classes, "lost") || c.verdict != "pass" {
		t.Errorf("lease-expiry × none (lost updates, as expected): %+v; want class lost and the pass mark", c)
	}
}

// TestMitigationSkipsExplainedOnce: each distinct reason a cell was
// skipped is written once on the page (hover titles aside), naming the
// cells it covers, and each of its cells points at it.
func TestMitigationSkipsExplainedOnce(t *testing.T) {
	m := readFixture(t)
	cells, page := renderMatrix(t, m)
	visible := html.UnescapeString(titleAttr.ReplaceAllString(page, ""))
	reasons := map[string][]results.MitigationCell{}
	for _, c := range m.Cells {
		if c.Skipped != "" {
			reasons[c.Skipped] = append(reasons[c.Skipped], c)
		}
	}
	if len(reasons) < 3 {
		t.Fatalf("the fixture has %d distinct skip reasons; want several, shared", len(reasons))
	}
	for r, cs := range reasons {
		text := strings.TrimSuffix(r, ".")
		if n := strings.Count(visible, text); n != 1 {
			t.Errorf("reason %q written %d times, want once", r, n)
		}
		// The footnote's mark is the one its cells carry.
		ref := strings.TrimPrefix(cells[[2]string{cs[0].Scenario, cs[0].Mitigation}].lines[0], "skipped ")
		for _, c := range cs {
			if got := cells[[2]string{c.Scenario, c.Mitigation}].lines[0]; got != "skipped "+ref {
				t.Errorf("%s × %s: %q, want %q", c.Scenario, c.Mitigation, got, "skipped "+ref)
			}
		}
		note := regexp.MustCompile(`<p class="note">` + regexp.QuoteMeta(ref) + ` skipped, ([^:]*): ` + regexp.QuoteMeta(html.EscapeString(text)))
		mm := note.FindStringSubmatch(titleAttr.ReplaceAllString(page, ""))
		if mm == nil {
			t.Errorf("no footnote %s for %q", ref, r)
			continue
		}
		for _, c := range cs {
			if !strings.Contains(mm[1], c.Mitigation) || !strings.Contains(mm[1], c.Scenario) {
				t.Errorf("footnote %s names %q; want %s × %s among them", ref, mm[1], c.Mitigation, c.Scenario)
			}
		}
	}
}

// TestMitigationMarksLabelled: the stale writes a fenced store accepted,
// those nothing fenced, and rightful holders refused are each a labelled
// line of their cell, told apart, and each explained once under the
// matrix.
func TestMitigationMarksLabelled(t *testing.T) {
	m := &results.MitigationMatrix{Schema: results.MitigationSchema, Scenarios: []string{"lease-expiry", "redis-restart"}, Mitigations: []string{"none", "fencing"},
		Cells: []results.MitigationCell{
			{Scenario: "lease-expiry", Mitigation: "none", Lost: 3, Written: 9, StaleAccepted: 4, Expect: "lost updates > 0", OK: true},
			{Scenario: "lease-expiry", Mitigation: "fencing", Fenced: true, Lost: 0, Written: 9, Rejected: 17, StaleAccepted: 1, Expect: "0 lost updates", OK: true},
			{Scenario: "redis-restart", Mitigation: "none", Lost: 2, Written: 9, StaleAccepted: 2, Expect: "lost updates > 0", OK: true},
			{Scenario: "redis-restart", Mitigation: "fencing", Fenced: true, Lost: 2, Written: 9, StaleAccepted: 2, RightfulRefused: 1, Expect: "0 lost updates", Problem: "2 lost updates"},
		}}
	cells, page := renderMatrix(t, m)
	marks := map[string]string{}
	for _, c := range m.Cells {
		got := cells[[2]string{c.Scenario, c.Mitigation}]
		for _, mk := range c.Marks() {
			var line string
			for _, l := range got.lines {
				if strings.HasPrefix(l, results.Commas(mk.Count)+" ") && strings.Contains(mk.Words, strings.SplitN(l, " ", 2)[1]) {
					line = strings.SplitN(l, " ", 2)[1]
				}
			}
			if line == "" {
				t.Errorf("%s × %s: lines %q lack mark %q (%d)", c.Scenario, c.Mitigation, got.lines, mk.Words, mk.Count)
				continue
			}
			if prev, ok := marks[mk.Symbol]; ok && prev != line {
				t.Errorf("mark %q labelled %q and %q", mk.Symbol, prev, line)
			}
			marks[mk.Symbol] = line
		}
	}
	seen := map[string]string{}
	for sym, l := range marks {
		if other, ok := seen[l]; ok {
			t.Errorf("marks %q and %q both labelled %q", sym, other, l)
		}
		seen[l] = sym
	}
	if len(marks) != len(results.MitigationMarks) {
		t.Errorf("marks labelled: %q; want all %d", marks, len(results.MitigationMarks))
	}
	visible := html.UnescapeString(titleAttr.ReplaceAllString(page, ""))
	for _, mk := range results.MitigationMarks {
		if n := strings.Count(visible, mk.Meaning); n != 1 {
			t.Errorf("mark %q explained %d times, want once", mk.Words, n)
		}
	}
}

// TestMitigationCosts: the cost table gives, beside each healthy run,
// the same workload with the replica stopped: attempts, refused, failed
// and what it still served; a mitigation without that run shows dashes.
func TestMitigationCosts(t *testing.T) {
	m := readFixture(t)
	_, page := renderMatrix(t, m)
	for _, c := range m.Costs {
		row := regexp.MustCompile(`<tr><td>` + regexp.QuoteMeta(html.EscapeString(c.Mitigation)) + `</td>(.*)</tr>`).FindStringSubmatch(page)
		if row == nil {
			t.Errorf("no cost row for %s", c.Mitigation)
			continue
		}
		var tds []string
		for _, td := range regexp.MustCompile(`<td[^>]*>([^<]*)</td>`).FindAllStringSubmatch(row[1], -1) {
			tds = append(tds, html.UnescapeString(td[1]))
		}
		if len(tds) != 8 {
			t.Errorf("%s: cost row %q; want 8 cells after the name", c.Mitigation, tds)
			continue
		}
		d := c.ReplicaDown
		if d == nil {
			if !slices.Equal(tds[3:7], []string{"—", "—", "—", "—"}) {
				t.Errorf("%s has no replica-down run, yet: %q", c.Mitigation, tds)
			}
			continue
		}
		if tds[4] != results.Commas(d.Attempts) || !strings.HasPrefix(tds[5], results.Commas(d.Refused)) || !strings.HasPrefix(tds[6], results.Commas(d.Failed)) {
			t.Errorf("%s: replica down %q; want %d attempts, %d refused, %d failed", c.Mitigation, tds[3:7], d.Attempts, d.Refused, d.Failed)
		}
	}
}

// TestMitigationCostCauses: a figure far below its healthy run's is
// marked beside it and its cause said under the table, in the terminal
// and the HTML alike; a far-below figure with no cause recorded says so.
func TestMitigationCostCauses(t *testing.T) {
	m := readFixture(t)
	const cause = "1,204 of 1,204 acquisitions refused: no replica is up to acknowledge the WAIT"
	withCause, without, near := -1, -1, -1
	for i, c := range m.Costs {
		switch d := c.ReplicaDown; {
		case d == nil:
		case d.FarBelow(c) && withCause < 0:
			withCause = i
			m.Costs[i].ReplicaDown.Cause = cause
		case d.FarBelow(c):
			without = i
		case near < 0:
			near = i
		}
	}
	if withCause < 0 || without < 0 || near < 0 {
		t.Fatalf("the fixture needs two rows far below healthy and one near it: %+v", m.Costs)
	}
	out := mitigationSummary(m)
	_, page := renderMatrix(t, m)
	page = html.UnescapeString(page)
	first, second := m.Costs[withCause], m.Costs[without]
	for what, text := range map[string]string{"terminal": out, "html": page} {
		for _, want := range []string{
			"ᵃ " + first.Mitigation + ": " + results.CommasFloat(first.ReplicaDown.OpsPerSec) + " ops/s (healthy " + results.CommasFloat(first.OpsPerSec) + "): " + cause,
			"ᵇ " + second.Mitigation + ": " + results.CommasFloat(second.ReplicaDown.OpsPerSec) + " ops/s (healthy " + results.CommasFloat(second.OpsPerSec) + "): its cause was not recorded",
			results.CommasFloat(first.ReplicaDown.OpsPerSec) + " ᵃ",
		} {
			if strings.Count(text, want) != 1 {
				t.Errorf("%s: %q appears %d times, want once", what, want, strings.Count(text, want))
			}
		}
		if strings.Contains(text, results.CommasFloat(m.Costs[near].ReplicaDown.OpsPerSec)+" ᶜ") {
			t.Errorf("%s: %s, near its healthy run, is marked", what, m.Costs[near].Mitigation)
		}
	}
}

// TestMitigationSummaryFitsATerminal: the terminal matrix is transposed,
// a line per mitigation, narrow enough for a terminal; a cell not as
// expected is marked and listed, each skip reason is written once.
func TestMitigationSummaryFitsATerminal(t *testing.T) {
	m := readFixture(t)
	out := mitigationSummary(m)
	lines := strings.Split(out, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "mitigation ") })
	if start < 0 {
		t.Fatalf("no matrix head:\n%s", out)
	}
	grid := lines[start : start+2+len(m.Mitigations)]
	for i, l := range grid {
		if n := len([]rune(l)); n > 110 {
			t.Errorf("matrix line %d is %d wide, want at most 110: %q", i, n, l)
		}
	}
	for i, mi := range m.Mitigations {
		row := grid[2+i]
		if f := strings.Fields(row); len(f) == 0 || f[0] != mi {
			t.Errorf("line %d: %q, want mitigation %s", 2+i, row, mi)
		}
		for _, s := range m.Scenarios {
			c, _ := m.Cell(s, mi)
			miss := c.Skipped == "" && !c.OK
			if miss && !strings.Contains(row, "✗") {
				t.Errorf("%s × %s not as expected, unmarked: %q", s, mi, row)
			}
		}
	}
	for _, c := range m.Cells {
		if c.Skipped == "" && !c.OK && strings.Count(out, "✗ "+c.Scenario+" × "+c.Mitigation+":") != 1 {
			t.Errorf("%s × %s not listed once under the matrix:\n%s", c.Scenario, c.Mitigation, out)
		}
		if c.Skipped != "" && strings.Count(out, strings.TrimSuffix(c.Skipped, ".")) != 1 {
			t.Errorf("skip reason %q not written once:\n%s", c.Skipped, out)
		}
	}
	if !strings.HasPrefix(lines[len(lines)-2], "matrix: FAIL") {
		t.Errorf("last line %q; want the failed verdict", lines[len(lines)-2])
	}
}

// TestMitigationNamesServer: the page and the terminal summary name the
// server the matrix's locks ran on, as its file has it.
func TestMitigationNamesServer(t *testing.T) {
	m := readFixture(t)
	if m.Server != "valkey 9.1.2" {
		t.Fatalf("fixture's server %q; want valkey 9.1.2", m.Server)
	}
	_, page := renderMatrix(t, m)
	if !strings.Contains(page, " on valkey 9.1.2 (") {
		t.Errorf("the page does not say the matrix ran on valkey 9.1.2")
	}
	lines := strings.Split(mitigationSummary(m), "\n")
	if !slices.Contains(lines, "server: valkey 9.1.2") {
		t.Errorf("summary has no line server: valkey 9.1.2:\n%s", strings.Join(lines, "\n"))
	}
}
