package report

import (
	"cmp"
	"fmt"
	"image/color"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
)

// The mitigation matrix is read at a glance when a cell's colour says
// what happened (plots.OutcomeStyles, shared with the chart) and a mark
// of its own says whether that was expected: an expected lost update is
// still red. Each figure is labelled in the cell, and a skipped cell's
// reason is given once, in a footnote, however many cells share it.

// Verdict marks: a cell as expected, and one that is not.
const (
	markPass = "✓"
	markMiss = "✗"
)

// onServer is " on " and the server the matrix's locks ran on, or
// nothing when no cell ran to name it.
func onServer(m *results.MitigationMatrix) string {
	if m.Server == "" {
		return ""
	}
	return " on " + m.Server
}

// mitigationBlocks lays out a mitigation matrix: the legend, the matrix
// (a scenario per row, a mitigation per column), the skipped cells'
// reasons, the cells not as expected, the chart, each mitigation's cost,
// and why each cell expects what it does.
func mitigationBlocks(m *results.MitigationMatrix, ch *charts) []block {
	title := "Mitigations under faults"
	if m.Partial {
		title += " (PARTIAL)"
	}
	bl := []block{heading{level: 2, text: title}}
	timing := "full timings"
	if m.Quick {
		timing = "quick timings"
	}
	bl = append(bl, para{text: fmt.Sprintf("Measured %s%s (%s, seed %d, %.0f s). Critical sections read a counter in a second Redis (%s), "+
		"hold, and write it plus one; lost updates are the writes the store applied minus the counter's final value, "+
		"counted by the store itself. A cell's colour is what happened; its mark says whether that was expected "+
		"(%s as expected, %s not; hover a cell for its expectation, listed with its reason below).",
		m.Start.UTC().Format("2006-01-02 15:04"), onServer(m), timing, m.Seed, m.Seconds, m.Store, markPass, markMiss)})
	if m.Partial {
		bl = append(bl, para{class: "bad", text: results.PartialNote + "."})
	}
	if m.Ran() == 0 {
		bl = append(bl, para{class: "bad", text: "Nothing ran: every cell was skipped, so the matrix shows nothing."})
	}
	if m.Planted != "" {
		bl = append(bl, para{class: "bad", text: "Planted bug: " + m.Planted + "."})
	}
	bl = append(bl, outcomeLegend(m))
	skips := skipNotes(m)
	t := table{class: "matrix", head: append([]string{"scenario"}, m.Mitigations...)}
	for _, s := range m.Scenarios {
		row := []cell{plain(s)}
		for _, mi := range m.Mitigations {
			c, ok := m.Cell(s, mi)
			row = append(row, matrixCell(c, ok, skips))
		}
		t.rows = append(t.rows, row)
	}
	bl = append(bl, t)
	for _, n := range skips.notes {
		bl = append(bl, para{class: "note", text: n})
	}
	bl = append(bl, para{class: "note", text: figuresLegend()})
	if miss := missLines(m); len(miss) > 0 {
		bl = append(bl, heading{level: 4, text: "Not as expected"}, bullets{items: miss})
	}
	p, err := plots.Mitigations("What happened, per scenario and mitigation", m)
	bl = append(bl, ch.add("mitigations", "the matrix as a grid: each cell coloured by what happened, with its lost updates", p, err)...)
	if len(m.Costs) > 0 {
		bl = append(bl, heading{level: 4, text: "Cost: a healthy run (mutex, primary and replica, guarded counter on; Redlock on its five nodes), and the same with the replica (Redlock: one node) killed"})
		bl = append(bl, costBlocks(m, "")...)
	}
	if why := expectedLines(m); len(why) > 0 {
		bl = append(bl, heading{level: 4, text: "Expected verdicts"}, bullets{items: why})
	}
	return bl
}

// matrixCell is a cell of the HTML and Markdown matrix: its outcome as
// its class, its figures labelled one per line, its verdict as its mark
// and its expectation as its note.
func matrixCell(c results.MitigationCell, ok bool, skips skipIndex) cell {
	switch {
	case !ok:
		return cell{text: "not run", class: "cell not-run"}
	case c.Skipped != "":
		return cell{text: "skipped " + skips.ref(c.Skipped), class: "cell " + string(results.OutcomeSkipped), note: c.Skipped}
	}
	out := cell{text: strings.Join(cellFigures(c), "\n"), class: "cell " + string(c.Outcome()),
		note: "expected: " + c.Expect + " (" + c.Why + ")", mark: &cell{text: markPass, class: "verdict pass"}}
	if !c.OK {
		out.class += " miss"
		out.mark = &cell{text: markMiss, class: "verdict miss"}
		out.note += "\nnot as expected: " + c.Problem
	}
	return out
}

// cellFigures are a cell's figures, each with its label: lost updates
// always, the others where there were any.
func cellFigures(c results.MitigationCell) []string {
	out := []string{results.Count(c.Lost, "lost update")}
	if c.Violations > 0 {
		out = append(out, results.Count(c.Violations, "violation"))
	}
	if c.UnsafeMs > 0 {
		out = append(out, "unsafe "+seconds(c.UnsafeMs))
	}
	if c.Refused > 0 {
		out = append(out, results.Commas(c.Refused)+" refused")
	}
	if c.Rejected > 0 {
		out = append(out, results.Commas(c.Rejected)+" stale refused")
	}
	for _, mk := range c.Marks() {
		out = append(out, results.Commas(mk.Count)+" "+markName(mk))
	}
	if c.Outcome() == results.OutcomeNoWrites {
		out = append(out, "no writes")
	}
	return out
}

// markName is a mark's name in a cell: its words up to the comma (the
// rest qualifies them, and the legend says it).
func markName(mk results.CellMark) string {
	name, _, _ := strings.Cut(mk.Words, ",")
	return name
}

// seconds is a window in ms as a person reads it: "350 ms", "1.2 s".
func seconds(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f s", ms/1e3)
}

// outcomeLegend is the colours' key, as a row of cells coloured as the
// matrix's are: only the outcomes the matrix has, and the miss mark when
// some cell has it.
func outcomeLegend(m *results.MitigationMatrix) table {
	seen := map[results.Outcome]bool{}
	miss := false
	for _, c := range m.Cells {
		seen[c.Outcome()] = true
		miss = miss || c.Skipped == "" && !c.OK
	}
	var row []cell
	for _, s := range plots.OutcomeStyles {
		if seen[s.Outcome] {
			row = append(row, cell{text: s.Words, class: "cell " + string(s.Outcome)})
		}
	}
	if miss {
		row = append(row, cell{text: "not as expected", class: "cell miss", mark: &cell{text: markMiss, class: "verdict miss"}})
	}
	return table{class: "matrix legend", rows: [][]cell{row}}
}

// figuresLegend says what each labelled figure counts.
func figuresLegend() string {
	parts := []string{
		"violations: overlapping holds the clock-based checker found",
		"unsafe: how long holds overlapped",
		"refused: acquisitions a safety setting refused",
		"stale refused: reads and writes the fenced store refused from holders with an older token",
	}
	for _, mk := range results.MitigationMarks {
		parts = append(parts, markName(mk)+": "+mk.Meaning)
	}
	return "Figures: " + strings.Join(parts, "; ") + "."
}

// skipIndex numbers the distinct reasons cells were skipped, in the
// matrix's reading order, so that each is written once.
type skipIndex struct {
	num   map[string]int
	notes []string
}

// superscripts are footnote numbers.
var superscripts = []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")

// ref is reason's footnote mark.
func (s skipIndex) ref(reason string) string {
	var b strings.Builder
	for _, d := range fmt.Sprint(s.num[reason]) {
		b.WriteRune(superscripts[d-'0'])
	}
	return b.String()
}

// skipNotes gives each reason a cell was skipped its footnote, naming
// the cells it covers.
func skipNotes(m *results.MitigationMatrix) skipIndex {
	idx := skipIndex{num: map[string]int{}}
	var reasons []string
	for _, s := range m.Scenarios {
		for _, mi := range m.Mitigations {
			if c, ok := m.Cell(s, mi); ok && c.Skipped != "" && idx.num[c.Skipped] == 0 {
				reasons = append(reasons, c.Skipped)
				idx.num[c.Skipped] = len(reasons)
			}
		}
	}
	for _, r := range reasons {
		idx.notes = append(idx.notes, fmt.Sprintf("%s skipped, %s: %s.", idx.ref(r), skippedWhere(m, r), strings.TrimSuffix(r, ".")))
	}
	return idx
}

// skippedWhere names the cells skipped for reason: mitigations skipped
// in the same scenarios share a clause ("redisson, redisson-nocheck ×
// node-restart, node-clock-jump"); "every cell" or "every scenario" where
// it is.
func skippedWhere(m *results.MitigationMatrix, reason string) string {
	var groups [][2][]string // mitigations, their scenarios
	total := 0
	for _, mi := range m.Mitigations {
		var in []string
		for _, s := range m.Scenarios {
			if c, ok := m.Cell(s, mi); ok && c.Skipped == reason {
				in = append(in, s)
			}
		}
		if len(in) == 0 {
			continue
		}
		total += len(in)
		if i := slices.IndexFunc(groups, func(g [2][]string) bool { return slices.Equal(g[1], in) }); i >= 0 {
			groups[i][0] = append(groups[i][0], mi)
		} else {
			groups = append(groups, [2][]string{{mi}, in})
		}
	}
	if total == len(m.Scenarios)*len(m.Mitigations) {
		return "every cell"
	}
	var parts []string
	for _, g := range groups {
		where := strings.Join(g[1], ", ")
		if len(g[1]) == len(m.Scenarios) {
			where = "every scenario"
		}
		parts = append(parts, strings.Join(g[0], ", ")+" × "+where)
	}
	return strings.Join(parts, "; ")
}

// missLines are the cells that ran and missed their expectation, and the
// healthy runs with a problem: what went wrong, against what was wanted.
func missLines(m *results.MitigationMatrix) []string {
	var out []string
	for _, s := range m.Scenarios {
		for _, mi := range m.Mitigations {
			if c, ok := m.Cell(s, mi); ok && c.Skipped == "" && !c.OK {
				out = append(out, fmt.Sprintf("%s %s × %s: expected %s (%s); %s", markMiss, s, mi, c.Expect, c.Why, c.Problem))
			}
		}
	}
	for _, c := range m.Costs {
		if c.Problem != "" {
			out = append(out, fmt.Sprintf("%s healthy run of %s: %s", markMiss, c.Mitigation, c.Problem))
		}
	}
	return out
}

// expectedLines are the cells' expectations with their reasons, a line
// per scenario and shared expectation: the mitigations that expect the
// same for the same reason share it.
func expectedLines(m *results.MitigationMatrix) []string {
	var out []string
	for _, s := range m.Scenarios {
		type want struct{ expect, why string }
		var order []want
		by := map[want][]string{}
		for _, mi := range m.Mitigations {
			c, ok := m.Cell(s, mi)
			if !ok || c.Skipped != "" {
				continue
			}
			w := want{c.Expect, c.Why}
			if by[w] == nil {
				order = append(order, w)
			}
			by[w] = append(by[w], mi)
		}
		for _, w := range order {
			out = append(out, fmt.Sprintf("%s × %s: %s (%s)", s, strings.Join(by[w], ", "), w.expect, w.why))
		}
	}
	return out
}

// costBlocks are the cost table and, under it, the cause of each figure
// far below its healthy run's, marked beside the figure.
func costBlocks(m *results.MitigationMatrix, indent string) []block {
	t, causes := costTable(m)
	t.indent = indent
	bl := []block{t}
	for _, c := range causes {
		bl = append(bl, para{class: "note", text: indent + c})
	}
	return bl
}

// causeMarks mark a cost figure whose cause is said under the table.
var causeMarks = []string{"ᵃ", "ᵇ", "ᶜ", "ᵈ", "ᵉ", "ᶠ", "ᵍ", "ʰ", "ⁱ", "ʲ", "ᵏ", "ˡ", "ᵐ"}

// costTable is each mitigation's healthy run, and the same workload with
// the replica stopped: what it still grants, and what it refuses; and
// the causes of the figures far below healthy, marked.
func costTable(m *results.MitigationMatrix) (table, []string) {
	t := table{right: true, head: []string{"mitigation", "ops/s", "acquire p50", "acquire p99",
		"replica (one node) down: ops/s", "attempts", "refused", "failed", ""}}
	var causes []string
	for _, c := range m.Costs {
		row := []cell{plain(c.Mitigation), plain(results.CommasFloat(c.OpsPerSec)),
			plain(results.FormatUs(c.AcquireP50Us)), plain(results.FormatUs(c.AcquireP99Us))}
		if d := c.ReplicaDown; d != nil {
			ops := results.CommasFloat(d.OpsPerSec)
			if d.Cause != "" || d.FarBelow(c) {
				mark := causeMarks[len(causes)%len(causeMarks)]
				ops += " " + mark
				causes = append(causes, fmt.Sprintf("%s %s: %s ops/s (healthy %s): %s", mark, c.Mitigation,
					results.CommasFloat(d.OpsPerSec), results.CommasFloat(c.OpsPerSec), cmp.Or(d.Cause, "its cause was not recorded")))
			}
			row = append(row, plain(ops), plain(results.Commas(d.Attempts)),
				plain(share(d.Refused, d.Attempts)), plain(share(d.Failed, d.Attempts)))
		} else {
			row = append(row, plain("—"), plain("—"), plain("—"), plain("—"))
		}
		mark := styled("ok", "ok")
		if c.Problem != "" {
			mark = styled(c.Problem, "bad")
		}
		t.rows = append(t.rows, append(row, mark))
	}
	return t, causes
}

// share is n of the attempts with its share: "1,138 (96.4%)", or "0".
func share(n, attempts int64) string {
	if n == 0 || attempts == 0 {
		return results.Commas(n)
	}
	return fmt.Sprintf("%s (%s)", results.Commas(n), results.Percent(float64(n)/float64(attempts)))
}

// matrixCSS colours the matrix's cells as the chart does, and sets the
// verdict mark apart from the colour: a badge, and a frame for a miss.
var matrixCSS = func() string {
	var b strings.Builder
	// The matrix may be wider than the text: centred on the window, it
	// takes up to 1500 px, so that a cell's lines rarely wrap.
	b.WriteString(`table.matrix{font-size:.74em}table.matrix th,table.matrix td{padding:.3em .35em}
table.matrix:not(.legend){width:min(1500px,calc(100vw - 1.2em));position:relative;left:50%;transform:translateX(-50%);table-layout:fixed}
table.matrix:not(.legend) th:first-child{width:6em}
table.matrix td.cell{line-height:1.3}td.cell::first-line{font-weight:700}
td.not-run{color:#777}td.skipped{color:#666}td.miss{box-shadow:inset 0 0 0 3px ` + hexColor(plots.MissColor) + `}
table.legend td.cell{min-width:0}
.verdict{margin-right:.25em;font-weight:700}.verdict.pass{color:#1e5e2a}.verdict.miss{color:` + hexColor(plots.MissColor) + `}
`)
	for _, s := range plots.OutcomeStyles {
		fmt.Fprintf(&b, "td.%s{background:%s}", s.Outcome, hexColor(s.Color))
	}
	return b.String()
}()

func hexColor(c color.NRGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }
