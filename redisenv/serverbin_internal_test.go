package redisenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
)

// TestServerVersionHangs: a program that never answers --version is
// refused at the deadline, and killed with what it started.
func TestServerVersionHangs(t *testing.T) {
	defer func(d time.Duration) { serverVersionWait = d }(serverVersionWait)
	serverVersionWait = 300 * time.Millisecond
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	script := filepath.Join(dir, "hangs")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 600 &\necho $! > "+pidFile+"\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	why, missing := checkServerFile(script)
	if missing || !strings.Contains(why, "did not answer --version within 300ms") {
		t.Errorf("checkServerFile(a script that hangs) = %q, %v", why, missing)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the script's child killed with it", func() bool {
		return syscall.Kill(pid, 0) != nil
	})
}
