package redisenv_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// gone is how long a killed server may take to leave the process table:
// generous, since it is a deadline on an event, not a sleep.
const gone = 15 * time.Second

func TestMain(m *testing.M) { redisenvtest.Main(m) }

func ping(t *testing.T, addr string, timeout time.Duration) error {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, DialerRetries: 1})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return rdb.Ping(ctx).Err()
}

func TestLocalStartPingClose(t *testing.T) {
	env, err := redisenv.Start(context.Background(), redisenv.Config{Backend: redisenv.BackendLocal})
	if err != nil {
		t.Fatal(err)
	}
	p := env.Primary()
	pid := p.PID()
	if !redisenvtest.ProcessAlive(pid) {
		t.Fatalf("primary pid %d is not a live redis-server", pid)
	}
	if !strings.HasPrefix(env.Addr(), "127.0.0.1:") {
		t.Errorf("Addr = %q, want a 127.0.0.1 address", env.Addr())
	}
	if env.Backend() != redisenv.BackendLocal || env.Topology() != redisenv.TopologySingle {
		t.Errorf("backend/topology = %s/%s, want local/single", env.Backend(), env.Topology())
	}
	if env.Version() == "" {
		t.Error("Version is empty; INFO server should give redis_version")
	}
	if env.Replica() != nil {
		t.Error("single topology has a replica")
	}
	if err := ping(t, env.Addr(), 2*time.Second); err != nil {
		t.Fatalf("PING: %v", err)
	}

	// Persistence is off unless asked.
	rdb := env.NewClient()
	cfg, err := rdb.ConfigGet(context.Background(), "appendonly").Result()
	rdb.Close()
	if err != nil || cfg["appendonly"] != "no" {
		t.Errorf("appendonly = %v (%v), want no", cfg, err)
	}

	// Close kills the process and removes its data dir.
	dir := filepath.Dir(logDir(t, pid))
	if err := env.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	redisenvtest.WaitProcessGone(t, pid, gone)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data dir %s still exists after Close (err %v)", dir, err)
	}
	if err := env.Close(); err != nil {
		t.Errorf("second Close: %v, want nil (idempotent)", err)
	}
}

// logDir returns the working directory of pid: the node's data dir.
func logDir(t *testing.T, pid int) string {
	t.Helper()
	d, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		t.Fatalf("cwd of %d: %v", pid, err)
	}
	return d
}

func TestCancelledContextStopsServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	env, err := redisenv.Start(ctx, redisenv.Config{Backend: redisenv.BackendLocal, Topology: redisenv.TopologyReplica})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var pids []int
	for _, n := range env.Nodes() {
		pids = append(pids, n.PID())
	}
	if len(pids) != 2 {
		t.Fatalf("replica topology has %d nodes, want 2", len(pids))
	}
	cancel()
	for _, pid := range pids {
		redisenvtest.WaitProcessGone(t, pid, gone)
	}
	if err := env.Close(); err != nil {
		t.Errorf("Close after cancel: %v", err)
	}
}

func TestStartWithCancelledContextLeavesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := redisChildren(t)
	_, err := redisenv.Start(ctx, redisenv.Config{Backend: redisenv.BackendLocal})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a cancelled context: %v, want context.Canceled", err)
	}
	for pid := range redisChildren(t) {
		if !before[pid] {
			redisenvtest.WaitProcessGone(t, pid, gone)
		}
	}
}

// redisChildren lists this process's live redis-server children.
func redisChildren(t *testing.T) map[int]bool {
	t.Helper()
	out := map[int]bool{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !redisenvtest.ProcessAlive(pid) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == me {
			out[pid] = true
		}
	}
	return out
}

// helperEnv makes TestHelperProcess act as a test that dies mid-way.
const helperEnv = "LOCKBENCH_REDISENV_HELPER"

// TestHelperProcess is not a test of its own: TestNoOrphan re-executes the
// test binary to run it as a test that starts Redis and then dies.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper for TestNoOrphan; runs only when re-executed")
	}
	// Its data dir goes straight into TMPDIR, as the programs' do, so the
	// parent can see what a dying helper leaves there.
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyReplica, Dir: os.TempDir()})
	for _, n := range env.Nodes() {
		fmt.Printf("PID %d\n", n.PID())
	}
	switch mode {
	case "fatal":
		t.Fatal("planted failure mid-test")
	case "panic":
		panic("planted panic mid-test")
	case "exit":
		os.Exit(3) // no cleanup runs: only the parent-death signal is left
	case "sigkill":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	case "timeout":
	}
	select {} // "timeout": the test binary's -test.timeout panics out
}

func TestNoOrphan(t *testing.T) {
	for _, mode := range []string{"fatal", "panic", "exit", "sigkill", "timeout"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v", "-test.timeout=5s")
			// A helper that dies cannot remove its temp dirs: give it ours.
			tmp := t.TempDir()
			cmd.Env = append(os.Environ(), helperEnv+"="+mode, "TMPDIR="+tmp)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("helper (%s) should fail, got err=%v\n%s", mode, err, out)
			}
			var pids []int
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			for sc.Scan() {
				if v, ok := strings.CutPrefix(sc.Text(), "PID "); ok {
					pid, err := strconv.Atoi(v)
					if err != nil {
						t.Fatalf("bad PID line %q", sc.Text())
					}
					pids = append(pids, pid)
				}
			}
			if len(pids) != 2 {
				t.Fatalf("helper printed %d PIDs, want 2 (primary, replica):\n%s", len(pids), out)
			}
			for _, pid := range pids {
				redisenvtest.WaitProcessGone(t, pid, gone)
			}
			// Whatever the helper left in its temp dir, the next local
			// start sweeps, since the dir's owner is gone.
			env, err := redisenv.Start(context.Background(), redisenv.Config{Backend: redisenv.BackendLocal, Dir: tmp})
			if err != nil {
				t.Fatal(err)
			}
			dirs, _ := filepath.Glob(filepath.Join(tmp, "lockbench-redis-*"))
			if len(dirs) != 1 {
				t.Errorf("after the next start %s holds %v, want only that start's own dir", tmp, dirs)
			}
			env.Close()
			if dirs, _ := filepath.Glob(filepath.Join(tmp, "lockbench-redis-*")); len(dirs) != 0 {
				t.Errorf("after Close %s still holds %v", tmp, dirs)
			}
		})
	}
}

// TestSweepKeepsLiveOwnersDirs: a start never removes the dir of a live
// lockbench (here, this test's own open Env).
func TestSweepKeepsLiveOwnersDirs(t *testing.T) {
	tmp := t.TempDir()
	first := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal, Dir: tmp})
	second := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal, Dir: tmp})
	if dirs, _ := filepath.Glob(filepath.Join(tmp, "lockbench-redis-*")); len(dirs) != 2 {
		t.Errorf("%s holds %v, want both live envs' dirs", tmp, dirs)
	}
	if err := ping(t, first.Addr(), 5*time.Second); err != nil {
		t.Errorf("the first env's server after the second start: %v", err)
	}
	_ = second
}

func TestPauseResume(t *testing.T) {
	env := redisenvtest.Start(t)
	p := env.Primary()
	if err := p.Pause(context.Background()); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	err := ping(t, env.Addr(), 300*time.Millisecond)
	var ne interface{ Timeout() bool }
	if err == nil || !(errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded)) {
		t.Fatalf("PING to a paused server: %v, want a timeout", err)
	}
	if err := p.Resume(context.Background()); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if err := ping(t, env.Addr(), 5*time.Second); err != nil {
		t.Fatalf("PING after Resume: %v", err)
	}
}

func TestRestartKeepsAddress(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		cfg       redisenv.Config
		kill      bool
		wantValue bool // the key written before the restart survives it
	}{
		{"no persistence, kill", redisenv.Config{}, true, false},
		{"no persistence, graceful", redisenv.Config{}, false, false},
		{"aof always, kill", redisenv.Config{AppendOnly: true, AppendFsync: "always"}, true, true},
		{"aof everysec, graceful", redisenv.Config{AppendOnly: true}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := redisenvtest.Start(t, tc.cfg)
			p := env.Primary()
			addr, pid := p.Addr(), p.PID()
			rdb := env.NewClient()
			defer rdb.Close()
			if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if tc.kill {
				if err := p.Kill(ctx); err != nil {
					t.Fatalf("Kill: %v", err)
				}
			} else if err := p.Stop(ctx); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			redisenvtest.WaitProcessGone(t, pid, gone)
			if p.PID() != 0 {
				t.Errorf("PID after stop = %d, want 0", p.PID())
			}
			if err := p.Pause(ctx); !errors.Is(err, redisenv.ErrNotRunning) {
				t.Errorf("Pause of a stopped node: %v, want ErrNotRunning", err)
			}
			if err := ping(t, addr, 300*time.Millisecond); err == nil {
				t.Fatal("PING answered after the server stopped")
			}

			if err := p.Restart(ctx); err != nil {
				t.Fatalf("Restart: %v", err)
			}
			if p.Addr() != addr || env.Addr() != addr {
				t.Errorf("address after Restart = %s (env %s), want %s", p.Addr(), env.Addr(), addr)
			}
			if p.PID() == 0 || p.PID() == pid {
				t.Errorf("PID after Restart = %d, want a new process (was %d)", p.PID(), pid)
			}
			v, err := rdb.Get(ctx, "k").Result()
			switch {
			case tc.wantValue && v != "v":
				t.Errorf("GET k after restart = %q, %v; want \"v\" (AOF)", v, err)
			case !tc.wantValue && !errors.Is(err, redis.Nil):
				t.Errorf("GET k after restart = %q, %v; want nil (no persistence)", v, err)
			}
		})
	}
}

func TestRestartWhileRunningAndPaused(t *testing.T) {
	ctx := context.Background()
	env := redisenvtest.Start(t)
	p := env.Primary()
	pid := p.PID()
	if err := p.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	// A paused server must still be stoppable: Stop sends SIGCONT after SIGTERM.
	if err := p.Restart(ctx); err != nil {
		t.Fatalf("Restart of a paused server: %v", err)
	}
	redisenvtest.WaitProcessGone(t, pid, gone)
	if err := ping(t, env.Addr(), 5*time.Second); err != nil {
		t.Fatalf("PING after Restart: %v", err)
	}
}

func TestReplicaPromote(t *testing.T) {
	ctx := context.Background()
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	primary, replica := env.Primary(), env.Replica()
	if replica == nil || primary.Addr() == replica.Addr() {
		t.Fatalf("replica topology: primary %v replica %v", primary, replica)
	}
	rdb := env.NewClient()
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// WAIT returns once the replica acknowledged the write.
	if n, err := rdb.Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d, %v", n, err)
	}
	rr := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	defer rr.Close()
	if v, err := rr.Get(ctx, "k").Result(); v != "v" {
		t.Fatalf("replica GET k = %q, %v", v, err)
	}
	if err := rr.Set(ctx, "x", "1", 0).Err(); err == nil || !strings.Contains(err.Error(), "READONLY") {
		t.Fatalf("write to replica before Promote: %v, want READONLY", err)
	}

	if err := primary.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.Promote(ctx); err != nil {
		t.Fatalf("Promote: %v", err)
	}

	if env.Primary() != replica || env.Addr() != replica.Addr() || env.Replica() != primary {
		t.Fatalf("after Promote: primary %s, addr %s, want the former replica %s", env.Primary().Addr(), env.Addr(), replica.Addr())
	}
	if err := rr.Set(ctx, "x", "1", 0).Err(); err != nil {
		t.Fatalf("write to promoted replica: %v", err)
	}
	nc := env.NewClient()
	defer nc.Close()
	if v, err := nc.Get(ctx, "k").Result(); v != "v" {
		t.Errorf("GET k through a new client after Promote = %q, %v", v, err)
	}

	// A restart keeps the promoted node a primary (and, persistence off,
	// empty: the replica's full sync left no dump behind).
	if err := replica.Restart(ctx); err != nil {
		t.Fatalf("Restart after Promote: %v", err)
	}
	if role, err := nc.Do(ctx, "ROLE").Slice(); err != nil || len(role) == 0 || role[0] != "master" {
		t.Errorf("ROLE after Restart = %v, %v; want master", role, err)
	}
	if err := nc.Set(ctx, "y", "1", 0).Err(); err != nil {
		t.Errorf("write after Restart of the promoted node: %v", err)
	}
	if n, _ := nc.Exists(ctx, "k").Result(); n != 0 {
		t.Error("data survived a restart with persistence off")
	}
}

func TestPromoteNeedsReplica(t *testing.T) {
	env := redisenvtest.Start(t)
	if err := env.Promote(context.Background()); err == nil || !strings.Contains(err.Error(), "--topology replica") {
		t.Errorf("Promote on single topology: %v, want an error naming --topology replica", err)
	}
}

func TestServerMissing(t *testing.T) {
	_, err := redisenv.Start(context.Background(), redisenv.Config{Backend: redisenv.BackendLocal, Server: "no-such-redis-server"})
	if !errors.Is(err, redisenv.ErrServerNotFound) {
		t.Fatalf("err = %v, want ErrServerNotFound", err)
	}
	if !strings.Contains(err.Error(), "apt-get install -y redis-server") {
		t.Errorf("error %q does not say how to install redis-server", err)
	}

	// $REDIS_SERVER names the binary when the config does not.
	t.Setenv(redisenv.EnvServer, "/nonexistent/redis-server")
	_, err = redisenv.Start(context.Background(), redisenv.Config{Backend: redisenv.BackendLocal})
	if !errors.Is(err, redisenv.ErrServerNotFound) || !strings.Contains(err.Error(), "/nonexistent/redis-server") {
		t.Errorf("with %s set: %v, want ErrServerNotFound naming it", redisenv.EnvServer, err)
	}
}

func TestServerFailsToStart(t *testing.T) {
	_, err := redisenv.Start(context.Background(), redisenv.Config{Backend: redisenv.BackendLocal, ServerArgs: []string{"no-such-directive yes"}})
	if err == nil {
		t.Fatal("Start with a bad directive succeeded")
	}
	// The error carries the server's own complaint from its log.
	if !strings.Contains(err.Error(), "exited during start") || !strings.Contains(err.Error(), "no-such-directive") {
		t.Errorf("error does not show the log tail: %v", err)
	}
}

func TestLogTail(t *testing.T) {
	env := redisenvtest.Start(t)
	if tail := env.Primary().LogTail(50); !strings.Contains(tail, "Ready to accept connections") {
		t.Errorf("log tail lacks the ready line:\n%s", tail)
	}
}

// TestCancelDuringStart cancels Start's context at varying moments: no
// server may survive, whether Start failed or returned an Env.
func TestCancelDuringStart(t *testing.T) {
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(time.Duration(i) * 2 * time.Millisecond) // spread the cancel over the start
			cancel()
		}()
		before := redisChildren(t)
		env, err := redisenv.Start(ctx, redisenv.Config{Backend: redisenv.BackendLocal, Dir: t.TempDir()})
		if err == nil {
			<-ctx.Done()
			_ = env.Close()
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("Start: %v", err)
		}
		cancel()
		for pid := range redisChildren(t) {
			if !before[pid] {
				redisenvtest.WaitProcessGone(t, pid, gone)
			}
		}
	}
}
