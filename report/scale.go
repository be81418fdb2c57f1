package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// WriteScale prints bench perf's scale part for a terminal: the same
// blocks as the perf document's scale section.
func WriteScale(w io.Writer, rows []results.ScaleRow) error {
	bl := []block{blank}
	bl = append(bl, scaleBlocks(rows)...)
	for _, r := range rows {
		bl = append(bl, para{text: margin + r.Saved})
	}
	return writeText(w, bl)
}

// scaleBlocks lays out the scale part: a row per point (footprint, rate,
// whether the run was judged), then what an owner costs by component.
func scaleBlocks(rows []results.ScaleRow) []block {
	if len(rows) == 0 {
		return nil
	}
	open := rows[0]
	for _, r := range rows {
		if r.Loop != "closed" {
			open = r
			break
		}
	}
	intro := fmt.Sprintf("The harness itself with many owners in one process: the rw90 shape (read-write, 90%% reads) on %s, "+
		"in open loop at %s ops/s across all owners at every point, so that what grows from one point to the next is the "+
		"owners, not the load; each run's safety checker and fairness judge it as any run's. RSS per owner is peak RSS over "+
		"the owners, the process's fixed footprint included, and each point's peak is its own.",
		results.Count(open.Locks, "lock name"), results.Commas(int64(open.Rate)))
	if slices.ContainsFunc(rows, func(r results.ScaleRow) bool { return r.Loop == "closed" }) {
		intro += " A closed point runs the uncontended profile (a name per owner, no hold or think) in closed loop: every " +
			"owner in a call at once, the most a run of that many owners holds."
	}
	t := table{head: []string{"owners", "clients", "loop", "ops/s", "peak RSS", "target", "RSS/owner", "goroutines", "early → late",
		"Go heap early → late", "safety", "fairness", "judged"}, right: true}
	for _, r := range rows {
		target := plain("—")
		if r.TargetRSSBytes > 0 {
			target = styled(fmt.Sprintf("≤ %s %s", mib(r.TargetRSSBytes), pass(r.Met())), okBad(r.Met()))
		}
		grew := fmt.Sprintf("%s → %s", results.Commas(int64(r.GoroutinesEarly)), results.Commas(int64(r.GoroutinesLate)))
		if r.Grew {
			grew += " GREW"
		}
		judged := styled("yes", "ok")
		if !r.Judged() {
			judged = styled("no", "bad")
		}
		loop := r.Loop
		if loop == "" {
			loop = "open"
		}
		t.rows = append(t.rows, []cell{plain(results.Commas(int64(r.Owners))), plain(results.Commas(int64(r.Clients))), plain(loop),
			plain(results.CommasFloat(r.OpsPerSec)), plain(mib(r.PeakRSSBytes)), target, plain(kib(r.RSSPerOwner())),
			plain(results.Commas(int64(r.Goroutines))), plain(grew), plain(mib(r.HeapEarly) + " → " + mib(r.HeapLate)),
			plain(scaleSafety(r.Safety)), plain(scaleFairness(r.Fairness)), judged})
	}
	bl := []block{heading{level: 2, text: "Scale: the harness with " + scaleRange(rows)}, para{text: intro}, t}

	// What an owner costs: a column per point, the components as the
	// first point lists them (every point lists the same).
	var comps []string
	how := map[string]string{}
	for _, r := range rows {
		for _, c := range r.Costs {
			if _, ok := how[c.Component]; !ok {
				comps = append(comps, c.Component)
			}
			how[c.Component] = c.How
		}
	}
	if len(comps) == 0 {
		return bl
	}
	ct := table{head: []string{"per owner"}, right: true}
	var opens []results.ScaleRow // the marginal cost compares like with like
	for _, r := range rows {
		h := results.Commas(int64(r.Owners))
		if r.Loop == "closed" {
			h += " closed"
		} else {
			opens = append(opens, r)
		}
		ct.head = append(ct.head, h)
	}
	n := len(opens)
	marginal := n > 1 && opens[n-1].Owners > opens[n-2].Owners
	if marginal {
		ct.head = append(ct.head, fmt.Sprintf("each owner more (%s → %s)", results.Commas(int64(opens[n-2].Owners)), results.Commas(int64(opens[n-1].Owners))))
	}
	last := len(rows) - 1
	ct.head = append(ct.head, "measured as (at "+results.Commas(int64(rows[last].Owners))+")")
	for _, name := range comps {
		row := []cell{plain(name)}
		for _, r := range rows {
			v := "—"
			if b, ok := costOf(r, name); ok {
				v = bytesPerOwner(float64(b) / float64(max(r.Owners, 1)))
			}
			row = append(row, plain(v))
		}
		if marginal {
			v := "—"
			b1, ok1 := costOf(opens[n-2], name)
			b2, ok2 := costOf(opens[n-1], name)
			if ok1 && ok2 {
				v = bytesPerOwner(float64(b2-b1) / float64(opens[n-1].Owners-opens[n-2].Owners))
			}
			row = append(row, plain(v))
		}
		ct.rows = append(ct.rows, append(row, plain(how[name])))
	}
	return append(bl, heading{level: 3, text: "What an owner costs"},
		para{text: "Measured by the run itself: the live Go heap (after a collection), the goroutines and their stacks before the run, " +
			"as its load starts and midway through it; the connections and records counted and multiplied out. A point's " +
			"column divides by its owners, fixed costs included; the last but one column is what each owner added between " +
			"the two largest open-loop points, fixed costs left out."}, ct)
}

// costOf is r's bytes of component name.
func costOf(r results.ScaleRow, name string) (int64, bool) {
	for _, c := range r.Costs {
		if c.Component == name {
			return c.Bytes, true
		}
	}
	return 0, false
}

func scaleRange(rows []results.ScaleRow) string {
	if len(rows) == 1 {
		return results.Count(rows[0].Owners, "owner")
	}
	return results.Commas(int64(rows[0].Owners)) + " to " + results.Count(rows[len(rows)-1].Owners, "owner")
}

func scaleSafety(s results.Safety) string {
	switch {
	case s.Violations > 0:
		return results.Count(s.Violations, "violation")
	case s.Incomplete != "":
		return "incomplete"
	case s.Sections == 0:
		return "nothing checked"
	}
	return "OK, " + results.Count(s.Sections, "section")
}

func scaleFairness(f results.Fairness) string {
	if !f.Measured() {
		return "—"
	}
	s := "Jain " + jain(f.Jain)
	if f.Caveat != "" {
		s += " (few per owner)"
		if strings.Contains(f.Caveat, "record limit") {
			s = "Jain " + jain(f.Jain) + " (part of the run)"
		}
	}
	return s
}

func okBad(ok bool) string {
	if ok {
		return "ok"
	}
	return "bad"
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }

func bytesPerOwner(b float64) string {
	if b >= 1024 || b <= -1024 {
		return kib(b)
	}
	return fmt.Sprintf("%.0f B", b)
}
