package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/redisenv"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("boom"), ExitFailure},
		{Usagef("--x: bad"), ExitUsage},
		{fmt.Errorf("wrapped: %w", &redisenv.ConfigError{Field: "redis", Fix: "f"}), ExitUsage},
		{fmt.Errorf("run: %w", context.Canceled), ExitInterrupted},
		{context.DeadlineExceeded, ExitFailure},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestInterruptLine: a command a signal stopped ends with one plain line
// saying so, with how far it got, never Go's "context canceled".
func TestInterruptLine(t *testing.T) {
	cause := fmt.Errorf("%w by %v", context.Canceled, os.Interrupt) // what NotifyContext cancels with
	for _, tc := range []struct {
		err  error
		want string
	}{
		{context.Canceled, "chaos: interrupted\n"},
		{cause, "chaos: interrupted\n"},
		{fmt.Errorf("after 2 of 5 scenarios: %w", cause), "chaos: interrupted: after 2 of 5 scenarios\n"},
		{fmt.Errorf("matrix interrupted: %w", cause), "chaos: matrix interrupted\n"},
		{errors.Join(fmt.Errorf("after 1 of 2 scenarios: %w", cause), errors.New("report: disk full")), "chaos: interrupted: after 1 of 2 scenarios; report: disk full\n"},
	} {
		p := Program{Name: "chaos", Commands: map[string]Command{"run": {Run: func(context.Context, []string, io.Writer, io.Writer) error { return tc.err }}}}
		var errOut strings.Builder
		if code := p.Main(context.Background(), []string{"run"}, io.Discard, &errOut); code != ExitInterrupted || errOut.String() != tc.want {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tc.err, code, errOut.String(), ExitInterrupted, tc.want)
		}
	}
}

func TestParseRefusesStrayArguments(t *testing.T) {
	var sb strings.Builder
	fs := FlagSet("bench", "run", "does things", &sb)
	fs.Int("n", 1, "a number")
	if err := Parse(fs, []string{"-n", "2"}); err != nil {
		t.Errorf("good args: %v", err)
	}
	err := Parse(fs, []string{"-n", "2", "extra"})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), `"extra"`) {
		t.Errorf("stray argument: %v (exit %d)", err, ExitCode(err))
	}
}

// TestParseErrorIsOneLine: a mistyped flag or value is one line naming
// the flag and where the help is, not the flag package's message followed
// by every flag's usage; -h still prints the usage.
func TestParseErrorIsOneLine(t *testing.T) {
	for _, args := range [][]string{{"-n", "two"}, {"-nope"}, {"-n"}} {
		var sb strings.Builder
		fs := FlagSet("bench", "run", "does things", &sb)
		fs.Int("n", 1, "a number")
		err := Parse(fs, args)
		if ExitCode(err) != ExitUsage || sb.Len() != 0 {
			t.Errorf("%v: exit %d, printed %d bytes:\n%s", args, ExitCode(err), sb.Len(), sb.String())
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "-n") || !strings.HasSuffix(msg, "(see bench run -h)") {
			t.Errorf("%v: %q, want one line naming the flag and bench run -h", args, msg)
		}
		if _, err := ParseArgs(fs, args); err == nil || sb.Len() != 0 {
			t.Errorf("ParseArgs %v: %v, printed %q", args, err, sb.String())
		}
	}
	var sb strings.Builder
	fs := FlagSet("bench", "run", "does things", &sb)
	fs.Int("n", 1, "a number")
	if err := Parse(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) || !strings.Contains(sb.String(), "Usage: bench run") || !strings.Contains(sb.String(), "a number") {
		t.Errorf("-h: %v, printed:\n%s", err, sb.String())
	}
}

func TestVersionString(t *testing.T) {
	if v := VersionString(); !strings.HasPrefix(v, "lockbench ") || !strings.Contains(v, "go1.") {
		t.Errorf("VersionString() = %q", v)
	}
	Version = "v9.9.9"
	defer func() { Version = "" }()
	if v := VersionString(); !strings.HasPrefix(v, "lockbench v9.9.9 ") {
		t.Errorf("with Version set: %q", v)
	}
}

// TestHelpNamesUnknownCommand: "bench help nosuch" is bad input, said in
// one line on stderr with the commands there are, not the program's help.
func TestHelpNamesUnknownCommand(t *testing.T) {
	p := Program{Name: "bench", Commands: map[string]Command{
		"run": {Summary: "run", Run: func(context.Context, []string, io.Writer, io.Writer) error { return flag.ErrHelp }},
	}}
	var out, errOut strings.Builder
	code := p.Main(context.Background(), []string{"help", "nosuch"}, &out, &errOut)
	want := "bench: unknown command \"nosuch\"; commands: run, version, help (see bench help)\n"
	if code != ExitUsage || errOut.String() != want || out.String() != "" {
		t.Errorf("bench help nosuch: exit %d, stdout %q, stderr %q; want %d, nothing, %q", code, out.String(), errOut.String(), ExitUsage, want)
	}
	for _, args := range [][]string{{"help", "run"}, {"help"}, {"help", "help"}} {
		out.Reset()
		errOut.Reset()
		if code := p.Main(context.Background(), args, &out, &errOut); code != ExitOK {
			t.Errorf("bench %s: exit %d, want 0 (stderr %q)", strings.Join(args, " "), code, errOut.String())
		}
	}
}
