package redisenv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// clientLogHelperEnv makes TestClientLogHelper make go-redis log: "capture"
// with CaptureClientLog, "plain" without.
const clientLogHelperEnv = "LOCKBENCH_REDISENV_CLIENTLOG_HELPER"

// clientLogReport is what TestClientLogHelper prints on its last line.
type clientLogReport struct {
	Lines   []string
	Dropped int64
	Mark    int64
}

// TestClientLogHelper is not a test of its own: TestClientLogCaptured
// re-executes the test binary to run it, so that what go-redis writes to
// the process's stderr can be seen. It makes go-redis log against a real
// server: the server is killed, and a client's dial to it fails.
func TestClientLogHelper(t *testing.T) {
	mode := os.Getenv(clientLogHelperEnv)
	if mode == "" {
		t.Skip("helper for TestClientLogCaptured; runs only when re-executed")
	}
	if mode == "capture" {
		redisenv.CaptureClientLog()
		redisenv.CaptureClientLog() // idempotent
	}
	env := redisenvtest.Start(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: env.Addr(), MaxRetries: -1, DialerRetries: 1})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	mark := redisenv.ClientLogMark()
	if err := env.Primary().Kill(ctx); err != nil {
		t.Fatal(err)
	}
	// The pooled connection finds the server gone; the next command dials
	// it again, and go-redis logs the failed dial.
	for range 2 {
		if err := rdb.Ping(ctx).Err(); err == nil {
			t.Fatal("PING to a killed server answered")
		}
	}
	lines, dropped := redisenv.ClientLogSince(mark)
	b, _ := json.Marshal(clientLogReport{Lines: lines, Dropped: dropped, Mark: mark})
	fmt.Printf("\nREPORT %s\n", b)
}

// runClientLogHelper runs TestClientLogHelper in mode and returns its report
// and what it wrote to its stderr.
func runClientLogHelper(t *testing.T, mode string) (clientLogReport, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestClientLogHelper$", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), clientLogHelperEnv+"="+mode, redisenvtest.EnvNoEngine+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper (%s): %v\nstdout:\n%s\nstderr:\n%s", mode, err, stdout.String(), stderr.String())
	}
	var rep clientLogReport
	for _, line := range strings.Split(stdout.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "REPORT "); ok {
			if err := json.Unmarshal([]byte(v), &rep); err != nil {
				t.Fatal(err)
			}
			return rep, stderr.String()
		}
	}
	t.Fatalf("helper (%s) printed no report:\n%s", mode, stdout.String())
	return rep, ""
}

// TestClientLogCaptured: once CaptureClientLog ran, go-redis's own log
// lines (here, its failed dial to a killed server) never reach stderr;
// they are kept, one trimmed line each without go-redis's timestamp and
// source file, for ClientLogSince.
func TestClientLogCaptured(t *testing.T) {
	const logged = "redis: connection pool: failed to dial after 1 attempts: dial tcp"
	t.Run("plain", func(t *testing.T) {
		t.Parallel()
		// Without the capture, the line goes to stderr: the check below
		// can see it there.
		_, stderr := runClientLogHelper(t, "plain")
		if !strings.Contains(stderr, logged) {
			t.Errorf("without CaptureClientLog go-redis's stderr lacks %q: the helper did not make it log:\n%s", logged, stderr)
		}
	})
	t.Run("capture", func(t *testing.T) {
		t.Parallel()
		rep, stderr := runClientLogHelper(t, "capture")
		if strings.Contains(stderr, "connection pool") {
			t.Errorf("go-redis's line reached stderr despite CaptureClientLog:\n%s", stderr)
		}
		if len(rep.Lines) == 0 || rep.Dropped != 0 {
			t.Fatalf("ClientLogSince(%d) = %q, %d dropped; want the failed dial's line, none dropped", rep.Mark, rep.Lines, rep.Dropped)
		}
		for _, line := range rep.Lines {
			if !strings.HasPrefix(line, logged) || strings.Contains(line, "pool.go") || strings.ContainsAny(line, "\n\r") || line != strings.TrimSpace(line) {
				t.Errorf("kept line %q: want one trimmed line starting %q, no timestamp or source file", line, logged)
			}
		}
	})
}
