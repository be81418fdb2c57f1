package report

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
)

// mitigationBlocks lays out a mitigation matrix: each cell's lost updates,
// violations, unsafe window and refused stale writes against its
// expectation, the chart of lost updates, and each mitigation's cost.
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
	bl = append(bl, para{text: fmt.Sprintf("Measured %s (%s, seed %d, %.0f s). Critical sections read a counter in a second Redis (%s), "+
		"hold, and write it plus one; lost updates are the writes the store applied minus the counter's final value, "+
		"counted by the store itself. Each cell: lost updates · violations · unsafe window · stale reads and writes refused; "+
		"then, where there were any: "+legend()+".",
		m.Start.UTC().Format("2006-01-02 15:04"), timing, m.Seed, m.Seconds, m.Store)})
	if m.Partial {
		bl = append(bl, para{class: "bad", text: results.PartialNote + "."})
	}
	if m.Ran() == 0 {
		bl = append(bl, para{class: "bad", text: "Nothing ran: every cell was skipped, so the matrix shows nothing."})
	}
	if m.Planted != "" {
		bl = append(bl, para{class: "bad", text: "Planted bug: " + m.Planted + "."})
	}
	t := table{head: append([]string{"scenario"}, m.Mitigations...)}
	for _, s := range m.Scenarios {
		row := []cell{plain(s)}
		for _, mi := range m.Mitigations {
			c, ok := m.Cell(s, mi)
			switch {
			case !ok:
				row = append(row, plain("—"))
			case c.Skipped != "":
				row = append(row, plain("skipped: "+c.Skipped))
			default:
				txt := fmt.Sprintf("%d · %d · %.0f ms · %d", c.Lost, c.Violations, c.UnsafeMs, c.Rejected)
				for _, mk := range c.Marks() {
					txt += fmt.Sprintf(" · %d %s", mk.Count, mk.Words)
				}
				class := "ok"
				if !c.OK {
					txt += " (want " + c.Expect + ")"
					class = "bad"
				}
				row = append(row, styled(txt, class))
			}
		}
		t.rows = append(t.rows, row)
	}
	bl = append(bl, t)
	p, err := plots.Mitigations("Lost updates per scenario and mitigation", m)
	bl = append(bl, ch.add("mitigations", "lost updates per scenario and mitigation", p, err)...)
	var why []string
	for _, c := range m.Cells {
		line := fmt.Sprintf("%s × %s: want %s: %s", c.Scenario, c.Mitigation, c.Expect, c.Why)
		switch {
		case c.Skipped != "":
			line += " — skipped: " + c.Skipped
		case c.Problem != "":
			line += " — " + c.Problem
		}
		why = append(why, line)
	}
	bl = append(bl, heading{level: 4, text: "Expected verdicts"}, bullets{items: why})
	if len(m.Costs) > 0 {
		ct := table{right: true, head: []string{"mitigation", "ops/s", "acquire p50", "acquire p99", ""}}
		for _, c := range m.Costs {
			mark := styled("ok", "ok")
			if c.Problem != "" {
				mark = styled(c.Problem, "bad")
			}
			ct.rows = append(ct.rows, []cell{plain(c.Mitigation), plain(results.CommasFloat(c.OpsPerSec)),
				plain(results.FormatUs(c.AcquireP50Us)), plain(results.FormatUs(c.AcquireP99Us)), mark})
		}
		bl = append(bl, heading{level: 4, text: "Cost on a healthy run (mutex, primary and replica, guarded counter on)"}, ct)
	}
	return bl
}

// legend is what each mark a cell can carry means, in words.
func legend() string {
	var parts []string
	for _, mk := range results.MitigationMarks {
		parts = append(parts, fmt.Sprintf("“N %s”, %s", mk.Words, mk.Meaning))
	}
	return strings.Join(parts, "; ")
}
