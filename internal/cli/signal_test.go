package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// signalChildEnv makes the test binary act as a program that has finished
// its load and is writing its results: it calls LoadEnded, receives the
// number of SIGINTs given, and reports whether its context was cancelled.
const signalChildEnv = "LOCKBENCH_CLI_SIGNAL_CHILD"

func TestMain(m *testing.M) {
	if n := os.Getenv(signalChildEnv); n != "" {
		os.Exit(signalChild(n))
	}
	os.Exit(m.Run())
}

func signalChild(n string) int {
	ctx, stop := NotifyContext(context.Background(), os.Stderr)
	defer stop()
	LoadEnded(ctx)
	seen := make(chan os.Signal, 2)
	signal.Notify(seen, os.Interrupt)
	for range len(n) {
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		<-seen
	}
	// The handler runs on its own goroutine: give a cancel that would come
	// every chance to come before saying it did not.
	select {
	case <-ctx.Done():
		fmt.Println("cancelled")
		return ExitInterrupted
	case <-time.After(time.Second):
	}
	fmt.Println("not cancelled")
	return ExitOK
}

func runSignalChild(t *testing.T, signals string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), signalChildEnv+"="+signals)
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

// TestSignalAfterLoadEnded: a Ctrl-C that lands after the load ended
// interrupts nothing (no message, no cancel: the program exits with its
// own code), and a second one still quits at once.
func TestSignalAfterLoadEnded(t *testing.T) {
	code, out, errOut := runSignalChild(t, "x")
	if code != ExitOK || strings.TrimSpace(out) != "not cancelled" || errOut != "" {
		t.Errorf("one SIGINT after LoadEnded: exit %d, stdout %q, stderr %q; want 0, not cancelled, nothing", code, out, errOut)
	}
	code, _, _ = runSignalChild(t, "xx")
	if code != ExitInterrupted {
		t.Errorf("two SIGINTs after LoadEnded: exit %d, want %d", code, ExitInterrupted)
	}
}

// TestHelpUnknownCommand: help for a command the program lacks is bad
// input, not the help.
func TestHelpUnknownCommand(t *testing.T) {
	p := Program{Name: "bench", Commands: map[string]Command{"run": {Summary: "run"}}}
	var out, errOut bytes.Buffer
	if code := p.Main(context.Background(), []string{"help", "nosuch"}, &out, &errOut); code != ExitUsage {
		t.Errorf("bench help nosuch: exit %d, want %d", code, ExitUsage)
	}
	if !strings.Contains(errOut.String(), `unknown command "nosuch"`) {
		t.Errorf("stderr %q lacks the unknown command", errOut.String())
	}
	if code := p.Main(context.Background(), []string{"help", "version"}, &out, &errOut); code != ExitOK {
		t.Errorf("bench help version: exit %d, want 0", code)
	}
}
