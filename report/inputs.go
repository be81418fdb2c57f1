package report

// How the programs resolve their input arguments into lockbench files:
// a file as given, a directory to the files in it, and the guards that
// keep a derived file from replacing a source.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/internal/infile"
	"github.com/lockbench/lockbench/results"
)

// ResultFile resolves a BASE or NEW argument: a file as it is, a
// directory to the one result file in it.
func ResultFile(role, arg string) (string, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return "", inputErrorf("%s %s: %v; give a result file (.json) written by bench run, or a directory holding one", role, arg, statReason(err))
	}
	if !st.IsDir() {
		return arg, nil
	}
	found, others, err := scanResults(arg)
	if err != nil {
		return "", inputErrorf("%s %s: %v", role, arg, err)
	}
	var runs []string
	for _, f := range found {
		runs = append(runs, filepath.Base(f.Path))
	}
	switch len(runs) {
	case 1:
		return found[0].Path, nil
	case 0:
		return "", inputErrorf("%s %s: no result file (%s) in the directory%s; give a result file written by bench run", role, arg, results.Schema, listOthers(others))
	}
	return "", inputErrorf("%s %s: the directory holds %d result files (%s); name the one to compare", role, arg, len(runs), strings.Join(runs, ", "))
}

// SweepFile is arg's sweep file, when arg is one or a directory holding
// one (as bench sweep's --out does); "" when arg is neither, so that the
// caller reads it as a result. An arg that cannot be read, or a directory
// holding several sweeps, is an error naming role.
func SweepFile(role, arg string) (string, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return "", inputErrorf("%s %s: %v; give a sweep (sweep.json, or a bench sweep --out directory) or a result file", role, arg, statReason(err))
	}
	if !st.IsDir() {
		if h, err := readHead(arg); err == nil && results.KindOf(h.Schema) == results.KindSweep {
			return arg, nil
		}
		return "", nil
	}
	files, err := Scan(arg)
	if err != nil {
		return "", inputErrorf("%s %s: %v", role, arg, err)
	}
	var found []string
	for _, f := range files {
		if f.Kind == results.KindSweep {
			found = append(found, f.Path)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", inputErrorf("%s %s: the directory holds %d sweep files; name the one to compare", role, arg, len(found))
}

func statReason(err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return "no such file or directory"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func listOthers(others []string) string {
	if len(others) == 0 {
		return ""
	}
	return " (found only " + strings.Join(others, ", ") + ")"
}

// scanResults lists dir's result files, telling merged ones apart, and
// names the other JSON files (chaos reports, sweeps) with their schema.
func scanResults(dir string) (runs []File, others []string, err error) {
	files, err := Scan(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		switch {
		case f.Schema == "":
			others = append(others, filepath.Base(f.Path)+" (not a lockbench file)")
		case f.Kind != results.KindResult:
			others = append(others, fmt.Sprintf("%s (schema %q)", filepath.Base(f.Path), f.Schema))
		default:
			runs = append(runs, f)
		}
	}
	return runs, others, nil
}

// MergeInputs expands bench merge's arguments into result files: a file
// as given, a directory to the run results in it. A file named twice is
// refused: it would count its run twice.
func MergeInputs(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, inputErrorf("merge needs the results to merge: e.g. bench merge host1/ host2/ --out merged")
	}
	var paths []string
	seen := map[string]string{}
	add := func(p, arg string) error {
		abs, err := filepath.Abs(p)
		if err != nil {
			return inputErrorf("RESULT %s: %v", arg, err)
		}
		if prev, ok := seen[abs]; ok {
			return inputErrorf("RESULT %s: given twice (as %s and %s); merging a run with itself would count it twice", p, prev, arg)
		}
		seen[abs] = arg
		paths = append(paths, p)
		return nil
	}
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil {
			return nil, inputErrorf("RESULT %s: %v; give result files written by bench run, or directories holding them", arg, statReason(err))
		}
		if !st.IsDir() {
			if err := add(arg, arg); err != nil {
				return nil, err
			}
			continue
		}
		found, others, err := scanResults(arg)
		if err != nil {
			return nil, inputErrorf("RESULT %s: %v", arg, err)
		}
		n := 0
		for _, f := range found {
			if f.Merged {
				continue // its sources are likely here too; name it to merge it
			}
			if err := add(f.Path, arg); err != nil {
				return nil, err
			}
			n++
		}
		if n == 0 {
			return nil, inputErrorf("RESULT %s: no run result in the directory%s", arg, listOthers(append(others, mergedNames(found)...)))
		}
	}
	if len(paths) < 2 {
		return nil, inputErrorf("merge needs at least 2 results, got %d (%s): one per machine", len(paths), strings.Join(paths, ", "))
	}
	return paths, nil
}

func mergedNames(files []File) []string {
	var out []string
	for _, f := range files {
		if f.Merged {
			out = append(out, filepath.Base(f.Path)+" (merged)")
		}
	}
	return out
}

// RefuseOverwrite refuses a report path that names one of the report's
// inputs, or any lockbench result, chaos report, sweep or interval log:
// a report is derived, its sources are not, and a slip of --out must not
// destroy a run.
func RefuseOverwrite(path string, args []string, in *Input) error {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return a
	}
	target := abs(path)
	inputs := slices.Clone(args)
	for _, r := range in.Runs {
		inputs = append(inputs, r.Path)
		if r.Result.HistogramLog != "" {
			inputs = append(inputs, filepath.Join(filepath.Dir(r.Path), r.Result.HistogramLog))
		}
	}
	for _, s := range in.Scenarios {
		inputs = append(inputs, s.Path)
	}
	for _, s := range in.Sweeps {
		inputs = append(inputs, s.Path)
	}
	for _, p := range inputs {
		if abs(p) == target {
			return inputErrorf("--out %s: is one of the report's inputs; write the report elsewhere, e.g. --out report.html", path)
		}
	}
	if strings.HasSuffix(path, ".hlog") {
		return inputErrorf("--out %s: an interval log's name; write the report to a .html or .md file", path)
	}
	if b, err := infile.Read(path, infile.JSON); err == nil {
		var head struct {
			Schema string `json:"schema"`
		}
		if json.Unmarshal(b, &head) == nil && results.KindOf(head.Schema) != "" {
			return inputErrorf("--out %s: holds a lockbench %s file (schema %s); write the report elsewhere", path, results.KindOf(head.Schema), head.Schema)
		}
	}
	return nil
}

// MergedFrom names a merge's sources as the merged file in out will find
// them, refusing a merged result whose name is a source's (a merge of
// merges): it must not replace its source.
func MergedFrom(merged *results.Result, paths []string, out string) ([]string, error) {
	absOut, err := filepath.Abs(out)
	if err != nil {
		return nil, inputErrorf("--out %s: %v", out, err)
	}
	target := filepath.Join(absOut, merged.Stem()+".json")
	var from []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, inputErrorf("RESULT %s: %v", p, err)
		}
		if abs == target {
			return nil, inputErrorf("the merged result would overwrite its source %s; choose another --out", p)
		}
		rel, err := filepath.Rel(absOut, abs)
		if err != nil {
			rel = abs
		}
		from = append(from, rel)
	}
	return from, nil
}
