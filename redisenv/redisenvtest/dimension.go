package redisenvtest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
)

// EnvServer names the server the tests start (redisenv.Config.Server):
// "redis" (the default when unset) or "valkey". The Valkey dimension sets
// it; a developer may too, to run any package's tests on Valkey.
const EnvServer = "LOCKBENCH_TEST_SERVER"

// envRerun marks a test binary run again under dimensions: it runs its
// tests and none again.
const envRerun = "LOCKBENCH_TEST_RERUN"

// Server is the server this run of the tests starts: "" (Redis) or
// what $LOCKBENCH_TEST_SERVER names.
func Server() string { return strings.TrimSpace(os.Getenv(EnvServer)) }

// Dimension is a setting a test binary's tests run once more under: the
// binary runs again with Env=Value, so that the same tests prove the
// same things there (not a copy of them).
type Dimension struct {
	Name  string // e.g. "valkey"
	Env   string // the environment variable that selects it
	Value string
	// Run, when set, is the -test.run of the runs under this dimension:
	// the tests that matter there. A -run given to the binary wins: a
	// developer's chosen tests run under the dimension as they asked.
	Run string
	// Skip says why the dimension cannot run here, naming the fix; its
	// runs are then skipped with that one line.
	Skip string
}

// Valkey is the dimension that runs the tests (those run matches, all
// when empty) on Valkey, or a skipped one: naming how to install
// valkey-server when it is missing, and when the tests as they are
// already run on Valkey.
func Valkey(run string) Dimension {
	d := Dimension{Name: "valkey", Env: EnvServer, Value: redisenv.ServerValkey, Run: run}
	if Server() == redisenv.ServerValkey {
		d.Skip = "the tests already ran on valkey ($" + EnvServer + ")"
	} else if _, err := redisenv.FindServer(redisenv.ServerValkey); err != nil {
		d.Skip = err.Error()
	}
	return d
}

// MainIn is Main for a package whose tests also run under dims (see
// Rerun).
func MainIn(m *testing.M, dims []Dimension, opts ...goleak.Option) {
	teardown := SetupEngine()
	code := m.Run()
	teardown()
	os.Exit(Rerun(testkit.CheckLeaks(code, opts...), dims...))
}

// MainAlongside is MainIn with the runs under dims started alongside the
// tests as they are, not after them: for the package whose time is the
// whole suite's longest, when its tests mostly wait on servers and
// faults. A failing run still fails the package.
func MainAlongside(m *testing.M, dims []Dimension, opts ...goleak.Option) {
	if !flag.Parsed() {
		flag.Parse() // rerunnable reads the testing flags before m.Run would parse them
	}
	wait := func() int { return 0 }
	if os.Getenv(envRerun) == "" && rerunnable() {
		wait = startReruns(dims)
	}
	teardown := SetupEngine()
	code := m.Run()
	teardown()
	// Waited for before the leak check: the runs are watched by
	// goroutines of this binary.
	rerunCode := wait()
	code = testkit.CheckLeaks(code, opts...)
	if code == 0 {
		code = rerunCode
	}
	os.Exit(code)
}

// Rerun, given the exit code of the tests as they ran, runs the binary
// again when they passed, with the same flags, under every combination
// of dims (with two dimensions, three more runs), and returns the first
// failing exit code, else 0. A run under dimensions reruns nothing, and
// benchmarks, -test.list and coverage profiles (which a rerun would
// overwrite) are not rerun.
func Rerun(code int, dims ...Dimension) int {
	if code != 0 || os.Getenv(envRerun) != "" || !rerunnable() {
		return code
	}
	return rerun(dims)
}

// runGiven reports whether the binary was given a -test.run.
func runGiven() bool {
	f := flag.Lookup("test.run")
	return f != nil && f.Value.String() != ""
}

// rerunnable reports whether this run's tests may run again.
func rerunnable() bool {
	for _, name := range []string{"test.bench", "test.list", "test.coverprofile"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// rerun runs the binary under each non-empty combination of dims, all at
// once (the tests mostly wait on servers and timers, so the runs overlap
// well on two cores), and returns the first failing exit code in the
// order of the combinations, the first dimension varying fastest (0 when
// all pass). Each run's output is printed whole, in that order.
func rerun(dims []Dimension) int { return startReruns(dims)() }

// startReruns starts the runs rerun makes and returns the wait for them,
// which prints their output and returns rerun's exit code.
func startReruns(dims []Dimension) (wait func() int) {
	type result struct {
		out  bytes.Buffer
		code int
	}
	var runs []*result
	var wg sync.WaitGroup
	for mask := 1; mask < 1<<len(dims); mask++ {
		var on []Dimension
		for i, d := range dims {
			if mask&(1<<i) != 0 {
				on = append(on, d)
			}
		}
		r := &result{}
		runs = append(runs, r)
		wg.Go(func() { r.code = runUnder(on, &r.out) })
	}
	return func() int {
		wg.Wait()
		code := 0
		for _, r := range runs {
			_, _ = os.Stderr.Write(r.out.Bytes())
			if code == 0 {
				code = r.code
			}
		}
		return code
	}
}

// runUnder runs the binary again under the dimensions on, its output to
// out.
func runUnder(on []Dimension, out *bytes.Buffer) int {
	var names, env []string
	args := append([]string(nil), os.Args[1:]...)
	for _, d := range on {
		names = append(names, d.Name)
		if d.Skip != "" {
			note(out, fmt.Sprintf("%s run of %s skipped: %s", strings.Join(names, "+"), filepath.Base(os.Args[0]), d.Skip))
			return 0
		}
		env = append(env, d.Env+"="+d.Value)
		if d.Run != "" && !runGiven() {
			args = append(args, "-test.run="+d.Run) // the last -test.run wins
		}
	}
	label := strings.Join(names, "+")
	fmt.Fprintf(out, "%s: the tests again under %s (%s)\n", filepath.Base(os.Args[0]), label, strings.Join(env, " "))
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), env...), envRerun+"=1")
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			note(out, fmt.Sprintf("%s run of %s FAILED (exit %d)", label, filepath.Base(os.Args[0]), ee.ExitCode()))
			return max(ee.ExitCode(), 1)
		}
		fmt.Fprintf(out, "%s: running the tests under %s: %v\n", filepath.Base(os.Args[0]), label, err)
		return 1
	}
	note(out, fmt.Sprintf("%s run of %s passed in %v", label, filepath.Base(os.Args[0]), time.Since(start).Round(time.Second)))
	return 0
}

// note writes line to out and appends it to $LOCKBENCH_ENGINE_LOG, which
// make test prints (go test shows nothing of a passing package).
func note(out io.Writer, line string) {
	fmt.Fprintln(out, line)
	appendLog(line)
}

// appendLog appends line to $LOCKBENCH_ENGINE_LOG, if set.
func appendLog(line string) {
	path := os.Getenv(EnvEngineLog)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintln(f, line)
	f.Close()
}
