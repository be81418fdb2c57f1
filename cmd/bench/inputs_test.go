package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/infile"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisson"
)

// maxChildRSS is more memory than bench needs for any of these cases: a
// child past it is reading an endless file into memory, and is stopped
// before it takes the host's.
const maxChildRSS = 1 << 30

// runProcess runs the real program (this test binary as bench) with args
// and returns its exit code and stderr. It fails t if the program reads an
// endless file into memory, or has not ended within Patience; a hung one
// is then sent SIGINT as a user would, and t says whether that ended it.
func runProcess(t *testing.T, args ...string) (code int, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(args, " "), "REDIS_URL=", "TMPDIR="+t.TempDir())
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exit := func(err error) int {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 0
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(testkit.Patience)
	for {
		select {
		case err := <-done:
			return exit(err), errOut.String()
		case <-tick.C:
			if rss := childRSS(cmd.Process.Pid); rss > maxChildRSS {
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("bench %s kept reading: %d MiB of memory and growing\n%s", strings.Join(args, " "), rss>>20, errOut.String())
			}
		case <-deadline:
			_ = cmd.Process.Signal(syscall.SIGINT)
			select {
			case err := <-done:
				t.Fatalf("bench %s hung for %v until a SIGINT (then exit %d):\n%s", strings.Join(args, " "), testkit.Patience, exit(err), errOut.String())
			case <-time.After(testkit.Patience):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("bench %s hung for %v, and a SIGINT did not end it:\n%s", strings.Join(args, " "), testkit.Patience, errOut.String())
			}
		}
	}
}

// childRSS is pid's resident memory in bytes, 0 where /proc does not say.
func childRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sparse makes a file of n zero bytes that takes no room on disk.
func sparse(t *testing.T, path string, n int64) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(n); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInputFilesRefused: every file bench reads (a profile, result files
// and their interval logs, whatever report, compare and merge are given) is
// refused when it is a device, a FIFO or over its limit: at once, exit 2,
// one line naming the file and why. The program runs as a process, so a
// read that would never end (/dev/zero, a FIFO no one writes) shows as a
// hang or a growing memory instead of stalling the test.
func TestInputFilesRefused(t *testing.T) {
	dir := t.TempDir()
	good := writeRun(t, filepath.Join(dir, "good"), run{profile: "mutex", host: "a", start: t0, acquire: time.Millisecond, ops: 10})
	pipe := mkfifo(t, filepath.Join(dir, "pipe.json"))
	bigProfile := sparse(t, filepath.Join(dir, "big.yaml"), int64(infile.Profile)+1)
	bigJSON := sparse(t, filepath.Join(dir, "big.json"), int64(infile.JSON)+1)
	// A result whose interval log is a FIFO, and one whose log is /dev/zero.
	pipeLog := writeRun(t, filepath.Join(dir, "pipelog"), run{profile: "mutex", host: "c", start: t0, acquire: time.Millisecond, ops: 10})
	zeroLog := writeRun(t, filepath.Join(dir, "zerolog"), run{profile: "mutex", host: "d", start: t0, acquire: time.Millisecond, ops: 10})
	for p, swap := range map[string]func(string) error{
		pipeLog: func(log string) error { return syscall.Mkfifo(log, 0o644) },
		zeroLog: func(log string) error { return os.Symlink("/dev/zero", log) },
	} {
		log := strings.TrimSuffix(p, ".json") + ".hlog"
		if err := os.Remove(log); err != nil {
			t.Fatal(err)
		}
		if err := swap(log); err != nil {
			t.Fatal(err)
		}
	}
	const (
		device  = "is a character device, not a regular file"
		fifo    = "is a named pipe (FIFO), not a regular file"
		profile = "over the 1 MiB limit for a profile"
		json    = "over the 256 MiB limit for a lockbench JSON file"
	)
	pipeHlog := strings.TrimSuffix(pipeLog, ".json") + ".hlog"
	zeroHlog := strings.TrimSuffix(zeroLog, ".json") + ".hlog"
	for _, tc := range []struct {
		args []string
		file string // the file the line names
		want string
	}{
		{[]string{"run", "--profile-file", "/dev/zero"}, "/dev/zero", device},
		{[]string{"run", "--profile-file", pipe}, pipe, fifo},
		{[]string{"run", "--profile-file", bigProfile}, bigProfile, profile},
		{[]string{"sweep", "--profile-file", pipe}, pipe, fifo},
		{[]string{"report", "/dev/zero"}, "/dev/zero", device},
		{[]string{"report", pipe}, pipe, fifo},
		{[]string{"report", bigJSON}, bigJSON, json},
		{[]string{"report", dir}, bigJSON, json}, // a scan skips the FIFO, not what is too large
		{[]string{"compare", "/dev/zero", good}, "/dev/zero", device},
		{[]string{"compare", good, pipe}, pipe, fifo},
		{[]string{"compare", good, bigJSON}, bigJSON, json},
		{[]string{"merge", "/dev/zero", good}, "/dev/zero", device},
		{[]string{"merge", good, pipe}, pipe, fifo},
		{[]string{"merge", good, bigJSON}, bigJSON, json},
		{[]string{"merge", good, pipeLog, "--out", t.TempDir()}, pipeHlog, fifo},
		{[]string{"merge", good, zeroLog, "--out", t.TempDir()}, zeroHlog, device},
	} {
		label := filepath.Base(tc.file)
		if strings.HasSuffix(label, ".hlog") {
			label = filepath.Base(filepath.Dir(tc.file)) + ".hlog"
		}
		if tc.args[1] == dir {
			label = "dir"
		}
		t.Run(tc.args[0]+" "+label, func(t *testing.T) {
			t.Parallel()
			code, errOut := runProcess(t, tc.args...)
			if code != cli.ExitUsage || !strings.Contains(errOut, tc.file) || !strings.Contains(errOut, tc.want) {
				t.Errorf("bench %s: exit %d, stderr:\n%s\nwant exit %d and a line naming %s: %q", strings.Join(tc.args, " "), code, errOut, cli.ExitUsage, tc.file, tc.want)
			}
			if n := strings.Count(strings.TrimSpace(errOut), "\n"); n > 0 {
				t.Errorf("bench %s: want one line, got %d:\n%s", strings.Join(tc.args, " "), n+1, errOut)
			}
		})
	}
}

// TestReportDirWithPipes: bench report on a directory that holds a FIFO
// named like a result, and a result whose interval log is a FIFO, reports
// what it can read and skips the rest; it never waits for a writer.
func TestReportDirWithPipes(t *testing.T) {
	dir := t.TempDir()
	res := writeRun(t, dir, run{profile: "mutex", host: "a", start: t0, acquire: time.Millisecond, ops: 10})
	mkfifo(t, filepath.Join(dir, "zz.json"))
	log := strings.TrimSuffix(res, ".json") + ".hlog"
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, log)
	out := filepath.Join(t.TempDir(), "report.html")
	code, errOut := runProcess(t, "report", dir, "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("bench report %s: exit %d:\n%s", dir, code, errOut)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no report: %v", err)
	}
}

// TestReportChecksBeforeReadingLogs: bench report refuses a bad input or
// an --out that names one of its inputs before it opens any interval log
// (a log may be large, and was read in full before the refusal), and a
// report that goes ahead reads the logs it shows.
func TestReportChecksBeforeReadingLogs(t *testing.T) {
	dir := t.TempDir()
	res := writeRun(t, filepath.Join(dir, "runs"), run{profile: "mutex", host: "a", start: t0, acquire: time.Millisecond, ops: 10})
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"x": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", res, other, "--out", filepath.Join(dir, "r.html")}, "not a lockbench file"},
		{[]string{"report", res, "--out", res}, "is one of the report's inputs"},
	} {
		opened := testkit.WatchOpens(t, hlogOf(res))
		code, _, errOut := runBench(t, tc.args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("bench %s: exit %d, want %d saying %q:\n%s", strings.Join(tc.args, " "), code, cli.ExitUsage, tc.want, errOut)
		}
		if o := opened(); len(o) > 0 {
			t.Errorf("bench %s: opened %q before refusing", strings.Join(tc.args, " "), o)
		}
	}
	opened := testkit.WatchOpens(t, hlogOf(res))
	out, _ := runBenchOK(t, "report", res, "--out", filepath.Join(dir, "r.html"))
	if o := opened(); len(o) != 1 {
		t.Errorf("a report opened %q, want the run's log", o)
	}
	if !strings.Contains(out, "(1 run, 0 chaos scenarios, 0 sweeps)") {
		t.Errorf("bench report of one run says:\n%s", out)
	}
}

// TestRedissonJarRefused: a $LOCKBENCH_REDISSON_JAR that is no jar (a
// FIFO, which would block the JVM, a text file, a directory) is refused
// before the run starts: exit 2, one line naming the variable, the file
// and why, and no "running" line.
func TestRedissonJarRefused(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java on PATH: the jar is looked at only where a JVM could run it")
	}
	dir := t.TempDir()
	text := filepath.Join(dir, "passwd")
	if err := os.WriteFile(text, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, jar, want string }{
		{"fifo", mkfifo(t, filepath.Join(dir, "pipe.jar")), "is a named pipe (FIFO), not a regular file"},
		{"text", text, "is not a jar"},
		{"dir", dir, "is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(redisson.JarEnv, tc.jar)
			code, errOut := runProcess(t, "run", "--impl", "redisson", "--profile", "mutex", "--duration", "1s", "--out", t.TempDir())
			switch {
			case code != cli.ExitUsage, !strings.Contains(errOut, "$"+redisson.JarEnv+"="+tc.jar+": "+tc.want):
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and a line naming $%s=%s: %s", code, errOut, cli.ExitUsage, redisson.JarEnv, tc.jar, tc.want)
			case strings.Count(strings.TrimSpace(errOut), "\n") > 0, strings.Contains(errOut, "running"):
				t.Errorf("want one line before anything runs, got:\n%s", errOut)
			}
		})
	}
}
