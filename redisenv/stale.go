package redisenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/lockbench/lockbench/internal/infile"
)

// The local backend's servers die with lockbench whatever way it dies
// (parent-death signal), but their temp dir cannot remove itself: after a
// SIGKILL, or a second Ctrl-C that exits at once, it stays. Each dir
// records its owner (ownerOf: pid and process start time, so a reused pid
// is not taken for it), and every local start sweeps the dirs whose owner
// is gone.
// A dir kept on purpose (Config.KeepDir) records no owner and is left.

// leftBy ends the line a start logs for each thing it swept. All a sweep
// knows is that the owner is gone: killed, or interrupted twice, or
// stopped short of removing it.
const leftBy = "left by a lockbench that is no longer running"

// ownerFile names a data dir's owner record.
const ownerFile = "lockbench-owner"

// dirPattern matches the local backend's data dirs.
const dirPattern = "lockbench-redis-*"

// maxOwnerRecord bounds an owner record ("PID START\n"), read from dirs
// anyone could have made.
const maxOwnerRecord infile.Limit = 256

// ownerOf is this process's owner record: its pid and start time. Its
// form is fixed: every lockbench version reads it, and one that misread a
// record would take a live owner for a gone one.
func ownerOf() string {
	return strconv.Itoa(os.Getpid()) + " " + procStart(os.Getpid())
}

// OwnerGone reports whether the process an owner record (ownerOf, as a
// data dir's file or OwnerLabel holds it) names has exited: what it made
// is then left over.
func OwnerGone(record string) bool {
	pidText, start, _ := strings.Cut(record, " ")
	pid, err := strconv.Atoi(pidText)
	return err == nil && pid > 0 && !ownerAlive(pid, start)
}

// writeOwner records this process as dir's owner. The record appears
// whole (written aside, then renamed), so a sweep never reads half of it
// and takes a live owner for another, dead one.
func writeOwner(dir string) error {
	tmp := filepath.Join(dir, ownerFile+".tmp")
	if err := os.WriteFile(tmp, []byte(ownerOf()+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, ownerFile))
}

// sweepStaleDirs removes the dirs in parent matching pattern whose owner
// process is gone. Dirs without an owner record (another program's, or an
// older lockbench's) are left alone. It returns the dirs removed.
func sweepStaleDirs(parent, pattern string) []string {
	if parent == "" {
		parent = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(parent, pattern))
	var removed []string
	for _, d := range dirs {
		// Any user may plant such a dir: a FIFO or a device for the
		// record must not stall or flood this start.
		b, err := infile.Read(filepath.Join(d, ownerFile), maxOwnerRecord)
		if err != nil || !OwnerGone(strings.TrimSpace(string(b))) {
			continue
		}
		if os.RemoveAll(d) == nil {
			removed = append(removed, d)
		}
	}
	return removed
}

// ownerAlive reports whether process pid runs and is the one that started
// at start (as procStart gave it then). A zombie (dead, not yet reaped by
// its parent) is gone. Where it cannot tell, it says alive: a dir is
// better left than taken from a live run.
func ownerAlive(pid int, start string) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	state, now := procStat(pid)
	if state == "Z" || state == "X" {
		return false
	}
	return now == "" || start == "" || now == start
}

// procStart is pid's start time in clock ticks since boot (field 22 of
// /proc/PID/stat), "" where /proc does not tell.
func procStart(pid int) string {
	_, start := procStat(pid)
	return start
}

// procStat reads pid's state (field 3 of /proc/PID/stat) and start time
// (field 22); both "" where /proc does not tell.
func procStat(pid int) (state, start string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", ""
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields after its closing one.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", ""
	}
	return f[0], f[19] // fields 3 and 22 overall: fields 3.. start at index 0
}
