package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// TestRunContainer: bench run on the container backend, end to end: the
// engine's Redis answers at the address its port is bound on, the load
// succeeds, and nothing of testcontainers reaches the terminal.
func TestRunContainer(t *testing.T) {
	cfg := redisenvtest.ContainerConfig(t)
	dir := t.TempDir()
	out, errOut := runBenchOK(t, "run", "--redis", "container", "--image", cfg.Image, "--profile", "rw90",
		"--duration", "2s", "--warmup", "0s", "--quiet", "--out", dir)
	r := readResult(t, dir)
	if r.Meta.RedisBackend != "container" || r.Throughput.Ops == 0 || len(r.Failures()) > 0 || !r.Safety.OK() {
		t.Errorf("container run: backend %s, %+v, failures %q, safety %s\n%s", r.Meta.RedisBackend, r.Throughput, r.Failures(), r.Safety.Verdict(), out)
	}
	for _, noise := range []string{"Testcontainers", "Shell not found", "SessionID"} {
		if strings.Contains(errOut, noise) || strings.Contains(out, noise) {
			t.Errorf("testcontainers' log reached the terminal (%q):\n%s", noise, errOut)
		}
	}
	t.Logf("container run: %.0f ops/s, acquire p99 %.0f µs", r.Throughput.OpsPerSec, r.Latency["acquire"].P99)
}

// TestRunContainerWithoutImage: an image the engine lacks and cannot
// pull is refused before any load, in one line that names the flag and
// the way out, exit 2.
func TestRunContainerWithoutImage(t *testing.T) {
	redisenvtest.ContainerConfig(t)
	const image = "localhost/lockbench-no-such-image:0"
	code, out, errOut := runBench(t, "run", "--redis", "container", "--image", image, "--profile", "rw90",
		"--duration", "2s", "--warmup", "0s", "--out", t.TempDir())
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	last := lines[len(lines)-1]
	if code != cli.ExitUsage || !strings.Contains(last, `--image "`+image+`"`) || !strings.Contains(last, "--image local") {
		t.Errorf("exit %d, want %d with one line naming --image and the way out:\n%s", code, cli.ExitUsage, errOut)
	}
	if strings.Contains(errOut, "bench: running") || out != "" {
		t.Errorf("the load ran:\n%s\n%s", out, errOut)
	}
}

// TestRunContainerWithoutRyuk: bench run --redis container as a user runs
// it, a process of its own whose environment does not turn
// testcontainers' reaper (Ryuk) off, needs no Ryuk (whose image no engine
// here can pull), and leaves nothing of its own on the engine.
func TestRunContainerWithoutRyuk(t *testing.T) {
	cfg := redisenvtest.ContainerConfig(t)
	api := engineAPI(t)
	out := t.TempDir()
	cmd := benchProcess(t, t.TempDir(), "run --redis container --image "+cfg.Image+" --profile rw90 --duration 2s --warmup 0s --quiet --out "+out)
	output, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench run --redis container: %v\n%s", err, output)
	}
	r := readResult(t, out)
	if r.Meta.RedisBackend != "container" || r.Throughput.Ops == 0 || len(r.Failures()) > 0 || !r.Safety.OK() {
		t.Errorf("container run: backend %s, %+v, failures %q, safety %s\n%s", r.Meta.RedisBackend, r.Throughput, r.Failures(), r.Safety.Verdict(), output)
	}
	if left := ownedBy(t, api, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("left on the engine after a normal exit: %s", strings.Join(left, "; "))
	}
}

// TestRunContainerSweepsKilledRun: a SIGKILLed bench run --redis container
// cannot remove its container; the next run (or any other lockbench on
// the engine) removes it, told by its owner label, and says so.
func TestRunContainerSweepsKilledRun(t *testing.T) {
	cfg := redisenvtest.ContainerConfig(t)
	api := engineAPI(t)
	tmp := t.TempDir()
	killed, seen := killMidRun(t, tmp, "--image "+cfg.Image)
	if len(ownedBy(t, api, killed)) == 0 {
		t.Fatalf("the killed run left nothing on the engine: nothing to sweep\n%s", seen)
	}
	output, err := benchProcess(t, tmp, "run --redis container --image "+cfg.Image+" --profile rw90 --duration 1s --warmup 0s --quiet --out "+t.TempDir()).CombinedOutput()
	if err != nil {
		t.Fatalf("the next run: %v\n%s", err, output)
	}
	if left := ownedBy(t, api, killed); len(left) > 0 {
		t.Errorf("still on the engine after the next run: %s\n%s", strings.Join(left, "; "), output)
	}
	// The sweep is engine-wide: a lockbench in another test package that
	// starts a container meanwhile may remove the leftover first, and then
	// rightly says so itself.
	if !strings.Contains(string(output), "left by a lockbench that is no longer running") {
		t.Logf("the next run found the killed run's container already removed by another lockbench on this engine:\n%s", output)
	}
}

// TestRunContainerOwnEngine: with no DOCKER_HOST and no Docker, bench run
// --redis container --image local starts a Podman API service of
// its own and runs an image made from the installed redis-server.
// SIGKILLed, it leaves its container and image (its service dies with
// it); the next run sweeps them and the service's dir, and, stopped by
// Ctrl-C, leaves nothing: no container, image, service process or dir.
func TestRunContainerOwnEngine(t *testing.T) {
	redisenvtest.ContainerConfig(t)
	e := redisenvtest.CurrentEngine()
	if !e.Own && e.Host != "unix:///var/run/docker.sock" {
		t.Skipf("the tests' engine (%s) is not one a run without DOCKER_HOST finds", e.Host)
	}
	api := engineAPI(t)
	tmp := t.TempDir() // the services' dirs go here, and so does their sweep

	killed, seen := killMidRun(t, tmp, "--image local", "DOCKER_HOST")
	own := strings.Contains(seen, "a Podman API service of its own")
	if !own {
		t.Logf("Docker's socket answers: no Podman service of the run's own to check\n%s", seen)
	}
	if len(ownedBy(t, api, killed)) == 0 {
		t.Fatalf("the killed run left nothing on the engine: nothing to sweep\n%s", seen)
	}
	waitNoService(t, tmp) // the parent-death signal took it down
	if dirs, _ := filepath.Glob(filepath.Join(tmp, "lockbench-engine-*")); own && len(dirs) == 0 {
		t.Errorf("the killed run's service dir is gone: nothing left for the sweep to find")
	}

	cmd := benchProcess(t, tmp, "run --redis container --image local --profile rw90 --duration 5m --warmup 0s --out "+t.TempDir(), "DOCKER_HOST")
	seen, stderr := startUntil(t, cmd, "bench: running ")
	if own && len(procsUnder(tmp)) == 0 {
		t.Errorf("no Podman service runs under %s while the run's load does\n%s", tmp, seen)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for stderr.Scan() {
		seen += stderr.Text() + "\n"
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitInterrupted {
		t.Errorf("exit %v after Ctrl-C, want %d\n%s", err, cli.ExitInterrupted, seen)
	}
	for _, pid := range []int{killed, cmd.Process.Pid} {
		if left := ownedBy(t, api, pid); len(left) > 0 {
			t.Errorf("pid %d's still on the engine: %s\n%s", pid, strings.Join(left, "; "), seen)
		}
	}
	// As in TestRunContainerSweepsKilledRun, another lockbench on the
	// engine may have swept the killed run's container and image first.
	if !strings.Contains(seen, "left by a lockbench that is no longer running") {
		t.Logf("the next run found the killed run's leftovers already removed by another lockbench on this engine:\n%s", seen)
	}
	if left := procsUnder(tmp); len(left) > 0 {
		t.Errorf("a Podman service outlived its run: %s", strings.Join(left, "; "))
	}
	if dirs, _ := filepath.Glob(filepath.Join(tmp, "lockbench-engine-*")); len(dirs) > 0 {
		t.Errorf("service dirs left: %v", dirs)
	}
}

// TestRunContainerInterruptedStarting: Ctrl-C or SIGTERM at each step of
// a container run's start (its Podman service starting, then answering,
// the image being imported, then made, the container made) exits 130 with
// the line any interrupt ends with, blaming no engine, and leaves nothing
// for the next run's sweep: no container, network or image of its own on
// the engine, no service process, nothing in its temp dir.
func TestRunContainerInterruptedStarting(t *testing.T) {
	redisenvtest.ContainerConfig(t)
	api := engineAPI(t)
	// With a Podman service of the tests' own, a run without DOCKER_HOST
	// starts one of its own as well; on another engine its steps are not
	// to be seen, and the run uses the tests' engine.
	own := redisenvtest.CurrentEngine().Own
	var drop []string
	if own {
		drop = []string{"DOCKER_HOST"}
	}
	type probe struct {
		tmp string
		cmd *exec.Cmd
	}
	has := func(kind string) func(p probe) bool {
		return func(p probe) bool {
			found, _ := redisenvtest.Owned(api, p.cmd.Process.Pid) // an error: not yet
			for _, l := range found {
				if strings.HasPrefix(l, kind+" ") {
					return true
				}
			}
			return false
		}
	}
	file := func(patterns ...string) func(p probe) bool {
		return func(p probe) bool {
			for _, pat := range patterns {
				if m, _ := filepath.Glob(filepath.Join(p.tmp, pat)); len(m) > 0 {
					return true
				}
			}
			return false
		}
	}
	for _, tc := range []struct {
		step    string
		sig     syscall.Signal
		ownOnly bool
		when    func(probe) bool
	}{
		{"service starting", syscall.SIGINT, true, func(p probe) bool { return len(procsUnder(p.tmp)) > 0 }},
		{"service answering", syscall.SIGTERM, true, file("lockbench-engine-*/podman.sock")},
		// The service keeps an import's upload in a temp file.
		{"image importing", syscall.SIGINT, true, file("api_load.tar*", "lockbench-engine-*/api_load.tar*")},
		{"image made", syscall.SIGTERM, false, has("image")},
		{"container made", syscall.SIGINT, false, has("container")},
	} {
		t.Run(strings.ReplaceAll(tc.step, " ", "-"), func(t *testing.T) {
			if tc.ownOnly && !own {
				t.Skipf("the tests' engine (%s) is not a Podman service of their own", redisenvtest.CurrentEngine().Host)
			}
			// A short dir: the service's socket is in it, and a unix
			// socket's path has room for about a hundred bytes.
			tmp, err := os.MkdirTemp("", "lb")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(tmp) })
			cmd := benchProcess(t, tmp, "run --redis container --image local --duration 20s --out "+t.TempDir(), drop...)
			code, stderr := signalWhen(t, cmd, tc.sig, func() bool { return tc.when(probe{tmp, cmd}) })
			if strings.Contains(stderr, "bench: running") {
				t.Logf("the start was over when the signal came")
			}
			checkInterrupted(t, code, stderr)
			if left := ownedBy(t, api, cmd.Process.Pid); len(left) > 0 {
				t.Errorf("left on the engine: %s", strings.Join(left, "; "))
			}
			checkNothingUnder(t, tmp)
		})
	}
}

// killMidRun starts bench run --redis container (with extra flags, its
// temp dir tmp, its environment without the variables drop names), waits
// until its load runs, SIGKILLs it and returns its pid and what it wrote
// to stderr.
func killMidRun(t *testing.T, tmp, extra string, drop ...string) (int, string) {
	t.Helper()
	cmd := benchProcess(t, tmp, "run --redis container "+extra+" --profile rw90 --duration 5m --warmup 0s --out "+t.TempDir(), drop...)
	seen, _ := startUntil(t, cmd, "bench: running ")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	return cmd.Process.Pid, seen
}

// engineAPI is a client of the tests' engine, closed when t ends.
func engineAPI(t *testing.T) client.APIClient {
	t.Helper()
	api, err := client.New(client.WithHost(redisenvtest.CurrentEngine().Host))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	return api
}

// ownedBy lists what pid owns on the engine (redisenvtest.Owned). Podman's
// image list fails while another process's image is half made (its record
// there, not yet its manifest): it is read again until it answers, within
// Patience.
func ownedBy(t *testing.T, api client.APIClient, pid int) []string {
	t.Helper()
	deadline := time.Now().Add(testkit.Patience)
	for {
		found, err := redisenvtest.Owned(api, pid)
		if err == nil {
			return found
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// procsUnder lists the processes whose command line names a path under
// dir, or whose working dir is there: the Podman services whose socket
// is there, the local servers whose data dir is (redis-server rewrites
// its command line).
func procsUnder(dir string) []string {
	var found []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		b, err := os.ReadFile(filepath.Join(p, "cmdline"))
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		if err == nil && (strings.Contains(string(b), dir+"/") || strings.HasPrefix(cwd+"/", dir+"/")) {
			found = append(found, filepath.Base(p)+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// waitNoService fails t unless no process names a path under dir within
// a loaded machine's patience.
func waitNoService(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := procsUnder(dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running: %s", strings.Join(left, "; "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
