package redisenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// engineDirPattern matches the dirs of Podman services of lockbench's own.
const engineDirPattern = "lockbench-engine-*"

// ownPodman is this process's Podman API service.
var ownPodman podmanService

// podmanService is a `podman system service` child process on a socket
// in a dir of its own, shared by the Envs that use it: started by the
// first, stopped by the last. It dies with this process however that dies
// (parent-death signal); its dir then stays until the next start sweeps
// it, as the local backend's data dirs.
type podmanService struct {
	mu        sync.Mutex
	users     int
	dir       string // kept once published: a restarted service listens where the first did
	published bool   // DOCKER_HOST names the service
	cmd       *exec.Cmd
	exited    chan struct{} // closed once the service is reaped
}

// host is the service's address, "" until DOCKER_HOST names it.
func (s *podmanService) host() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.published {
		return ""
	}
	return "unix://" + filepath.Join(s.dir, "podman.sock")
}

// acquire counts a user in, starting the service for the first, and
// returns its address.
func (s *podmanService) acquire(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users == 0 {
		if err := s.start(ctx); err != nil {
			s.stop()
			return "", err
		}
	}
	s.users++
	return "unix://" + filepath.Join(s.dir, "podman.sock"), nil
}

// release counts a user out, stopping the service after the last.
func (s *podmanService) release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users--; s.users > 0 {
		return nil
	}
	s.users = 0
	return s.stop()
}

// start runs `podman system service` and waits until it answers. Podman's
// defaults need two settings in sandboxes like CI containers: the runc
// runtime (crun fails on hybrid cgroups) and container rlimits that such a
// sandbox lets a process set. The caller holds s.mu.
func (s *podmanService) start(ctx context.Context) error {
	podman, err := exec.LookPath("podman")
	if err != nil {
		return &ConfigError{Field: "redis", Value: string(BackendContainer), Err: ErrNoDocker,
			Fix: "no container engine: nothing answers at " + dockerSocket + " and podman is not installed; start Docker, install podman (lockbench then starts its API service), set DOCKER_HOST to an engine's API socket, or use --redis local"}
	}
	sweepStaleDirs(os.TempDir(), engineDirPattern)
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", strings.TrimSuffix(engineDirPattern, "*")); err != nil {
			return fmt.Errorf("podman service dir: %w", err)
		}
	} else if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("podman service dir: %w", err)
	}
	if err := writeOwner(s.dir); err != nil {
		return fmt.Errorf("podman service dir: %w", err)
	}
	conf := "[containers]\ndefault_ulimits = [\"nofile=4096:4096\", \"nproc=4096:4096\"]\n"
	if _, err := exec.LookPath("runc"); err == nil {
		conf += "[engine]\nruntime = \"runc\"\n"
	}
	confPath := filepath.Join(s.dir, "containers.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return fmt.Errorf("podman service config: %w", err)
	}
	sock := filepath.Join(s.dir, "podman.sock")
	logPath := filepath.Join(s.dir, "service.log")
	log, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("podman service log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(podman, "system", "service", "--time=0", "unix://"+sock)
	// Its temp files (an image import's upload, kept after the import)
	// go in its dir, and with it.
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+confPath, "TMPDIR="+s.dir)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = serviceAttr()
	// The parent-death signal is tied to the thread that forks the child
	// (golang/go#27505): fork from a goroutine that keeps its thread for
	// the service's life, and reap it there.
	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(exited)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start podman system service: %w", err)
	}
	s.cmd, s.exited = cmd, exited
	host := "unix://" + sock
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, EngineSetupTimeout)
	defer cancel()
	for {
		pctx, pcancel := context.WithTimeout(ctx, DockerProbeTimeout)
		err := pingEngine(pctx, host)
		pcancel()
		if err == nil {
			break
		}
		tail := func() string { b, _ := os.ReadFile(logPath); return tailLines(string(b), 5) }
		select {
		case <-exited:
			return fmt.Errorf("podman system service exited at start: %s", oneLine(tail()))
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("podman system service: start: %w", parent.Err())
			}
			return fmt.Errorf("podman system service did not answer within %v: %w; its log ends: %s", EngineSetupTimeout, ctx.Err(), oneLine(tail()))
		case <-time.After(50 * time.Millisecond):
		}
	}
	// testcontainers takes its engine from DOCKER_HOST, once per process.
	os.Setenv("DOCKER_HOST", host)
	s.published = true
	return nil
}

// stop ends the service (SIGTERM, then SIGKILL after DefaultStopTimeout)
// and removes its dir. The caller holds s.mu.
func (s *podmanService) stop() error {
	if s.cmd != nil && s.cmd.Process != nil {
		pid := s.cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(DefaultStopTimeout):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-s.exited
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL) // what it left in its group
	}
	s.cmd, s.exited = nil, nil
	if s.dir == "" {
		return nil
	}
	err := os.RemoveAll(s.dir)
	if !s.published {
		s.dir = "" // nothing names it: the next start may choose afresh
	}
	return err
}
