package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// safetyText is the safety verdict in words, after the word "safety":
// every format says it with this. Where the guarded store judged every
// process (Safety.Witness) it says so: the verdict is then the store's.
func safetyText(s results.Safety) string {
	sections := results.Count(s.Sections, "critical section")
	by := ""
	if s.Witness != "" {
		by = ", witnessed by the " + s.Witness + " across every process"
	}
	switch s.Verdict() {
	case results.SafetyViolated:
		var v []string
		if s.Violations > 0 {
			v = append(v, fmt.Sprintf("%s in %s; unsafe for %s in total, longest overlap %s",
				results.Count(s.Violations, "mutual-exclusion violation"), sections, us(s.UnsafeUs), us(s.MaxOverlapUs)))
		}
		if s.StoreOverlaps > 0 {
			v = append(v, fmt.Sprintf("%s in %s%s: a holder entered a lock's section while one it excludes was inside",
				results.Count(s.StoreOverlaps, "overlap"), sections, by))
		}
		return "VIOLATED: " + strings.Join(v, "; ")
	case results.SafetyNoData:
		return "NO DATA: no critical section was checked (nothing was acquired)"
	case results.SafetyIncomplete:
		return fmt.Sprintf("INCOMPLETE: no violation in %s checked", sections)
	}
	return fmt.Sprintf("OK: no mutual-exclusion violation in %s%s", sections, by)
}

// fairnessText is the fairness line after the word "fairness", and
// whether it warns; "" when the run had no owners.
func fairnessText(f results.Fairness) (string, bool) {
	if f.Owners == 0 {
		return "", false
	}
	if !f.Measured() {
		return fmt.Sprintf("no measured acquisitions among the %s, so nothing to judge", results.Count(f.Owners, "owner")), true
	}
	text := fmt.Sprintf("over %s: Jain %.4f, min/max %.3f (%s/%s), cv %.3f, starved %d/%d",
		results.Count(f.Owners, "owner"), f.Jain, f.MinMax, results.Commas(f.Min), results.Commas(f.Max), f.CV, f.Starved, f.Owners)
	warn := false
	if f.Owners > 1 && f.MinMax < 0.5 {
		text += "; max/2 > min: some owners got less than half the lock the luckiest did"
		warn = true
	}
	if f.Caveat != "" {
		text += "; caveat: " + f.Caveat
		warn = true
	}
	return text, warn
}

// fifoText is the FIFO check after the word "FIFO"; "" when none ran.
func fifoText(f results.Fairness) string {
	if f.FIFO == nil || f.FIFO.Checked == 0 {
		return ""
	}
	passed := ""
	if f.FIFO.Overtaken > 0 {
		passed = " of " + results.Count(f.FIFO.Overtaken, "waiter")
	}
	return fmt.Sprintf("%s%s in %s (send-time slack %s)",
		results.Count(f.FIFO.Violations, "overtake"), passed, results.Count(f.FIFO.Checked, "fair acquisition"), us(f.FIFO.SlackUs))
}

// waitBlocks are the waits' achieved against asked, a line per kind, the
// CPU spinning cost, and a warning line per kind past the bound.
func waitBlocks(w *results.Waits) []block {
	if w == nil {
		return nil
	}
	var bl, warn []block
	label := "waits"
	for _, k := range []struct {
		name string
		e    *results.WaitError
	}{{"hold", w.Hold}, {"think", w.Think}, {"start", w.Start}} {
		e := k.e
		if e == nil || e.Count == 0 {
			continue
		}
		text := fmt.Sprintf("%-5s achieved − asked p50 +%s · p99 +%s · max +%s over %s, asked %s on average",
			k.name, results.FormatUs(e.P50), results.FormatUs(e.P99), results.FormatUs(e.Max), results.Commas(e.Count), results.FormatUs(e.AskedMean))
		if k.name == "hold" && w.HoldNote != "" {
			text += " (" + w.HoldNote + ")"
		}
		bl = append(bl, line(label, text))
		label = ""
		if e.Strays() {
			warn = append(warn, para{class: "warn", text: fmt.Sprintf("%-12s%s lasts longer than asked: p50 +%s, p99 +%s, past the bound %s", "WARNING", k.name,
				results.FormatUs(e.P50), results.FormatUs(e.P99), waitBound())})
		}
	}
	if len(bl) == 0 {
		return nil
	}
	if text := waitCost(w); text != "" {
		bl = append(bl, line("", text))
	}
	return append(bl, warn...)
}

// waitCost is how the waits were timed and what that took of lockbench's
// CPU.
func waitCost(w *results.Waits) string {
	var text string
	switch w.Clock {
	case results.WaitClockSpin:
		text = fmt.Sprintf("every wait spun to its deadline (--spin-waits: exact at the host's expense): %.2fs spun", w.SpinS)
	case results.WaitClockTimer:
		if w.KickedShare > 0 {
			text = fmt.Sprintf("waits slept on Go timers, %s of them kicked awake at their deadlines by a high-resolution timer (%.2fs of CPU at least)",
				results.Percent(w.KickedShare), w.TimerS)
		} else {
			text = "waits slept on Go timers, none kicked (the process was busy enough for them to be on time, or the host had no core to spare)"
		}
		if w.SpinS > 0 {
			text += fmt.Sprintf(", holds' last µs spun while the host had an idle core (%.2fs)", w.SpinS)
		}
	case results.WaitClockGo:
		text = "waits slept on Go's timers, which fire up to a millisecond late on an idle process"
		if w.ClockNote != "" {
			text += " (no high-resolution timer: " + w.ClockNote + ")"
		}
	default:
		if w.SpinS <= 0 {
			return ""
		}
		text = fmt.Sprintf("spun %.2fs to meet deadlines", w.SpinS)
	}
	if w.CPUShare > 0 {
		text += fmt.Sprintf(", %.1f%% of lockbench's own CPU", 100*w.CPUShare)
	}
	return text
}

// waitBound is the bound results.WaitError.Strays applies, in words.
func waitBound() string {
	return fmt.Sprintf("p50 ≤ %s, p99 ≤ %s, each + %.0f%% of asked", results.FormatUs(float64(results.WaitP50Bound.Microseconds())),
		results.FormatUs(float64(results.WaitP99Bound.Microseconds())), 100*results.WaitBoundShare)
}

// WriteSummary prints a run for a terminal, in the manner of wrk and
// memtier: throughput, latency percentiles per metric, fairness, safety
// and errors.
func WriteSummary(w io.Writer, r *results.Result) error {
	return writeText(w, summaryBlocks(r))
}

func summaryBlocks(r *results.Result) []block {
	m := r.Meta
	title := heading{level: 1, text: "lockbench " + m.Profile + " · " + m.ImplName()}
	if r.Partial {
		title.badge = &cell{text: "PARTIAL: " + r.PartialReason}
	}
	bl := []block{title}
	if m.Workload != "" {
		bl = append(bl, para{text: "  " + m.Workload})
	}
	if share := workerShare(r); share != "" {
		bl = append(bl, para{text: "  " + share})
	}
	if m.ImplNote != "" {
		bl = append(bl, para{text: "  " + m.ImplName() + ": " + m.ImplNote})
	}
	backend := m.RedisBackend
	if t := m.RedisTopology; t != "" && t != "single" {
		backend += " " + t
	}
	bl = append(bl, para{text: fmt.Sprintf("  %s (%s %s) · %.1fs measured after %.1fs warmup", orUnknownServer(m.ServerName()), backend, m.RedisAddr, r.Measured, r.Warmup)})
	for _, n := range r.NoEffect {
		bl = append(bl, para{text: "  no effect: " + n})
	}
	bl = append(bl, blank)
	if fs := r.Failures(); len(fs) > 0 {
		for _, f := range fs {
			bl = append(bl, line("FAILED", f.Text))
		}
		bl = append(bl, blank)
	}

	t := r.Throughput
	var modes []string
	for _, mode := range []results.Mode{results.Exclusive, results.Read, results.Write} {
		if n := t.Acquisitions[mode.String()]; n > 0 {
			modes = append(modes, mode.String()+" "+results.Commas(n))
		}
	}
	if t.Nested > 0 {
		modes = append(modes, "nested "+results.Commas(t.Nested))
	}
	tp := fmt.Sprintf("%s ops/s  (%s", results.CommasFloat(t.OpsPerSec), results.ThroughputCounts(t))
	if t.TargetRate > 0 {
		tp += ", target " + results.CommasFloat(t.TargetRate) + " ops/s"
	}
	bl = append(bl, line("throughput", tp+")"))
	if len(modes) > 0 {
		bl = append(bl, line("acquired", strings.Join(modes, " · ")))
	}
	for _, sh := range r.PerShard {
		bl = append(bl, para{text: fmt.Sprintf("  %-40s %s ops/s · %s · %.1f%% of acquisitions", sh.Name, results.CommasFloat(sh.OpsPerSec), results.Count(sh.Locks, "lock"), 100*sh.Share)})
	}
	if r.CPU != nil {
		bl = append(bl, line("cpu", cpuLine(r.CPU)))
	}
	bl = append(bl, spreadBlocks(r.Spread, r.Guard, true)...)
	bl = append(bl, blank)

	lt := table{right: true, head: []string{"latency", "count", "p50", "p90", "p99", "p99.9", "max"}}
	for m := results.AcquireExclusive; m <= results.Ping; m++ {
		l, ok := r.Latency[m.String()]
		if !ok || l.Count == 0 {
			continue
		}
		lt.rows = append(lt.rows, []cell{plain(strings.ReplaceAll(m.String(), "_", " ")), plain(results.Commas(l.Count)),
			plain(results.FormatUs(l.P50)), plain(results.FormatUs(l.P90)), plain(results.FormatUs(l.P99)), plain(results.FormatUs(l.P999)), plain(results.FormatUs(l.Max))})
	}
	if len(lt.rows) > 0 {
		bl = append(bl, lt)
	}
	if h, p := r.Latency[results.Handoff.String()], r.Latency[results.Ping.String()]; h.Count > 0 && p.P50 > 0 {
		bl = append(bl, para{text: fmt.Sprintf("handoff p50 is %.1f× the ping p50", h.P50/p.P50)})
	}
	bl = append(bl, waitBlocks(r.Waits)...)
	bl = append(bl, blank)

	if text, _ := fairnessText(r.Fairness); text != "" {
		bl = append(bl, line("fairness", text))
	}
	if text := fifoText(r.Fairness); text != "" {
		bl = append(bl, line("fifo", text))
	}
	s := r.Safety
	bl = append(bl, line("safety", safetyText(s)))
	for i, v := range s.Examples {
		if i == 3 {
			bl = append(bl, line("", fmt.Sprintf("… %d more in the result file", len(s.Examples)-3)))
			break
		}
		bl = append(bl, line("", fmt.Sprintf("%s: %s (%s) and %s (%s) both held it for %s at t=%.6fs",
			v.Lock, v.First.Owner, v.First.Mode, v.Second.Owner, v.Second.Mode, results.FormatUs(v.OverlapUs), v.OverlapStart)))
	}
	if n := workerSafetyNote(r); n != "" {
		bl = append(bl, line("", n))
	}
	if text := exclusionText(r); text != "" {
		bl = append(bl, line("exclusion", text))
	}
	for i, o := range storeOverlaps(r) {
		if i == 3 {
			bl = append(bl, line("", fmt.Sprintf("… %d more in the result file", len(r.Guard.OverlapExamples)-3)))
			break
		}
		bl = append(bl, line("", overlapText(o)))
	}
	if m := s.Missing(); m != "" {
		bl = append(bl, line("", "incomplete: "+m))
	}
	if g := r.Guard; g != nil {
		bl = append(bl, line("guard", guardLine(g)))
		for i, o := range g.Overwrites {
			if i == 3 {
				bl = append(bl, line("", fmt.Sprintf("… %d more in the result file", int64(len(g.Overwrites)-3)+g.OverwritesDropped)))
				break
			}
			bl = append(bl, line("", fmt.Sprintf("%s overwrote %s of %s at t=%.6fs", o.By, results.Count(o.Updates, "update"), o.Of, float64(o.At)/1e9)))
		}
	}
	var errs []string
	for _, c := range results.ErrClassNames() {
		errs = append(errs, c+" "+results.Commas(r.Errors[c]))
	}
	e := strings.Join(errs, " · ") + " · lost holds " + results.Commas(t.Lost)
	if t.Cut > 0 {
		e += " · cut by the end " + results.Commas(t.Cut)
	}
	bl = append(bl, line("errors", e))
	for _, m := range r.ErrorMessages {
		bl = append(bl, line("", fmt.Sprintf("%s ×%s from %.1fs: %s", m.Class, results.Commas(m.Count), m.First, m.Message)))
	}
	if r.ErrorMessagesDropped > 0 {
		bl = append(bl, line("", fmt.Sprintf("… %s more failures with other messages", results.Commas(r.ErrorMessagesDropped))))
	}
	if t.Unreleased > 0 {
		bl = append(bl, line("unreleased", results.Count(t.Unreleased, "hold")+": their unlock failed or got no answer; Redis keeps them until their lease ends"))
	}
	// Every note of a merge: the reason a verdict reads as it does may
	// be one of them.
	for _, n := range r.MergeNotes {
		bl = append(bl, line("note", n))
	}
	return bl
}

// WriteMerged prints a merged run: its summary (with the merge's notes)
// and where it went.
func WriteMerged(w io.Writer, merged *results.Result, sources int, path string) error {
	bl := summaryBlocks(merged)
	bl = append(bl, line("merged", results.Count(sources, "result")+" from "+merged.Meta.Host), line("result", path))
	return writeText(w, bl)
}

// WriteComparison prints c as an aligned table, then its notes, then the
// verdict line.
func WriteComparison(w io.Writer, c results.Comparison) error {
	bl := []block{runSide("BASE", "", c.Base), runSide("NEW", "", c.New), blank}
	t := table{right: true, head: []string{"metric", "base", "new", "delta", "change", "gate"}}
	for _, r := range c.Rows {
		gate := ""
		switch {
		case r.Regressed:
			gate = "REGRESSED"
		case r.Gated:
			gate = "ok"
		}
		t.rows = append(t.rows, []cell{plain(r.Name), plain(r.FormatValue(r.Base)), plain(r.FormatValue(r.New)), plain(r.Delta), plain(r.Change), plain(gate)})
	}
	bl = append(bl, t)
	if len(c.Notes) > 0 {
		bl = append(bl, blank)
		for _, n := range c.Notes {
			bl = append(bl, para{text: "note: " + n})
		}
	}
	bl = append(bl, blank, para{text: c.Verdict()})
	return writeText(w, bl)
}

// runSide is one side of a comparison's heading: what ran, where, when.
func runSide(name, what string, ri results.RunInfo) block {
	s := fmt.Sprintf("%-4s  %s%s · %s", name, what, ri.Profile, ri.Impl)
	if ri.Host != "" {
		s += " on " + ri.Host
	}
	if !ri.Start.IsZero() {
		s += " at " + ri.Start.UTC().Format("2006-01-02 15:04:05Z")
	}
	if ri.Partial {
		s += " [PARTIAL]"
	}
	if ri.File != "" {
		s += "  (" + ri.File + ")"
	}
	return para{text: s}
}

// WriteSweepComparison prints what bench compare says of two sweeps: per
// curve, the measured peak and the fitted λ, σ and κ with their intervals
// and what each change alone does to throughput, and which explains it.
func WriteSweepComparison(w io.Writer, c results.SweepComparison) error {
	bl := []block{runSide("BASE", "sweep of ", c.Base), runSide("NEW", "sweep of ", c.New), blank}
	for _, cc := range c.Curves {
		if cc.Series != "" {
			bl = append(bl, para{text: cc.Series})
		}
		t := table{right: true, head: []string{"metric", "base", "new", "change", "alone at N", "intervals"}}
		gate := "ok"
		if cc.Regressed {
			gate = "REGRESSED"
		}
		peak := func(v float64) string {
			if v <= 0 {
				return "-"
			}
			return results.CommasFloat(v)
		}
		change := "-"
		if cc.PeakBase > 0 && cc.PeakNew > 0 {
			change = fmt.Sprintf("%+.1f%%", cc.ChangePct)
		}
		t.rows = append(t.rows, []cell{plain("measured peak ops/s"), plain(peak(cc.PeakBase)), plain(peak(cc.PeakNew)),
			plain(change), plain(""), plain(gate)})
		ci := func(m *results.USL, f func(*results.USL) (float64, results.Interval)) string {
			if m == nil || m.Lambda == 0 {
				return "-"
			}
			v, iv := f(m)
			g3 := func(v float64) string { return fmt.Sprintf("%.3g", v) }
			return g3(v) + " [" + iv.Format(g3) + "]"
		}
		params := []func(*results.USL) (float64, results.Interval){
			func(m *results.USL) (float64, results.Interval) { return m.Lambda, m.LambdaCI },
			func(m *results.USL) (float64, results.Interval) { return m.Sigma, m.SigmaCI },
			func(m *results.USL) (float64, results.Interval) { return m.Kappa, m.KappaCI },
		}
		for i, name := range []string{"λ (ops/s)", "σ contention", "κ coherency"} {
			alone, apart := "", ""
			if i < len(cc.Effects) {
				e := cc.Effects[i]
				alone = fmt.Sprintf("%+.1f%%", e.EffectPct)
				apart = "overlap"
				if e.Apart {
					apart = "apart"
				}
			}
			t.rows = append(t.rows, []cell{plain(name), plain(ci(cc.Base, params[i])), plain(ci(cc.New, params[i])), plain(""), plain(alone), plain(apart)})
		}
		bl = append(bl, t)
		if cc.At > 0 {
			bl = append(bl, para{text: fmt.Sprintf("\"alone at N\": the change in the base model's throughput at N = %g (the largest both measured) from that parameter's change alone; all three together: %+.1f%%.", cc.At, cc.ModelPct)})
		}
		if cc.Explained != "" {
			bl = append(bl, para{text: "why: " + cc.Explained})
		}
		bl = append(bl, blank)
	}
	for _, n := range c.Notes {
		bl = append(bl, para{text: "note: " + n})
	}
	bl = append(bl, para{text: c.Verdict()})
	return writeText(w, bl)
}

// orUnknownServer is the server's name, or says that none was recorded.
func orUnknownServer(s string) string {
	if s == "" {
		return "server unknown"
	}
	return s
}
