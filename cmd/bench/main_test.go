package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// mainArgsEnv makes the test binary act as the bench program, so that
// signal tests exercise the real main.
const mainArgsEnv = "LOCKBENCH_BENCH_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		os.Args = append([]string{"bench"}, strings.Fields(args)...)
		main()
		return
	}
	goleak.VerifyTestMain(m)
}

func runBench(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("REDIS_URL", "")
	var out, errb bytes.Buffer
	code = program().Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}} {
		code, out, _ := runBench(t, args...)
		if code != cli.ExitOK || !strings.Contains(out, "bench run --profile rw90") || !strings.Contains(out, "Commands:") {
			t.Errorf("bench %v: code %d, output:\n%s", args, code, out)
		}
	}
	code, _, errOut := runBench(t, "run", "--help")
	if code != cli.ExitOK || !strings.Contains(errOut, "-profile") || !strings.Contains(errOut, "-redis-url") {
		t.Errorf("bench run --help: code %d, output:\n%s", code, errOut)
	}
	code, _, errOut = runBench(t, "help", "env")
	if code != cli.ExitOK || !strings.Contains(errOut, "Usage: bench env") {
		t.Errorf("bench help env: code %d, output:\n%s", code, errOut)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := runBench(t, args...)
		if code != cli.ExitOK || !strings.HasPrefix(out, "lockbench ") {
			t.Errorf("bench %v: code %d, output %q", args, code, out)
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the message names the field
	}{
		{nil, "Usage:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run", "--no-such-flag"}, "-no-such-flag"},
		{[]string{"run", "--duration", "-1s"}, "--duration"},
		{[]string{"run", "--redis", "docker"}, `--redis "docker"`},
		{[]string{"run", "--topology", "ring"}, `--topology "ring"`},
		{[]string{"run", "--redis", "local", "--redis-url", "redis://u:pw@h:1"}, "--redis-url"},
		{[]string{"run", "stray"}, `unexpected argument "stray"`},
		{[]string{"env", "--redis-url", "http://u:pw@h:1"}, "field scheme"},
	} {
		code, _, errOut := runBench(t, tc.args...)
		if code != cli.ExitUsage {
			t.Errorf("bench %v: exit %d, want %d\n%s", tc.args, code, cli.ExitUsage, errOut)
		}
		if !strings.Contains(errOut, tc.want) {
			t.Errorf("bench %v: stderr does not name %q:\n%s", tc.args, tc.want, errOut)
		}
		if strings.Contains(errOut, ":pw@") {
			t.Errorf("bench %v: stderr leaks the password:\n%s", tc.args, errOut)
		}
	}
}

func TestRunChecksEnvironment(t *testing.T) {
	code, out, errOut := runBench(t, "run", "--redis", "local", "--duration", "300ms")
	if code != cli.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"profile:  rw90", "server:   Redis ", "PING rtt: "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "redis: local backend") {
		t.Errorf("stderr lacks the one-line backend choice:\n%s", errOut)
	}
	pid := nodePID(t, out)
	redisenvtest.WaitProcessGone(t, pid, 15*time.Second)
}

var pidLine = regexp.MustCompile(`node:\s+primary\s+\S+ pid (\d+)`)

func nodePID(t *testing.T, out string) int {
	t.Helper()
	m := pidLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no node pid line in:\n%s", out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// TestInterrupt runs the real program, waits until its Redis is up, then
// interrupts it: Ctrl-C must stop the run, report what was measured as
// partial and leave no redis-server behind; SIGKILL must leave none either.
func TestInterrupt(t *testing.T) {
	for _, tc := range []struct {
		sig      syscall.Signal
		wantCode int
	}{
		{syscall.SIGINT, cli.ExitInterrupted},
		{syscall.SIGTERM, cli.ExitInterrupted},
		{syscall.SIGKILL, -1},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0])
			// A killed bench cannot remove its temp dir: give it one of ours.
			cmd.Env = append(os.Environ(), mainArgsEnv+"=run --redis local --duration 5m", "REDIS_URL=", "TMPDIR="+t.TempDir())
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()

			// Wait for the event "Redis is up", signalled by the node line.
			var out strings.Builder
			sc := bufio.NewScanner(stdout)
			pid := 0
			for pid == 0 && sc.Scan() {
				out.WriteString(sc.Text() + "\n")
				if m := pidLine.FindStringSubmatch(sc.Text()); m != nil {
					pid, _ = strconv.Atoi(m[1])
				}
			}
			if pid == 0 {
				t.Fatalf("bench never reported its Redis:\n%s\n%s", out.String(), stderr.String())
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(stdout)
			out.Write(rest)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("bench exited with %v, want a failure exit", err)
			}
			if tc.wantCode >= 0 {
				if ee.ExitCode() != tc.wantCode {
					t.Errorf("exit code %d, want %d\n%s", ee.ExitCode(), tc.wantCode, stderr.String())
				}
				if !strings.Contains(out.String(), "PARTIAL") {
					t.Errorf("interrupted run did not report its partial measurement:\n%s", out.String())
				}
			}
			redisenvtest.WaitProcessGone(t, pid, 15*time.Second)
		})
	}
}
