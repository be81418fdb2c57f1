package perf

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// The parts bench perf runs, in the order Run runs them.
const (
	PartMatrix   = "matrix"
	PartScale    = "scale"
	PartOverhead = "overhead"
	PartHandoff  = "handoff"
)

// Parts are every part's name, in the order Run runs them.
var Parts = []string{PartMatrix, PartScale, PartOverhead, PartHandoff}

// Options is what Run measures and where it keeps the runs.
type Options struct {
	// Parts are the parts to run (PartMatrix, ...), in any order.
	Parts []string
	// Base wires every run: NewRedis and Meta.
	Base workloads.Config
	// Matrix is the matrix part's spec (LineupSpecOf).
	Matrix LineupSpec
	// OverheadRounds and OverheadDuration size the overhead part.
	OverheadRounds   int
	OverheadDuration time.Duration
	// ScalePoints are the scale part's points (ScalePoints), each run on
	// ScaleLocks lock names at ScaleRate ops/s for ScaleDuration.
	ScalePoints     []ScalePoint
	ScaleLocks      int
	ScaleRate       float64
	ScaleDuration   time.Duration
	HandoffDuration time.Duration
	// RedisBenchmark is redis-benchmark's path, connecting to Server (the
	// matrix and overhead parts).
	RedisBenchmark string
	Server         Server
	// Servers are the other servers the matrix part compares Base's
	// with (bench perf --servers): each runs ServerGroups of the matrix,
	// in the same rounds, and comes back in the matrix's Servers.
	Servers []Site
	// Out is the directory every run's result files and each matrix's
	// file are written to.
	Out string
	// Progress is told what runs, by part, as it starts.
	Progress func(part, msg string)
	// Finished is handed each part as it ends, before the next starts, so
	// that its figures are seen while the others run. Its error ends Run.
	Finished func(Part) error
}

// Part is one finished part: its figures and where they were saved.
type Part struct {
	Name    string
	Lineup  *results.Lineup // PartMatrix and PartOverhead
	Scale   []Scale         // PartScale: one per point
	Handoff *HandoffFigure  // PartHandoff
	// Saved is the part's file: the matrix's, or the handoff run's result
	// (the last scale run's; ScaleSaved has each); for a run whose result
	// could not be written, "(not saved: why)"; "" for a matrix whose file
	// could not be written.
	Saved      string
	ScaleSaved []string
}

// Run runs the parts of o in the order of Parts, handing each to
// o.Finished as it ends. A part that fails ends Run with its error (after
// handing over what it measured); so does a safety violation in any
// matrix run.
func Run(ctx context.Context, o Options) error {
	for _, name := range Parts {
		if !slices.Contains(o.Parts, name) {
			continue
		}
		if err := o.runPart(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

func (o Options) runPart(ctx context.Context, name string) error {
	say := func(format string, a ...any) {
		if o.Progress != nil {
			o.Progress(name, fmt.Sprintf(format, a...))
		}
	}
	p := Part{Name: name}
	var err error
	switch name {
	case PartMatrix, PartOverhead:
		spec := o.Matrix
		if name == PartOverhead {
			spec = OverheadSpec(o.OverheadRounds, o.OverheadDuration)
		}
		sites := []Site{{Base: o.Base, Server: o.Server}}
		if name == PartMatrix {
			spec.Recordings = o.Out
			for _, s := range o.Servers {
				s.Groups = ServerGroups(spec.Groups)
				sites = append(sites, s)
			}
		}
		hooks := LineupHooks{Progress: func(msg string) { say("%s", msg) }, Save: o.save}
		var ms []*results.Lineup
		ms, err = MeasureLineups(ctx, spec, sites, o.RedisBenchmark, hooks)
		if len(ms) == 0 {
			return err
		}
		p.Lineup = ms[0]
		for _, m := range ms[1:] {
			p.Lineup.Servers = append(p.Lineup.Servers, *m)
		}
		p.Lineup.ServerTable = ServerTable(p.Lineup)
		var werr error
		if p.Saved, werr = results.WriteLineup(o.Out, p.Lineup); werr != nil {
			err = errors.Join(err, fmt.Errorf("perf: %w", werr))
		}
	case PartScale:
		for _, pt := range o.ScalePoints {
			say("%s over %s at %s ops/s for %v...", results.Count(pt.Owners, "owner"), results.Count(pt.Clients, "client"), results.Commas(int64(o.ScaleRate)), o.ScaleDuration)
			var s Scale
			s, err = MeasureScale(ctx, o.Base, pt, o.ScaleLocks, o.ScaleRate, o.ScaleDuration)
			if s.Result == nil {
				break
			}
			p.Saved = o.save(s.Result)
			p.Scale, p.ScaleSaved = append(p.Scale, s), append(p.ScaleSaved, p.Saved)
			if err != nil {
				break
			}
		}
		if len(p.Scale) == 0 {
			return err
		}
	case PartHandoff:
		say("mutex profile for %v...", o.HandoffDuration)
		var h HandoffFigure
		h, err = MeasureHandoff(ctx, o.Base, o.HandoffDuration)
		if h.Result == nil {
			return err
		}
		p.Handoff, p.Saved = &h, o.save(h.Result)
	default:
		return fmt.Errorf("perf: unknown part %q; use %s", name, strings.Join(Parts, ", "))
	}
	if o.Finished != nil {
		if ferr := o.Finished(p); ferr != nil {
			return errors.Join(err, ferr)
		}
	}
	if err != nil {
		return err
	}
	if name == PartMatrix {
		return violations(p.Lineup)
	}
	return nil
}

// violations is the error of the first matrix cell whose runs broke
// mutual exclusion: the matrix measures locks, and an unsafe one's
// figures are not a result.
func violations(m *results.Lineup) error {
	for _, c := range m.Cells {
		if c.Median.Violations > 0 {
			on := ""
			if s := m.Meta.ServerName(); s != "" {
				on = " on " + s
			}
			return fmt.Errorf("perf: %s on %s at %s%s: %s", c.Impl, c.Profile, results.Count(c.Owners, "owner"), on, results.Count(c.Median.Violations, "safety violation"))
		}
	}
	for i := range m.Servers {
		if err := violations(&m.Servers[i]); err != nil {
			return err
		}
	}
	return nil
}

// save writes a run's result files to Out, returning the JSON's path or
// why it was not written.
func (o Options) save(r *results.Result) string {
	r.Meta.Start = time.Now()
	path, err := results.WriteFiles(o.Out, r)
	if err != nil {
		return "(not saved: " + err.Error() + ")"
	}
	return path
}

// NeedsRedisBenchmark reports whether any of parts runs redis-benchmark.
func NeedsRedisBenchmark(parts []string) bool {
	return slices.Contains(parts, PartMatrix) || slices.Contains(parts, PartOverhead)
}

// OverheadSpec is the overhead part: OverheadGroups on lockimpl plain and
// on the autopipeliner, rounds of d after a second of warmup. Its groups
// run only the two, so each round is a pair.
func OverheadSpec(rounds int, d time.Duration) LineupSpec {
	return LineupSpec{Impls: map[string]workloads.Impl{impls.Default: workloads.Lockimpl{}, PipelinedName: Pipelined{}},
		Groups: OverheadGroups(), Rounds: rounds, Duration: d, Warmup: time.Second}
}

// LineupSpecOf is DefaultLineup over the named implementations (with
// lockimpl+ap beside lockimpl), each group keeping the ones it runs and
// the groups none of them runs left out. An unknown or repeated name is
// an error.
func LineupSpecOf(names []string) (LineupSpec, error) {
	spec := LineupSpec{Impls: map[string]workloads.Impl{}}
	var listed []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		impl, err := impls.Lookup(n)
		if err != nil {
			return spec, err
		}
		if slices.Contains(listed, n) {
			return spec, fmt.Errorf("%s is listed twice", n)
		}
		spec.Impls[n] = impl
		listed = append(listed, n)
	}
	if slices.Contains(listed, impls.Default) {
		spec.Impls[PipelinedName] = Pipelined{}
		listed = WithPipelined(listed)
	}
	for _, g := range DefaultLineup(listed) {
		var keep []string
		for _, n := range g.Impls {
			if slices.Contains(listed, n) {
				keep = append(keep, n)
			}
		}
		if len(keep) > 0 {
			g.Impls = keep
			spec.Groups = append(spec.Groups, g)
		}
	}
	return spec, nil
}
