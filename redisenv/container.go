package redisenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
)

// DockerProbeTimeout bounds the check for a Docker engine, so that the
// container backend fails (and auto falls back) fast where there is none.
const DockerProbeTimeout = 1500 * time.Millisecond

// ErrNoDocker wraps every "no Docker engine reachable" outcome.
var ErrNoDocker = errors.New("no Docker engine reachable")

// DockerAvailable returns nil when a Docker engine answers within
// DockerProbeTimeout, else an ErrNoDocker error with a one-line reason.
func DockerAvailable(ctx context.Context) (err error) {
	ctx, cancel := context.WithTimeout(ctx, DockerProbeTimeout)
	defer cancel()
	// Older testcontainers releases panicked when no Docker host was found;
	// a probe must never take the caller down.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s", ErrNoDocker, oneLine(fmt.Sprint(r)))
		}
	}()
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(tclog.NewNoopLogger()))
	if err != nil {
		return fmt.Errorf("%w: %s", ErrNoDocker, oneLine(err.Error()))
	}
	if err := p.Health(ctx); err != nil {
		return fmt.Errorf("%w: %s", ErrNoDocker, oneLine(err.Error()))
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// tcLogger sends testcontainers' chatter to Config.Logf.
type tcLogger func(format string, args ...any)

func (l tcLogger) Printf(format string, args ...any) { l(format, args...) }

// startContainer runs Redis in containers. Host ports are chosen up front
// and bound on 127.0.0.1 so that a restarted container keeps its address.
func (e *Env) startContainer(ctx context.Context, cfg Config) error {
	if err := DockerAvailable(ctx); err != nil {
		return fmt.Errorf("redisenv: container backend: %w (use --redis local, or start Docker)", err)
	}
	provider, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(tcLogger(cfg.Logf)))
	if err != nil {
		return fmt.Errorf("redisenv: container backend: %w", err)
	}
	api := provider.Client()
	e.closers = append(e.closers, provider.Close)

	logger := testcontainers.WithLogger(tcLogger(cfg.Logf))
	primaryOpts := []testcontainers.ContainerCustomizer{logger}
	replicaOpts := []testcontainers.ContainerCustomizer{logger}
	if cfg.Topology == TopologyReplica {
		nw, err := tcnetwork.New(ctx)
		if err != nil {
			return fmt.Errorf("redisenv: container network: %w", err)
		}
		e.closers = append(e.closers, func() error { return nw.Remove(context.Background()) })
		primaryOpts = append(primaryOpts, tcnetwork.WithNetwork([]string{"redis-primary"}, nw))
		replicaOpts = append(replicaOpts, tcnetwork.WithNetwork([]string{"redis-replica"}, nw))
	}

	primary, err := e.runContainer(ctx, cfg, api, "primary", primaryOpts, nil)
	if err != nil {
		return err
	}
	e.nodes = []Node{primary}
	e.opts = &redis.UniversalOptions{Addrs: []string{primary.Addr()}}
	if cfg.Topology != TopologyReplica {
		return nil
	}
	// The replica reaches the primary by its network alias and port 6379.
	replica, err := e.runContainer(ctx, cfg, api, "replica", replicaOpts, []string{"--replicaof", "redis-primary", "6379"})
	if err != nil {
		return err
	}
	e.nodes = append(e.nodes, replica)
	return waitReplicaLink(ctx, replica.Addr(), cfg.StartTimeout)
}

func (e *Env) runContainer(ctx context.Context, cfg Config, api client.APIClient, name string, common []testcontainers.ContainerCustomizer, extra []string) (*containerNode, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	var args []string
	for _, d := range cfg.serverDirectives() {
		k, v, _ := strings.Cut(d, " ")
		if v == `""` {
			v = ""
		}
		args = append(args, "--"+k, v)
	}
	args = append(args, extra...)
	opts := append([]testcontainers.ContainerCustomizer{}, common...)
	opts = append(opts,
		testcontainers.WithCmdArgs(args...),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = mobynet.PortMap{
				mobynet.MustParsePort("6379/tcp"): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(port)}},
			}
		}),
	)
	c, err := tcredis.Run(ctx, cfg.Image, opts...)
	if c != nil {
		e.closers = append(e.closers, func() error { return testcontainers.TerminateContainer(c) })
	}
	if err != nil {
		return nil, fmt.Errorf("redisenv: %s container (%s): %w", name, cfg.Image, err)
	}
	return &containerNode{
		name:    name,
		addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		c:       c,
		api:     api,
		timeout: cfg.StartTimeout,
	}, nil
}

// containerNode is one Redis container; process faults go through the
// Docker API, since a signal from inside cannot stop a container's PID 1.
type containerNode struct {
	name    string
	addr    string
	c       *tcredis.RedisContainer
	api     client.APIClient
	timeout time.Duration
}

func (n *containerNode) Name() string { return n.name }
func (n *containerNode) Addr() string { return n.addr }

// PID is 0: the container's process lives in another PID namespace.
func (n *containerNode) PID() int { return 0 }

func (n *containerNode) Stop(ctx context.Context) error {
	grace := DefaultStopTimeout
	return n.c.Stop(ctx, &grace)
}

func (n *containerNode) Kill(ctx context.Context) error {
	_, err := n.api.ContainerKill(ctx, n.c.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"})
	return err
}

func (n *containerNode) Pause(ctx context.Context) error {
	_, err := n.api.ContainerPause(ctx, n.c.GetContainerID(), client.ContainerPauseOptions{})
	return err
}

func (n *containerNode) Resume(ctx context.Context) error {
	_, err := n.api.ContainerUnpause(ctx, n.c.GetContainerID(), client.ContainerUnpauseOptions{})
	return err
}

func (n *containerNode) Restart(ctx context.Context) error {
	if n.c.IsRunning() {
		if err := n.Stop(ctx); err != nil {
			return err
		}
	}
	if err := n.c.Start(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	for {
		err := probeServer(ctx, n.addr, 0)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisenv: %s container at %s not ready (%v): %w", n.name, n.addr, err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (n *containerNode) LogTail(lines int) string {
	rc, err := n.c.Logs(context.Background())
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return tailLines(string(b), lines)
}
