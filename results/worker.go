package results

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Worker says which part of a run spread over several machines (workers)
// a result is: bench run --workers N, one result per worker, which bench
// collect merges.
type Worker struct {
	// RunID names the run every worker shares.
	RunID string `json:"run_id"`
	// Index is this worker's, 0..Workers-1.
	Index   int `json:"index"`
	Workers int `json:"workers"`
	// FirstOwner is the whole run's index of this worker's first owner,
	// Owners how many it drove.
	FirstOwner int `json:"first_owner"`
	Owners     int `json:"owners"`
	// Clients are the lock clients this worker drove, TotalOwners the
	// whole run's owners (0 in results of older versions).
	Clients     int `json:"clients,omitempty"`
	TotalOwners int `json:"total_owners,omitempty"`
	// RedisStart is when this worker's load started, on Redis's clock:
	// the workers' starts differ by the skew the merge reports.
	RedisStart time.Time `json:"redis_start"`
	// UncertaintyUs bounds RedisStart's error (half the quickest round
	// trip to Redis, plus TIME's resolution); LateMs is how far past the
	// agreed start this worker learned it (0: in time).
	UncertaintyUs float64 `json:"uncertainty_us"`
	LateMs        float64 `json:"late_ms,omitempty"`
}

// WorkerRow is one worker's line in a merged result: what it measured and
// when it started relative to the earliest.
type WorkerRow struct {
	Index int    `json:"index"`
	Host  string `json:"host,omitempty"`
	// Missing: the worker registered for the run but its result never
	// arrived (it died, or could not push it); the other fields are zero.
	Missing    bool    `json:"missing,omitempty"`
	Ops        int64   `json:"ops"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	AcquireP99 float64 `json:"acquire_p99_us"`
	// SkewUs is how long after the earliest worker this one started, on
	// Redis's clock.
	SkewUs float64 `json:"start_skew_us"`
	// CPU is the worker's own CPU verdict: who was the limit on its host.
	CPU           *CPU   `json:"cpu,omitempty"`
	Partial       bool   `json:"partial,omitempty"`
	PartialReason string `json:"partial_reason,omitempty"`
}

// Spread is what a merged result of one run's workers says about them.
type Spread struct {
	RunID   string      `json:"run_id"`
	Workers int         `json:"workers"`
	Rows    []WorkerRow `json:"rows"`
	// SkewUs is the spread of the workers' starts on Redis's clock (the
	// latest minus the earliest); UncertaintyUs bounds its error.
	SkewUs        float64 `json:"start_skew_us"`
	UncertaintyUs float64 `json:"uncertainty_us"`
	// WindowS is the measured window every worker covered, over which
	// the merged throughput is counted.
	WindowS float64 `json:"common_window_s"`

	from, to time.Time // the common window on Redis's clock
}

// MissingWorkers are the indexes of workers whose result never arrived.
func (s *Spread) MissingWorkers() []int {
	if s == nil {
		return nil
	}
	var out []int
	for _, r := range s.Rows {
		if r.Missing {
			out = append(out, r.Index)
		}
	}
	return out
}

// missingWorkers says which workers never reported, as the merge's
// partial reason and its failure name them.
func missingWorkers(missing []int, workers int) string {
	ids := make([]string, len(missing))
	for i, m := range missing {
		ids[i] = strconv.Itoa(m)
	}
	if len(missing) == 1 {
		return fmt.Sprintf("worker %s of %d never reported its result (it died, could not reach the store, or its file was not given)", ids[0], workers)
	}
	return fmt.Sprintf("workers %s of %d never reported their results (they died, could not reach the store, or their files were not given)", strings.Join(ids, ", "), workers)
}

// MergeWorkers merges the results of one run's workers (bench run
// --workers) as Merge merges machines' runs, with what a shared start
// allows: each worker's owners named "w<index>/<owner>", the throughput
// counted over the measured window every worker covered (their starts
// are on Redis's clock), and a row per worker with its start skew
// (Spread). Workers that registered but never reported (missing) are
// named: the result is then partial, and fails. One result is enough
// when the others are missing.
func MergeWorkers(runs []*Result, hists []map[string]*hdr.Histogram, missing []int) (*Result, error) {
	if err := checkWorkers(runs, missing); err != nil {
		return nil, err
	}
	prefix := make([]string, len(runs))
	for i, r := range runs {
		prefix[i] = WorkerPrefix(r.Worker.Index)
	}
	m, err := merge(runs, hists, prefix, missing)
	if err != nil {
		return nil, err
	}
	m.Spread = spreadOf(runs, missing)
	if w := m.Spread.WindowS; w > 0 {
		m.Throughput.OpsPerSec = math.Round(windowRate(runs, m.Spread)*10) / 10
	} else {
		m.MergeNotes = append(m.MergeNotes, "the workers' measured windows share no moment: the merged throughput adds each worker's own")
	}
	if len(missing) > 0 {
		why := missingWorkers(missing, m.Spread.Workers)
		if m.Partial {
			m.PartialReason = why + "; " + m.PartialReason
		} else {
			m.Partial, m.PartialReason = true, why
		}
	}
	return m, nil
}

// workerSet reports whether runs are workers of one spread run, and which
// of its workers they lack.
func workerSet(runs []*Result) (missing []int, ok bool) {
	first := runs[0].Worker
	if first == nil {
		return nil, false
	}
	have := map[int]bool{}
	for _, r := range runs {
		if r.Worker == nil || r.Worker.RunID != first.RunID || r.Worker.Workers != first.Workers {
			return nil, false
		}
		have[r.Worker.Index] = true
	}
	for i := range first.Workers {
		if !have[i] {
			missing = append(missing, i)
		}
	}
	return missing, true
}

// checkWorkers refuses what MergeWorkers cannot merge: results that are
// not workers of one run, an index given twice, a missing worker that
// also reported.
func checkWorkers(runs []*Result, missing []int) error {
	if len(runs) == 0 {
		return fmt.Errorf("results: merge workers: no worker reported a result")
	}
	seen := map[int]bool{}
	first := runs[0].Worker
	for i, r := range runs {
		switch {
		case r == nil || r.Worker == nil:
			return fmt.Errorf("results: merge workers: result %d is not a worker's (no worker field): merge it with Merge", i)
		case r.Worker.RunID != first.RunID || r.Worker.Workers != first.Workers:
			return fmt.Errorf("results: merge workers: worker %d belongs to run %q of %d workers, worker %d to run %q of %d",
				first.Index, first.RunID, first.Workers, r.Worker.Index, r.Worker.RunID, r.Worker.Workers)
		case r.Worker.Index < 0 || r.Worker.Index >= first.Workers:
			return fmt.Errorf("results: merge workers: worker index %d out of 0..%d", r.Worker.Index, first.Workers-1)
		case seen[r.Worker.Index]:
			return fmt.Errorf("results: merge workers: worker %d of run %q given twice", r.Worker.Index, first.RunID)
		}
		seen[r.Worker.Index] = true
	}
	for _, m := range missing {
		if m < 0 || m >= first.Workers || seen[m] {
			return fmt.Errorf("results: merge workers: worker %d cannot be missing: it is out of 0..%d or reported", m, first.Workers-1)
		}
		seen[m] = true
	}
	return checkSame(runs)
}

// spreadOf is the workers' rows, the skew of their starts and the
// measured window they all covered.
func spreadOf(runs []*Result, missing []int) *Spread {
	first := runs[0].Worker
	s := &Spread{RunID: first.RunID, Workers: first.Workers}
	earliest, latest := first.RedisStart, first.RedisStart
	var from, to time.Time
	var unc []float64
	for i, r := range runs {
		w := r.Worker
		earliest, latest = earlier(earliest, w.RedisStart), later(latest, w.RedisStart)
		f := w.RedisStart.Add(seconds2d(r.Warmup))
		t := f.Add(seconds2d(r.Measured))
		if i == 0 {
			from, to = f, t
		} else {
			from, to = later(from, f), earlier(to, t)
		}
		unc = append(unc, w.UncertaintyUs)
	}
	for _, r := range runs {
		w := r.Worker
		row := WorkerRow{
			Index: w.Index, Host: r.Meta.Host, Ops: r.Throughput.Ops, OpsPerSec: r.Throughput.OpsPerSec,
			AcquireP99: r.Latency[AcquireAll].P99, SkewUs: round1(float64(w.RedisStart.Sub(earliest)) / 1e3),
			CPU: cpuVerdict(r.CPU), Partial: r.Partial, PartialReason: r.PartialReason,
		}
		s.Rows = append(s.Rows, row)
	}
	for _, m := range missing {
		s.Rows = append(s.Rows, WorkerRow{Index: m, Missing: true})
	}
	slices.SortFunc(s.Rows, func(a, b WorkerRow) int { return cmp.Compare(a.Index, b.Index) })
	s.SkewUs = round1(float64(latest.Sub(earliest)) / 1e3)
	// Two starts' difference is off by at most both their errors.
	slices.Sort(unc)
	if n := len(unc); n > 1 {
		s.UncertaintyUs = round1(unc[n-1] + unc[n-2])
	}
	if to.After(from) {
		s.WindowS = math.Round(to.Sub(from).Seconds()*1000) / 1000
		s.from, s.to = from, to
	}
	return s
}

// windowRate is the workers' throughput over the window they all
// measured: each worker's operations in the seconds of its series that
// fall inside the window, over those seconds, added up.
func windowRate(runs []*Result, s *Spread) float64 {
	var total float64
	for _, r := range runs {
		var ops int64
		var secs, prev float64
		for _, p := range r.Series {
			start, end := r.Worker.RedisStart.Add(seconds2d(prev)), r.Worker.RedisStart.Add(seconds2d(p.T))
			length := p.T - prev
			prev = p.T
			mid := start.Add(end.Sub(start) / 2)
			if p.Warmup || mid.Before(s.from) || mid.After(s.to) {
				continue
			}
			ops += p.Ops
			secs += length
		}
		if secs > 0 {
			total += float64(ops) / secs
		}
	}
	return total
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// cpuVerdict is c without its series: a row keeps who was the limit, not
// how it moved.
func cpuVerdict(c *CPU) *CPU {
	if c == nil {
		return nil
	}
	v := *c
	v.Series = nil
	return &v
}

// WorkerPrefix names worker index's owners in a merged result and its
// holders in the guarded store: "w<index>/".
func WorkerPrefix(index int) string { return "w" + strconv.Itoa(index) + "/" }

// excused are the overlaps counted against holders of the missing
// workers: their sections stayed open when they died.
func excused(by map[string]int64, missing []int) int64 {
	var n int64
	for h, c := range by {
		for _, m := range missing {
			if strings.HasPrefix(h, WorkerPrefix(m)) {
				n += c
			}
		}
	}
	return n
}

// WriteWorkersMerged writes m, a merge of a spread run's workers, into
// dir as WriteFiles does, replacing a merge of the same run that an
// earlier collect left there (with fewer workers' results, say): a run
// has one merged result in a directory, never two. It returns the path
// written and those of the earlier merges it replaced.
func WriteWorkersMerged(dir string, m *Result) (path string, replaced []string, err error) {
	if m.Spread == nil {
		return "", nil, errors.New("results: write workers' merge: the result is no merge of a spread run's workers")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("results: %w", err)
	}
	earlier, err := mergesOf(dir, m.Spread.RunID)
	if err != nil {
		return "", nil, err
	}
	stem := m.Stem()
	if _, same := earlier[stem]; !same {
		stem = freeStem(dir, stem)
	}
	if path, err = writeFiles(dir, stem, m); err != nil {
		return "", nil, err
	}
	for old, r := range earlier {
		replaced = append(replaced, filepath.Join(dir, old+".json"))
		gone := []string{r.HistogramLog}
		if old != stem {
			gone = append(gone, old+".json", old+".html")
		}
		for _, f := range gone {
			if f == "" || f != filepath.Base(f) || old == stem && f == m.HistogramLog {
				continue
			}
			if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return path, replaced, fmt.Errorf("results: replace the earlier merge %s: %w", old, err)
			}
		}
	}
	slices.Sort(replaced)
	return path, replaced, nil
}

// mergesOf are the merged results of spread run runID in dir, by stem.
func mergesOf(dir, runID string) (map[string]*Result, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	out := map[string]*Result{}
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || !strings.Contains(stem, "-merged") {
			continue
		}
		r, err := ReadFile(filepath.Join(dir, e.Name()))
		if err == nil && r.Spread != nil && r.Spread.RunID == runID {
			out[stem] = r
		}
	}
	return out, nil
}
