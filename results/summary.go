package results

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteSummary prints r as a human table, in the manner of wrk and
// memtier: throughput, latency percentiles per metric, fairness, safety
// and errors.
func WriteSummary(w io.Writer, r *Result) error {
	var b strings.Builder
	title := "lockbench " + r.Meta.Profile + " · " + r.Meta.ImplName()
	if r.Partial {
		title += "  [PARTIAL: " + r.PartialReason + "]"
	}
	fmt.Fprintln(&b, title)
	if r.Meta.Workload != "" {
		fmt.Fprintf(&b, "  %s\n", r.Meta.Workload)
	}
	if r.Meta.ImplNote != "" {
		fmt.Fprintf(&b, "  %s: %s\n", r.Meta.ImplName(), r.Meta.ImplNote)
	}
	backend := r.Meta.RedisBackend
	if t := r.Meta.RedisTopology; t != "" && t != "single" {
		backend += " " + t
	}
	fmt.Fprintf(&b, "  redis %s (%s %s) · %.1fs measured after %.1fs warmup\n",
		r.Meta.RedisVersion, backend, r.Meta.RedisAddr, r.Measured, r.Warmup)
	for _, n := range r.NoEffect {
		fmt.Fprintf(&b, "  no effect: %s\n", n)
	}
	b.WriteString("\n")

	for _, f := range r.Failures() {
		fmt.Fprintf(&b, "FAILED      %s\n", f)
	}
	if len(r.Failures()) > 0 {
		b.WriteString("\n")
	}
	t := r.Throughput
	var modes []string
	for _, m := range modeNames {
		if n := t.Acquisitions[m]; n > 0 {
			modes = append(modes, m+" "+commas(n))
		}
	}
	if t.Nested > 0 {
		modes = append(modes, "nested "+commas(t.Nested))
	}
	fmt.Fprintf(&b, "throughput  %s ops/s  (%s", commasFloat(t.OpsPerSec), ThroughputCounts(t))
	if t.TargetRate > 0 {
		fmt.Fprintf(&b, ", target %s ops/s", commasFloat(t.TargetRate))
	}
	fmt.Fprintf(&b, ")\n")
	if len(modes) > 0 {
		fmt.Fprintf(&b, "acquired    %s\n", strings.Join(modes, " · "))
	}
	for _, sh := range r.PerShard {
		fmt.Fprintf(&b, "  %-40s %s ops/s · %s · %.1f%% of acquisitions\n", sh.Name, commasFloat(sh.OpsPerSec), Count(sh.Locks, "lock"), 100*sh.Share)
	}
	if r.CPU != nil {
		fmt.Fprintf(&b, "cpu         %s\n", r.CPU.Line())
	}
	b.WriteString("\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "latency\tcount\tp50\tp90\tp99\tp99.9\tmax\t")
	for m := Metric(0); m < numMetrics; m++ {
		l, ok := r.Latency[m.String()]
		if !ok || l.Count == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", strings.ReplaceAll(m.String(), "_", " "),
			commas(l.Count), dur(l.P50), dur(l.P90), dur(l.P99), dur(l.P999), dur(l.Max))
	}
	tw.Flush()
	if h, p := r.Latency[Handoff.String()], r.Latency[Ping.String()]; h.Count > 0 && p.P50 > 0 {
		fmt.Fprintf(&b, "handoff p50 is %.1f× the ping p50\n", h.P50/p.P50)
	}
	b.WriteString("\n")

	f := r.Fairness
	if f.Measured() {
		fmt.Fprintf(&b, "fairness    jain %.4f · min/max %.3f (%s/%s) · cv %.3f · starved %d/%d",
			f.Jain, f.MinMax, commas(f.Min), commas(f.Max), f.CV, f.Starved, f.Owners)
		if f.MinMax < 0.5 && f.Owners > 1 {
			b.WriteString("  (max/2 > min)")
		}
	} else {
		b.WriteString("fairness    no measured acquisitions: nothing to judge")
	}
	b.WriteString("\n")
	if f.Measured() && f.Caveat != "" {
		fmt.Fprintf(&b, "            caveat: %s\n", f.Caveat)
	}
	if f.FIFO != nil && f.FIFO.Checked > 0 {
		fmt.Fprintf(&b, "fifo        %s in %s (slack %s)\n",
			Count(f.FIFO.Violations, "overtake"), Count(f.FIFO.Checked, "fair acquisition"), dur(f.FIFO.SlackUs))
	}
	s := r.Safety
	if s.Sections == 0 && s.Violations == 0 {
		b.WriteString("safety      NO DATA: no critical section was checked\n")
	} else {
		fmt.Fprintf(&b, "safety      %s: %s in %s", s.Verdict(), Count(s.Violations, "violation"), Count(s.Sections, "critical section"))
		if s.Violations > 0 {
			fmt.Fprintf(&b, " (max overlap %s)", dur(s.MaxOverlapUs))
		}
		b.WriteString("\n")
	}
	for i, v := range s.Examples {
		if i == 3 {
			fmt.Fprintf(&b, "            … %d more in the result file\n", len(s.Examples)-3)
			break
		}
		fmt.Fprintf(&b, "            %s: %s (%s) and %s (%s) both held it for %s at t=%.6fs\n",
			v.Lock, v.First.Owner, v.First.Mode, v.Second.Owner, v.Second.Mode, dur(v.OverlapUs), v.OverlapStart)
	}
	if s.Incomplete != "" {
		fmt.Fprintf(&b, "            incomplete: %s\n", s.Incomplete)
	}
	if g := r.Guard; g != nil {
		fmt.Fprintf(&b, "guard       %s\n", g.Line())
		for i, o := range g.Overwrites {
			if i == 3 {
				fmt.Fprintf(&b, "            … %d more in the result file\n", int64(len(g.Overwrites)-3)+g.OverwritesDropped)
				break
			}
			fmt.Fprintf(&b, "            %s overwrote %s of %s at t=%.6fs\n", o.By, Count(o.Updates, "update"), o.Of, float64(o.At)/1e9)
		}
	}
	var errs []string
	for _, c := range errClassNames[1:] {
		errs = append(errs, fmt.Sprintf("%s %s", c, commas(r.Errors[c])))
	}
	fmt.Fprintf(&b, "errors      %s · lost holds %s", strings.Join(errs, " · "), commas(t.Lost))
	if t.Cut > 0 {
		fmt.Fprintf(&b, " · cut by the end %s", commas(t.Cut))
	}
	b.WriteString("\n")
	for _, m := range r.ErrorMessages {
		fmt.Fprintf(&b, "            %s ×%s from %.1fs: %s\n", m.Class, commas(m.Count), m.First, m.Message)
	}
	if r.ErrorMessagesDropped > 0 {
		fmt.Fprintf(&b, "            … %s more failures with other messages\n", commas(r.ErrorMessagesDropped))
	}
	if t.Unreleased > 0 {
		fmt.Fprintf(&b, "unreleased  %s: their unlock failed or got no answer; Redis keeps them until their lease ends\n", Count(t.Unreleased, "hold"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ThroughputCounts is the throughput's counts in words, as the summary
// and the report print them: "29,690 successful of 29,690 attempts, 100%"
// or "1,893 successful of 29,690 attempts, 6.38%: 27,797 failed".
func ThroughputCounts(t Throughput) string {
	s := fmt.Sprintf("%s successful of %s, %s", commas(t.Ops), Count(t.Attempts, "attempt"), percent(t.SuccessRatio))
	if t.Failed > 0 {
		s += fmt.Sprintf(": %s failed", commas(t.Failed))
	}
	return s
}

// Percent prints a share (0..1) as a percentage with up to two decimals.
func Percent(v float64) string { return percent(v) }

// FormatUs prints a latency given in microseconds with a unit that keeps
// 3–4 digits (850.0µs, 12.40ms, 2.38s), as the summary table does.
func FormatUs(us float64) string { return dur(us) }

// UsOrDash is FormatUs, or "—" for a figure that was not measured (0).
func UsOrDash(us float64) string {
	if us <= 0 {
		return "—"
	}
	return dur(us)
}

// Times prints a ratio as "1.25×", or "—" when there was nothing to
// compare with (0): a ratio never printed is better than a false 0.00.
func Times(r float64) string {
	if r <= 0 {
		return "—"
	}
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}

// Commas prints n with thousands separators, as the summary table does.
func Commas(n int64) string { return commas(n) }

// Count is n with thousands separators and noun, in the plural unless n
// is 1: "1 run", "0 runs", "1,008 owners", "2 matches". noun is the
// singular (a phrase's last word takes the plural: "critical section").
// Every count a reader sees goes through it, or through Noun where the
// number is written otherwise, so none says "1 runs".
func Count[N ~int | ~int32 | ~int64](n N, noun string) string {
	return commas(int64(n)) + " " + Noun(n, noun)
}

// Noun is noun as n of it are called: the singular for 1, else the
// plural (noun+"es" after s, x, ch or sh, else noun+"s").
func Noun[N ~int | ~int32 | ~int64](n N, noun string) string {
	if n == 1 {
		return noun
	}
	for _, end := range []string{"s", "x", "ch", "sh"} {
		if strings.HasSuffix(noun, end) {
			return noun + "es"
		}
	}
	return noun + "s"
}

// CommasFloat prints v with thousands separators and one decimal.
func CommasFloat(v float64) string { return commasFloat(v) }

// dur prints microseconds with a unit that keeps 3–4 digits.
func dur(us float64) string {
	switch {
	case us < 1000:
		return strconv.FormatFloat(us, 'f', 1, 64) + "µs"
	case us < 1e6:
		return strconv.FormatFloat(us/1e3, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(us/1e6, 'f', 2, 64) + "s"
}

// commas prints n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func commasFloat(v float64) string {
	whole := int64(v)
	frac := int64((v-float64(whole))*10 + 0.5)
	if frac == 10 {
		whole, frac = whole+1, 0
	}
	return commas(whole) + "." + strconv.FormatInt(frac, 10)
}

// SweepPointLine is a finished point in one line, for progress output:
// throughput, p99, failures and how it stands against the SLO.
func SweepPointLine(pt SweepPoint) string {
	mark := "meets the SLO"
	switch {
	case pt.Partial:
		mark = "PARTIAL, left off the curves"
	case pt.Violations > 0:
		mark = strings.ToUpper(Count(pt.Violations, "safety violation"))
	case pt.Failure != "":
		mark = "FAILED, breaks the SLO: " + pt.Failure
	case !pt.MeetsSLO:
		mark = "BREAKS the SLO"
	}
	cpu := ""
	if pt.RedisCPU > 0 || pt.LoadCPU > 0 {
		cpu = fmt.Sprintf(", cpu redis %s lockbench %s", cores(pt.RedisCPU), cores(pt.LoadCPU))
		if pt.CPULimit != LimitNone {
			cpu += " (" + pt.CPULimit + " saturated)"
		}
	}
	return fmt.Sprintf("%s ops/s, acquire p99 %s, %s of %s failed%s: %s",
		CommasFloat(pt.OpsPerSec), pt.Percentile(pt.P99Us), Commas(pt.Errors), Count(pt.Attempts, "operation"), cpu, mark)
}

// failedShare is a point's failed operations and their share: "12 (0.4%)".
func failedShare(p SweepPoint) string {
	n := p.Ops + p.Errors
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%s (%s)", Commas(p.Errors), Percent(float64(p.Errors)/float64(n)))
}

// WriteSweepSummary prints the points and what each curve says.
func WriteSweepSummary(w io.Writer, sw *Sweep) {
	title := "lockbench sweep " + sw.Meta.Profile
	if sw.Partial {
		title += "  [PARTIAL: " + sw.PartialReason + "]"
	}
	if sw.Meta.Workload != "" {
		title += "\nbase      " + sw.Meta.Workload + " (the axis varies it)"
	}
	fmt.Fprintf(w, "%s\n\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "series\tx\tclients×owners\tops/s\tp50\tp99\tfailed\tviolations\tSLO\t")
	for _, p := range sw.Points {
		mark := "meets"
		switch {
		case p.Failure != "":
			mark = "FAILED"
		case !p.MeetsSLO:
			mark = "broken"
		}
		fmt.Fprintf(tw, "%s\t%g\t%d×%d\t%s\t%s\t%s\t%s\t%d\t%s\t\n", p.Series, p.X, p.Clients, p.Owners,
			CommasFloat(p.OpsPerSec), p.Percentile(p.P50Us), p.Percentile(p.P99Us), failedShare(p), p.Violations, mark)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, c := range sw.Capacity {
		if c.Series != "" {
			fmt.Fprintf(w, "%s:\n", c.Series)
		}
		for _, line := range c.Statement(sw.Axis, sw.SLOP99Us) {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	for _, p := range sw.Points {
		if p.Failure != "" {
			fmt.Fprintf(w, "FAILED point %s: %s\n", p.Label(), p.Failure)
		}
	}
	fmt.Fprintln(w)
}

// pass marks a target met or missed in terminal text.
func pass(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// WriteMatrixSummary prints a side-by-side matrix for a terminal: one line
// per cell with its medians, then the targets.
func WriteMatrixSummary(w io.Writer, m *Matrix) {
	fmt.Fprintf(w, "\nmatrix    %s of %v (+%v warmup) per run, %v in all", Count(m.Rounds, "round"), m.Duration, m.Warmup, m.Elapsed.Round(time.Second))
	if m.Partial {
		fmt.Fprint(w, " [PARTIAL]")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "          profile\towners\timpl\tops/s\t× raw\t× rb\t× go-redis\t× ceiling\tacquire p50\tacquire p99\thandoff p50\tcpu redis · lockbench\terrors\tviolations")
	for _, c := range m.Cells {
		x := c.Median
		cpu := fmt.Sprintf("%s · %s", cores(x.RedisCPU), cores(x.LoadCPU))
		if x.CPULimit != LimitNone {
			cpu += " (" + x.CPULimit + ")"
		}
		fmt.Fprintf(tw, "          %s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", c.Profile, c.Owners, c.Impl, CommasFloat(x.OpsPerSec),
			Times(c.VsRaw.Ops), Times(c.VsRedisBenchmark.Ops), Times(c.VsGoRedis), Times(c.VsCeiling),
			UsOrDash(x.AcquireP50), UsOrDash(x.AcquireP99), UsOrDash(x.HandoffP50), cpu, x.Errors, x.Violations)
	}
	tw.Flush()
	for _, b := range m.Baselines {
		x := b.Median
		fmt.Fprintf(w, "          at %d: redis-benchmark %s cycles/s (redis %s) · -P 16 %s (redis %s) · bare go-redis %s (redis %s · %s) · on the autopipeliner %s (redis %s · %s)\n",
			b.Clients, CommasFloat(x.CyclesPerSec()), cores(x.RedisCPU), CommasFloat(x.Ceiling.CyclesPerSec), cores(x.Ceiling.RedisCPU),
			CommasFloat(x.GoRedis.CyclesPerSec), cores(x.GoRedis.RedisCPU), cores(x.GoRedis.LoadCPU),
			CommasFloat(x.GoRedisPipelined.CyclesPerSec), cores(x.GoRedisPipelined.RedisCPU), cores(x.GoRedisPipelined.LoadCPU))
	}
	for _, t := range m.Targets {
		fmt.Fprintf(w, "          %s: %s %s\n", t.Target, t.Value, pass(t.Met))
	}
}

// WriteScaleSummary prints the harness's footprint at scale; saved is
// where its result went.
func WriteScaleSummary(w io.Writer, s Scale, clients, owners, locks int, saved string) {
	r := s.Result
	verdict := "OK"
	if s.Grew() {
		verdict = "GREW"
	}
	fmt.Fprintf(w, "\nscale     %d owners (%d clients × %d), %d locks, rw90 shape, %.0fs measured\n",
		clients*owners, clients, owners, locks, r.Measured)
	fmt.Fprintf(w, "          %.0f ops/s · peak RSS %.1f MiB · Go heap %.1f MiB early, %.1f MiB late · goroutines %d early, %d late, %d max: %s · safety violations %d\n",
		r.Throughput.OpsPerSec, float64(r.Runtime.PeakRSSBytes)/(1<<20), float64(s.HeapEarly)/(1<<20), float64(s.HeapLate)/(1<<20),
		s.GoroutinesEarly, s.GoroutinesLate, r.Runtime.GoroutinesMax, verdict, r.Safety.Violations)
	fmt.Fprintf(w, "          %s\n", saved)
}

// WriteHandoffSummary prints handoff latency against PING; saved is where
// its result went.
func WriteHandoffSummary(w io.Writer, h HandoffFigure, saved string) {
	r := h.Result
	hl := r.Latency[Handoff.String()]
	fmt.Fprintf(w, "\nhandoff   mutex: %s, 1 lock, %.0fs measured, %s\n", Count(r.Fairness.Owners, "owner"), r.Measured, Count(hl.Count, "handoff"))
	fmt.Fprintf(w, "          handoff p50 %.1fµs (p99 %.1fµs) vs ping p50 %.1fµs: %.1f× (target <= %.0f×) %s\n",
		h.HandoffUs, hl.P99, h.PingUs, h.Ratio, HandoffTarget, pass(h.Ratio > 0 && h.Ratio <= HandoffTarget))
	fmt.Fprintf(w, "          %s\n", saved)
}

// WriteChaosSummary prints a chaos report for a terminal: the verdict line, the checks and
// the figures.
func WriteChaosSummary(w io.Writer, rep *ChaosReport) {
	fmt.Fprintf(w, "%-20s %s", rep.Scenario, rep.Verdict)
	if rep.Verdict != rep.Expected && rep.Verdict != Skipped {
		fmt.Fprintf(w, " (expected %s)", rep.Expected)
	}
	fmt.Fprintf(w, "  [%.1fs]\n", rep.Seconds)
	if rep.Reason != "" {
		fmt.Fprintf(w, "  reason: %s\n", rep.Reason)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "  skipped variant %s\n", s)
	}
	for _, c := range rep.Checks {
		mark := "ok "
		if !c.OK {
			mark = "BAD"
		}
		fmt.Fprintf(w, "  %s %s: %s (want %s)\n", mark, c.Name, c.Got, c.Want)
	}
	for _, f := range rep.Figures {
		fmt.Fprintf(w, "      %s: %s\n", f.Name, formatFigure(f))
	}
}

func formatFigure(f Figure) string {
	if f.Value == -1 && f.Unit == "s" {
		return "never"
	}
	v := fmt.Sprintf("%.3f", f.Value)
	if f.Value == float64(int64(f.Value)) {
		v = fmt.Sprintf("%d", int64(f.Value))
	}
	if f.Unit == "" {
		return v
	}
	if f.Unit == "%" || f.Unit == "×" {
		return v + f.Unit
	}
	return v + " " + f.Unit
}
