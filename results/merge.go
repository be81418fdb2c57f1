package results

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// MergeIncomplete is the merged safety check's caveat: each machine
// compared only its own critical sections, so an overlap between owners
// on different machines went unchecked.
const MergeIncomplete = "overlaps between owners on different machines were not checked: each machine checked only its own critical sections, and their clocks differ"

// mergeExamples bounds the violations a merged result lists, as a run's.
const mergeExamples = 20

// Merge combines results of one profile run at the same time on several
// machines against one Redis: the way to drive more load than one machine
// can. Results of the workers of one spread run are merged as
// MergeWorkers does, the workers not given named missing. hists[i] is runs[i]'s per-metric histograms (see LoadHistograms).
// It refuses fewer than two runs, and runs whose Meta.Profile,
// Meta.Workload or implementation differ.
//
// Counts and rates add up; latencies are re-read from the added
// histograms; fairness is recomputed over every machine's owners, each
// named "<host>/<owner>" ("<host>#<i>/<owner>" when two runs share a
// host); safety adds up but is marked incomplete (MergeIncomplete); the
// series adds the points of the same second since each run's start;
// figures of one process (runtime, GOMAXPROCS aside, which adds up) take
// the largest machine's, and the waits' errors the worst machine's per
// kind, their spin adding up. Merge sets MergedFrom to each source's file name
// as bench run writes it; a caller that knows the paths replaces it. The
// merged result carries an interval log with one interval per metric, so
// it can be reported, and merged again.
func Merge(runs []*Result, hists []map[string]*hdr.Histogram) (*Result, error) {
	if err := CheckMerge(runs); err != nil {
		return nil, err
	}
	if missing, ok := workerSet(runs); ok {
		return MergeWorkers(runs, hists, missing)
	}
	return merge(runs, hists, ownerPrefixes(runs), nil)
}

// merge is Merge on runs already checked, each run's owners named with
// its prefix; missing are the workers of a spread run that never reported.
func merge(runs []*Result, hists []map[string]*hdr.Histogram, prefix []string, missing []int) (*Result, error) {
	if len(hists) != len(runs) {
		return nil, fmt.Errorf("results: merge: %d runs but %d histogram sets", len(runs), len(hists))
	}
	label := mergeLabel(runs)
	first := runs[0]

	m := &Result{
		Schema:  Schema,
		Meta:    first.Meta,
		Profile: first.Profile,
		Errors:  map[string]int64{},
		Latency: map[string]Latency{},
		Throughput: Throughput{
			Acquisitions: map[string]int64{},
		},
	}
	m.Meta.Args = nil
	m.Meta.GOMAXPROCS = 0
	var hosts, partial, incomplete, unwitnessed []string
	for i, r := range runs {
		hosts = append(hosts, r.Meta.Host)
		if r.Meta.Start.Before(m.Meta.Start) {
			m.Meta.Start = r.Meta.Start
		}
		m.Meta.GOMAXPROCS += r.Meta.GOMAXPROCS
		m.MergedFrom = append(m.MergedFrom, r.Stem()+".json")
		m.Measured = math.Max(m.Measured, r.Measured)
		m.Warmup = math.Max(m.Warmup, r.Warmup)
		if r.Partial {
			partial = append(partial, fmt.Sprintf("%s: %s", label(i), orNone(r.PartialReason)))
		}

		t := r.Throughput
		m.Throughput.Attempts += t.Attempts
		m.Throughput.Ops += t.Ops
		m.Throughput.Failed += t.Failed
		m.Throughput.Unreleased += t.Unreleased
		m.Throughput.OpsPerSec += t.OpsPerSec
		m.Throughput.TargetRate += t.TargetRate
		m.Throughput.Nested += t.Nested
		m.Throughput.Lost += t.Lost
		m.Throughput.Cut += t.Cut
		for mode, n := range t.Acquisitions {
			m.Throughput.Acquisitions[mode] += n
		}
		for class, n := range r.Errors {
			m.Errors[class] += n
		}
		m.Clamped += r.Clamped
		m.ErrorMessagesDropped += r.ErrorMessagesDropped
		for _, em := range r.ErrorMessages {
			j := slices.IndexFunc(m.ErrorMessages, func(a ErrorMessage) bool { return a.Class == em.Class && a.Message == em.Message })
			if j < 0 {
				m.ErrorMessages = append(m.ErrorMessages, em)
				continue
			}
			m.ErrorMessages[j].Count += em.Count
			m.ErrorMessages[j].First = min(m.ErrorMessages[j].First, em.First)
		}
		// The merged run is held to the strictest threshold among them.
		if lim := r.ErrorRateLimit(); m.MaxErrorRate == nil || lim < *m.MaxErrorRate {
			m.MaxErrorRate = &lim
		}
		if r.Stall != nil && (m.Stall == nil || r.Stall.NoReplyS > m.Stall.NoReplyS) {
			st := *r.Stall
			m.Stall = &st
		}

		s := r.Safety
		m.Safety.Sections += s.Sections
		m.Safety.Violations += s.Violations
		m.Safety.MaxOverlapUs = math.Max(m.Safety.MaxOverlapUs, s.MaxOverlapUs)
		m.Safety.UnsafeUs += s.UnsafeUs
		for _, v := range s.Examples {
			v.First.Owner = prefix[i] + v.First.Owner
			v.Second.Owner = prefix[i] + v.Second.Owner
			m.Safety.Examples = append(m.Safety.Examples, v)
		}
		if s.Incomplete != "" {
			incomplete = append(incomplete, fmt.Sprintf("%s: %s", label(i), s.Incomplete))
		}
		if s.Unwitnessed != "" {
			unwitnessed = append(unwitnessed, fmt.Sprintf("%s: %s", label(i), s.Unwitnessed))
		}

		rt := r.Runtime
		m.Runtime.PeakRSSBytes = max(m.Runtime.PeakRSSBytes, rt.PeakRSSBytes)
		m.Runtime.GoroutinesStart = max(m.Runtime.GoroutinesStart, rt.GoroutinesStart)
		m.Runtime.GoroutinesMax = max(m.Runtime.GoroutinesMax, rt.GoroutinesMax)
		m.Runtime.GoroutinesEnd = max(m.Runtime.GoroutinesEnd, rt.GoroutinesEnd)
		m.Runtime.Shards = max(m.Runtime.Shards, rt.Shards)
		m.Waits = m.Waits.worst(r.Waits)
		m.Events = append(m.Events, r.Events...)
	}
	m.Meta.Host = strings.Join(hosts, ",")
	m.Throughput.OpsPerSec = math.Round(m.Throughput.OpsPerSec*10) / 10
	if t := &m.Throughput; t.Attempts > 0 {
		t.SuccessRatio = math.Round(float64(t.Ops)/float64(t.Attempts)*1e6) / 1e6
	}
	slices.SortStableFunc(m.ErrorMessages, func(a, b ErrorMessage) int { return cmp.Compare(a.First, b.First) })
	if len(m.ErrorMessages) > maxMessages {
		for _, em := range m.ErrorMessages[maxMessages:] {
			m.ErrorMessagesDropped += em.Count
		}
		m.ErrorMessages = m.ErrorMessages[:maxMessages]
	}
	if len(partial) > 0 {
		m.Partial = true
		m.PartialReason = "merged from partial runs: " + strings.Join(partial, "; ")
	}
	sort.SliceStable(m.Safety.Examples, func(i, j int) bool {
		return m.Safety.Examples[i].OverlapStart < m.Safety.Examples[j].OverlapStart
	})
	m.Safety.Examples = m.Safety.Examples[:min(len(m.Safety.Examples), mergeExamples)]
	if len(m.Safety.Examples) == 0 {
		m.Safety.Examples = nil
	}
	m.Safety.UnsafeUs = math.Round(m.Safety.UnsafeUs*10) / 10
	sort.SliceStable(m.Events, func(i, j int) bool { return m.Events[i].Start < m.Events[j].Start })

	for _, r := range runs {
		for _, n := range r.NoEffect {
			if !slices.Contains(m.NoEffect, n) {
				m.NoEffect = append(m.NoEffect, n)
			}
		}
	}
	m.Guard = mergeGuard(runs, &m.MergeNotes)
	judgeAcross(m, incomplete, unwitnessed, missing)
	m.Fairness = mergeFairness(runs, prefix, &m.MergeNotes, label)
	m.Series = mergeSeries(runs)
	m.MergeNotes = append(m.MergeNotes, metaDifferences(runs, label)...)
	if note := overlapNote(runs, label); note != "" {
		m.MergeNotes = append(m.MergeNotes, note)
	}

	merged, err := mergeHistograms(runs, hists, label, &m.MergeNotes)
	if err != nil {
		return nil, err
	}
	for tag, h := range merged {
		m.Latency[tag] = Summarize(h)
	}
	if acq := mergeAcquireTags(merged); acq != nil {
		m.Latency[AcquireAll] = Summarize(acq)
	}
	if m.log, err = mergedLog(runs, m.Meta.Start, merged); err != nil {
		return nil, err
	}
	return m, nil
}

// CheckMerge refuses the runs Merge refuses for what their result files
// say: fewer than two, runs whose Meta.Profile, Meta.Workload or
// implementation differ, and a run given twice. It needs no histogram, so
// a caller can refuse incompatible runs before reading their interval
// logs, which may be large.
func CheckMerge(runs []*Result) error {
	if len(runs) < 2 {
		return fmt.Errorf("results: merge needs at least 2 runs, got %d", len(runs))
	}
	for i, r := range runs {
		if r == nil {
			return fmt.Errorf("results: merge: run %d is nil", i)
		}
	}
	if err := checkSame(runs); err != nil {
		return err
	}
	return refuseDuplicates(runs, mergeLabel(runs))
}

// checkSame refuses runs whose profile, workload or implementation
// differ: they did not run one load.
func checkSame(runs []*Result) error {
	label := mergeLabel(runs)
	first := runs[0]
	for i, r := range runs[1:] {
		for _, f := range []struct{ field, a, b string }{
			{"meta.profile", first.Meta.Profile, r.Meta.Profile},
			{"meta.workload", first.Meta.Workload, r.Meta.Workload},
			{"meta.impl", first.Meta.ImplName(), r.Meta.ImplName()},
		} {
			if f.a != f.b {
				return fmt.Errorf("results: merge: %s differs: %s has %q, %s has %q; merge only runs of one profile with the same settings",
					f.field, label(0), f.a, label(i+1), f.b)
			}
		}
	}
	return nil
}

// mergeLabel names a merge's runs in its messages.
func mergeLabel(runs []*Result) func(int) string {
	return func(i int) string {
		if w := runs[i].Worker; w != nil {
			return fmt.Sprintf("worker %d (host %s)", w.Index, orNone(runs[i].Meta.Host))
		}
		return fmt.Sprintf("run %d (host %s)", i, orNone(runs[i].Meta.Host))
	}
}

// refuseDuplicates refuses a run given twice (as a file and again in a
// directory, say): same host, same start and the same owners would count
// its operations twice.
func refuseDuplicates(runs []*Result, label func(int) string) error {
	for i := range runs {
		for j := range i {
			a, b := runs[j], runs[i]
			if !SameRun(a, b) {
				continue
			}
			if a.Spread != nil {
				return fmt.Errorf("results: merge: %s and %s are merges of the same spread run %s: give it once", label(j), label(i), a.Spread.RunID)
			}
			return fmt.Errorf("results: merge: %s and %s are the same run (host %s, started %s, the same %s): give each machine's result once",
				label(j), label(i), orNone(a.Meta.Host), a.Meta.Start.UTC().Format(time.RFC3339Nano), Count(len(a.Fairness.PerOwner), "owner"))
		}
	}
	return nil
}

// SameRun reports whether a and b are results of one run: merges of one
// spread run's workers (its run id; collected twice, say), or one run's
// file given twice (the same host, start and owners).
func SameRun(a, b *Result) bool {
	if a.Spread != nil || b.Spread != nil {
		return a.Spread != nil && b.Spread != nil && a.Spread.RunID == b.Spread.RunID
	}
	return a.Meta.Host == b.Meta.Host && a.Meta.Start.Equal(b.Meta.Start) && sameOwners(a.Fairness.PerOwner, b.Fairness.PerOwner)
}

func sameOwners(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// overlapNote says when the runs' measured windows share no moment: their
// throughputs then add up as if the machines had loaded Redis together,
// which they did not.
func overlapNote(runs []*Result, label func(int) string) string {
	if from, to, _, _ := measuredSpans(runs); from.Before(to) {
		return ""
	}
	var spans []string
	for i, r := range runs {
		f, t := measuredWindow(r)
		spans = append(spans, fmt.Sprintf("%s measured %s–%s", label(i), f.UTC().Format("15:04:05"), t.UTC().Format("15:04:05")))
	}
	return "the runs did not overlap in time (" + strings.Join(spans, ", ") + "): the merged throughput adds loads that never met"
}

// measuredSpans is where the runs' measured windows all overlap (from the
// latest start to the earliest end: empty when to is not after from) and
// the span that covers them all.
func measuredSpans(runs []*Result) (overlapFrom, overlapTo, allFrom, allTo time.Time) {
	for i, r := range runs {
		f, t := measuredWindow(r)
		if i == 0 {
			overlapFrom, overlapTo, allFrom, allTo = f, t, f, t
			continue
		}
		overlapFrom, overlapTo = later(overlapFrom, f), earlier(overlapTo, t)
		allFrom, allTo = earlier(allFrom, f), later(allTo, t)
	}
	return
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// ownerPrefixes names each run's owners apart: "<host>/", or
// "<host>#<i>/" for every run whose host name another run shares.
func ownerPrefixes(runs []*Result) []string {
	seen := map[string]int{}
	for _, r := range runs {
		seen[r.Meta.Host]++
	}
	out := make([]string, len(runs))
	for i, r := range runs {
		h := r.Meta.Host
		if h == "" {
			h = "run"
		}
		if seen[r.Meta.Host] > 1 || h != r.Meta.Host {
			h += "#" + strconv.Itoa(i)
		}
		out[i] = h + "/"
	}
	return out
}

// mergeFairness recomputes fairness over every run's owners. FIFO order
// cannot be judged across machines, so it is left out.
func mergeFairness(runs []*Result, prefix []string, notes *[]string, label func(int) string) Fairness {
	var counts []int64
	var owners []string
	var total int64
	for i, r := range runs {
		f := r.Fairness
		if f.Total > 0 {
			total += f.Total
		} else {
			for _, n := range r.Throughput.Acquisitions {
				total += n
			}
		}
		names := make([]string, 0, len(f.PerOwner))
		for n := range f.PerOwner {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			owners = append(owners, prefix[i]+n)
			counts = append(counts, f.PerOwner[n])
		}
		if missing := f.Owners - len(f.PerOwner); missing > 0 {
			*notes = append(*notes, fmt.Sprintf("%s lists no acquisition counts for %d of its %s: fairness leaves them out", label(i), missing, Count(f.Owners, "owner")))
		}
	}
	f := ComputeFairness(counts, owners)
	f.Judge(total)
	return f
}

// mergeSeries adds the runs' points of the same second since each run's
// start. A run's points that round to one second (its last, short
// interval) are combined first, their rate over their summed length. P50
// and p99 are the worst machine's: percentiles do not add.
func mergeSeries(runs []*Result) []Point {
	sum := map[int64]*Point{}
	for _, r := range runs {
		type acc struct {
			p     Point
			n     int
			secs  float64
			first float64 // OpsPerSec of a lone point, exact
		}
		own := map[int64]*acc{}
		var keys []int64
		prev := 0.0
		for _, p := range r.Series {
			k := int64(math.Round(p.T))
			a := own[k]
			if a == nil {
				a = &acc{first: p.OpsPerSec}
				own[k] = a
				keys = append(keys, k)
			}
			a.n++
			a.secs += p.T - prev
			prev = p.T
			a.p.Ops += p.Ops
			a.p.Attempts += p.Attempts
			a.p.Errors += p.Errors
			a.p.Timeouts += p.Timeouts
			a.p.AcquireP50 = math.Max(a.p.AcquireP50, p.AcquireP50)
			a.p.AcquireP99 = math.Max(a.p.AcquireP99, p.AcquireP99)
			a.p.Goroutines = max(a.p.Goroutines, p.Goroutines)
			a.p.HeapBytes = max(a.p.HeapBytes, p.HeapBytes)
			a.p.Warmup = a.p.Warmup || p.Warmup
		}
		for _, k := range keys {
			a := own[k]
			rate := a.first
			if a.n > 1 && a.secs > 0 {
				rate = float64(a.p.Ops) / a.secs
			}
			s := sum[k]
			if s == nil {
				s = &Point{T: float64(k)}
				sum[k] = s
			}
			s.Ops += a.p.Ops
			s.Attempts += a.p.Attempts
			s.Errors += a.p.Errors
			s.Timeouts += a.p.Timeouts
			s.OpsPerSec += rate
			s.AcquireP50 = math.Max(s.AcquireP50, a.p.AcquireP50)
			s.AcquireP99 = math.Max(s.AcquireP99, a.p.AcquireP99)
			s.Goroutines = max(s.Goroutines, a.p.Goroutines)
			s.HeapBytes = max(s.HeapBytes, a.p.HeapBytes)
			s.Warmup = s.Warmup || a.p.Warmup // some machine had not begun measuring
		}
	}
	out := make([]Point, 0, len(sum))
	for _, p := range sum {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Point) int { return cmp.Compare(a.T, b.T) })
	return out
}

// metaDifferences notes what the runs' metadata disagree on where the
// merged result keeps the first run's value.
func metaDifferences(runs []*Result, label func(int) string) []string {
	var notes []string
	for _, f := range []struct {
		name string
		get  func(Meta) string
	}{
		{"server", Meta.ServerName},
		{"Redis backend", func(m Meta) string { return m.RedisBackend }},
		{"Redis address", func(m Meta) string { return m.RedisAddr }},
		{"lockbench version", func(m Meta) string { return m.Lockbench }},
	} {
		var vals []string
		differ := false
		for i, r := range runs {
			v := f.get(r.Meta)
			differ = differ || v != f.get(runs[0].Meta)
			vals = append(vals, fmt.Sprintf("%s %s", label(i), orNone(v)))
		}
		if differ {
			notes = append(notes, fmt.Sprintf("%s differs: %s; the merged meta keeps the first", f.name, strings.Join(vals, ", ")))
		}
	}
	return notes
}

// mergeHistograms adds the runs' histograms per metric, leaving out the
// all-modes aggregate, which Merge derives as a run does.
func mergeHistograms(runs []*Result, hists []map[string]*hdr.Histogram, label func(int) string, notes *[]string) (map[string]*hdr.Histogram, error) {
	out := map[string]*hdr.Histogram{}
	for i, hs := range hists {
		tags := make([]string, 0, len(hs))
		for tag := range hs {
			tags = append(tags, tag)
		}
		slices.SortFunc(tags, byMetric)
		if len(hs) == 0 {
			for key, l := range runs[i].Latency {
				if l.Count > 0 {
					return nil, fmt.Errorf("results: merge: %s has %s latencies but no histograms (its interval log is missing?)", label(i), key)
				}
			}
		}
		for _, tag := range tags {
			h := hs[tag]
			if tag == AcquireAll || h == nil || h.TotalCount() == 0 {
				continue
			}
			if out[tag] == nil {
				out[tag] = NewHistogram()
			}
			if dropped := out[tag].Merge(h); dropped > 0 {
				*notes = append(*notes, fmt.Sprintf("%s: %s beyond the histogram range dropped", label(i), Count(dropped, tag+" value")))
			}
		}
	}
	return out, nil
}

// mergeAcquireTags is the all-modes acquire histogram, as mergeAcquire
// makes it for a run.
func mergeAcquireTags(hs map[string]*hdr.Histogram) *hdr.Histogram { return AcquireHistogram(hs) }

// AcquireHistogram is every outermost acquisition, all modes together,
// from per-metric histograms as LoadHistograms returns them (nil when
// there are none): the AcquireAll figure, drawn.
func AcquireHistogram(hs map[string]*hdr.Histogram) *hdr.Histogram {
	var s Set
	for _, m := range []Metric{AcquireExclusive, AcquireRead, AcquireWrite} {
		s.h[m] = hs[m.String()]
	}
	return mergeAcquire(&s)
}

// mergedLog writes the merged histograms as an interval log of one
// interval per metric, spanning every run's measured window.
func mergedLog(runs []*Result, start time.Time, hs map[string]*hdr.Histogram) ([]byte, error) {
	_, _, from, to := measuredSpans(runs)
	tags := make([]string, 0, len(hs))
	for tag := range hs {
		tags = append(tags, tag)
	}
	slices.SortFunc(tags, byMetric)
	var b bytes.Buffer
	base := start.Truncate(time.Second)
	writeLogHeader(&b, start, base)
	for _, tag := range tags {
		if err := writeLogInterval(&b, base, tag, hs[tag], from, to); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// measuredWindow is when r measured: from the end of its warmup to its end.
func measuredWindow(r *Result) (from, to time.Time) {
	from = r.Meta.Start.Add(seconds2d(r.Warmup))
	return from, from.Add(seconds2d(r.Measured))
}

// seconds2d converts a result file's seconds to a duration.
func seconds2d(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// mergeGuard merges the guarded counter's figures of runs that shared one
// store (the same Redis and key): the holders' tallies add up, and the
// store's own counts, which only grow, are the latest any run read, so
// the lost updates cover every machine with no clock involved. Runs on
// different stores are not merged (a note says why).
func mergeGuard(runs []*Result, notes *[]string) *Guard {
	var with int
	for _, r := range runs {
		if r.Guard != nil {
			with++
		}
	}
	if with == 0 {
		return nil
	}
	if with < len(runs) {
		*notes = append(*notes, fmt.Sprintf("guard: only %d of %s updated a guarded counter; lost updates not merged", with, Count(len(runs), "run")))
		return nil
	}
	g := *runs[0].Guard
	g.Overwrites = slices.Clone(g.Overwrites)
	g.OverlapExamples = slices.Clone(g.OverlapExamples)
	g.Gaps = slices.Clone(g.Gaps)
	for _, r := range runs[1:] {
		o := r.Guard
		if o.Store != g.Store || o.Mode != g.Mode {
			*notes = append(*notes, fmt.Sprintf("guard: runs used different counters (%s, %s); lost updates not merged: give every machine the same --guard-url and --guard-key", g.Store, o.Store))
			return nil
		}
		g.Sections += o.Sections
		g.Written += o.Written
		g.Reads += o.Reads
		g.RejectedReads += o.RejectedReads
		g.RejectedWrites += o.RejectedWrites
		g.StaleAccepted += o.StaleAccepted
		g.RightfulRefused += o.RightfulRefused
		g.Failed += o.Failed
		g.Overwrites = append(g.Overwrites, o.Overwrites...)
		g.OverwritesDropped += o.OverwritesDropped
		g.Unwitnessed += o.Unwitnessed
		for _, gp := range o.Gaps {
			g.addGap(gp)
		}
		if o.Accepted > g.Accepted { // the later reading of the store
			g.Accepted, g.Final, g.Rejected = o.Accepted, o.Final, o.Rejected
		}
		// Every run read the same store's overlaps, which only grow: the
		// largest count is the later reading. A run that did not count
		// them leaves the merged count unknown.
		g.Occupancy = g.Occupancy && o.Occupancy
		if o.Overlaps > g.Overlaps {
			g.Overlaps, g.OverlapsBy = o.Overlaps, o.OverlapsBy
		}
		for _, ov := range o.OverlapExamples {
			if !slices.ContainsFunc(g.OverlapExamples, func(x Overlap) bool { return x.Equal(ov) }) {
				g.OverlapExamples = append(g.OverlapExamples, ov)
			}
		}
	}
	if !g.Occupancy {
		g.Overlaps, g.OverlapExamples, g.OverlapsBy = 0, nil, nil
	}
	g.OverlapExamples = g.OverlapExamples[:min(len(g.OverlapExamples), MaxOverlapExamples)]
	g.Lost = g.Accepted - g.Final
	if len(g.Overwrites) > 20 {
		g.OverwritesDropped += int64(len(g.Overwrites) - 20)
		g.Overwrites = g.Overwrites[:20]
	}
	return &g
}
