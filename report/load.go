package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/infile"
	"github.com/lockbench/lockbench/results"
)

// Run is one result file and its histograms.
type Run struct {
	Path   string
	Result *results.Result
	// Hists is the run's histogram per metric, from its interval log; nil
	// when the log could not be read (HistErr says why).
	Hists   map[string]*hdr.Histogram
	HistErr error
}

// Name is the run's file name without its extension.
func (r *Run) Name() string { return strings.TrimSuffix(filepath.Base(r.Path), ".json") }

// Scenario is a chaos report and the runs it names.
type Scenario struct {
	Path   string
	Report *results.ChaosReport
	// Runs match Report.Runs index for index; nil where the file is gone.
	Runs []*Run
}

// Sweep is a sweep file.
type Sweep struct {
	Path  string
	Sweep *results.Sweep
}

// Input is everything a report shows.
type Input struct {
	Runs      []*Run
	Scenarios []*Scenario
	Sweeps    []*Sweep
	Lineups   []*results.Lineup
	// Mitigations are chaos matrix's mitigation matrices.
	Mitigations []*results.MitigationMatrix
}

// Empty reports whether there is nothing to show.
func (in *Input) Empty() bool {
	return len(in.Runs) == 0 && len(in.Scenarios) == 0 && len(in.Sweeps) == 0 && len(in.Lineups) == 0 && len(in.Mitigations) == 0
}

// InputError is a path that is not something a report can show. It is
// bad input: the programs exit with code 2.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

// IsUsage marks the error as bad input.
func (e *InputError) IsUsage() bool { return true }

func inputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// Load reads each path as LoadFiles does, then the interval logs of the
// runs the report shows (ReadLogs).
func Load(paths ...string) (*Input, error) {
	in, err := LoadFiles(paths...)
	if err != nil {
		return nil, err
	}
	in.ReadLogs()
	return in, nil
}

// LoadFiles reads each path: a lockbench file (result, chaos report or
// sweep), or a directory whose lockbench files are all read. Runs that a
// chaos report or a sweep names are shown with it, not again on their own.
// It reads no interval log: those may be large, and are read (ReadLogs)
// once every input has been checked, and only for the runs shown.
func LoadFiles(paths ...string) (*Input, error) {
	if len(paths) == 0 {
		return nil, inputErrorf("report: no result file or directory given")
	}
	in := &Input{}
	seen := map[string]bool{}
	var runs []*Run
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, inputErrorf("report: %v", err)
		}
		files := []string{p}
		if st.IsDir() {
			if files, err = jsonFiles(p); err != nil {
				return nil, inputErrorf("report: %v", err)
			}
		}
		found := 0
		for _, f := range files {
			abs, _ := filepath.Abs(f)
			if seen[abs] {
				found++ // given twice, or inside a directory also given
				continue
			}
			seen[abs] = true
			kind, err := schemaOf(f)
			if err != nil {
				if st.IsDir() && !errors.Is(err, infile.ErrTooLarge) {
					continue // a directory may hold other JSON, and pipes or devices named so
				}
				return nil, err
			}
			found++
			switch results.KindOf(kind) {
			case results.KindResult:
				r, err := loadRun(f)
				if err != nil {
					return nil, err
				}
				runs = append(runs, r)
			case results.KindChaos:
				s, err := loadScenario(f)
				if err != nil {
					return nil, err
				}
				in.Scenarios = append(in.Scenarios, s)
			case results.KindSweep:
				s, err := results.ReadSweep(f)
				if err != nil {
					return nil, err
				}
				in.Sweeps = append(in.Sweeps, &Sweep{Path: f, Sweep: s})
			case results.KindLineup:
				m, err := results.ReadLineup(f)
				if err != nil {
					return nil, err
				}
				in.Lineups = append(in.Lineups, m)
			case results.KindMitigations:
				m, err := results.ReadMitigationMatrix(f)
				if err != nil {
					return nil, err
				}
				in.Mitigations = append(in.Mitigations, m)
			default:
				found--
				if !st.IsDir() {
					return nil, inputErrorf("report: %s: schema %q is not a lockbench result, chaos report, sweep or matrix", f, kind)
				}
			}
		}
		if st.IsDir() && found == 0 {
			return nil, inputErrorf("report: %s holds no lockbench result, chaos report or sweep (*.json)", p)
		}
	}
	// A run a chaos report or a sweep names belongs to it.
	owned := map[string]bool{}
	for _, s := range in.Scenarios {
		for _, r := range s.Runs {
			if r != nil {
				owned[abs(r.Path)] = true
			}
		}
	}
	for _, s := range in.Sweeps {
		for _, p := range s.Sweep.Points {
			if p.File != "" {
				owned[abs(filepath.Join(filepath.Dir(s.Path), p.File))] = true
			}
		}
	}
	for _, r := range runs {
		if !owned[abs(r.Path)] {
			in.Runs = append(in.Runs, r)
		}
	}
	slices.SortStableFunc(in.Runs, func(a, b *Run) int { return a.Result.Meta.Start.Compare(b.Result.Meta.Start) })
	slices.SortStableFunc(in.Scenarios, func(a, b *Scenario) int { return a.Report.Start.Compare(b.Report.Start) })
	return in, nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// jsonFiles lists dir's .json files, sorted. ReadDir, not Glob: a
// directory's name may hold [ or *.
func jsonFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	return files, nil
}

// File is a JSON file found in a directory: a lockbench file of some kind,
// or something else.
type File struct {
	Path   string
	Schema string // "" when the file is not JSON, has no schema, or is no regular file
	Kind   string // what Schema names (results.KindOf)
	Merged bool   // a result written by bench merge
}

// Scan lists dir's JSON files with what each holds, in name order, so
// that commands taking a directory can pick the files they want and name
// the others in their errors.
func Scan(dir string) ([]File, error) {
	paths, err := jsonFiles(dir)
	if err != nil {
		return nil, err
	}
	out := make([]File, 0, len(paths))
	for _, p := range paths {
		h, err := readHead(p)
		if err != nil && !errors.Is(err, errNoSchema) && !errors.Is(err, infile.ErrNotRegular) {
			return nil, err
		}
		out = append(out, File{Path: p, Schema: h.Schema, Kind: results.KindOf(h.Schema), Merged: len(h.MergedFrom) > 0})
	}
	return out, nil
}

// head is what a lockbench file says of itself at the top.
type head struct {
	Schema     string   `json:"schema"`
	MergedFrom []string `json:"merged_from"`
}

var errNoSchema = errors.New("no schema field")

func readHead(path string) (head, error) {
	var h head
	b, err := infile.Read(path, infile.JSON)
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(b, &h); err != nil || h.Schema == "" {
		return head{}, errNoSchema
	}
	return h, nil
}

// schemaOf reads the file's "schema" field.
func schemaOf(path string) (string, error) {
	h, err := readHead(path)
	switch {
	case errors.Is(err, errNoSchema):
		return "", inputErrorf("report: %s is not a lockbench file (no schema field)", path)
	case err != nil:
		return "", inputErrorf("report: %w", err)
	}
	return h.Schema, nil
}

// ReadLogs reads the histograms of the runs in shows (its runs and its
// chaos reports'; a sweep's points show no spectrum) from their interval
// logs. A log it cannot read costs that run's spectrum chart, not the
// report (Run.HistErr says why).
func (in *Input) ReadLogs() {
	runs := slices.Clone(in.Runs)
	for _, s := range in.Scenarios {
		runs = append(runs, s.Runs...)
	}
	for _, r := range runs {
		if r != nil && r.Hists == nil && r.HistErr == nil && r.Result.HistogramLog != "" {
			r.Hists, r.HistErr = results.LoadHistograms(r.Path, r.Result)
		}
	}
}

// loadRun reads a result, not its interval log (see ReadLogs).
func loadRun(path string) (*Run, error) {
	r, err := results.ReadFile(path)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return &Run{Path: path, Result: r}, nil
}

// loadScenario reads a chaos report and its runs' results, looked for
// where the report names them and next to the report (a moved directory).
func loadScenario(path string) (*Scenario, error) {
	rep, err := results.ReadChaosReport(path)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	s := &Scenario{Path: path, Report: rep}
	for _, rs := range rep.Runs {
		var run *Run
		for _, cand := range []string{filepath.Join(filepath.Dir(path), filepath.Base(rs.File)), rs.File} {
			if rs.File == "" {
				break
			}
			if r, err := loadRun(cand); err == nil {
				run = r
				break
			} else if !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
		s.Runs = append(s.Runs, run)
	}
	return s, nil
}
