package redisenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The local backend's servers die with lockbench whatever way it dies
// (parent-death signal), but their temp dir cannot remove itself: after a
// SIGKILL, or a second Ctrl-C that exits at once, it stays. Each dir
// records its owner (pid and process start time, so a reused pid is not
// taken for it), and every local start sweeps the dirs whose owner is gone.

// ownerFile names a data dir's owner record.
const ownerFile = "lockbench-owner"

// dirPattern matches the local backend's data dirs.
const dirPattern = "lockbench-redis-*"

// writeOwner records this process as dir's owner.
func writeOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(fmt.Sprintf("%d %s\n", os.Getpid(), procStart(os.Getpid()))), 0o644)
}

// sweepStaleDirs removes the sibling data dirs in parent whose owner
// process is gone. Dirs without an owner record (another program's, or an
// older lockbench's) are left alone. It returns the dirs removed.
func sweepStaleDirs(parent string) []string {
	if parent == "" {
		parent = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(parent, dirPattern))
	var removed []string
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		pidText, start, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || ownerAlive(pid, start) {
			continue
		}
		if os.RemoveAll(d) == nil {
			removed = append(removed, d)
		}
	}
	return removed
}

// ownerAlive reports whether process pid runs and is the one that started
// at start (as procStart gave it then).
func ownerAlive(pid int, start string) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	now := procStart(pid)
	return now == "" || start == "" || now == start // unknown: assume alive
}

// procStart is pid's start time in clock ticks since boot (field 22 of
// /proc/PID/stat), "" where /proc does not tell.
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields after its closing one.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19] // field 22 overall: fields 3.. start at index 0
}
