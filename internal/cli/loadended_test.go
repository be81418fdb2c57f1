package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// loadEndedHelperEnv makes TestLoadEndedHelper act as a program that
// receives SIGINTs; its value is the case to play (see loadEndedChild).
const loadEndedHelperEnv = "LOCKBENCH_CLI_LOADENDED_HELPER"

// TestLoadEndedHelper is not a test of its own: TestLoadEnded re-executes
// the test binary to run it, since it takes real signals and may exit.
func TestLoadEndedHelper(t *testing.T) {
	mode := os.Getenv(loadEndedHelperEnv)
	if mode == "" {
		t.Skip("helper for TestLoadEnded; runs only when re-executed")
	}
	os.Exit(loadEndedChild(mode))
}

// handled waits until ctx's signal handling has acted on its first signal.
func handled(ctx context.Context) bool {
	select {
	case <-ctx.Value(signalKey{}).(*signalState).handled:
		return true
	case <-time.After(time.Minute): // a deadline on the event, not a sleep
		fmt.Println("the first signal was never handled")
		return false
	}
}

// loadEndedChild plays one case and prints what its contexts saw:
//
//	running:     one SIGINT during the load
//	ended:       LoadEnded (on a context derived from NotifyContext's), then one SIGINT
//	ended-twice: LoadEnded, then two SIGINTs
//	parallel:    two NotifyContexts, LoadEnded on the first only, one SIGINT
//	reading:     one SIGINT while ReadInputs reads (a read that never ends)
//	read-done:   ReadInputs returned, then one SIGINT
func loadEndedChild(mode string) int {
	ctx, stop := NotifyContext(context.Background(), os.Stderr)
	defer stop()
	// LoadEnded on a context NotifyContext did not make does nothing.
	LoadEnded(context.Background())
	run, cancel := context.WithCancel(ctx) // a command's context
	defer cancel()
	other := context.Background()
	if mode == "parallel" {
		var stopOther context.CancelFunc
		other, stopOther = NotifyContext(context.Background(), os.Stderr)
		defer stopOther()
	}
	if mode == "ended" || mode == "ended-twice" || mode == "parallel" {
		LoadEnded(run)
	}
	raise := func() { _ = syscall.Kill(os.Getpid(), syscall.SIGINT) }
	switch mode {
	case "reading":
		_ = ReadInputs(run, func() error {
			raise()
			<-time.After(time.Minute)
			fmt.Println("the signal did not end the read")
			return nil
		})
		return 3
	case "read-done":
		if err := ReadInputs(run, func() error { return nil }); err != nil {
			return 3
		}
	}
	raise()
	if !handled(ctx) {
		return 3
	}
	switch mode {
	case "ended-twice":
		// The handler now waits for a second signal (sent only now: the
		// runtime would merge two pending SIGINTs into one) and exits 130.
		raise()
		<-time.After(time.Minute)
		fmt.Println("the second signal did not end the process")
		return 3
	case "parallel":
		if !handled(other) {
			return 3
		}
		fmt.Printf("ended: cancelled=%v; other: cancelled=%v\n", ctx.Err() != nil, other.Err() != nil)
		return 0
	}
	fmt.Printf("cancelled=%v cause=%v\n", ctx.Err() != nil, context.Cause(ctx))
	return 0
}

func runLoadEndedChild(t *testing.T, mode string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadEndedHelper$", "-test.timeout=3m")
	cmd.Env = append(os.Environ(), loadEndedHelperEnv+"="+mode, "TMPDIR="+t.TempDir())
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("child: %v", err)
	}
	return code, out.String(), errOut.String()
}

// TestLoadEnded: with real signals, a SIGINT during the load stops it
// with one line on stderr; after LoadEnded (called on any context derived
// from NotifyContext's) the first SIGINT neither cancels nor prints, so the
// program finishes and exits with its own code, while a second still quits
// at once with 130. Each context has its own state: LoadEnded on one
// leaves another's handling as it was. A SIGINT while the input files are
// read (ReadInputs) exits at once with 130, and one after the reading
// stops the load as usual.
func TestLoadEnded(t *testing.T) {
	const msg = "\ninterrupt: stopping and cleaning up (again to quit at once)\n"
	for _, tc := range []struct {
		mode   string
		code   int
		stdout string
		stderr string
	}{
		{"running", ExitOK, "cancelled=true cause=context canceled by interrupt\n", msg},
		{"ended", ExitOK, "cancelled=false cause=<nil>\n", ""},
		{"ended-twice", ExitInterrupted, "", ""},
		{"parallel", ExitOK, "ended: cancelled=false; other: cancelled=true\n", msg},
		// A read does not watch ctx: the signal ends the program at once.
		{"reading", ExitInterrupted, "", "\ninterrupt: stopped while reading the input files\n"},
		{"read-done", ExitOK, "cancelled=true cause=context canceled by interrupt\n", msg},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runLoadEndedChild(t, tc.mode)
			if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.mode, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}
