package redisenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// newNetwork makes a bridge network of the Env's own, labelled with its
// owner and removed by Close, and returns its name. It goes through the
// engine's API directly: testcontainers' network helper would first make
// a default network of its own on Podman and leave it behind.
func (e *Env) newNetwork(ctx context.Context, api client.APIClient) (string, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "lockbench-" + hex.EncodeToString(b[:])
	if err := ctx.Err(); err != nil {
		return "", err
	}
	mctx, done := making(ctx)
	_, err := api.NetworkCreate(mctx, name, client.NetworkCreateOptions{Driver: "bridge", Labels: ownerLabels()})
	done()
	if err != nil {
		return "", fmt.Errorf("redisenv: container network: %w", err)
	}
	e.closers = append(e.closers, func() error {
		_, err := api.NetworkRemove(context.Background(), name, client.NetworkRemoveOptions{})
		return err
	})
	return name, ctx.Err()
}

// startContainer runs Redis in containers. On a local Docker daemon the
// host ports are chosen up front and bound on 127.0.0.1, so that a
// restarted container keeps its address; on a remote one (DOCKER_HOST)
// Docker picks them and a restart may move them. What killed runs left on
// the engine goes first.
func (e *Env) startContainer(ctx context.Context, cfg Config) error {
	eng, err := OpenEngine(ctx)
	if err != nil {
		return err
	}
	// Closers run in reverse: the engine is released after every
	// container, network and image is gone.
	e.closers = append(e.closers, eng.Close)
	tc, err := newProvider(testcontainers.WithLogger(tclog.NewNoopLogger())) // the Env prints its one line
	if err != nil {
		return fmt.Errorf("redisenv: container backend: %w", err)
	}
	e.closers = append(e.closers, tc.Close)
	for _, d := range SweepLeftovers(ctx, tc.Client(), false) {
		cfg.Logf("redis: removed %s, %s", d, leftBy)
	}
	image, err := e.image(ctx, cfg, tc.Client())
	if err != nil {
		return err
	}
	cfg.Image = image
	e.why += "; " + eng.String() + ", image " + image
	// Every container is made by that provider, labelled with its owner,
	// and kept quiet.
	var quiet testcontainers.ContainerCustomizer = testcontainers.CustomizeRequestOption(func(req *testcontainers.GenericContainerRequest) error {
		req.ProviderType, req.Logger = provider, tclog.NewNoopLogger()
		return testcontainers.WithLabels(ownerLabels()).Customize(req)
	})
	// Where the engine runs decides where its published ports are reached:
	// testcontainers' own guess (the default network's gateway, on Podman)
	// is not an address the ports are bound on.
	local := engineLocal(eng.Host)
	e.engineAddr = engineHostname(eng.Host)
	if local {
		e.engineAddr = "127.0.0.1"
	}

	if cfg.Topology == TopologyCluster {
		return e.startContainerCluster(ctx, cfg, tc.Client(), local, quiet)
	}

	primaryOpts := []testcontainers.ContainerCustomizer{quiet}
	replicaOpts := []testcontainers.ContainerCustomizer{quiet}
	if cfg.Topology == TopologyReplica {
		nw, err := e.newNetwork(ctx, tc.Client())
		if err != nil {
			return err
		}
		primaryOpts = append(primaryOpts, tcnetwork.WithNetworkName([]string{"redis-primary"}, nw))
		replicaOpts = append(replicaOpts, tcnetwork.WithNetworkName([]string{"redis-replica"}, nw))
	}

	primary, err := e.runContainer(ctx, cfg, tc.Client(), local, "primary", "", primaryOpts, nil)
	if err != nil {
		return err
	}
	e.nodes = []Node{primary}
	e.opts = &redis.UniversalOptions{Addrs: []string{primary.Addr()}}
	if cfg.Topology != TopologyReplica {
		return nil
	}
	// The replica reaches the primary by its network alias and port 6379.
	replica, err := e.runContainer(ctx, cfg, tc.Client(), local, "replica", "", replicaOpts, []string{"--replicaof", "redis-primary", "6379"})
	if err != nil {
		return err
	}
	e.nodes = append(e.nodes, replica)
	return waitReplicaReady(ctx, primary.Addr(), replica.Addr(), "", cfg.StartTimeout)
}

// image makes sure the engine has the Env's image and returns its name:
// LocalImage is made here (and removed by Close); any other is used as it
// is, pulled if missing. An image that cannot be had is refused as bad
// input, naming the way out.
func (e *Env) image(ctx context.Context, cfg Config, api client.APIClient) (string, error) {
	if cfg.Image == LocalImage {
		tag, err := BuildImage(ctx, api, cfg.Server)
		if tag != "" {
			e.closers = append(e.closers, func() error {
				_, err := api.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{Force: true})
				return err
			})
		}
		if err != nil {
			return "", fmt.Errorf("redisenv: --image %s: %w", LocalImage, err)
		}
		return tag, nil
	}
	if err := FindImage(ctx, api, cfg.Image); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("redisenv: image %s: %w", cfg.Image, ctx.Err())
		}
		return "", &ConfigError{Field: "image", Value: cfg.Image, Err: err,
			Fix: "not on the engine and it cannot be pulled (" + oneLine(err.Error()) + "); pull or load it there, or use --image " + LocalImage + " to make one from the installed --server binary"}
	}
	return cfg.Image, nil
}

// startContainerCluster starts Shards×(1+Replicas) cluster-enabled
// containers on a network of their own and joins them as
// startLocalCluster does. The nodes know each other by their IPs on that
// network (port 6379, bus port 16379, which stays inside it); this process
// reaches them by their published ports, so the Env's Dialer, and the one
// createCluster uses, turn a node's address in the cluster into its
// published one.
func (e *Env) startContainerCluster(ctx context.Context, cfg Config, api client.APIClient, local bool, quiet testcontainers.ContainerCustomizer) error {
	nw, err := e.newNetwork(ctx, api)
	if err != nil {
		return err
	}
	run := func(name string) (*containerNode, error) {
		opts := []testcontainers.ContainerCustomizer{quiet, tcnetwork.WithNetworkName([]string{name}, nw)}
		return e.runContainer(ctx, cfg, api, local, name, nw, opts, nil)
	}

	replicas := max(cfg.Replicas, 0)
	var primaries, all []*containerNode
	for i := range cfg.Shards {
		p, err := run(fmt.Sprintf("shard%d-primary", i+1))
		if err != nil {
			return err
		}
		primaries = append(primaries, p)
		all = append(all, p)
		e.nodes = append(e.nodes, p)
	}
	reps := make([][]*containerNode, cfg.Shards)
	for i := range cfg.Shards {
		for j := range replicas {
			r, err := run(fmt.Sprintf("shard%d-replica%d", i+1, j+1))
			if err != nil {
				return err
			}
			reps[i] = append(reps[i], r)
			all = append(all, r)
			e.nodes = append(e.nodes, r)
		}
	}

	dial := containerDialer(all)
	seeds := make([]string, len(primaries))
	for i, p := range primaries {
		seeds[i] = p.Addr()
	}
	e.opts = &redis.UniversalOptions{Addrs: seeds, IsClusterMode: true, Dialer: dial}

	return createCluster(ctx, planCluster(primaries, reps, (*containerNode).clusterAddr, ""), cfg.StartTimeout, dial)
}

// containerDialer dials a cluster node's address as the cluster knows it
// (its IP on the Docker network and port 6379, from CLUSTER SLOTS, NODES
// or a MOVED/ASK redirect) at the host port Docker publishes it on; other
// addresses are dialled as they are. The mapping is looked up at each
// dial, so that it follows a restarted node to its new IP or port.
func containerDialer(nodes []*containerNode) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 5 * time.Minute}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		for _, n := range nodes {
			if n.clusterAddr() == addr {
				addr = n.Addr()
				break
			}
		}
		return d.DialContext(ctx, network, addr)
	}
}

// runContainer starts one Redis container named name. With network, the
// container is attached to that Docker network (by common) and its node
// records its IP there, for clusterAddr.
func (e *Env) runContainer(ctx context.Context, cfg Config, api client.APIClient, local bool, name, network string, common []testcontainers.ContainerCustomizer, extra []string) (*containerNode, error) {
	var args []string
	for _, d := range cfg.serverDirectives() {
		k, v, _ := strings.Cut(d, " ")
		if v == `""` {
			v = ""
		}
		args = append(args, "--"+k, v)
	}
	// Clients reach a container through its published port, which Redis
	// sees as a remote address: as the official image's entrypoint does,
	// turn protected mode off (an image made from a plain redis-server
	// binary would otherwise refuse every client).
	args = append(args, "--protected-mode", "no")
	args = append(args, extra...)
	var lastErr error
	for range 3 { // a pinned port may be taken between choosing and binding it
		opts := append([]testcontainers.ContainerCustomizer{}, common...)
		// Ready is judged from inside (the server's log) and then from
		// here at the engine's real address: testcontainers' own port
		// check dials its guess of the host, which on Podman is the
		// network gateway, not where the port is bound.
		opts = append(opts, testcontainers.WithCmdArgs(args...),
			testcontainers.WithWaitStrategy(wait.ForLog("Ready to accept connections").WithStartupTimeout(cfg.StartTimeout)))
		if local {
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				hc.PortBindings = mobynet.PortMap{
					mobynet.MustParsePort("6379/tcp"): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(port)}},
				}
			}))
		}
		c, err := e.createContainer(ctx, cfg.Image, opts)
		if err == nil {
			err = c.Start(ctx)
		}
		if err != nil {
			lastErr = fmt.Errorf("redisenv: %s container (%s): %w", name, cfg.Image, err)
			if strings.Contains(err.Error(), "already allocated") || strings.Contains(err.Error(), "address already in use") {
				continue
			}
			return nil, lastErr
		}
		n := &containerNode{name: name, c: c, api: api, network: network, timeout: cfg.StartTimeout, host: e.engineAddr}
		if err := n.readAddr(ctx); err != nil {
			return nil, err
		}
		if err := n.waitAnswers(ctx); err != nil {
			return nil, err
		}
		return n, nil
	}
	return nil, lastErr
}

// createContainer makes (without starting) a Redis container from image,
// to be removed by Close. The create is let finish when ctx is cancelled
// (see MakeGrace): cut mid-way, the engine may make a container whose ID
// never reaches Close.
func (e *Env) createContainer(ctx context.Context, image string, opts []testcontainers.ContainerCustomizer) (*tcredis.RedisContainer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	mctx, done := making(ctx)
	defer done()
	created := testcontainers.CustomizeRequestOption(func(req *testcontainers.GenericContainerRequest) error {
		req.Started = false
		return nil
	})
	c, err := tcredis.Run(mctx, image, append(opts, created)...)
	if c != nil {
		// A second at most: a server stopped just as it started may not
		// handle SIGTERM yet, and the engine's own wait is 10 s.
		e.closers = append(e.closers, func() error { return testcontainers.TerminateContainer(c, testcontainers.StopTimeout(time.Second)) })
	}
	if err == nil {
		err = ctx.Err()
	}
	return c, err
}

// containerNode is one Redis container; process faults go through the
// Docker API, since a signal from inside cannot stop a container's PID 1.
type containerNode struct {
	name    string
	c       *tcredis.RedisContainer
	api     client.APIClient
	network string // the Docker network a cluster node is met on; "" when none
	timeout time.Duration
	host    string // where the engine's published ports are reached

	mu       sync.Mutex
	killing  chan error // a kill still going on aside, nil when none
	addr     string
	ip       string // the container's IP on network, "" without one
	promoted bool   // REPLICAOF NO ONE again after a restart: the args still say replicaof
}

func (n *containerNode) Name() string {
	return n.name
}

func (n *containerNode) Addr() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.addr
}

// clusterAddr is the address the other nodes of a cluster reach n by: its
// IP on the Docker network and port 6379 (Addr when n is on none).
func (n *containerNode) clusterAddr() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ip == "" {
		return n.addr
	}
	return net.JoinHostPort(n.ip, "6379")
}

// readAddr reads the mapped port the engine gives the container and, on a
// network, the container's IP there: a (re)started container may get
// another one. The host is the engine's (see startContainer).
func (n *containerNode) readAddr(ctx context.Context) error {
	host := n.host
	port, err := n.c.MappedPort(ctx, "6379/tcp")
	if err != nil {
		return fmt.Errorf("redisenv: %s container port: %w", n.name, err)
	}
	var ip string
	if n.network != "" {
		info, err := n.c.Inspect(ctx)
		if err != nil {
			return fmt.Errorf("redisenv: %s container inspect: %w", n.name, err)
		}
		var ep *mobynet.EndpointSettings
		if info.NetworkSettings != nil {
			ep = info.NetworkSettings.Networks[n.network]
		}
		if ep == nil || !ep.IPAddress.IsValid() {
			return fmt.Errorf("redisenv: %s container has no IP on network %s", n.name, n.network)
		}
		ip = ep.IPAddress.String()
	}
	n.mu.Lock()
	n.addr = net.JoinHostPort(host, strconv.Itoa(int(port.Num())))
	n.ip = ip
	n.mu.Unlock()
	return nil
}

// waitAnswers waits until the server answers PING at its published
// address, at most the start timeout.
func (n *containerNode) waitAnswers(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	for {
		err := probeServer(ctx, n.Addr(), 0)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisenv: %s container at %s not ready (%v): %w", n.name, n.Addr(), err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (n *containerNode) markPromoted() {
	n.mu.Lock()
	n.promoted = true
	n.mu.Unlock()
}

// PID is 0: the container's process lives in another PID namespace.
func (n *containerNode) PID() int { return 0 }

func (n *containerNode) Stop(ctx context.Context) error {
	if err := n.settle(ctx); err != nil {
		return err
	}
	grace := DefaultStopTimeout
	return n.c.Stop(ctx, &grace)
}

// Kill sends the container SIGKILL and returns once the server stops
// answering. The engine's own kill call returns only after it has torn the
// container's network down, which on a loaded machine takes seconds that a
// crashed process does not: the call goes on aside, and whatever next acts
// on the node waits for it first.
func (n *containerNode) Kill(ctx context.Context) error {
	done := make(chan error, 1)
	n.mu.Lock()
	n.killing = done
	n.mu.Unlock()
	go func() {
		_, err := n.api.ContainerKill(context.WithoutCancel(ctx), n.c.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"})
		done <- err
	}()
	addr := n.Addr()
	for {
		select {
		case err := <-done:
			done <- err // kept for the next operation's wait
			return err
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		err := probeServer(pctx, addr, 0)
		cancel()
		if err != nil {
			return nil // no answer: dead to its clients, the engine still tidying up
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settle waits for a kill still going on aside (see Kill).
func (n *containerNode) settle(ctx context.Context) error {
	n.mu.Lock()
	done := n.killing
	n.killing = nil
	n.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Pause freezes the container. runc's freeze can give up on a loaded host
// (the cgroup not frozen in its time); the pause is tried again while the
// container is running and not yet paused, since the fault must happen.
func (n *containerNode) Pause(ctx context.Context) error {
	var err error
	for try := 0; try < 3; try++ {
		if try > 0 {
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				return err
			}
		}
		if _, err = n.api.ContainerPause(ctx, n.c.GetContainerID(), client.ContainerPauseOptions{}); err == nil {
			return nil
		}
		st, serr := n.c.State(ctx)
		switch {
		case serr != nil:
			return err
		case st.Paused:
			return nil
		case !st.Running:
			return err
		}
	}
	return fmt.Errorf("%w (tried 3 times)", err)
}

func (n *containerNode) Resume(ctx context.Context) error {
	_, err := n.api.ContainerUnpause(ctx, n.c.GetContainerID(), client.ContainerUnpauseOptions{})
	return err
}

func (n *containerNode) Restart(ctx context.Context) error {
	if err := n.settle(ctx); err != nil {
		return err
	}
	if n.c.IsRunning() {
		if err := n.Stop(ctx); err != nil {
			return err
		}
	}
	if err := n.c.Start(ctx); err != nil {
		return err
	}
	if err := n.readAddr(ctx); err != nil {
		return err
	}
	if err := n.waitAnswers(ctx); err != nil {
		return err
	}
	n.mu.Lock()
	promoted := n.promoted
	n.mu.Unlock()
	if !promoted {
		return nil
	}
	rdb := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1})
	defer rdb.Close()
	return rdb.Do(ctx, "REPLICAOF", "NO", "ONE").Err()
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
