package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// suiteBlocks is the chaos suite's verdict table.
func suiteBlocks(scs []*Scenario) []block {
	var reps []*results.ChaosReport
	t := table{head: []string{"scenario", "verdict", "expected", "time", "reason"}}
	for _, s := range scs {
		r := s.Report
		reps = append(reps, r)
		t.rows = append(t.rows, []cell{plain(r.Scenario), verdictCell(r), plain(string(r.Expected)), plain(secs(r.Seconds)), plain(r.Reason)})
	}
	// A results directory may gather several suite runs: say so rather
	// than label them all with the first one's settings.
	runs := map[string]bool{}
	for _, s := range scs {
		mode := "full timings"
		if s.Report.Quick {
			mode = "quick timings"
		}
		runs[fmt.Sprintf("%s, seed %d", mode, s.Report.Seed)] = true
	}
	counts := results.CountVerdicts(reps)
	sum := fmt.Sprintf("%s (%s): %s.", results.Count(len(scs), "scenario report"), strings.Join(slices.Sorted(maps.Keys(runs)), "; "), tallyText(counts))
	class := "ok"
	if counts[results.Fail] > 0 || counts[results.Incomplete] > 0 {
		class = "bad"
	}
	if counts[results.Skipped] == len(scs) {
		class = "bad"
		sum += " Nothing ran: every scenario was skipped."
	}
	return []block{heading{level: 2, text: "Chaos suite"}, para{text: sum, class: class}, t}
}

func verdictCell(r *results.ChaosReport) cell {
	switch {
	case r.Verdict == results.Skipped:
		return styled(string(r.Verdict), "warn")
	case r.OK():
		return styled(string(r.Verdict), "ok")
	}
	return styled(string(r.Verdict), "bad")
}

// scenarioBlocks are one scenario's section: what it does, the verdict
// and the checks behind it, the figures and each variant's charts.
func scenarioBlocks(s *Scenario, ch *charts) []block {
	r := s.Report
	v := verdictCell(r)
	bl := []block{heading{level: 2, text: "Scenario " + r.Scenario, badge: &v},
		para{text: r.Description},
		para{text: "Invariant: " + r.Invariant},
	}
	if r.Redis != "" {
		bl = append(bl, para{text: r.Redis}) // "redis: local backend, valkey 9.1.2, …"
	}
	if r.Reason != "" {
		bl = append(bl, para{text: "Reason: " + r.Reason, class: v.class})
	}
	if len(r.Plan) > 0 {
		bl = append(bl, heading{level: 4, text: "Fault plan"}, bullets{items: r.Plan})
	}
	if len(r.Skipped) > 0 {
		bl = append(bl, heading{level: 4, text: "Variants skipped"}, bullets{items: r.Skipped})
	}
	if len(r.Checks) > 0 {
		t := table{head: []string{"check", "want", "got", ""}}
		for _, k := range r.Checks {
			mark := styled("ok", "ok")
			if !k.OK {
				mark = styled("FAILED", "bad")
			}
			t.rows = append(t.rows, []cell{plain(k.Name), plain(k.Want), plain(k.Got), mark})
		}
		bl = append(bl, heading{level: 4, text: "Checks"}, t)
	}
	if len(r.Figures) > 0 {
		t := table{right: true, head: []string{"figure", "value"}}
		for _, f := range r.Figures {
			t.rows = append(t.rows, []cell{plain(f.Name), plain(figureText(f))})
		}
		bl = append(bl, heading{level: 4, text: "Figures"}, t)
	}
	for i, rs := range r.Runs {
		bl = append(bl, heading{level: 3, text: r.Scenario + " · " + rs.Variant})
		run := s.Runs[i]
		if run == nil {
			bl = append(bl, para{class: "note", text: fmt.Sprintf("Result file %q not found: charts omitted. %s ops/s, %s.", rs.File, results.CommasFloat(rs.OpsPerSec), results.Count(rs.Safety.Violations, "violation"))})
			continue
		}
		res := run.Result
		bl = append(bl, para{text: fmt.Sprintf("%s over %s: %s ops/s, %s, %s. File: %s.",
			res.Meta.Workload, secs(res.Measured), results.CommasFloat(res.Throughput.OpsPerSec), results.Count(res.ErrorCount(), "error"), results.Count(res.Throughput.Lost, "lost hold"), run.Path)})
		bl = append(bl, safetyBlocks(res)...)
		if len(res.Events) > 0 {
			bl = append(bl, eventsTable(res.Events))
		}
		bl = append(bl, ch.runCharts(run)...)
	}
	return bl
}

func figureText(f results.Figure) string {
	if f.Value == -1 && f.Unit == "s" {
		return "never"
	}
	v := fmt.Sprintf("%.3f", f.Value)
	if f.Value == float64(int64(f.Value)) {
		v = results.Commas(int64(f.Value))
	}
	switch f.Unit {
	case "":
		return v
	case "%", "×":
		return v + f.Unit
	}
	return v + " " + f.Unit
}
