package report

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// spreadBlocks are a spread run's workers (bench run --workers): how
// closely they started, the window the throughput is counted over, and
// what each measured and who was its CPU limit, so that a reader sees
// whether adding workers would add load.
func spreadBlocks(s *results.Spread, g *results.Guard, terminal bool) []block {
	if s == nil {
		return nil
	}
	text := fmt.Sprintf("%d workers of run %s started within %s of each other on Redis's clock (±%s)",
		s.Workers, s.RunID, results.FormatUs(s.SkewUs), results.FormatUs(s.UncertaintyUs))
	if s.WindowS > 0 {
		text += fmt.Sprintf("; throughput counts the %.1fs every worker measured", s.WindowS)
	}
	if h := sharedHost(s); h != "" {
		text += "; they share host " + h + ", so each counts the others' CPU as other work"
	}
	t := table{right: true, head: []string{"worker", "host", "ops", "ops/s", "acquire p99", "start", "cpu"}}
	if terminal {
		t.indent = "  "
	}
	for _, r := range s.Rows {
		if r.Missing {
			t.rows = append(t.rows, []cell{plain(fmt.Sprint(r.Index)), plain("—"), plain("—"), plain("—"), plain("—"), plain("—"),
				styled("MISSING: never reported its result", "bad")})
			continue
		}
		cpu := "—"
		if r.CPU != nil {
			cpu = cpuVerdict(r.CPU)
		}
		if r.Partial {
			cpu = "PARTIAL (" + r.PartialReason + ") · " + cpu
		}
		t.rows = append(t.rows, []cell{plain(fmt.Sprint(r.Index)), plain(r.Host), plain(results.Commas(r.Ops)),
			plain(results.CommasFloat(r.OpsPerSec)), plain(results.FormatUs(r.AcquireP99)), plain("+" + results.FormatUs(r.SkewUs)), plain(cpu)})
	}
	var judge string
	if g == nil || !g.Occupancy {
		judge = "no guarded store counted who was inside: overlaps between workers went unjudged (profile field guard plain or fenced gives the store's verdict)"
	}
	if terminal {
		bl := []block{line("workers", text)}
		if judge != "" {
			bl = append(bl, line("", judge))
		}
		return append(bl, t)
	}
	bl := []block{para{text: "Workers: " + text + "."}, t}
	if judge != "" {
		bl = append(bl, para{text: strings.ToUpper(judge[:1]) + judge[1:] + "."})
	}
	return bl
}

// sharedHost is the host every reporting worker ran on, "" when they ran
// on several.
func sharedHost(s *results.Spread) string {
	host, n := "", 0
	for _, r := range s.Rows {
		if r.Missing {
			continue
		}
		if n > 0 && r.Host != host {
			return ""
		}
		host, n = r.Host, n+1
	}
	if n < 2 {
		return ""
	}
	return host
}

// workerShare says what part of its spread run a worker's own result
// measured, beside the workload line, which is the whole run's (every
// worker records the whole, so that their results merge); "" for any
// other result.
func workerShare(r *results.Result) string {
	w := r.Worker
	if w == nil || r.Spread != nil {
		return ""
	}
	share := results.Count(w.Owners, "owner")
	if w.Clients > 0 && w.Owners%w.Clients == 0 {
		share = fmt.Sprintf("%s × %s", results.Count(w.Clients, "client"), results.Count(w.Owners/w.Clients, "owner"))
	}
	of := ""
	if w.TotalOwners > 0 {
		of = fmt.Sprintf(" of the run's %d", w.TotalOwners)
	}
	return fmt.Sprintf("worker %d of %d of run %s: drove %s (owners %d..%d%s); bench collect merges the workers",
		w.Index, w.Workers, w.RunID, share, w.FirstOwner, w.FirstOwner+w.Owners-1, of)
}

// workerSafetyNote says that a worker's own safety verdict covers its
// own critical sections only: the run's is the merge's. "" for any other
// result.
func workerSafetyNote(r *results.Result) string {
	w := r.Worker
	if w == nil || r.Spread != nil {
		return ""
	}
	if g := r.Guard; g != nil && g.Occupancy {
		return fmt.Sprintf("worker %d's own critical sections only: overlaps with the other workers' holders are the guarded store's to judge, in bench collect's merge", w.Index)
	}
	return fmt.Sprintf("worker %d's own critical sections only: overlaps with the other workers' holders go unjudged without a guarded store (profile field guard plain or fenced)", w.Index)
}
