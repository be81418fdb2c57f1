package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Direction says which way a metric improves.
type Direction string

// The directions.
const (
	HigherIsBetter Direction = "higher" // throughput, Jain's index
	LowerIsBetter  Direction = "lower"  // latencies, errors, violations
)

// How a row's new value moved, given its Direction: Row.Change.
const (
	ChangeBetter = "better"
	ChangeWorse  = "worse"
	ChangeSame   = "same"
)

// gatedLatencies are the latency keys whose p99 decides a comparison: the
// acquisitions a user waits on. Hold and think come from the profile, and
// the rest are shown for diagnosis.
var gatedLatencies = []string{AcquireAll, "acquire_exclusive", "acquire_read", "acquire_write"}

// comparedStats are the latency percentiles a comparison shows.
var comparedStats = []struct {
	name string
	get  func(Latency) float64
}{
	{"p50", func(l Latency) float64 { return l.P50 }},
	{"p99", func(l Latency) float64 { return l.P99 }},
	{"p99.9", func(l Latency) float64 { return l.P999 }},
}

// Row is one metric of a Comparison. It is plain data so that a text,
// HTML or Markdown report renders the same numbers.
type Row struct {
	Name   string `json:"name"`           // in words: "throughput", "acquire read p99", "errors"
	Metric string `json:"metric"`         // "throughput", a Latency key, "errors", "violations" or "jain"
	Stat   string `json:"stat,omitempty"` // the percentile of a latency row: p50, p99, p99.9
	// Base and New are the two runs' values in Unit.
	Base float64 `json:"base"`
	New  float64 `json:"new"`
	Unit string  `json:"unit"` // "ops/s", "µs", or "" for a count or an index
	// DeltaPct is (New − Base) / Base × 100, nil when no finite percentage
	// exists (Base 0, New not): JSON cannot hold Inf or NaN.
	DeltaPct *float64 `json:"delta_pct"`
	// Delta is DeltaPct as shown: "+12.3%", "-4.0%", or "new" when Base
	// was 0 and New is not.
	Delta  string    `json:"delta"`
	Better Direction `json:"better"`
	Change string    `json:"change"` // ChangeBetter, ChangeWorse or ChangeSame
	// Gated rows decide the verdict; Regressed ones moved the wrong way by
	// more than the allowed percentage.
	Gated     bool `json:"gated"`
	Regressed bool `json:"regressed"`
}

// FormatValue prints v in the row's unit: "4,100.0 ops/s", "1.20ms",
// "3" or "0.9977".
func (r Row) FormatValue(v float64) string {
	switch r.Unit {
	case "ops/s":
		return commasFloat(v) + " ops/s"
	case "µs":
		return dur(v)
	}
	if r.Metric == "jain" { // an index in (0, 1]: "1" would hide its precision
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	if r.Metric == "success_ratio" {
		return percent(v)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return commas(int64(v))
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// RunInfo identifies one side of a comparison.
type RunInfo struct {
	File     string    `json:"file,omitempty"` // set by a caller that read the run from disk
	Profile  string    `json:"profile"`
	Workload string    `json:"workload,omitempty"`
	Impl     string    `json:"impl"`
	Host     string    `json:"host,omitempty"`
	Start    time.Time `json:"start"`
	Partial  bool      `json:"partial,omitempty"`
}

func runInfo(r *Result) RunInfo {
	return RunInfo{Profile: r.Meta.Profile, Workload: r.Meta.Workload, Impl: r.Meta.ImplName(), Host: r.Meta.Host, Start: r.Meta.Start, Partial: r.Partial}
}

// SuccessRatioSlack is how far NEW's success ratio may fall below BASE's
// before the comparison calls it a regression: 0.1 percentage point, so a
// stray connection reset in half a million operations does not fail CI,
// while a run losing one operation in a hundred does.
const SuccessRatioSlack = 0.001

// Comparison is what changed from a base run to a new one.
type Comparison struct {
	// MaxRegressionPct is how far a gated metric may move the wrong way.
	MaxRegressionPct float64 `json:"max_regression_pct"`
	Base             RunInfo `json:"base"`
	New              RunInfo `json:"new"`
	Rows             []Row   `json:"rows"`
	// Regressions describes each gated row that regressed, in words.
	Regressions []string `json:"regressions"`
	// NewFailures are the kinds of failure NEW has and BASE had not: each
	// one is a regression (said once in Regressions).
	NewFailures []FailureKind `json:"new_failures,omitempty"`
	// Notes flag what makes the runs unlike (profile, Redis, partial
	// runs): the comparison stands, but read it knowing that.
	Notes []string `json:"notes"`
	// Refused says why the runs cannot be compared at all (a side with no
	// successful operation has no throughput or latency to compare); the
	// comparison is then not OK.
	Refused string `json:"refused,omitempty"`
}

// OK reports that the runs could be compared and no gated metric regressed.
func (c Comparison) OK() bool { return len(c.Regressions) == 0 && c.Refused == "" }

// Verdict is the comparison's one-line conclusion.
func (c Comparison) Verdict() string {
	if c.Refused != "" {
		return "REFUSED: " + c.Refused
	}
	if c.OK() {
		return "OK: no gated metric regressed past " + pct(c.MaxRegressionPct)
	}
	return "REGRESSED: " + strings.Join(c.Regressions, "; ")
}

// Compare reports per-metric deltas from base to cur: throughput
// (successful operations); the success ratio; p50, p99 and p99.9 of every
// latency both runs have; errors; safety violations; and Jain's fairness
// index. Gated, and so deciding OK, are a throughput drop or an acquire
// p99 rise (all modes and each mode) of more than maxRegressionPct percent
// (negative counts as 0), a success ratio more than SuccessRatioSlack
// below BASE's, and NEW failing (Result.Failures: its own thresholds, a
// safety violation, a lost update) in a way BASE did not. A side
// with no successful operation is refused (Refused). Unlike runs are
// compared all the same, with Notes saying how they differ.
func Compare(base, cur *Result, maxRegressionPct float64) Comparison {
	if !(maxRegressionPct > 0) { // also NaN
		maxRegressionPct = 0
	}
	c := Comparison{MaxRegressionPct: maxRegressionPct, Base: runInfo(base), New: runInfo(cur), Regressions: []string{}, Notes: []string{}}
	limit := pct(maxRegressionPct)
	for _, side := range []struct {
		name string
		r    *Result
	}{{"BASE", base}, {"NEW", cur}} {
		if t := side.r.Throughput; t.Ops == 0 {
			c.Refused = fmt.Sprintf("%s has no successful operation (%s of %s failed: %s): its throughput and latencies measure nothing; fix the run before comparing",
				side.name, commas(t.Failed), Count(t.Attempts, "attempt"), side.r.errorBreakdown())
			break
		}
	}

	tp := fill(Row{Name: "throughput", Metric: "throughput", Base: base.Throughput.OpsPerSec, New: cur.Throughput.OpsPerSec, Unit: "ops/s", Better: HigherIsBetter, Gated: true})
	if tp.DeltaPct != nil && beyond(-*tp.DeltaPct, maxRegressionPct) {
		tp.Regressed = true
		c.Regressions = append(c.Regressions, fmt.Sprintf("throughput dropped %.1f%% (%s → %s ops/s), over the %s allowed",
			-*tp.DeltaPct, commas(int64(math.Round(tp.Base))), commas(int64(math.Round(tp.New))), limit))
	}
	c.Rows = append(c.Rows, tp)

	sr := fill(Row{Name: "success ratio", Metric: "success_ratio", Base: base.Throughput.SuccessRatio, New: cur.Throughput.SuccessRatio, Better: HigherIsBetter, Gated: true})
	if sr.New < sr.Base-SuccessRatioSlack {
		sr.Regressed = true
		c.Regressions = append(c.Regressions, fmt.Sprintf("success ratio fell from %s to %s (%s of %s failed), more than %s",
			percent(sr.Base), percent(sr.New), commas(cur.Throughput.Failed), Count(cur.Throughput.Attempts, "attempt"), percent(SuccessRatioSlack)))
	}
	c.Rows = append(c.Rows, sr)
	if nf := newFailures(base, cur); len(nf) > 0 {
		c.Regressions = append(c.Regressions, "NEW failed: "+joinFailures(nf))
		for _, f := range nf {
			c.NewFailures = append(c.NewFailures, f.Kind)
		}
	}

	for _, key := range latencyKeys(base, cur, &c) {
		b, n := base.Latency[key], cur.Latency[key]
		for _, st := range comparedStats {
			r := fill(Row{
				Name: strings.ReplaceAll(key, "_", " ") + " " + st.name, Metric: key, Stat: st.name,
				Base: st.get(b), New: st.get(n), Unit: "µs", Better: LowerIsBetter,
				Gated: st.name == "p99" && slices.Contains(gatedLatencies, key),
			})
			switch {
			case !r.Gated:
			case r.DeltaPct == nil && r.New > 0: // from 0: an unbounded rise
				r.Regressed = true
				c.Regressions = append(c.Regressions, fmt.Sprintf("%s rose from 0 to %s", r.Name, dur(r.New)))
			case r.DeltaPct != nil && beyond(*r.DeltaPct, maxRegressionPct):
				r.Regressed = true
				c.Regressions = append(c.Regressions, fmt.Sprintf("%s rose %.1f%% (%s → %s), over the %s allowed",
					r.Name, *r.DeltaPct, dur(r.Base), dur(r.New), limit))
			}
			c.Rows = append(c.Rows, r)
		}
	}

	c.Rows = append(c.Rows, fill(Row{Name: "errors", Metric: "errors", Base: float64(sumErrors(base)), New: float64(sumErrors(cur)), Better: LowerIsBetter}))
	v := fill(Row{Name: "safety violations", Metric: "violations", Base: float64(base.Safety.Violations), New: float64(cur.Safety.Violations), Better: LowerIsBetter, Gated: true})
	// A violation fails NEW (Failures), whatever the threshold: the
	// regression above says so, the row only shows where.
	v.Regressed = v.Base == 0 && v.New > 0
	c.Rows = append(c.Rows, v)
	if base.Fairness.Measured() && cur.Fairness.Measured() {
		c.Rows = append(c.Rows, fill(Row{Name: "fairness jain", Metric: "jain", Base: base.Fairness.Jain, New: cur.Fairness.Jain, Better: HigherIsBetter}))
	}

	c.Notes = append(c.Notes, unlike(base, cur)...)
	return c
}

// newFailures are cur's failures of a kind base does not have: a run
// that failed the same way before has not regressed by failing again,
// but a new way of failing (a violation where BASE only stalled) is a
// regression.
func newFailures(base, cur *Result) []Failure {
	had := map[FailureKind]bool{}
	for _, f := range base.Failures() {
		had[f.Kind] = true
	}
	var out []Failure
	for _, f := range cur.Failures() {
		if !had[f.Kind] {
			out = append(out, f)
		}
	}
	return out
}

// latencyKeys lists the latency keys both runs have, AcquireAll first and
// then in metric order, noting those only one run has.
func latencyKeys(base, cur *Result, c *Comparison) []string {
	var all []string
	for k := range base.Latency {
		all = append(all, k)
	}
	for k := range cur.Latency {
		if _, ok := base.Latency[k]; !ok {
			all = append(all, k)
		}
	}
	slices.SortFunc(all, byMetric)
	var both []string
	for _, k := range all {
		_, inBase := base.Latency[k]
		_, inCur := cur.Latency[k]
		switch {
		case inBase && inCur:
			both = append(both, k)
		case inBase:
			c.Notes = append(c.Notes, fmt.Sprintf("%s latency only in BASE: not compared", strings.ReplaceAll(k, "_", " ")))
		default:
			c.Notes = append(c.Notes, fmt.Sprintf("%s latency only in NEW: not compared", strings.ReplaceAll(k, "_", " ")))
		}
	}
	return both
}

// byMetric orders latency keys as a summary lists them: AcquireAll, then
// the metrics in order, then any unknown key by name.
func byMetric(a, b string) int {
	rank := func(k string) int {
		if k == AcquireAll {
			return -1
		}
		if i := slices.Index(metricNames[:], k); i >= 0 {
			return i
		}
		return len(metricNames)
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// unlike notes what makes the two runs measure different things.
func unlike(base, cur *Result) []string {
	var notes []string
	bm, nm := base.Meta, cur.Meta
	switch {
	case bm.Profile != nm.Profile:
		notes = append(notes, fmt.Sprintf("profiles differ: BASE ran %q, NEW ran %q; the runs measure different workloads", bm.Profile, nm.Profile))
	case bm.Workload != nm.Workload:
		notes = append(notes, fmt.Sprintf("workloads differ: BASE %q, NEW %q", bm.Workload, nm.Workload))
	}
	if bi, ni := bm.ImplName(), nm.ImplName(); bi != ni {
		notes = append(notes, fmt.Sprintf("implementations differ: BASE %s, NEW %s; the deltas compare the libraries", bi, ni))
	}
	switch bs, ns := bm.ServerName(), nm.ServerName(); {
	case (bm.Server == "") != (nm.Server == "") && bm.RedisVersion == nm.RedisVersion:
		notes = append(notes, fmt.Sprintf("only one run records its server: BASE %s, NEW %s; they may have run on different servers", orNone(bs), orNone(ns)))
	case bs != ns:
		notes = append(notes, fmt.Sprintf("servers differ: BASE ran on %s, NEW on %s; the deltas compare the servers too", orNone(bs), orNone(ns)))
	}
	if bm.RedisBackend != nm.RedisBackend {
		notes = append(notes, fmt.Sprintf("Redis backends differ: BASE %s, NEW %s", orNone(bm.RedisBackend), orNone(nm.RedisBackend)))
	}
	if bt, nt := orSingle(bm.RedisTopology), orSingle(nm.RedisTopology); bt != nt {
		notes = append(notes, fmt.Sprintf("Redis topologies differ: BASE %s, NEW %s", bt, nt))
	}
	for _, n := range base.NoEffect {
		if !slices.Contains(cur.NoEffect, n) {
			notes = append(notes, fmt.Sprintf("a setting differs in effect: in BASE, %s; in NEW it took effect", n))
		}
	}
	for _, n := range cur.NoEffect {
		if !slices.Contains(base.NoEffect, n) {
			notes = append(notes, fmt.Sprintf("a setting differs in effect: in NEW, %s; in BASE it took effect", n))
		}
	}
	if len(base.MergedFrom) != len(cur.MergedFrom) {
		notes = append(notes, fmt.Sprintf("BASE is merged from %s, NEW from %d: merged throughput adds machines", Count(max(1, len(base.MergedFrom)), "run"), max(1, len(cur.MergedFrom))))
	}
	for _, s := range []struct {
		side string
		r    *Result
	}{{"BASE", base}, {"NEW", cur}} {
		if s.r.Partial {
			notes = append(notes, fmt.Sprintf("%s is partial (%s): it measured less than it was asked to", s.side, orNone(s.r.PartialReason)))
		}
	}
	for _, s := range []struct {
		side string
		r    *Result
	}{{"BASE", base}, {"NEW", cur}} {
		if s.r.FromV1() {
			notes = append(notes, fmt.Sprintf("%s is a v1 result file: its throughput is recomputed as its operations less its errors", s.side))
		}
		if f := s.r.Fairness; f.Measured() && f.Caveat != "" {
			notes = append(notes, fmt.Sprintf("%s's fairness %s", s.side, f.Caveat))
		}
	}
	if base.Safety.Violations > 0 {
		notes = append(notes, fmt.Sprintf("BASE had %s safety violations: the safety gate only catches violations appearing where there were none", commas(base.Safety.Violations)))
	}
	return notes
}

// orSingle is a recorded topology, single where a result from before
// topologies were recorded left it out.
func orSingle(t string) string {
	if t == "" {
		return "single"
	}
	return t
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// fill computes a row's delta and change, guarding the division.
func fill(r Row) Row {
	switch {
	case math.IsNaN(r.Base) || math.IsInf(r.Base, 0) || math.IsNaN(r.New) || math.IsInf(r.New, 0):
		r.Base, r.New = finite(r.Base), finite(r.New)
		r.Delta, r.Change = "n/a", ChangeSame
		return r
	case r.Base == 0 && r.New == 0:
		d := 0.0
		r.DeltaPct = &d
	case r.Base == 0:
		r.Delta = "new"
	default:
		d := (r.New - r.Base) / math.Abs(r.Base) * 100
		r.DeltaPct = &d
	}
	if r.DeltaPct != nil {
		r.Delta = fmt.Sprintf("%+.1f%%", *r.DeltaPct)
	}
	switch {
	case r.New == r.Base:
		r.Change = ChangeSame
	case (r.New > r.Base) == (r.Better == HigherIsBetter):
		r.Change = ChangeBetter
	default:
		r.Change = ChangeWorse
	}
	return r
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// beyond reports whether a move of d percent the wrong way exceeds the
// limit, allowing for float error so that exactly the limit passes.
func beyond(d, limit float64) bool { return d > limit+1e-9*math.Max(1, limit) }

// pct prints a percentage as given: 10%, 0.5%.
func pct(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" }

func sumErrors(r *Result) int64 { return r.ErrorCount() }
