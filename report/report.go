package report

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
)

// Options shape a report.
type Options struct {
	// Title heads the document; empty picks one from the content.
	Title string
	// Format is HTML or Markdown; empty picks from the file name (HTML
	// unless it ends in .md).
	Format Format
	// Generator names the program and version, shown in the footer line.
	Generator string
	// Now is the generation time (zero: time.Now).
	Now time.Time
}

// Write renders in to path, atomically. Markdown charts go to a
// "<name>-charts" directory beside it.
func Write(path string, in *Input, o Options) error {
	if in == nil || in.Empty() {
		return inputErrorf("report: nothing to report")
	}
	if o.Format == "" {
		o.Format = FormatFor(path, HTML)
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	title := o.Title
	if title == "" {
		title = defaultTitle(in)
	}
	blocks := build(in, title, o)
	var b strings.Builder
	switch o.Format {
	case HTML:
		if err := writeHTML(&b, title, blocks); err != nil {
			return err
		}
	case Markdown:
		stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		if err := writeMarkdown(&b, blocks, filepath.Join(filepath.Dir(path), stem+"-charts"), stem+"-charts"); err != nil {
			return err
		}
	default:
		return inputErrorf("report: format %q: want html or md", o.Format)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	return results.WriteAtomic(path, []byte(b.String()))
}

func defaultTitle(in *Input) string {
	switch {
	case len(in.Scenarios) > 0 && len(in.Runs) == 0 && len(in.Sweeps) == 0:
		return "lockbench chaos report"
	case len(in.Sweeps) > 0 && len(in.Runs) == 0 && len(in.Scenarios) == 0:
		return "lockbench capacity report: " + in.Sweeps[0].Sweep.Meta.Profile
	case len(in.Lineups) > 0 && len(in.Runs) == 0 && len(in.Scenarios) == 0 && len(in.Sweeps) == 0:
		return "Lock implementations side by side"
	case len(in.Runs) == 1 && len(in.Scenarios) == 0 && len(in.Sweeps) == 0:
		return "lockbench report: " + in.Runs[0].Result.Meta.Profile
	}
	return "lockbench report"
}

// build lays out the whole document.
func build(in *Input, title string, o Options) []block {
	bl := []block{heading{level: 1, text: title}}
	gen := "Generated " + o.Now.UTC().Format("2006-01-02 15:04:05 UTC")
	if o.Generator != "" {
		gen += " by " + o.Generator
	}
	bl = append(bl, para{text: gen, class: "note"})
	if n := len(in.Runs) + len(in.Scenarios) + len(in.Sweeps) + len(in.Lineups); n > 1 {
		var items []string
		if len(in.Lineups) > 0 {
			items = append(items, fmt.Sprintf("%d side-by-side matrix(es)", len(in.Lineups)))
		}
		if len(in.Sweeps) > 0 {
			items = append(items, results.Count(len(in.Sweeps), "capacity sweep"))
		}
		if len(in.Scenarios) > 0 {
			items = append(items, results.Count(len(in.Scenarios), "chaos scenario"))
		}
		if len(in.Runs) > 0 {
			items = append(items, results.Count(len(in.Runs), "benchmark run"))
		}
		bl = append(bl, para{text: "Contents: " + strings.Join(items, ", ") + "."})
	}
	for _, m := range in.Lineups {
		bl = append(bl, lineupBlocks(m)...)
	}
	ch := &charts{}
	for _, m := range in.Mitigations {
		bl = append(bl, mitigationBlocks(m, ch)...)
	}
	for _, s := range in.Sweeps {
		bl = append(bl, sweepBlocks(s, ch)...)
	}
	if len(in.Scenarios) > 0 {
		bl = append(bl, suiteBlocks(in.Scenarios)...)
		for _, s := range in.Scenarios {
			bl = append(bl, scenarioBlocks(s, ch)...)
		}
	}
	if len(in.Runs) > 1 {
		bl = append(bl, comparisonBlocks(in.Runs, ch)...)
	}
	for _, r := range in.Runs {
		bl = append(bl, runBlocks(r, 2, ch)...)
	}
	return bl
}

// gateThreshold is the regression bench compare allows by default; the
// comparison table marks runs against the first by the same rule.
const gateThreshold = 10

// comparisonBlocks compare runs side by side, each against the first with
// results.Compare, the rule bench compare gates CI with.
func comparisonBlocks(runs []*Run, ch *charts) []block {
	bl := []block{heading{level: 2, text: "Comparison"},
		para{text: fmt.Sprintf("%s, oldest first; deltas are against the first (%s). Throughput counts successful operations only. The gate is bench compare's: throughput may not drop, nor acquire p99 rise, by more than %d%%, the success ratio may not fall, and the run may not fail in a way the first did not (error rate, stall, dead time, no success, a safety violation, lost updates); a run with no successful operation cannot be compared.", results.Count(len(runs), "run"), runs[0].Name(), gateThreshold)}}
	t := table{right: true, head: []string{"run", "profile", "host", "measured", "ops/s", "Δ ops/s", "success", "acquire p50", "p99", "Δ p99", "p99.9", "failed", "jain", "safety", "gate"}}
	base := runs[0].Result
	var notes []string
	for i, r := range runs {
		res := r.Result
		l := res.Latency[results.AcquireAll]
		dOps, dP99, gate := plain("—"), plain("—"), plain("base")
		if i > 0 {
			cmp := results.Compare(base, res, gateThreshold)
			for _, row := range cmp.Rows {
				switch {
				case row.Metric == "throughput":
					dOps = deltaCell(row)
				case row.Metric == results.AcquireAll && row.Stat == "p99":
					dP99 = deltaCell(row)
				}
			}
			gate = styled("OK", "ok")
			switch {
			case cmp.Refused != "":
				gate = styled("REFUSED", "bad")
				notes = append(notes, r.Name()+": "+cmp.Verdict())
			case !cmp.OK():
				gate = styled("REGRESSED", "bad")
				notes = append(notes, r.Name()+": "+cmp.Verdict())
			}
			for _, n := range cmp.Notes {
				notes = append(notes, r.Name()+": "+n)
			}
		}
		name := r.Name()
		if res.Partial {
			name += " (partial)"
		}
		jain := plain("—")
		if res.Fairness.Measured() {
			jain = plain(fmt.Sprintf("%.4f", res.Fairness.Jain))
		}
		success := plain(results.Percent(res.Throughput.SuccessRatio))
		if slices.ContainsFunc(res.Failures(), func(f results.Failure) bool { return f.Kind.Throughput() }) {
			success = styled(success.text, "bad")
		}
		t.rows = append(t.rows, []cell{plain(name), plain(res.Meta.Profile + " · " + res.Meta.ImplName()), plain(res.Meta.Host), plain(secs(res.Measured)),
			plain(results.CommasFloat(res.Throughput.OpsPerSec)), dOps, success, latCell(l, l.P50), latCell(l, l.P99), dP99, latCell(l, l.P999),
			plain(results.Commas(res.ErrorCount())), jain, safetyCell(res.Safety), gate})
	}
	bl = append(bl, t)
	if len(notes) > 0 {
		bl = append(bl, bullets{items: notes})
	}
	var sp []spectrumLine
	for _, r := range runs {
		if h := results.AcquireHistogram(r.Hists); h != nil {
			sp = append(sp, spectrumLine{r.Name(), h})
		}
	}
	bl = append(bl, ch.spectrum("compare-spectrum", "Acquire latency by run (all modes)", sp)...)
	return bl
}

// latCell is a percentile of l, or a dash when l has no sample: no
// percentile is read from an empty histogram.
func latCell(l results.Latency, v float64) cell {
	if l.Count == 0 {
		return plain("—")
	}
	return plain(us(v))
}

// deltaCell shows a comparison row's delta, red when it regressed past
// the gate, green when it improved.
func deltaCell(r results.Row) cell {
	switch {
	case r.Regressed:
		return styled(r.Delta, "bad")
	case r.Change == results.ChangeWorse:
		return styled(r.Delta, "warn")
	case r.Change == results.ChangeBetter:
		return styled(r.Delta, "ok")
	}
	return plain(r.Delta)
}

// runBlocks are one run's section: metadata, figures, charts, safety.
func runBlocks(r *Run, level int, ch *charts) []block {
	res := r.Result
	h := heading{level: level, text: r.Name()}
	if res.Partial {
		h.badge = &cell{text: "PARTIAL", class: "warn"}
	}
	bl := []block{h}
	if res.Partial {
		bl = append(bl, para{text: "Partial run: " + res.PartialReason + ". What it measured is real but covers less than asked.", class: "warn"})
	}
	for _, f := range res.Failures() {
		bl = append(bl, para{text: "Run FAILED: " + f.Text + ".", class: "bad"})
	}
	m := res.Meta
	meta := table{head: []string{"", ""}, rows: [][]cell{
		{plain("profile"), plain(m.Profile)},
		{plain("workload"), plain(m.Workload)},
		{plain("implementation"), plain(strings.TrimSuffix(m.ImplName()+" · "+m.ImplNote, " · "))},
		{plain("server"), plain(fmt.Sprintf("%s (%s) at %s", m.ServerName(), strings.TrimSuffix(m.RedisBackend+" "+m.RedisTopology, " "), m.RedisAddr))},
		{plain("host"), plain(fmt.Sprintf("%s · %s · GOMAXPROCS %d", m.Host, m.Go, m.GOMAXPROCS))},
		{plain("started"), plain(m.Start.UTC().Format("2006-01-02 15:04:05 UTC"))},
		{plain("measured"), plain(fmt.Sprintf("%s after %s warmup", secs(res.Measured), secs(res.Warmup)))},
		{plain("lockbench"), plain(m.Lockbench)},
		{plain("file"), plain(r.Path)},
	}}
	if share := workerShare(res); share != "" {
		meta.rows = slices.Insert(meta.rows, 2, []cell{plain("worker"), plain(share)})
	}
	if len(m.Args) > 0 {
		meta.rows = append(meta.rows, []cell{plain("args"), plain(strings.Join(m.Args, " "))})
	}
	if len(res.MergedFrom) > 0 {
		meta.rows = append(meta.rows, []cell{plain("merged from"), plain(strings.Join(res.MergedFrom, ", "))})
	}
	for _, n := range res.MergeNotes {
		meta.rows = append(meta.rows, []cell{plain("merge note"), plain(n)})
	}
	for _, n := range res.NoEffect {
		meta.rows = append(meta.rows, []cell{plain("no effect"), styled(n, "warn")})
	}
	bl = append(bl, meta)

	t := res.Throughput
	var acq []string
	for _, mode := range slices.Sorted(maps.Keys(t.Acquisitions)) {
		if n := t.Acquisitions[mode]; n > 0 {
			acq = append(acq, mode+" "+results.Commas(n))
		}
	}
	if t.Nested > 0 {
		acq = append(acq, "nested "+results.Commas(t.Nested))
	}
	line := fmt.Sprintf("Throughput %s ops/s (%s", results.CommasFloat(t.OpsPerSec), results.ThroughputCounts(t))
	if t.TargetRate > 0 {
		line += ", target " + results.CommasFloat(t.TargetRate) + " ops/s"
	}
	line += ")."
	if len(acq) > 0 {
		line += " Acquired: " + strings.Join(acq, ", ") + "."
	}
	bl = append(bl, para{text: line})
	if res.CPU != nil {
		bl = append(bl, para{text: "CPU: " + cpuLine(res.CPU) + "."})
	}
	bl = append(bl, spreadBlocks(res.Spread, res.Guard, false)...)
	if len(res.PerShard) > 0 {
		st := table{right: true, head: []string{"shard", "locks", "ops/s", "acquisitions", "share"}}
		for _, sh := range res.PerShard {
			st.rows = append(st.rows, []cell{plain(sh.Name), plain(results.Commas(int64(sh.Locks))), plain(results.CommasFloat(sh.OpsPerSec)),
				plain(results.Commas(sh.Acquisitions)), plain(fmt.Sprintf("%.1f%%", 100*sh.Share))})
		}
		bl = append(bl, st)
	}
	bl = append(bl, latencyTable(res))
	bl = append(bl, safetyBlocks(res)...)
	bl = append(bl, fairnessBlocks(res)...)
	var errs []string
	for _, k := range slices.Sorted(maps.Keys(res.Errors)) {
		if res.Errors[k] > 0 {
			errs = append(errs, fmt.Sprintf("%s %s", k, results.Commas(res.Errors[k])))
		}
	}
	e := "Errors: none"
	if len(errs) > 0 {
		e = "Errors: " + strings.Join(errs, ", ")
	}
	e += fmt.Sprintf(". Lost holds: %s. Cut by the run's end: %s.", results.Commas(t.Lost), results.Commas(t.Cut))
	bl = append(bl, para{text: e})
	if len(res.ErrorMessages) > 0 {
		mt := table{head: []string{"class", "count", "first at", "message"}}
		for _, m := range res.ErrorMessages {
			mt.rows = append(mt.rows, []cell{plain(m.Class), plain(results.Commas(m.Count)), plain(fmt.Sprintf("%.2fs", m.First)), plain(m.Message)})
		}
		bl = append(bl, mt)
		if res.ErrorMessagesDropped > 0 {
			bl = append(bl, para{class: "note", text: fmt.Sprintf("%s more failures had other messages.", results.Commas(res.ErrorMessagesDropped))})
		}
	}
	if t.Unreleased > 0 {
		bl = append(bl, para{class: "warn", text: fmt.Sprintf("Unreleased: %s whose unlock failed or got no answer; Redis keeps them until their lease ends.", results.Count(t.Unreleased, "hold"))})
	}
	if len(res.ClientLog) > 0 {
		items := slices.Clone(res.ClientLog)
		if res.ClientLogDropped > 0 {
			items = append(items, fmt.Sprintf("… %s more lines", results.Commas(res.ClientLogDropped)))
		}
		bl = append(bl, para{class: "note", text: "What the Redis client library logged during the run:"}, bullets{items: items})
	}
	if len(res.Events) > 0 {
		bl = append(bl, eventsTable(res.Events))
	}
	bl = append(bl, ch.runCharts(r)...)
	return bl
}

func latencyTable(res *results.Result) table {
	t := table{right: true, head: []string{"latency", "count", "p50", "p90", "p99", "p99.9", "max"}}
	keys := slices.SortedFunc(maps.Keys(res.Latency), func(a, b string) int { return cmp.Compare(metricOrder(a), metricOrder(b)) })
	for _, k := range keys {
		l := res.Latency[k]
		if l.Count == 0 {
			continue
		}
		name := strings.ReplaceAll(k, "_", " ")
		if k == results.AcquireAll {
			name = "acquire (all modes)"
		}
		t.rows = append(t.rows, []cell{plain(name), plain(results.Commas(l.Count)), plain(us(l.P50)), plain(us(l.P90)), plain(us(l.P99)), plain(us(l.P999)), plain(us(l.Max))})
	}
	return t
}

// metricOrder lists the aggregate first, then the metrics in the order
// the summary table uses.
func metricOrder(k string) int {
	order := []string{results.AcquireAll, "acquire_exclusive", "acquire_read", "acquire_write", "acquire_nested", "release", "hold", "wait", "handoff", "ping"}
	if i := slices.Index(order, k); i >= 0 {
		return i
	}
	return len(order)
}

func safetyBlocks(res *results.Result) []block {
	s := res.Safety
	var bl []block
	class := map[string]string{results.SafetyViolated: "bad", results.SafetyNoData: "warn", results.SafetyIncomplete: "warn"}[s.Verdict()]
	if class == "" {
		class = "ok"
	}
	bl = append(bl, para{class: class, text: "Safety " + safetyText(s) + "."})
	if n := workerSafetyNote(res); n != "" {
		bl = append(bl, para{class: "note", text: "Safety covers " + n + "."})
	}
	if m := s.Missing(); m != "" {
		bl = append(bl, para{class: "note", text: "Not checked: " + m + "."})
	}
	if len(s.Examples) > 0 {
		t := table{head: []string{"lock", "first holder", "second holder", "overlap from", "overlap"}}
		if len(s.Examples) > 10 {
			bl = append(bl, para{class: "note", text: fmt.Sprintf("The first 10 of the %d overlaps listed in the result file:", len(s.Examples))})
		}
		for i, v := range s.Examples {
			if i == 10 {
				break
			}
			t.rows = append(t.rows, []cell{plain(v.Lock), plain(holderText(v.First)), plain(holderText(v.Second)),
				plain(fmt.Sprintf("%.3fs", v.OverlapStart)), styled(us(v.OverlapUs), "bad")})
		}
		bl = append(bl, t)
	}
	if text := exclusionText(res); text != "" {
		bl = append(bl, para{class: "note", text: "Exclusion: " + text + "."})
	}
	if ov := storeOverlaps(res); len(ov) > 0 {
		t := table{head: []string{"lock", "inside", "entered"}}
		for _, o := range ov {
			in, entered := overlapHolders(o)
			t.rows = append(t.rows, []cell{plain(o.Name), plain(in), styled(entered, "bad")})
		}
		bl = append(bl, t)
	}
	return bl
}

func holderText(h results.Holder) string {
	s := fmt.Sprintf("%s (%s) %.3f–%.3fs", h.Owner, h.Mode, h.Acquired, h.Released)
	switch {
	case h.LostIgnored:
		s += ", told lost, held on"
	case h.Lost:
		s += ", lost"
	}
	return s
}

func fairnessBlocks(res *results.Result) []block {
	text, warn := fairnessText(res.Fairness)
	if text == "" {
		return nil
	}
	class := ""
	if warn {
		class = "warn"
	}
	bl := []block{para{text: "Fairness " + text + ".", class: class}}
	if t := fifoText(res.Fairness); t != "" {
		bl = append(bl, para{text: "FIFO: " + t + "."})
	}
	return bl
}

func eventsTable(evs []results.Event) table {
	t := table{head: []string{"fault", "target", "from", "to", "detail"}}
	for _, e := range evs {
		detail := e.Detail
		cl := ""
		if e.Err != "" {
			detail += " — error: " + e.Err
			cl = "bad"
		}
		t.rows = append(t.rows, []cell{plain(e.Kind), plain(e.Target), plain(fmt.Sprintf("%.2fs", e.Start)), plain(fmt.Sprintf("%.2fs", e.End)), styled(detail, cl)})
	}
	return t
}

func safetyCell(s results.Safety) cell {
	switch {
	case s.Violations > 0:
		return styled(results.Commas(s.Violations)+" violations", "bad")
	case s.Sections == 0:
		return styled("no data", "warn")
	case s.Incomplete != "":
		return styled("incomplete", "warn")
	}
	return styled("OK", "ok")
}

func us(v float64) string {
	if v == 0 {
		return "—"
	}
	return results.FormatUs(v)
}

func secs(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(100 * time.Millisecond).String()
}
