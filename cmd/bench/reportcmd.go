package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

const reportUsage = `
Turns result files into a report people read: run metadata, a summary
table, latency percentile spectra, throughput over time (fault windows
shaded), fairness, holder timelines, the safety verdict, and a comparison
table when several runs are given. Chaos reports (*.chaos.json) come with
their verdicts, checks and runs; sweeps (sweep.json) with their capacity
curves.

Each argument is a file or a directory (every lockbench file in it).
--format html (default) is one self-contained file: charts embedded, no
scripts, no external fonts. --format md writes Markdown with its charts as
PNG files in a directory beside it. bench run --out and chaos run --out
write an HTML report on their own. --out never replaces one of the
report's inputs, nor any lockbench result, chaos report, sweep or interval
log.`

func reportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("bench", "report RESULT_DIR_OR_FILE...", reportUsage, stderr)
	format := fs.String("format", "", "html or md (default: from --out's extension, else html)")
	out := fs.String("out", "", "report file (default: report.html or report.md in the first directory given, or next to the first file)")
	title := fs.String("title", "", "the report's title (default: from the content)")
	paths, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return cli.Usagef("bench report: give at least one result file or directory, e.g. bench report bench-results")
	}
	f := report.Format(strings.ToLower(*format))
	switch f {
	case "":
		f = report.FormatFor(*out, report.HTML)
	case report.HTML, report.Markdown:
	case "markdown":
		f = report.Markdown
	default:
		return cli.Usagef("--format %q: want html or md", *format)
	}
	var in *report.Input
	if err := cli.ReadInputs(ctx, func() (err error) { in, err = report.LoadFiles(paths...); return err }); err != nil {
		return err
	}
	in.Runs = onePerRun(in.Runs, stderr)
	path := *out
	if path == "" {
		dir := paths[0]
		if filepath.Ext(dir) == ".json" {
			dir = filepath.Dir(dir)
		}
		path = filepath.Join(dir, "report."+string(f))
	}
	if err := report.RefuseOverwrite(path, paths, in); err != nil {
		return err
	}
	// The interval logs, which may be large, are read once every input
	// and --out's name passed; --out's directory is made after this last
	// read a Ctrl-C may cut, so that such a Ctrl-C leaves nothing behind.
	_ = cli.ReadInputs(ctx, func() error { in.ReadLogs(); return nil })
	made, err := cli.CheckOutFile("--out", path)
	if err != nil {
		return err
	}
	defer made.Prune()
	if err := report.Write(path, in, report.Options{Title: *title, Format: f, Generator: cli.VersionString()}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report      %s (%s, %s, %s)\n", path, results.Count(len(in.Runs), "run"), results.Count(len(in.Scenarios), "chaos scenario"), results.Count(len(in.Sweeps), "sweep"))
	return nil
}

// onePerRun keeps one result of each run among runs: a spread run
// collected twice into one directory, or a file given twice, is shown
// once. It keeps the most complete (fewest workers missing), then the
// latest written, and says on stderr which it left out.
func onePerRun(runs []*report.Run, stderr io.Writer) []*report.Run {
	var out []*report.Run
	for _, r := range runs {
		i := slices.IndexFunc(out, func(o *report.Run) bool { return results.SameRun(o.Result, r.Result) })
		if i < 0 {
			out = append(out, r)
			continue
		}
		keep, drop := out[i], r
		if better(r, keep) {
			keep, drop = r, keep
		}
		out[i] = keep
		fmt.Fprintf(stderr, "bench: %s and %s are one run: the report shows %s\n", drop.Path, keep.Path, keep.Path)
	}
	return out
}

// better reports whether a is the result of a run to show rather than b,
// another of the same run's.
func better(a, b *report.Run) bool {
	ma, mb := len(a.Result.Spread.MissingWorkers()), len(b.Result.Spread.MissingWorkers())
	if ma != mb {
		return ma < mb
	}
	sa, errA := os.Stat(a.Path)
	sb, errB := os.Stat(b.Path)
	return errA == nil && errB == nil && sa.ModTime().After(sb.ModTime())
}
