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
		check func() error
		want  string // "" for no error
	}{
		{"new out dir", func() error { return CheckOutDir("--out", filepath.Join(dir, "new", "results")) }, ""},
		{"out is a file", func() error { return CheckOutDir("--out", file) }, "--out " + file + ": is a file, not a directory"},
		{"out under a file", func() error { return CheckOutDir("--out", filepath.Join(file, "sub")) }, "cannot create it"},
		{"out not writable", func() error { return CheckOutDir("--out", "/proc/self") }, "cannot write into it"},
		{"profile in a dir", func() error { return CheckOutFile("--memprofile", filepath.Join(dir, "mem.prof")) }, ""},
		{"profile is a dir", func() error { return CheckOutFile("--memprofile", dir) }, "is a directory"},
		{"missing dir", func() error { return CheckOutFile("--cpuprofile", "/nonexistent/x.prof") }, "directory /nonexistent does not exist"},
		{"under a file", func() error { return CheckOutFile("--junit", filepath.Join(file, "x.xml")) }, "is a file, not a directory"},
		{"name too long", func() error { return CheckOutFile("--memprofile", long) }, "file name too long"},
	} {
		err := tc.check()
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
