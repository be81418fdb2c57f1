package redisenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
// which takes a real engine (Podman's, say) well over a second, and far
// longer on a host whose CPUs are busy. It bounds the start of a Podman
// API service of lockbench's own too.
const EngineSetupTimeout = time.Minute

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

// LocalImage as Config.Image (--image local) runs the containers
// from an image made on the spot from the local redis-server
// (Config.Server) and the libraries it links: for an engine that can
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

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
