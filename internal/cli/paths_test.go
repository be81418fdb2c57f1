package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckOutputs: output paths a run could not write at its end are
// refused before it starts, as bad input naming the flag, and nothing is
// left behind by the checks.
func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, strings.Repeat("n", 300)+".prof")
	for _, tc := range []struct {
		name  string
		check func() (Created, error)
		want  string // "" for no error
	}{
		{"new out dir", func() (Created, error) { return CheckOutDir("--out", filepath.Join(dir, "new", "results")) }, ""},
		{"out is a file", func() (Created, error) { return CheckOutDir("--out", file) }, "--out " + file + ": is a file, not a directory"},
		{"out under a file", func() (Created, error) { return CheckOutDir("--out", filepath.Join(file, "sub")) }, "cannot create it"},
		{"out not writable", func() (Created, error) { return CheckOutDir("--out", "/proc/self") }, "cannot write into it"},
		{"profile in a dir", func() (Created, error) { return CheckOutFile("--memprofile", filepath.Join(dir, "mem.prof")) }, ""},
		{"profile in a new dir", func() (Created, error) {
			return CheckOutFile("--cpuprofile", filepath.Join(dir, "new", "prof", "x.prof"))
		}, ""},
		{"profile is a dir", func() (Created, error) { return CheckOutFile("--memprofile", dir) }, "is a directory"},
		{"dir not creatable", func() (Created, error) { return CheckOutFile("--cpuprofile", "/proc/self/new/x.prof") }, "cannot create its directory /proc/self/new"},
		{"under a file", func() (Created, error) { return CheckOutFile("--junit", filepath.Join(file, "x.xml")) }, "is a file, not a directory"},
		{"under a file, deeper", func() (Created, error) { return CheckOutFile("--junit", filepath.Join(file, "sub", "x.xml")) }, "is a file, not a directory"},
		{"name too long", func() (Created, error) { return CheckOutFile("--memprofile", long) }, "file name too long"},
	} {
		_, err := tc.check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want it to say %q", tc.name, err, tc.want)
		case tc.want != "" && ExitCode(err) != ExitUsage:
			t.Errorf("%s: exit code %d, want %d", tc.name, ExitCode(err), ExitUsage)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "mem.prof")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CheckOutFile created the file it checked: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*", ".lockbench-probe-*"))
	more, _ := filepath.Glob(filepath.Join(dir, ".lockbench-probe-*"))
	if len(left)+len(more) > 0 {
		t.Errorf("probe files left behind: %v %v", left, more)
	}
}

// TestPruneCreated: an output directory a check created is taken away
// again when nothing was written into it, empty subdirectories and all;
// one with a file in it stays, and one that existed before the check is
// never removed.
func TestPruneCreated(t *testing.T) {
	dir := t.TempDir()
	had := filepath.Join(dir, "had")
	if err := os.Mkdir(had, 0o755); err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	made, err := CheckOutDir("--out", filepath.Join(had, "a", "b"))
	if err != nil || len(made) != 2 {
		t.Fatalf("CheckOutDir: %v, created %v", err, made)
	}
	if err := os.MkdirAll(filepath.Join(had, "a", "b", "points"), 0o755); err != nil {
		t.Fatal(err)
	}
	made.Prune()
	if exists(filepath.Join(had, "a")) || !exists(had) {
		t.Errorf("nothing written: %s left behind, or %s (which existed) removed", filepath.Join(had, "a"), had)
	}

	made, err = CheckOutDir("--out", filepath.Join(had, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(had, "a", "b", "run.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	made.Prune()
	if !exists(filepath.Join(had, "a", "b", "run.json")) {
		t.Errorf("a directory with a result in it was pruned")
	}

	made, err = CheckOutDir("--out", had)
	if err != nil || len(made) != 0 {
		t.Fatalf("an existing --out: %v, created %v", err, made)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	made, _ = CheckOutDir("--out", empty)
	made.Prune()
	if !exists(empty) {
		t.Errorf("an empty directory the user had was removed")
	}

	made, err = CheckOutFile("--out", filepath.Join(dir, "rep", "report.html"))
	if err != nil || !exists(filepath.Join(dir, "rep")) {
		t.Fatalf("CheckOutFile into a missing directory: %v", err)
	}
	made.Prune()
	if exists(filepath.Join(dir, "rep")) {
		t.Errorf("CheckOutFile's directory left behind with nothing in it")
	}
}
