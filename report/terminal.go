package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
)

// cores is a core count as top prints it: 0.97 is "97%", 2 is "200%".
func cores(v float64) string { return strconv.Itoa(int(v*100+0.5)) + "%" }

// SweepPointLine is a finished point in one line, for progress output:
// throughput, p99, failures and how it stands against the SLO.
func SweepPointLine(pt results.SweepPoint) string {
	mark := "meets the SLO"
	switch {
	case pt.Partial:
		mark = "PARTIAL, left off the curves"
	case pt.Failure != "":
		mark = "FAILED, breaks the SLO: " + pt.Failure
	case !pt.MeetsSLO:
		mark = "BREAKS the SLO"
	}
	cpu := ""
	if pt.RedisCPU > 0 || pt.LoadCPU > 0 {
		cpu = fmt.Sprintf(", cpu redis %s lockbench %s", cores(pt.RedisCPU), cores(pt.LoadCPU))
		if pt.CPULimit != results.LimitNone {
			cpu += " (" + pt.CPULimit + " saturated)"
		}
	}
	return fmt.Sprintf("%s ops/s, acquire p99 %s, %s of %s failed%s: %s",
		results.CommasFloat(pt.OpsPerSec), pt.Percentile(pt.P99Us), results.Commas(pt.Errors), results.Count(pt.Attempts, "operation"), cpu, mark)
}

// failedShare is a point's failed operations and their share: "12 (0.4%)".
func failedShare(p results.SweepPoint) string {
	n := p.Ops + p.Errors
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%s (%s)", results.Commas(p.Errors), results.Percent(float64(p.Errors)/float64(n)))
}

// WriteSweepSummary prints a sweep's points and what each curve says.
func WriteSweepSummary(w io.Writer, sw *results.Sweep) error {
	h := heading{level: 1, text: "lockbench sweep " + sw.Meta.Profile}
	if sw.Partial {
		h.badge = &cell{text: "PARTIAL: " + sw.PartialReason}
	}
	bl := []block{h}
	if sw.Meta.Workload != "" {
		bl = append(bl, para{text: "base      " + sw.Meta.Workload + " (the axis varies it)"})
	}
	bl = append(bl, blank)
	t := table{right: true, head: []string{"series", "x", "clients×owners", "ops/s", "p50", "p99", "failed", "violations", "SLO"}}
	for _, p := range sw.Points {
		mark := "meets"
		switch {
		case p.Failure != "":
			mark = "FAILED"
		case !p.MeetsSLO:
			mark = "broken"
		}
		t.rows = append(t.rows, []cell{plain(p.Series), plain(fmt.Sprintf("%g", p.X)), plain(fmt.Sprintf("%d×%d", p.Clients, p.Owners)),
			plain(results.CommasFloat(p.OpsPerSec)), plain(p.Percentile(p.P50Us)), plain(p.Percentile(p.P99Us)), plain(failedShare(p)),
			plain(strconv.FormatInt(p.Violations, 10)), plain(mark)})
	}
	bl = append(bl, t, blank)
	for _, c := range sw.Capacity {
		if c.Series != "" {
			bl = append(bl, para{text: c.Series + ":"})
		}
		for _, l := range capacityStatement(c, sw.Axis, sw.SLOP99Us) {
			bl = append(bl, para{text: "  " + l})
		}
	}
	for _, p := range sw.Points {
		if p.Failure != "" {
			bl = append(bl, para{text: "FAILED point " + p.Label() + ": " + p.Failure})
		}
	}
	bl = append(bl, blank)
	return writeText(w, bl)
}

// pass marks a target met or missed in terminal text.
func pass(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// margin indents the lines under a perf part's name.
const margin = "          "

// WriteLineupSummary prints implementations side by side for a terminal:
// one line per cell with its medians, then the baselines and the targets.
func WriteLineupSummary(w io.Writer, m *results.Lineup) error {
	head := fmt.Sprintf("matrix    %s of %v (+%v warmup) per run, %v in all", m.Schedule(), m.Duration, m.Warmup, m.Elapsed.Round(time.Second))
	if m.Partial {
		head += " [PARTIAL]"
	}
	bl := []block{blank, para{text: head}}
	t := table{indent: margin, head: []string{"profile", "owners", "impl", "ops/s", "× raw", "× rb", "× go-redis", "× ceiling", "acquire p50", "acquire p99", "handoff p50", "cpu redis · lockbench", "errors", "violations"}}
	for _, c := range m.Cells {
		x := c.Median
		cpu := fmt.Sprintf("%s · %s", cores(x.RedisCPU), cores(x.LoadCPU))
		if x.CPULimit != results.LimitNone {
			cpu += " (" + x.CPULimit + ")"
		}
		t.rows = append(t.rows, []cell{plain(c.Profile), plain(strconv.Itoa(c.Owners)), plain(c.Impl), plain(results.CommasFloat(x.OpsPerSec)),
			plain(results.Times(c.VsRaw.Ops)), plain(results.Times(c.VsRedisBenchmark.Ops)), plain(results.Times(c.VsGoRedis)), plain(results.Times(c.VsCeiling)),
			plain(results.UsOrDash(x.AcquireP50)), plain(results.UsOrDash(x.AcquireP99)), plain(results.UsOrDash(x.HandoffP50)), plain(cpu),
			plain(strconv.FormatInt(x.Errors, 10)), plain(strconv.FormatInt(x.Violations, 10))})
	}
	bl = append(bl, t)
	for _, b := range m.Baselines {
		x := b.Median
		bl = append(bl, para{text: fmt.Sprintf(margin+"at %d: redis-benchmark %s cycles/s (redis %s) · -P 16 %s (redis %s) · bare go-redis %s (redis %s · %s) · on the autopipeliner %s (redis %s · %s)",
			b.Clients, results.CommasFloat(x.CyclesPerSec()), cores(x.RedisCPU), results.CommasFloat(x.Ceiling.CyclesPerSec), cores(x.Ceiling.RedisCPU),
			results.CommasFloat(x.GoRedis.CyclesPerSec), cores(x.GoRedis.RedisCPU), cores(x.GoRedis.LoadCPU),
			results.CommasFloat(x.GoRedisPipelined.CyclesPerSec), cores(x.GoRedisPipelined.RedisCPU), cores(x.GoRedisPipelined.LoadCPU))})
	}
	for _, tc := range m.Targets {
		bl = append(bl, para{text: margin + tc.Target + ": " + tc.Value + " " + pass(tc.Met)})
	}
	return writeText(w, bl)
}

// Handoff is bench perf's handoff part as the terminal shows it.
type Handoff struct {
	Result            *results.Result
	HandoffUs, PingUs float64 // p50s
	Ratio, Target     float64
	Saved             string // where the result went
}

// WriteHandoff prints handoff latency against PING.
func WriteHandoff(w io.Writer, h Handoff) error {
	r := h.Result
	hl := r.Latency[results.Handoff.String()]
	return writeText(w, []block{blank,
		para{text: fmt.Sprintf("handoff   mutex: %s, 1 lock, %.0fs measured, %s", results.Count(r.Fairness.Owners, "owner"), r.Measured, results.Count(hl.Count, "handoff"))},
		para{text: fmt.Sprintf(margin+"handoff p50 %.1fµs (p99 %.1fµs) vs ping p50 %.1fµs: %.1f× (target <= %.0f×) %s",
			h.HandoffUs, hl.P99, h.PingUs, h.Ratio, h.Target, pass(h.Ratio > 0 && h.Ratio <= h.Target))},
		para{text: margin + h.Saved}})
}

// WriteChaosSummary prints a chaos report for a terminal: the verdict
// line, the checks and the figures.
func WriteChaosSummary(w io.Writer, rep *results.ChaosReport) error {
	return writeText(w, chaosSummaryBlocks(rep))
}

// ChaosSummary is WriteChaosSummary's text.
func ChaosSummary(rep *results.ChaosReport) string {
	var b strings.Builder
	_ = writeText(&b, chaosSummaryBlocks(rep))
	return b.String()
}

func chaosSummaryBlocks(rep *results.ChaosReport) []block {
	head := fmt.Sprintf("%-20s %s", rep.Scenario, rep.Verdict)
	if rep.Verdict != rep.Expected && rep.Verdict != results.Skipped {
		head += fmt.Sprintf(" (expected %s)", rep.Expected)
	}
	bl := []block{para{text: head + fmt.Sprintf("  [%.1fs]", rep.Seconds)}}
	if rep.Redis != "" {
		bl = append(bl, para{text: "  " + rep.Redis}) // "redis: local backend, valkey 9.1.2, …"
	}
	if rep.Reason != "" {
		bl = append(bl, para{text: "  reason: " + rep.Reason})
	}
	for _, s := range rep.Skipped {
		bl = append(bl, para{text: "  skipped variant " + s})
	}
	for _, c := range rep.Checks {
		mark := "ok "
		if !c.OK {
			mark = "BAD"
		}
		bl = append(bl, para{text: fmt.Sprintf("  %s %s: %s (want %s)", mark, c.Name, c.Got, c.Want)})
	}
	for _, f := range rep.Figures {
		bl = append(bl, para{text: "      " + f.Name + ": " + figureText(f)})
	}
	return bl
}

// tallyText is a suite's verdicts counted: "3 PASS, 1 EXPECTED VIOLATION
// DETECTED, 0 FAIL, 0 SKIPPED", with INCOMPLETE when any was.
func tallyText(counts map[results.Verdict]int) string {
	s := fmt.Sprintf("%d PASS, %d EXPECTED VIOLATION DETECTED, %d FAIL, %d SKIPPED",
		counts[results.Pass], counts[results.ExpectedViolation], counts[results.Fail], counts[results.Skipped])
	if counts[results.Incomplete] > 0 {
		s += fmt.Sprintf(", %d INCOMPLETE", counts[results.Incomplete])
	}
	return s
}

// WriteChaosTally prints a suite's last line: how many scenarios ran in
// how long, and their verdicts counted.
func WriteChaosTally(w io.Writer, reps []*results.ChaosReport, took time.Duration) error {
	return writeText(w, []block{blank, para{text: fmt.Sprintf("%s in %v: %s", results.Count(len(reps), "scenario"), took.Round(time.Second), tallyText(results.CountVerdicts(reps)))}})
}

// WriteMitigationSummary prints the mitigation matrix for a terminal:
// transposed to fit one (a mitigation per line, a scenario per column,
// its name broken at its first hyphen), each cell its lost updates, or
// what else happened, with ✗ where it was not as expected; then those
// cells, the skipped cells' reasons once each, the costs and the verdict.
// The report has every figure.
func WriteMitigationSummary(w io.Writer, m *results.MitigationMatrix) error {
	var bl []block
	if m.Partial {
		bl = append(bl, para{text: results.PartialNote})
	}
	if m.Planted != "" {
		bl = append(bl, para{text: "PLANTED BUG: " + m.Planted})
	}
	skips := skipNotes(m)
	t := table{head: []string{"mitigation"}, rows: [][]cell{{plain("")}}}
	for _, s := range m.Scenarios {
		first, rest, _ := strings.Cut(s, "-")
		if rest != "" {
			first += "-"
		}
		t.head, t.rows[0] = append(t.head, first), append(t.rows[0], plain(rest))
	}
	for _, mi := range m.Mitigations {
		row := []cell{plain(mi)}
		for _, s := range m.Scenarios {
			c, ok := m.Cell(s, mi)
			row = append(row, plain(terminalCell(c, ok, skips)))
		}
		t.rows = append(t.rows, row)
	}
	bl = append(append(bl, t), terminalLegend()...)
	for _, l := range missLines(m) {
		bl = append(bl, para{text: "  " + l})
	}
	for _, n := range skips.notes {
		bl = append(bl, para{text: "  " + n})
	}
	if len(m.Costs) > 0 {
		bl = append(bl, para{text: "cost on a healthy run (mutex, primary and replica; Redlock on its five nodes), and with the replica (Redlock: one node) killed:"})
		bl = append(bl, costBlocks(m, "  ")...)
	}
	if m.Server != "" {
		bl = append(bl, para{text: "server: " + m.Server})
	}
	bl = append(bl, para{text: fmt.Sprintf("matrix: %s [%.0fs]", mitigationVerdict(m), m.Seconds)})
	return writeText(w, bl)
}

// terminalWords are the outcomes as a terminal cell says them (%d: the
// count the outcome is about).
var terminalWords = map[results.Outcome]string{
	results.OutcomeLost:     "%d LOST",
	results.OutcomeOverlap:  "0 overlap",
	results.OutcomeRefused:  "%d refused",
	results.OutcomeNoWrites: "no writes",
	results.OutcomeClean:    "0",
	results.OutcomeSkipped:  "skipped",
}

// terminalCell is a cell in a few characters: its outcome, with its
// count, and ✗ when it was not as expected.
func terminalCell(c results.MitigationCell, ok bool, skips skipIndex) string {
	switch {
	case !ok:
		return "not run"
	case c.Skipped != "":
		return "skipped" + skips.ref(c.Skipped)
	}
	o := c.Outcome()
	s := terminalWords[o]
	switch o {
	case results.OutcomeLost:
		s = fmt.Sprintf(s, c.Lost)
	case results.OutcomeRefused:
		s = fmt.Sprintf(s, c.Refused)
	}
	if !c.OK {
		s += " " + markMiss
	}
	return s
}

// terminalLegend says what the cells say, in the chart's words, on
// lines that fit a terminal.
func terminalLegend() []block {
	lines := []string{"cells:"}
	for _, st := range plots.OutcomeStyles {
		if st.Outcome == results.OutcomeSkipped {
			continue
		}
		part := " " + strings.ReplaceAll(terminalWords[st.Outcome], "%d", "N") + ": " + st.Words + ";"
		if n := len(lines) - 1; len([]rune(lines[n]+part)) > 100 {
			lines = append(lines, "      ")
		}
		lines[len(lines)-1] += part
	}
	lines = append(lines, "       "+markMiss+": not as expected (below); the report has every figure")
	var out []block
	for _, l := range lines {
		out = append(out, para{text: l})
	}
	return out
}

// mitigationVerdict is the matrix's verdict in words.
func mitigationVerdict(m *results.MitigationMatrix) string {
	switch {
	case m.Partial:
		v := fmt.Sprintf("PARTIAL: interrupted after %s and %s", results.Count(len(m.Cells), "cell"), results.Count(len(m.Costs), "healthy run"))
		if n := m.Bad(); n > 0 {
			v += fmt.Sprintf("; FAIL: %d of them not as expected", n)
		}
		return v
	case m.Ran() == 0:
		return "FAIL: nothing ran: every cell was skipped"
	case !m.OK():
		return "FAIL: some cell or healthy run is not as expected"
	}
	return "every cell as expected"
}
