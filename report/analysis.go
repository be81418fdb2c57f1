package report

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// cpuLine is a CPU reading in one line, in top's percentages (100% is one
// core busy), e.g. "redis 97% of a core · lockbench 120% (of 200%): the
// server is the limit".
func cpuLine(c *results.CPU) string {
	var parts []string
	if c.Unread != "" {
		parts = append(parts, "redis unread ("+c.Unread+")")
	} else {
		parts = append(parts, "redis "+cores(c.Redis)+" of a core")
	}
	load := "lockbench " + cores(c.Load) + " (of " + cores(c.LoadLimit)
	if c.Waits > 0 {
		load += ": driving " + cores(c.Driving()) + ", waiting " + cores(c.Waits)
	}
	parts = append(parts, load+")")
	if c.SharedHost && c.HostCores > 0 && (c.Unread == "" || c.Host > 0) {
		host := fmt.Sprintf("host %s (of %s", cores(c.HostBusy()), cores(float64(c.HostCores)))
		if o := c.Others(); o >= 0.05 {
			host += fmt.Sprintf("; %s neither Redis's nor lockbench's", cores(o))
		}
		parts = append(parts, host+")")
	}
	return strings.Join(parts, " · ") + ": " + cpuVerdict(c)
}

// cpuVerdict says who was the limit, as cpuLine ends.
func cpuVerdict(c *results.CPU) string {
	var verdict string
	switch c.Limit() {
	case results.LimitRedis:
		verdict = "the server is the limit"
	case results.LimitLoad:
		verdict = "lockbench is the limit (the load generator's CPUs)"
	case results.LimitHost:
		verdict = "the host's CPUs are the limit (Redis and lockbench share them)"
		if o := c.Others(); o >= 0.1*float64(c.HostCores) {
			verdict = "the host's CPUs are the limit, and other work took " + cores(o) + " of them: these figures are not the lock's"
		}
	default:
		verdict = "neither is saturated: latency is the limit (round trips, wake-ups, lock waits)"
		if c.Unread != "" {
			verdict = "lockbench is not saturated; the server's share is unknown"
		}
	}
	if w := waitsTook(c); w != "" {
		verdict += "; " + w
	}
	return verdict
}

// waitNotice is the CPU lockbench's waits must take, in cores, for the
// verdict to name it.
const waitNotice = 0.05

// waitsTook names lockbench's own overhead where its waits took CPU from
// a host Redis shares, "" otherwise.
func waitsTook(c *results.CPU) string {
	if !c.SharedHost || c.Waits < waitNotice {
		return ""
	}
	s := "lockbench's own waits took " + cores(c.Waits) + " of the CPUs Redis shares"
	if c.Limit() == results.LimitHost || c.Limit() == results.LimitLoad {
		s += ": these figures are partly lockbench's, not the lock's"
	}
	return s
}

// capacityStatement is what a sweep's curve says, in sentences for a terminal or a
// report: the best throughput within the SLO and where, the knee, the
// headroom at the current setting, and why the curve stopped early.
func capacityStatement(c results.Capacity, axis string, sloUs float64) []string {
	at := func(p *results.SweepPoint) string {
		switch axis {
		case results.AxisRate:
			return fmt.Sprintf("an offered %s ops/s (%s)", results.CommasFloat(p.X), p.Label())
		case results.AxisShards:
			return fmt.Sprintf("%s (%s)", results.Count(int(p.X), "shard"), p.Label())
		}
		return fmt.Sprintf("concurrency %g (%s)", p.X, p.Label())
	}
	slo := "the SLO"
	if sloUs > 0 {
		slo = "the SLO (p99 ≤ " + results.FormatUs(sloUs) + ")"
	}
	var out []string
	if c.Best != nil {
		out = append(out, fmt.Sprintf("Highest throughput meeting %s: %s ops/s at %s, p99 %s.",
			slo, results.CommasFloat(c.Best.OpsPerSec), at(c.Best), c.Best.Percentile(c.Best.P99Us)))
	} else {
		out = append(out, fmt.Sprintf("No point met %s.", slo))
	}
	switch {
	case c.Failed != nil:
		out = append(out, fmt.Sprintf("The run at %s failed (%s): no knee is named, since a failure is not saturation; fix it and sweep again.",
			at(c.Failed), c.Failed.Failure))
	case c.Knee != nil && c.Peak != nil:
		out = append(out, fmt.Sprintf("Throughput saturates (knee) at %s: %s ops/s, %.0f%% of the %s ops/s peak.",
			at(c.Knee), results.CommasFloat(c.Knee.OpsPerSec), 100*c.Knee.OpsPerSec/max(c.Peak.OpsPerSec, 1e-9), results.CommasFloat(c.Peak.OpsPerSec)))
	case c.Peak != nil && c.Points == 1:
		out = append(out, "One point measured: a knee needs a curve of at least two.")
	case c.Peak != nil && axis == results.AxisRate:
		out = append(out, "No saturation knee within the swept rates: every offered rate was achieved within 10%, or none was.")
	case c.Peak != nil:
		out = append(out, fmt.Sprintf("No saturation within the swept range: throughput still rose at the last point (%s ops/s); sweep further to find the knee.", results.CommasFloat(c.Peak.OpsPerSec)))
	}
	switch cur := c.Current; {
	case cur != nil:
		what := "swept"
		if cur.Interpolated {
			what = "interpolated"
		}
		s := fmt.Sprintf("At the current setting (%g, %s): %s ops/s, p99 %s", cur.X, what, results.CommasFloat(cur.OpsPerSec), cur.Percentile(cur.P99Us))
		if cur.Failure != "" {
			s += "; its run failed (" + cur.Failure + ")"
		}
		switch {
		case !cur.MeetsSLO && c.Best != nil:
			s += fmt.Sprintf("; it breaks %s. The best point within it does %s ops/s at %s: go back to it.", slo, results.CommasFloat(c.Best.OpsPerSec), at(c.Best))
		case !cur.MeetsSLO:
			s += fmt.Sprintf("; it breaks %s, as every swept point does.", slo)
		case c.Best == nil:
			s += "; no headroom within the SLO."
		case c.Best.X == cur.X:
			s += "; it is the best point within the SLO: no headroom beyond it."
		case c.Best.OpsPerSec >= cur.OpsPerSec:
			s += fmt.Sprintf("; headroom %+.0f%% (to %s ops/s at %s) within the SLO.", c.HeadroomPct, results.CommasFloat(c.Best.OpsPerSec), at(c.Best))
		default:
			s += fmt.Sprintf("; it already does %.0f%% more than the best other point within the SLO.", (cur.OpsPerSec/max(c.Best.OpsPerSec, 1e-9)-1)*100)
		}
		out = append(out, s)
	case c.CurrentX > 0:
		out = append(out, fmt.Sprintf("The current setting (%g) is outside the swept points: no headroom figure.", c.CurrentX))
	}
	if c.Stopped != "" {
		out = append(out, "Stopped early: "+c.Stopped+".")
	}
	if c.Model != nil {
		out = append(out, "Model (Universal Scalability Law): "+c.Model.Reading())
	}
	return out
}

// guardLine is the guard's one-line summary.
func guardLine(g *results.Guard) string {
	s := fmt.Sprintf("%s %s: ", g.Mode, g.Store)
	written := fmt.Sprintf("%s of %s written", results.Commas(g.Written), results.Count(g.Sections, "section"))
	if g.Reads > 0 {
		written += fmt.Sprintf(" (%s by readers, which write nothing)", results.Commas(g.Reads))
	}
	if g.CountsWhole() {
		s += fmt.Sprintf("%s · %s · counter %s of %s accepted",
			results.Count(g.Lost, "lost update"), written, results.Commas(g.Final), results.Commas(g.Accepted))
	} else {
		s += "its counts do not cover the run (see safety) · " + written
	}
	if g.Unwitnessed > 0 {
		s += fmt.Sprintf(" · %s unwitnessed", results.Commas(g.Unwitnessed))
	}
	if g.Fenced() || g.Rejected > 0 {
		s += fmt.Sprintf(" · stale refused: %s, %s", results.Count(g.RejectedReads, "read"), results.Count(g.RejectedWrites, "write"))
	}
	if g.RightfulRefused > 0 {
		s += fmt.Sprintf(" · refused from holders told of no loss: %s", results.Commas(g.RightfulRefused))
	}
	if g.StaleAccepted > 0 {
		s += fmt.Sprintf(" · stale writes accepted: %s", results.Commas(g.StaleAccepted))
	}
	if g.Failed > 0 {
		s += fmt.Sprintf(" · %s failed", results.Commas(g.Failed))
	}
	return s
}

// exclusionText is what the guarded store saw of exclusion where it is
// not the verdict, after the word "exclusion"; "" when there is nothing
// to add to the safety line (which carries the store's verdict where it
// judged every process, Safety.Witness). A worker's store is shared with
// the run's other workers, and read before they finished: the
// collector's merge judges the run. Within one process the clock checker
// is the verdict: the store sees a holder that stopped at a lost hold
// leave one round trip late.
func exclusionText(r *results.Result) string {
	g := r.Guard
	switch {
	case g == nil || !g.Occupancy || r.Safety.Witness != "":
		return ""
	case r.Worker != nil:
		return fmt.Sprintf("%s witnessed so far by the guarded store across the run's workers (this worker: %s); bench collect judges the run",
			results.Count(g.Overlaps, "overlap"), results.Count(g.Sections, "section"))
	case g.Overlaps == 0:
		return ""
	case r.Safety.Violations == 0:
		return fmt.Sprintf("the guarded store saw %s where the clock checker saw none: it sees a holder that stopped at a lost hold leave one round trip late, so within one process the clock checker is the verdict",
			results.Count(g.Overlaps, "overlap"))
	}
	return fmt.Sprintf("the guarded store saw %s too", results.Count(g.Overlaps, "overlap"))
}

// storeOverlaps are the guarded store's overlap examples where the
// summary speaks of them: beside its verdict, or beside what it saw.
func storeOverlaps(r *results.Result) []results.Overlap {
	if r.Guard == nil || r.Safety.Witness == "" && exclusionText(r) == "" {
		return nil
	}
	return r.Guard.OverlapExamples
}

// overlapText is one store-witnessed overlap: "lock L: a, b inside when c
// entered", each holder's mode said where a reader was involved.
func overlapText(o results.Overlap) string {
	in, entered := overlapHolders(o)
	return fmt.Sprintf("lock %s: %s inside when %s entered", o.Name, in, entered)
}

// overlapHolders are who was inside at an overlap, and who entered, as
// the summary and the report name them: "(read)" and "(write)" after
// each where a reader was involved, so that a reader-writer overlap reads
// as one.
func overlapHolders(o results.Overlap) (inside, entered string) {
	rw := len(o.Readers) > 0 || o.EnteredRead
	tag := func(h string, read bool) string {
		switch {
		case !rw:
			return h
		case read:
			return h + " (read)"
		}
		return h + " (write)"
	}
	var in []string
	for _, h := range o.Inside {
		in = append(in, tag(h, false))
	}
	for _, h := range o.Readers {
		in = append(in, tag(h, true))
	}
	return strings.Join(in, ", "), tag(o.Entered, o.EnteredRead)
}
