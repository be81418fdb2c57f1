package redisenv_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// staleHelperEnv makes TestStaleDirHelper act as a lockbench run: it
// starts a local Env in the dir the variable names (with KeepDir when
// staleKeepEnv is set too).
const (
	staleHelperEnv = "LOCKBENCH_REDISENV_STALE_HELPER"
	staleKeepEnv   = "LOCKBENCH_REDISENV_STALE_KEEP"
)

// TestStaleDirHelper is not a test of its own: TestSweepRemovesKilledRunsDir
// re-executes the test binary to run it as a lockbench that starts a local
// Env, prints its data dir and server pid, and runs until its stdin closes
// (then it closes the Env) or it is killed.
func TestStaleDirHelper(t *testing.T) {
	parent := os.Getenv(staleHelperEnv)
	if parent == "" {
		t.Skip("helper for TestSweepRemovesKilledRunsDir; runs only when re-executed")
	}
	cfg := redisenv.Config{Backend: redisenv.BackendLocal, Dir: parent, KeepDir: os.Getenv(staleKeepEnv) != ""}
	env, err := redisenv.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	pid := env.Primary().PID()
	fmt.Printf("DIR %s\nPID %d\n", filepath.Dir(logDir(t, pid)), pid)
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
}

// staleHelper is a running TestStaleDirHelper.
type staleHelper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	dir   string // its Env's data dir
	redis int    // its redis-server's pid
}

// startStaleHelper starts a helper whose Env lives in parent, with
// KeepDir if keep, and waits until it reports its dir. A helper still
// running when t ends is killed.
func startStaleHelper(t *testing.T, parent string, keep bool) *staleHelper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStaleDirHelper$", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), staleHelperEnv+"="+parent, redisenvtest.EnvNoEngine+"=1")
	if keep {
		cmd.Env = append(cmd.Env, staleKeepEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &staleHelper{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		if h.cmd.ProcessState == nil {
			_ = h.cmd.Process.Kill()
			_ = h.cmd.Wait()
		}
	})
	got := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "DIR "); ok {
				h.dir = v
			}
			if v, ok := strings.CutPrefix(sc.Text(), "PID "); ok {
				h.redis, _ = strconv.Atoi(v)
				got <- nil
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
		}
		got <- fmt.Errorf("helper ended its output without its dir and pid (%v)", sc.Err())
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("helper did not report its dir within a minute")
	}
	return h
}

// waitZombie waits until pid, our child, has died and waits to be reaped.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(gone)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); err == nil && i >= 0 && strings.HasPrefix(s[i+1:], " Z") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d not dead %v after SIGKILL: %q", pid, gone, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSweepRemovesKilledRunsDir: a lockbench killed with SIGKILL cannot
// remove its data dir (its servers die by their parent-death signal, the
// dir stays); the next local start in the same parent removes it, while
// the dir of a live run, a dir without an owner record, and a dir kept on
// purpose (KeepDir) stay. A record naming a pid that now belongs to
// another process (a different start time) counts as gone.
func TestSweepRemovesKilledRunsDir(t *testing.T) {
	parent := t.TempDir()
	killed := startStaleHelper(t, parent, false)
	live := startStaleHelper(t, parent, false)

	foreign := filepath.Join(parent, "lockbench-redis-foreign")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	// This process's pid with a start time it never had: the pid of a
	// dead run, reused since.
	reused := filepath.Join(parent, "lockbench-redis-reused")
	if err := os.Mkdir(reused, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(reused, "lockbench-owner"), []byte(fmt.Sprintf("%d 1\n", os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	// A run that kept its dir on purpose, and has ended.
	kept := startStaleHelper(t, parent, true)
	kept.stdin.Close()
	if err := kept.cmd.Wait(); err != nil {
		t.Fatalf("KeepDir helper: %v", err)
	}

	if err := killed.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Not reaped yet, the killed run is a zombie: dead all the same.
	waitZombie(t, killed.cmd.Process.Pid)
	redisenvtest.WaitProcessGone(t, killed.redis, gone)
	if _, err := os.Stat(killed.dir); err != nil {
		t.Fatalf("the killed run's dir %s is already gone (%v): nothing left to sweep", killed.dir, err)
	}

	next := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal, Dir: parent})
	_ = killed.cmd.Wait()
	for _, d := range []string{killed.dir, reused} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the next start (stat: %v), though its owner is gone", d, err)
		}
	}
	for _, d := range []string{live.dir, foreign, kept.dir} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was swept: %v", d, err)
		}
	}
	if err := ping(t, "127.0.0.1:"+portOf(t, live.redis), 5*time.Second); err != nil {
		t.Errorf("the live run's server after the sweep: %v", err)
	}

	// The live run ends normally and removes its own dir; the next start
	// keeps its own.
	live.stdin.Close()
	if err := live.cmd.Wait(); err != nil {
		t.Errorf("live helper: %v", err)
	}
	if _, err := os.Stat(live.dir); !os.IsNotExist(err) {
		t.Errorf("the live run's dir %s outlived its Close (stat: %v)", live.dir, err)
	}
	if err := ping(t, next.Addr(), 5*time.Second); err != nil {
		t.Errorf("the next start's server: %v", err)
	}
}

// portOf is the port the redis-server pid was started on, from its
// redis.conf.
func portOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(logDir(t, pid), "redis.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "port "); ok {
			return v
		}
	}
	t.Fatalf("no port in the redis.conf of pid %d", pid)
	return ""
}

// TestSweepSkipsPlantedOwnerRecords: any local user can make a dir that
// the sweep looks at; one whose owner record is a FIFO (which blocks its
// reader until a writer comes) must not stall the next start, and a
// record that is not a regular file sweeps nothing.
func TestSweepSkipsPlantedOwnerRecords(t *testing.T) {
	parent := t.TempDir()
	planted := filepath.Join(parent, "lockbench-redis-planted")
	if err := os.Mkdir(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(planted, "lockbench-owner")
	if err := syscall.Mkfifo(record, 0o644); err != nil {
		t.Fatal(err)
	}
	started := make(chan error, 1)
	var env *redisenv.Env
	go func() {
		var err error
		env, err = redisenv.Start(context.Background(), redisenv.Config{Backend: redisenv.BackendLocal, Dir: parent})
		started <- err
	}()
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Close() })
	case <-time.After(testkit.Patience):
		// Let the stuck reader go (it reads nothing and carries on).
		if w, err := os.OpenFile(record, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		if err := <-started; err == nil {
			_ = env.Close()
		}
		t.Fatalf("a local start stalled for %v on a FIFO planted as an owner record", testkit.Patience)
	}
	if _, err := os.Stat(planted); err != nil {
		t.Errorf("the planted dir was swept: %v", err)
	}
}
