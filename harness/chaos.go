package harness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/scenarios"
)

// ChaosOptions is a chaos suite: the scenarios, how they run, and where
// their files go.
type ChaosOptions struct {
	Scenarios []*scenarios.Scenario
	Run       scenarios.Options
	// Out, when set, gets each scenario's report and results, and the
	// suite's HTML report.
	Out string
	// JUnit, when set, is where the suite's JUnit XML goes.
	JUnit string
	// Version names the program in the HTML report.
	Version string
	// Guard, when plain or fenced, makes every scenario's critical
	// sections update a guarded counter in a Redis of its own (or at
	// GuardURL), and each run report its lost updates.
	Guard    guard.Mode
	GuardURL string
	// Starting is told each scenario before it runs (index from 0), and
	// Done its report and where it was written ("" without Out).
	Starting func(i int, s *scenarios.Scenario)
	Done     func(rep *results.ChaosReport, path string)
}

// ChaosOutput is what a suite produced.
type ChaosOutput struct {
	Reports []*results.ChaosReport
	JUnit   string // "" when not written
	HTML    string // "" when not written
	// HTMLErr is why the HTML report could not be drawn: it loses no
	// result, so it is not the suite's failure.
	HTMLErr error
	Began   time.Time
}

// Chaos runs the scenarios in order until they are done or ctx ends,
// writing each report as soon as it is known, then the JUnit XML and the
// HTML report. An error is a file that could not be written; verdicts are
// in the reports.
func Chaos(ctx context.Context, o ChaosOptions) (*ChaosOutput, error) {
	out := &ChaosOutput{Began: time.Now()}
	if o.Guard != "" && o.Guard != guard.Off {
		gs, err := StartGuard(ctx, o.Guard, o.GuardURL, "", o.Run.Redis.Server)
		if err != nil {
			return out, err
		}
		defer gs.Close()
		o.Run.Guard, o.Run.StoreAt = o.Guard, gs.Where
		o.Run.NewStore = func(key string, mode guard.Mode) *guard.Store { return guard.New(gs.rdb, key, mode) }
	}
	var paths []string
	for i, s := range o.Scenarios {
		if ctx.Err() != nil {
			break
		}
		if o.Starting != nil {
			o.Starting(i, s)
		}
		rep := scenarios.Run(ctx, s, o.Run)
		out.Reports = append(out.Reports, rep)
		path := ""
		if o.Out != "" {
			var err error
			if path, err = results.WriteChaosReport(o.Out, rep); err != nil {
				return out, err
			}
			paths = append(paths, path)
		}
		if o.Done != nil {
			o.Done(rep, path)
		}
	}
	if o.JUnit != "" {
		if err := report.WriteJUnit(o.JUnit, out.Reports); err != nil {
			return out, err
		}
		out.JUnit = o.JUnit
	}
	if len(paths) > 0 {
		html := filepath.Join(o.Out, "chaos-"+results.Stamp(out.Began)+".html")
		in, err := report.Load(paths...)
		if err == nil {
			err = report.Write(html, in, report.Options{Title: "lockbench chaos report", Generator: o.Version})
		}
		if err != nil {
			out.HTMLErr = fmt.Errorf("report: %v", err)
		} else {
			out.HTML = html
		}
	}
	return out, nil
}

// CheckRunnable refuses a suite none of whose scenarios the Redis of cfg
// can host: it would report nothing but skips. It is bad input.
func CheckRunnable(list []*scenarios.Scenario, cfg redisenv.Config) error {
	var cannot []string
	for _, s := range list {
		if why := scenarios.Unsupported(s, cfg); why != "" {
			cannot = append(cannot, s.Name+": "+why)
		}
	}
	if len(cannot) == len(list) {
		return &usageError{fmt.Errorf("nothing to run: %s", strings.Join(cannot, "; "))}
	}
	return nil
}

// CheckFaketime refuses, as bad input, scenarios that jump a server's
// clock when libfaketime is missing and they would run on this host's
// servers (on containers they are skipped): found before any load, not
// an hour into a matrix.
func CheckFaketime(list []*scenarios.Scenario, cfg redisenv.Config) error {
	if cfg.Backend == redisenv.BackendContainer {
		return nil
	}
	for _, s := range list {
		if !s.FakeClock {
			continue
		}
		if _, err := redisenv.FindFaketime(); err != nil {
			return &usageError{fmt.Errorf("%s: %w", s.Name, err)}
		}
	}
	return nil
}

// CheckMitigation refuses, as bad input, a mitigation matrix that could
// run nothing or prove nothing: an o.Only naming a scenario not in the
// matrix; a lock Redis lockbench did not start (the matrix kills,
// restarts and fails it over, so every cell would be skipped); a planted
// fencing bug that no selected cell could catch.
func CheckMitigation(o MitigationOptions) error {
	only := strings.Join(o.Only, ",")
	all := scenarios.MitigationScenarios()
	for _, n := range o.Only {
		if !slices.Contains(all, n) {
			return &usageError{fmt.Errorf("--only %q: %q is not a matrix scenario; use %s", only, n, strings.Join(all, ", "))}
		}
	}
	switch by := scenarios.ExternalRedis(o.Run.Redis); by {
	case "":
	case "$" + redisenv.EnvURL:
		return &usageError{fmt.Errorf("%s is set: the matrix starts the lock's Redis itself (it kills, restarts and fails it over) and cannot use yours; unset %s, or pass --redis local or --redis container (the guarded counter's Redis is --guard-url)", by, redisenv.EnvURL)}
	default:
		return &usageError{fmt.Errorf("%s: the matrix starts the lock's Redis itself (it kills, restarts and fails it over) and cannot use yours; drop %s (the guarded counter's Redis is --guard-url)", by, by)}
	}
	var rows []*scenarios.Scenario
	for _, n := range all {
		if s, ok := scenarios.Find(n); ok && (len(o.Only) == 0 || slices.Contains(o.Only, n)) {
			rows = append(rows, s)
		}
	}
	if err := CheckFaketime(rows, o.Run.Redis); err != nil {
		return err
	}
	if gated := scenarios.FencingGated(); o.PlantBrokenFencing && len(o.Only) > 0 &&
		!slices.ContainsFunc(o.Only, func(n string) bool { return slices.Contains(gated, n) }) {
		return &usageError{fmt.Errorf("--plant-broken-fencing with --only %s: no cell of these scenarios is held to 0 lost updates by fencing alone, so the planted bug could not fail the matrix; include %s in --only",
			only, OrList(gated))}
	}
	return nil
}

// OrList is names as "a, b or c".
func OrList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Verdict is the suite's outcome as an exit status: nil when every
// verdict matched its expectation; else why not (interrupted after
// some of planned, verdicts that differ, nothing ran), joined with an
// HTML report that could not be drawn.
func (o *ChaosOutput) Verdict(ctx context.Context, planned int) error {
	var failed []string
	for _, rep := range o.Reports {
		if !rep.OK() {
			failed = append(failed, fmt.Sprintf("%s (%s)", rep.Scenario, rep.Verdict))
		}
	}
	switch {
	case ctx.Err() != nil:
		return errors.Join(fmt.Errorf("after %d of %s: %w", len(o.Reports), results.Count(planned, "scenario"), context.Cause(ctx)), o.HTMLErr)
	case len(failed) > 0:
		return errors.Join(errors.New("verdicts differ from the expected ones: "+strings.Join(failed, ", ")), o.HTMLErr)
	case len(o.Reports) > 0 && results.CountVerdicts(o.Reports)[results.Skipped] == len(o.Reports):
		var why []string
		for _, r := range o.Reports {
			why = append(why, r.Scenario+": "+r.Reason)
		}
		return errors.Join(fmt.Errorf("nothing ran: every scenario was skipped (%s)", strings.Join(why, "; ")), o.HTMLErr)
	}
	return o.HTMLErr
}

// usageError is bad input: the programs exit with code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }
func (e *usageError) IsUsage() bool { return true }
