package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// mainLogHelperEnv makes TestMainClientLogHelper run a program whose
// command makes go-redis log.
const mainLogHelperEnv = "LOCKBENCH_CLI_MAINLOG_HELPER"

// TestMainClientLogHelper is not a test of its own: TestMainCapturesClientLog
// re-executes the test binary to run it, so that what go-redis writes to
// the process's own stderr can be seen.
func TestMainClientLogHelper(t *testing.T) {
	if os.Getenv(mainLogHelperEnv) == "" {
		t.Skip("helper for TestMainCapturesClientLog; runs only when re-executed")
	}
	// A command that loses its server mid-way, as a run against a Redis
	// that dies does: go-redis logs each failed dial.
	dial := func(ctx context.Context, _ []string, stdout, _ io.Writer) error {
		env := redisenvtest.Start(t)
		rdb := redis.NewClient(&redis.Options{Addr: env.Addr(), MaxRetries: -1, DialerRetries: 1})
		defer rdb.Close()
		if err := rdb.Ping(ctx).Err(); err != nil {
			return err
		}
		mark := redisenv.ClientLogMark()
		if err := env.Primary().Kill(ctx); err != nil {
			return err
		}
		for range 2 { // the pooled connection fails, then the dial does
			_ = rdb.Ping(ctx).Err()
		}
		lines, _ := redisenv.ClientLogSince(mark)
		for _, l := range lines {
			fmt.Fprintf(stdout, "KEPT %s\n", l)
		}
		return nil
	}
	p := Program{Name: "bench", Commands: map[string]Command{"dial": {Summary: "lose the server", Run: dial}}}
	fmt.Printf("EXIT %d\n", p.Main(context.Background(), []string{"dial"}, os.Stdout, os.Stderr))
}

// TestMainCapturesClientLog: a program run through Program.Main never
// prints go-redis's log lines; they are kept for its result files.
func TestMainCapturesClientLog(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainClientLogHelper$", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), mainLogHelperEnv+"=1", "TMPDIR="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	const logged = "redis: connection pool: failed to dial after 1 attempts"
	if !strings.Contains(stdout.String(), "EXIT 0\n") || !strings.Contains(stdout.String(), "KEPT "+logged) {
		t.Errorf("the command did not run, or go-redis's failed dial is not kept:\n%s", stdout.String())
	}
	if strings.Contains(stderr.String(), "connection pool") {
		t.Errorf("go-redis's log reached the program's stderr:\n%s", stderr.String())
	}
}
