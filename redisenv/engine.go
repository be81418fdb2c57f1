package redisenv

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// The container backend talks to a Docker-API engine: the one DOCKER_HOST
// names, else Docker's socket, else a Podman API service of this
// process's own. testcontainers' reaper (Ryuk) is never used: its image
// cannot be pulled offline, and lockbench removes what it made itself.
// Everything it makes on an engine (containers, networks, images) carries
// OwnerLabel; Close removes it, and every container start first sweeps
// what lockbench processes that are gone left behind, as the local
// backend sweeps its data dirs.

// DockerProbeTimeout bounds the first check for a Docker engine: that
// something at the engine's address answers its /_ping. Where none
// listens, the container backend fails (and auto falls back) that fast.
const DockerProbeTimeout = 1500 * time.Millisecond

// EngineSetupTimeout bounds the rest of the probe, once the engine has
// answered: testcontainers' provider set-up asks the engine for its info,
// which takes a real engine (Podman's, say) well over a second. It bounds
// the start of a Podman API service of lockbench's own too.
const EngineSetupTimeout = 20 * time.Second

// ImagePullTimeout bounds pulling the container backend's image when the
// engine lacks it.
const ImagePullTimeout = time.Minute

// MakeGrace is how long an engine call that makes something (an image,
// a network, a container) may go on once its context is cancelled.
// Cut mid-way, the call may still make it on the engine without this
// process learning its name, and nothing would remove it; let finish, it
// is known and removed. Ctrl-C waits for that at most this long (a second
// Ctrl-C does not).
const MakeGrace = 20 * time.Second

// making is the context for an engine call that makes something: ctx's
// values, cancelled MakeGrace after ctx is (see MakeGrace). The caller
// calls the returned cancel when the call returns.
func making(ctx context.Context) (context.Context, context.CancelFunc) {
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	var grace *time.Timer
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		grace = time.AfterFunc(MakeGrace, cancel)
		mu.Unlock()
	})
	return mctx, func() {
		stop()
		mu.Lock()
		if grace != nil {
			grace.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

// LocalImage as Config.Image (--redis-image local) runs the containers
// from an image made on the spot from the local redis-server
// (Config.ServerPath) and the libraries it links: for an engine that can
// pull nothing. The image is removed by Close.
const LocalImage = "local"

// OwnerLabel is the label every container, network and image lockbench
// makes carries: the owner record of the lockbench that made it ("<pid>
// <process start>"), so that what a killed lockbench left can be told from
// what a live one uses (OwnerGone).
const OwnerLabel = "lockbench.owner"

// OwnerSpaceLabel goes with OwnerLabel: the host and pid namespace where
// its pid means the owner. A sweep judges only what was made where it
// runs; another host's, or another container's sharing the engine, is not
// its to judge.
const OwnerSpaceLabel = "lockbench.owner-space"

// ErrNoDocker wraps every "no Docker engine reachable" outcome.
var ErrNoDocker = errors.New("no Docker engine reachable")

// dockerSocket is the engine's address when DOCKER_HOST is unset.
const dockerSocket = "unix:///var/run/docker.sock"

// DockerAvailable returns nil when a Docker-API engine (Docker, or Podman's
// API service) answers at DOCKER_HOST (else Docker's socket), else an
// ErrNoDocker error with a one-line reason. The engine's /_ping must
// answer within DockerProbeTimeout; then testcontainers' provider gets
// EngineSetupTimeout. Its set-up takes no context, so it runs aside and is
// abandoned (not waited for) when the time is up: an engine that accepts
// but never answers cannot stall the caller.
func DockerAvailable(ctx context.Context) error {
	host := engineHost()
	// A probe the caller cut short found nothing out about the engine: it
	// says so, rather than blame the engine.
	cut := func() error { return fmt.Errorf("redisenv: probe of the engine at %s: %w", host, ctx.Err()) }
	pctx, cancel := context.WithTimeout(ctx, DockerProbeTimeout)
	err := pingEngine(pctx, host)
	cancel()
	if ctx.Err() != nil {
		return cut()
	}
	if err != nil {
		return fmt.Errorf("%w: %s at %s", ErrNoDocker, oneLine(err.Error()), host)
	}
	sctx, cancel := context.WithTimeout(ctx, EngineSetupTimeout)
	defer cancel()
	res := make(chan error, 1)
	go func() { res <- probeDocker(sctx) }()
	select {
	case err := <-res:
		if ctx.Err() != nil {
			return cut()
		}
		return err
	case <-sctx.Done():
		if ctx.Err() != nil {
			return cut()
		}
		return fmt.Errorf("%w: %s answered /_ping but not its API within %v", ErrNoDocker, host, EngineSetupTimeout)
	}
}

// Engine is the container engine an Env's containers run on.
type Engine struct {
	// Host is its address, as DOCKER_HOST spells it.
	Host string
	// Own is set for a Podman API service this process started: it stops
	// when the last Engine using it is closed.
	Own bool

	closed atomic.Bool
}

// String names the engine for the Env's one line.
func (e *Engine) String() string {
	if e.Own {
		return "a Podman API service of its own at " + e.Host
	}
	return "engine at " + e.Host
}

// Close releases the engine: an own Podman service stops once nothing
// else uses it. Later calls do nothing.
func (e *Engine) Close() error {
	if !e.Own || e.closed.Swap(true) {
		return nil
	}
	return ownPodman.release()
}

// OpenEngine finds the engine a container run uses: the one DOCKER_HOST
// names; without DOCKER_HOST, Docker's socket where it answers, else a
// Podman API service of this process's own (podman on $PATH), which
// DOCKER_HOST then names for the rest of the process (testcontainers
// keeps the first engine address it sees). Where none can be had, the
// error is a *ConfigError (wrapping ErrNoDocker) naming the fix; where
// ctx was cancelled, it is ctx's error.
func OpenEngine(ctx context.Context) (_ *Engine, err error) {
	defer func() {
		if err != nil && errors.Is(ctx.Err(), context.Canceled) {
			// Cut short, it learnt nothing of the engine to blame it for.
			err = fmt.Errorf("redisenv: container engine: %w", ctx.Err())
		}
	}()
	own := ownPodman.host()
	if host := strings.TrimSpace(os.Getenv("DOCKER_HOST")); host != "" && host != own {
		if err := DockerAvailable(ctx); err != nil {
			return nil, &ConfigError{Field: "$DOCKER_HOST", Value: host, Err: err,
				Fix: "nothing serves the Docker API there (" + oneLine(err.Error()) + "); start that engine, unset DOCKER_HOST to use Docker's socket or a Podman service of lockbench's own, or use --redis local"}
		}
		return &Engine{Host: host}, nil
	}
	if own == "" {
		pctx, cancel := context.WithTimeout(ctx, DockerProbeTimeout)
		err := pingEngine(pctx, dockerSocket)
		cancel()
		if err == nil {
			if err := DockerAvailable(ctx); err != nil {
				return nil, fmt.Errorf("redisenv: container backend: %w (use --redis local)", err)
			}
			return &Engine{Host: dockerSocket}, nil
		}
	}
	host, err := ownPodman.acquire(ctx)
	var ce *ConfigError
	if errors.As(err, &ce) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("redisenv: container backend: %w (use --redis local)", err)
	}
	e := &Engine{Host: host, Own: true}
	if err := DockerAvailable(ctx); err != nil {
		_ = e.Close()
		return nil, fmt.Errorf("redisenv: container backend: podman service at %s: %w (use --redis local)", host, err)
	}
	return e, nil
}

// engineHost is the engine's address as DOCKER_HOST gives it, else
// Docker's default socket.
func engineHost() string {
	if h := strings.TrimSpace(os.Getenv("DOCKER_HOST")); h != "" {
		return h
	}
	return dockerSocket
}

// engineLocal reports whether the engine at host runs on this machine (a
// unix socket, or TCP on a loopback address): its published ports are then
// bound on 127.0.0.1 and reached there.
func engineLocal(host string) bool {
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "unix", "npipe":
		return true
	case "tcp", "http", "https":
		ip := net.ParseIP(u.Hostname())
		return u.Hostname() == "localhost" || ip != nil && ip.IsLoopback()
	}
	return false
}

// engineHostname is the name a remote engine's published ports are
// reached at: the host of its address.
func engineHostname(host string) string {
	if u, err := url.Parse(host); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "localhost"
}

// pingEngine asks the engine at host for /_ping, bounded by ctx.
func pingEngine(ctx context.Context, host string) error {
	u, err := url.Parse(host)
	if err != nil {
		return fmt.Errorf("DOCKER_HOST %q: %w", host, err)
	}
	var network, addr string
	switch u.Scheme {
	case "unix":
		network, addr = "unix", u.Path
	case "tcp", "http", "https":
		network, addr = "tcp", u.Host
	default:
		return fmt.Errorf("DOCKER_HOST scheme %q not probed", u.Scheme)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if u.Scheme == "https" {
		return nil // answering the TLS handshake is a Go HTTP client's job; the dial is enough here
	}
	if _, err := io.WriteString(c, "GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return fmt.Errorf("no HTTP answer to /_ping: %w", err)
	}
	return resp.Body.Close()
}

// provider is testcontainers' provider to use with any engine: its Docker
// one. Podman's Docker-compatible API names its default network "bridge",
// as Docker does; testcontainers' Podman provider looks for "podman"
// instead (and picks itself when DOCKER_HOST names a podman.sock), misses
// it, and makes a network of its own ("reaper_default") that it leaves
// behind.
const provider = testcontainers.ProviderDocker

// reaperOff turns testcontainers' reaper off once per process.
var reaperOff sync.Once

// newProvider is testcontainers' provider for the engine, with its reaper
// off. testcontainers reads its configuration once per process, so the
// setting must be in place before its first use, which goes through here.
func newProvider(opts ...testcontainers.GenericProviderOption) (*testcontainers.DockerProvider, error) {
	reaperOff.Do(func() { os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true") })
	if !testcontainers.ReadConfig().RyukDisabled {
		return nil, errors.New("testcontainers' configuration was read before lockbench turned its reaper (Ryuk) off")
	}
	p, err := provider.GetProvider(opts...)
	if err != nil {
		return nil, err
	}
	dp, ok := p.(*testcontainers.DockerProvider)
	if !ok {
		return nil, fmt.Errorf("unexpected testcontainers provider %T", p)
	}
	return dp, nil
}

func probeDocker(ctx context.Context) (err error) {
	// Older testcontainers releases panicked when no Docker host was found;
	// a probe must never take the caller down.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s", ErrNoDocker, oneLine(fmt.Sprint(r)))
		}
	}()
	p, err := newProvider(testcontainers.WithLogger(tclog.NewNoopLogger()))
	if err != nil {
		return fmt.Errorf("%w: %s", ErrNoDocker, oneLine(err.Error()))
	}
	defer p.Close()
	if err := p.Health(ctx); err != nil {
		return fmt.Errorf("%w: %s", ErrNoDocker, oneLine(err.Error()))
	}
	return nil
}

func ownerLabels() map[string]string {
	l := map[string]string{OwnerLabel: ownerOf()}
	if s := pidSpace(); s != "" {
		l[OwnerSpaceLabel] = s
	}
	return l
}

// leftOver reports whether labels name an owner that is gone, made where
// this process runs.
func leftOver(labels map[string]string) bool {
	if s := labels[OwnerSpaceLabel]; s != "" && s != pidSpace() {
		return false
	}
	return OwnerGone(labels[OwnerLabel])
}

// pidSpace names this process's host and pid namespace ("" where the
// system does not tell): where its pid means it. The name tells hosts
// apart (every host's first pid namespace has the same number) and
// survives a reboot, after which the pid and start time tell an owner
// gone.
var pidSpace = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	ns, _ := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	host = strings.Join(strings.Fields(host), "_")
	if host == "" || ns == "" {
		return ""
	}
	return host + "/" + strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]")
})

// SweepLeftovers removes from the engine the containers, networks and
// images whose OwnerLabel names a process that is gone (a lockbench
// killed before its Close); with own, this process's too. It returns one
// line per thing removed.
func SweepLeftovers(ctx context.Context, api client.APIClient, own bool) []string {
	mine := ownerOf()
	left := func(labels map[string]string) (string, bool) {
		label := labels[OwnerLabel]
		return strings.Fields(label + " ?")[0], leftOver(labels) || own && label == mine
	}
	var removed []string
	f := client.Filters{}.Add("label", OwnerLabel)
	// Containers first: they hold the networks and images.
	if cs, err := api.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f}); err == nil {
		for _, c := range cs.Items {
			pid, ok := left(c.Labels)
			if !ok {
				continue
			}
			if c.State == "paused" { // an engine may refuse to remove a paused container
				_, _ = api.ContainerUnpause(ctx, c.ID, client.ContainerUnpauseOptions{})
			}
			if _, err := api.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true}); err == nil {
				name := c.ID[:min(12, len(c.ID))]
				if len(c.Names) > 0 {
					name = strings.TrimPrefix(c.Names[0], "/")
				}
				removed = append(removed, fmt.Sprintf("container %s (%s, of pid %s)", name, c.Image, pid))
			}
		}
	}
	if ns, err := api.NetworkList(ctx, client.NetworkListOptions{Filters: f}); err == nil {
		for _, n := range ns.Items {
			if pid, ok := left(n.Labels); ok {
				if _, err := api.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err == nil {
					removed = append(removed, fmt.Sprintf("network %s (of pid %s)", n.Name, pid))
				}
			}
		}
	}
	if is, err := api.ImageList(ctx, client.ImageListOptions{Filters: f}); err == nil {
		for _, img := range is.Items {
			if pid, ok := left(img.Labels); ok {
				if _, err := api.ImageRemove(ctx, img.ID, client.ImageRemoveOptions{Force: true}); err == nil {
					removed = append(removed, fmt.Sprintf("image %s (of pid %s)", strings.Join(img.RepoTags, ","), pid))
				}
			}
		}
	}
	return removed
}

// FindImage makes sure the engine has image ref: present, or pulled
// within ImagePullTimeout.
func FindImage(ctx context.Context, api client.APIClient, ref string) error {
	if _, err := api.ImageInspect(ctx, ref); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ImagePullTimeout)
	defer cancel()
	pull, err := api.ImagePull(ctx, ref, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer pull.Close()
	return pull.Wait(ctx)
}

// ImageRepo is the repository of the images made from a local
// redis-server (BuildImage).
const ImageRepo = "localhost/lockbench-redis"

// builtImages numbers the images this process makes, so that two Envs
// never share (or remove) one.
var builtImages atomic.Int64

var lddPath = regexp.MustCompile(`(/[^\s]+)`)

// BuildImage imports an image of the redis-server at serverPath (looked
// up on $PATH), the libraries ldd lists for it and an empty /data,
// labelled with this process as its owner, and returns its tag. The
// caller removes it (SweepLeftovers does, once this process is gone). The
// tag comes with an error too once the import was asked for: the image
// may then exist. A cancelled ctx lets the import finish (see MakeGrace).
func BuildImage(ctx context.Context, api client.APIClient, serverPath string) (string, error) {
	bin, err := exec.LookPath(serverPath)
	if err != nil {
		return "", fmt.Errorf("%w (looked for %q): %s", ErrServerNotFound, serverPath, InstallHint)
	}
	out, err := exec.CommandContext(ctx, "ldd", bin).Output()
	if err != nil {
		return "", fmt.Errorf("ldd %s (an image is made of its libraries): %w", bin, err)
	}
	files := append([]string{bin}, lddPath.FindAllString(string(out), -1)...)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	addDir := func(d string) error {
		for _, part := range parents(d) {
			if dirs[part] {
				continue
			}
			dirs[part] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: part + "/", Mode: 0o755}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range []string{"data", "tmp"} {
		if err := addDir(d); err != nil {
			return "", err
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f) // follows symlinks: the image holds the real files
		if err != nil {
			return "", err
		}
		name := strings.TrimPrefix(f, "/")
		if err := addDir(filepath.Dir(name)); err != nil {
			return "", err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(b))}); err != nil {
			return "", err
		}
		if _, err := tw.Write(b); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	tag := fmt.Sprintf("%s:%d-%d", ImageRepo, os.Getpid(), builtImages.Add(1))
	changes := []string{`ENTRYPOINT [` + strconv.Quote(bin) + `]`, "WORKDIR /data", "EXPOSE 6379"}
	for k, v := range ownerLabels() {
		changes = append(changes, fmt.Sprintf("LABEL %s=%q", k, v))
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	mctx, done := making(ctx)
	defer done()
	res, err := api.ImageImport(mctx, client.ImageImportSource{Source: &buf, SourceName: "-"}, tag,
		client.ImageImportOptions{Changes: changes})
	if err != nil {
		return tag, fmt.Errorf("import: %w", err)
	}
	_, _ = io.Copy(io.Discard, res) // the import is done when its progress ends
	res.Close()
	if err := ctx.Err(); err != nil {
		return tag, err
	}
	if _, err := api.ImageInspect(ctx, tag); err != nil {
		return tag, fmt.Errorf("import of %s: %w", tag, err)
	}
	return tag, nil
}

// parents lists d and its parent directories, outermost first ("a/b" →
// "a", "a/b").
func parents(d string) []string {
	if d == "." || d == "" || d == "/" {
		return nil
	}
	return append(parents(filepath.Dir(d)), d)
}

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

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
