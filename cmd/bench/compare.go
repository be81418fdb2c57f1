package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/infile"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

const compareUsage = `
Compares two results of bench run: BASE, the baseline (say, the main
branch's run), and NEW, the change under test. It prints throughput, the
p50, p99 and p99.9 of every latency both runs measured, errors, safety
violations and fairness, each with its change in percent, and notes what
makes the runs unlike (profile, Redis version or backend, a partial run):
unlike runs are compared all the same, so read those notes.

Use it in CI to catch performance regressions. Throughput counts
successful operations only. The gated metrics are a throughput drop or an
acquire p99 rise (all modes, and each mode) of more than --max-regression,
a success ratio more than 0.1 percentage point below BASE's, and NEW
failing in a way BASE did not: its own error-rate threshold, a stall, a
safety violation or a lost update (any violation counts when BASE had
none). A run with no successful operation has nothing to compare: the
comparison is refused. Hold and think latencies come from the profile, so
they are shown, not gated. BASE and NEW are result files (.json) or
directories holding exactly one; --json prints the comparison as JSON for
a report.

Two sweeps (sweep.json files, or bench sweep --out directories) compare
curve by curve: the gate is each curve's measured peak throughput, and the
fitted scalability parameters say why it moved: λ (one participant's
throughput), σ (contention) and κ (coherency), each with its 95%
interval, and what each one's change alone does to throughput at the
largest N both sweeps measured. NEW with failed points where BASE had
none, or a curve without a successful point, is a regression; a sweep
against a result is bad input (exit 2); sweeps on different axes are
refused (exit 1).

Exit codes: 0 no gated metric regressed, 1 one did or the comparison was
refused, 2 bad input (a missing or unreadable file, not a result, a bad
flag).`

// percent is a flag value of a percentage: "10%", "10" or "0.5%".
type percent float64

func (p *percent) String() string { return strconv.FormatFloat(float64(*p), 'f', -1, 64) + "%" }

func (p *percent) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return errors.New("want a percentage such as 10% or 0.5%")
	}
	if v < 0 {
		return errors.New("must be at least 0%, e.g. 10%")
	}
	*p = percent(v)
	return nil
}

func compareCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("bench", "compare BASE NEW", compareUsage, stderr)
	maxReg := percent(10)
	fs.Var(&maxReg, "max-regression", "how far a gated metric may move the wrong way: a `percentage` such as 10% or 0.5%")
	asJSON := fs.Bool("json", false, "print the comparison as JSON instead of the table")
	pos, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return cli.Usagef("compare takes two results, BASE and NEW; got %s %q: e.g. bench compare base.json new.json", results.Count(len(pos), "argument"), pos)
	}
	sa, errA := report.SweepFile("BASE", pos[0])
	sb, errB := report.SweepFile("NEW", pos[1])
	if sa != "" || sb != "" {
		if err := errors.Join(errA, errB); err != nil {
			return err
		}
		return compareSweeps(ctx, [2]string{pos[0], pos[1]}, [2]string{sa, sb}, float64(maxReg), *asJSON, stdout)
	}
	var runs [2]*results.Result
	var paths [2]string
	err = cli.ReadInputs(ctx, func() (err error) {
		for i, role := range []string{"BASE", "NEW"} {
			if paths[i], err = report.ResultFile(role, pos[i]); err != nil {
				return err
			}
			if runs[i], err = results.ReadFile(paths[i]); err != nil {
				return cli.Usagef("%s: %v; give a result file written by bench run", role, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	c := results.Compare(runs[0], runs[1], float64(maxReg))
	c.Base.File, c.New.File = paths[0], paths[1]
	return printComparison(stdout, *asJSON, c, func() error { return report.WriteComparison(stdout, c) }, c.OK(), c.Verdict())
}

// printComparison prints c as JSON or as text (write), and returns the
// verdict as the error that sets the exit code when not ok.
func printComparison(stdout io.Writer, asJSON bool, c any, write func() error, ok bool, verdict string) error {
	if asJSON {
		b, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
			return err
		}
	} else if err := write(); err != nil {
		return err
	}
	if !ok {
		return errors.New(verdict)
	}
	return nil
}

// compareSweeps is bench compare of two sweeps (files or --out
// directories): both must be sweeps.
func compareSweeps(ctx context.Context, args, paths [2]string, maxReg float64, asJSON bool, stdout io.Writer) error {
	var sw [2]*results.Sweep
	err := cli.ReadInputs(ctx, func() (err error) {
		for i, role := range []string{"BASE", "NEW"} {
			if paths[i] == "" {
				return cli.Usagef("%s %s is not a sweep, but the other side is; compare two sweeps (sweep.json or a bench sweep --out directory) or two results", role, args[i])
			}
			if sw[i], err = results.ReadSweep(paths[i]); err != nil {
				return cli.Usagef("%s: %v; give a sweep file written by bench sweep", role, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	c := results.CompareSweeps(sw[0], sw[1], maxReg)
	c.Base.File, c.New.File = paths[0], paths[1]
	return printComparison(stdout, asJSON, c, func() error { return report.WriteSweepComparison(stdout, c) }, c.OK(), c.Verdict())
}

const mergeUsage = `
Merges the results of one profile run at the same time on several machines
against one Redis: the way to drive more load than one machine can. Start
bench run with the same profile and flags on each machine, gather the
result files (each .json with its .hlog) and merge them here.

Throughput, acquisitions and errors add up; latency percentiles are read
from the machines' HdrHistograms added together, not averaged; fairness is
recomputed over every owner, named <host>/<owner>; safety violations add
up, but overlaps between machines cannot be checked (their clocks differ),
so the merged safety line says INCOMPLETE. Runs of different profiles or
settings, and a run given twice, are refused before any interval log is
read; differing Redis versions or addresses are noted.

Each RESULT is a result file, or a directory: every run result in it
(chaos reports, sweep files and earlier merged results are skipped; name a
merged result's file to merge it again). The merged result goes to --out
as <profile>-<earliest start>-merged.json with its interval log, so bench
compare, and a further merge, can read it.

Exit codes: 0 merged, 2 bad input (fewer than two results, unreadable
files, a missing interval log, runs of different profiles or settings).`

func mergeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("bench", "merge RESULT...", mergeUsage, stderr)
	out := fs.String("out", "bench-results", "directory for the merged result files")
	pos, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	var paths []string
	var runs []*results.Result
	var hists []map[string]*hdr.Histogram
	refused := func(err error) error {
		var which []string
		for i, p := range paths {
			which = append(which, fmt.Sprintf("run %d is %s", i, p))
		}
		return cli.Usagef("%v (%s)", err, strings.Join(which, ", "))
	}
	logErr := func(err error) error {
		if errors.As(err, new(*infile.Error)) {
			return err // it names the log and why it was refused
		}
		return cli.Usagef("%v: merge adds the runs' histograms, so each result needs its .hlog next to it", err)
	}
	err = cli.ReadInputs(ctx, func() (err error) {
		if paths, err = report.MergeInputs(pos); err != nil {
			return err
		}
		runs = make([]*results.Result, len(paths))
		hists = make([]map[string]*hdr.Histogram, len(paths))
		for i, p := range paths {
			if runs[i], err = results.ReadFile(p); err != nil {
				return cli.Usagef("%v; give result files written by bench run", err)
			}
		}
		// The interval logs may be large: what the result files say, and
		// whether every log is there, is checked before any is read.
		if err := results.CheckMerge(runs); err != nil {
			return refused(err)
		}
		for i, p := range paths {
			if err := results.CheckHistogramLog(p, runs[i]); err != nil {
				return logErr(err)
			}
		}
		for i, p := range paths {
			if hists[i], err = results.LoadHistograms(p, runs[i]); err != nil {
				return logErr(err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	merged, err := results.Merge(runs, hists)
	if err != nil {
		return refused(err)
	}
	if merged.MergedFrom, err = report.MergedFrom(merged, paths, *out); err != nil {
		return err
	}
	path, err := results.WriteFiles(*out, merged)
	if err != nil {
		return err
	}
	return report.WriteMerged(stdout, merged, len(paths), path)
}
