package redisenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNotAServer is what a *NotAServerError is: a server binary that
// exists but cannot be what lockbench starts.
var ErrNotAServer = errors.New("redisenv: not a redis-server or valkey-server binary")

// NotAServerError is a server binary that exists but cannot be what
// lockbench starts: a directory, a file that is not executable, or a
// program that does not answer --version as redis-server and valkey-server
// do. It is ErrNotAServer.
type NotAServerError struct {
	Path string
	// From is the environment variable that named Path, "" for none.
	From string
	// Why is what is wrong with it, said of Path: "is a directory".
	Why string
}

func (e *NotAServerError) Error() string {
	return fmt.Sprintf("redisenv: %s %s: not a redis-server or valkey-server binary", e.named(), e.Why)
}

// Is makes errors.Is(err, ErrNotAServer) hold.
func (e *NotAServerError) Is(target error) bool { return target == ErrNotAServer }

// named is the path, and the variable that named it.
func (e *NotAServerError) named() string {
	if e.From != "" {
		return fmt.Sprintf("%s (from $%s)", e.Path, e.From)
	}
	return e.Path
}

// serverVersionWait bounds a server binary's answer to --version, which
// takes milliseconds; generous for a loaded host.
var serverVersionWait = 20 * time.Second // a var for the tests

// serverVersionLine is how redis-server and valkey-server answer
// --version: "Redis server v=7.0.15 sha=…", "Valkey server v=9.1.2 sha=…".
var serverVersionLine = regexp.MustCompile(`^(Redis|Valkey) server v=\S+`)

// checkedServers caches checkServerFile's verdicts by path, size and
// modification time: Validate runs more than once per command.
var checkedServers sync.Map // serverFileKey → why, "" for a server

type serverFileKey struct {
	path string
	size int64
	mod  time.Time
}

// checkServerFile says why the file at path cannot be a server
// lockbench starts ("" when it can), or that nothing is there.
func checkServerFile(path string) (why string, missing bool) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", true
	case err != nil:
		return fmt.Sprintf("cannot be read (%v)", errors.Unwrap(err)), false
	case st.IsDir():
		return "is a directory", false
	case !st.Mode().IsRegular():
		return "is not a regular file but " + fileKind(st.Mode()), false
	case st.Mode().Perm()&0o111 == 0:
		return fmt.Sprintf("is not executable (mode %s)", st.Mode().Perm()), false
	}
	key := serverFileKey{path, st.Size(), st.ModTime()}
	if v, ok := checkedServers.Load(key); ok {
		return v.(string), false
	}
	why = answersVersion(path)
	checkedServers.Store(key, why)
	return why, false
}

// answersVersion runs path --version and says why its answer is not a
// server's ("" when it is): a program that is not one (true, a shell)
// would start and exit, or never listen.
func answersVersion(path string) string {
	ctx, cancel := context.WithTimeout(context.Background(), serverVersionWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// In a group of its own, killed whole at the deadline: a script's
	// children go with it.
	cmd.SysProcAttr = serviceAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	first, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("did not answer --version within %v", serverVersionWait)
	case err != nil && first == "":
		return fmt.Sprintf("failed to answer --version (%v)", err)
	case !serverVersionLine.MatchString(first):
		said := "nothing"
		if first != "" {
			said = fmt.Sprintf("%q", truncate(first, 60))
		}
		return fmt.Sprintf(`answered --version with %s, where a server answers "Redis server v=…" or "Valkey server v=…"`, said)
	}
	return ""
}

// fileKind names what a file that is not regular is.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
