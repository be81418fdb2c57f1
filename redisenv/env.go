package redisenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

var osLookupEnv = os.LookupEnv

// ErrNotManaged is returned by process operations on a node that lockbench
// did not start (an external Redis): it cannot pause or kill what it does
// not own.
var ErrNotManaged = errors.New("redisenv: node is not managed by lockbench (external Redis)")

// ErrNotRunning is returned by Pause, Resume and Kill on a stopped node.
var ErrNotRunning = errors.New("redisenv: node is not running")

// Node is one Redis server of an Env, with the process handles that fault
// injection needs. Operations on an external node return ErrNotManaged.
type Node interface {
	// Name is the node's role at start: "primary" or "replica".
	Name() string
	// Addr is host:port, reachable from this process. It survives Restart.
	Addr() string
	// PID is the OS process id of a local server, 0 otherwise or when stopped.
	PID() int
	// Stop shuts the server down gracefully (SIGTERM, so AOF is flushed),
	// and kills it if it has not exited by ctx's deadline or DefaultStopTimeout.
	Stop(ctx context.Context) error
	// Kill ends the server at once (SIGKILL): no chance to persist anything.
	Kill(ctx context.Context) error
	// Pause freezes the server (SIGSTOP, or docker pause): connections stay
	// open, nothing answers.
	Pause(ctx context.Context) error
	// Resume undoes Pause (SIGCONT, or docker unpause).
	Resume(ctx context.Context) error
	// Restart stops the server if it runs, then starts it again on the same
	// address and data directory, and waits until it answers PING.
	Restart(ctx context.Context) error
	// LogTail returns up to the last n lines of the server's log.
	LogTail(n int) string
}

// Env is a Redis deployment ready for clients: started by lockbench (local
// or container backend) or reached by URL (external). Close releases it; a
// cancelled Start context releases it too.
type Env struct {
	backend  Backend
	topology Topology
	why      string // why auto chose this backend, for the one-line report
	shards   int    // cluster primaries and replicas each, as started
	replicas int
	// engineAddr is where a container engine's published ports are
	// reached (container backend only).
	engineAddr string

	mu    sync.Mutex
	opts  *redis.UniversalOptions
	nodes []Node // nodes[0] is the current primary
	info  Info   // INFO at the start
	bin   string // the server binary the local backend started

	closers      []func() error // run in reverse order by Close
	closeOnce    sync.Once
	closeErr     error
	stopWatch    func() bool // guarded by mu: Close may run from the AfterFunc
	sentinels    []Node      // TopologySentinel's Sentinels
	startTimeout time.Duration
}

// Start brings up (or connects to) the Redis described by cfg and returns
// once it answers PING. The returned Env is closed when ctx is cancelled,
// so no server outlives the caller's context. A start that ctx cancels
// removes what it made before it returns, and its error is ctx's.
func Start(ctx context.Context, cfg Config) (*Env, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	backend, why, err := resolve(ctx, cfg)
	if err != nil {
		return nil, err
	}
	e := &Env{backend: backend, topology: cfg.Topology, why: why, startTimeout: cfg.StartTimeout,
		shards: cfg.Shards, replicas: max(cfg.Replicas, 0)}
	switch backend {
	case BackendLocal:
		err = e.startLocal(ctx, cfg)
	case BackendContainer:
		err = e.startContainer(ctx, cfg)
		if err != nil && cfg.Backend == BackendAuto && ctx.Err() == nil {
			// auto picks what works: an engine that cannot run the image
			// (none pulled, no registry) is no reason to fail.
			_ = e.Close()
			cfg.Logf("redis: %v", err)
			e = &Env{backend: BackendLocal, topology: cfg.Topology, startTimeout: cfg.StartTimeout,
				why:    "auto: a container engine answered but could not start " + cfg.Image + " (see above); local instead",
				shards: cfg.Shards, replicas: max(cfg.Replicas, 0)}
			err = e.startLocal(ctx, cfg)
		}
	case BackendExternal:
		err = e.connectExternal(ctx, cfg)
	}
	if err != nil {
		_ = e.Close()
		if errors.Is(ctx.Err(), context.Canceled) {
			// Whatever failed (a dial, an engine call) failed because
			// the caller cancelled: that is all there is to say.
			return nil, fmt.Errorf("redisenv: start: %w", ctx.Err())
		}
		return nil, err
	}
	info := e.serverInfo(ctx)
	e.mu.Lock()
	e.info = info
	e.stopWatch = context.AfterFunc(ctx, func() { _ = e.Close() })
	e.mu.Unlock()
	if ctx.Err() != nil {
		_ = e.Close()
		return nil, fmt.Errorf("redisenv: start: %w", ctx.Err())
	}
	cfg.Logf("%s", e.String())
	return e, nil
}

// resolve turns auto into a concrete backend and says why.
func resolve(ctx context.Context, cfg Config) (Backend, string, error) {
	if cfg.Backend != BackendAuto {
		return cfg.Backend, "chosen with --redis " + string(cfg.Backend), nil
	}
	if cfg.URL != "" {
		return BackendExternal, "auto: a URL was given", nil
	}
	if cfg.Topology == TopologySentinel {
		return BackendLocal, "auto: Sentinel runs on the local backend", nil
	}
	if cfg.FakeClock {
		return BackendLocal, "auto: a faked server clock runs on the local backend", nil
	}
	if cfg.Server != "" && !cfg.imageChosen {
		return BackendLocal, "auto: --server names a binary to start here", nil
	}
	if err := DockerAvailable(ctx); err != nil {
		return BackendLocal, "auto: no URL, and " + err.Error(), nil
	}
	return BackendContainer, "auto: no URL, Docker engine reachable", nil
}

// Backend is the backend actually in use (never auto).
func (e *Env) Backend() Backend { return e.backend }

// Topology is the started topology.
func (e *Env) Topology() Topology { return e.topology }

// Shape is the topology as result files record it: "single", "replica",
// "cluster 3x1" (primaries × replicas each) for a started cluster, or
// "cluster" for an external one.
func (e *Env) Shape() string {
	if e.topology == TopologyCluster && e.backend != BackendExternal {
		return fmt.Sprintf("cluster %dx%d", e.shards, e.replicas)
	}
	return string(e.topology)
}

// Server names the server as INFO gave it at the start: "valkey 9.1.2"
// or "redis 7.0.15"; "" when it could not be read.
func (e *Env) Server() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.info.Server()
}

// Binary is the path of the server binary the local backend started, ""
// for a container or external Redis.
func (e *Env) Binary() string { return e.bin }

// Version is the server's redis_version (what it claims compatibility
// with: Valkey 9 says 7.2.4), or "" when it could not be read.
func (e *Env) Version() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.info.RedisVersion
}

// Addr is the current primary's host:port (the first seed for an external
// cluster or sentinel URL).
func (e *Env) Addr() string {
	e.mu.Lock()
	managedSentinels := len(e.sentinels) > 0
	addr := e.opts.Addrs[0]
	e.mu.Unlock()
	if managedSentinels {
		return e.Primary().Addr() // Addrs are the Sentinels'
	}
	return addr
}

// Options returns a copy of the go-redis options for this Env; callers may
// change their copy (pool size, timeouts) before building a client. The
// protocol is RESP2 unless a URL asked for another: Redisson speaks RESP2
// by default, and under RESP3 go-redis peeks the socket for push messages
// before every command, an extra system call per lock operation.
func (e *Env) Options() *redis.UniversalOptions {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := *e.opts
	o.Addrs = append([]string(nil), e.opts.Addrs...)
	if o.Protocol == 0 {
		o.Protocol = 2
	}
	return &o
}

// ClientOptions is Options for a load-generating client with a pool of
// pool connections and lean buffers: go-redis's 32 KiB per direction per
// connection would dominate the memory of a run with thousands of owners,
// while lock commands and replies are tens of bytes.
func (e *Env) ClientOptions(pool int) *redis.UniversalOptions {
	o := e.Options()
	o.PoolSize = pool
	o.ReadBufferSize, o.WriteBufferSize = 4<<10, 4<<10
	o.PipelineReadBufferSize, o.PipelineWriteBufferSize = 16<<10, 16<<10
	return o
}

// NewClient returns a new client (its own connection pool) to the current
// primary, or a cluster client for a cluster. The caller closes it.
func (e *Env) NewClient() redis.UniversalClient {
	return NewUniversalClient(e.Options())
}

// NewPool returns a new client with its own pool of size connections,
// as workloads.Config.NewRedis takes it. The caller closes it.
func (e *Env) NewPool(size int) redis.UniversalClient {
	return NewUniversalClient(e.ClientOptions(size))
}

// ShardMap reads a cluster's shards as they are now and returns their
// names and the function from a lock name to its shard's index there, as
// workloads.Config.ShardNames and ShardOf take them. For a Redis that is
// not a cluster it returns nil, nil, nil.
func (env *Env) ShardMap(ctx context.Context) ([]string, func(string) int, error) {
	if env.Topology() != TopologyCluster {
		return nil, nil, nil
	}
	shards, err := env.Shards(ctx)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(shards))
	for i, s := range shards {
		var ranges []string
		for _, r := range s.Slots {
			if r.From == r.To {
				ranges = append(ranges, strconv.Itoa(r.From))
			} else {
				ranges = append(ranges, fmt.Sprintf("%d-%d", r.From, r.To))
			}
		}
		names[i] = fmt.Sprintf("shard%d %s slots %s", i+1, s.Primary.Addr(), strings.Join(ranges, ","))
	}
	of := func(lock string) int {
		slot := KeySlot(lock)
		for i, s := range shards {
			if s.Owns(slot) {
				return i
			}
		}
		return 0 // every slot is served in a healthy cluster; Shards left out none
	}
	return names, of, nil
}

// ClusterScanInterval is how often cluster clients made by
// NewUniversalClient reread the slot map while in use. go-redis's default
// is a minute, and it does not reread the map when a primary stops
// answering, so after a failover its clients would keep dialling the dead
// node for up to a minute; Redisson rescans every few seconds
// (scanInterval) for the same reason.
const ClusterScanInterval = 2 * time.Second

// NewUniversalClient is redis.NewUniversalClient, except that a cluster
// client rescans the topology every ClusterScanInterval.
func NewUniversalClient(o *redis.UniversalOptions) redis.UniversalClient {
	if dial, limit := o.Dialer, o.DialTimeout; dial != nil && limit > 0 {
		// go-redis hands a custom dialer (the container cluster's) no dial
		// timeout: bound it here, or a dial into a killed container waits
		// out the dialer's own.
		oc := *o
		oc.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(ctx, limit)
			defer cancel()
			return dial(ctx, network, addr)
		}
		o = &oc
	}
	if o.MasterName == "" && (o.IsClusterMode || len(o.Addrs) > 1) {
		co := o.Cluster()
		co.ClusterStateReloadInterval = ClusterScanInterval
		return redis.NewClusterClient(co)
	}
	return redis.NewUniversalClient(o)
}

// Nodes returns the servers, current primary first. An external Env has one
// unmanaged node per address.
func (e *Env) Nodes() []Node {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Node(nil), e.nodes...)
}

// Primary is the node clients write to now: with Sentinel, the one the
// Sentinels name now (they may have elected another since the start).
func (e *Env) Primary() Node {
	e.followSentinels()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nodes[0]
}

// Replica is the other node of a replica topology (after Promote, the
// former primary), or nil for a single topology.
func (e *Env) Replica() Node {
	e.followSentinels()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.topology != TopologyReplica && e.topology != TopologySentinel || len(e.nodes) < 2 {
		return nil
	}
	return e.nodes[1]
}

// Promote turns the replica into the primary (REPLICAOF NO ONE), waits until
// it reports role:master, and from then on Addr, Options, NewClient and
// Primary point at it. The former primary is left as it is (running, killed
// or paused): a failover scenario decides what happens to it. Clients built
// before Promote still talk to the former primary.
func (e *Env) Promote(ctx context.Context) error {
	if e.topology != TopologyReplica {
		if e.topology == TopologyCluster {
			return fmt.Errorf("redisenv: Promote is for the replica topology; in a cluster use ClusterFailover on a replica of the shard")
		}
		return fmt.Errorf("redisenv: Promote needs the replica topology (--topology replica), this Env is %s", e.topology)
	}
	if e.backend == BackendExternal {
		return ErrNotManaged
	}
	replica := e.Replica()
	e.mu.Lock()
	user, pass := e.opts.Username, e.opts.Password
	e.mu.Unlock()
	rdb := redis.NewClient(&redis.Options{Addr: replica.Addr(), MaxRetries: -1, Username: user, Password: pass})
	defer rdb.Close()
	if err := rdb.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("redisenv: promote %s at %s: %w", replica.Name(), replica.Addr(), err)
	}
	if err := waitInfo(ctx, rdb, "replication", "role", "master", e.startTimeout); err != nil {
		return fmt.Errorf("redisenv: promote %s at %s: %w", replica.Name(), replica.Addr(), err)
	}
	// A later Restart must bring it back as a primary, not a replica.
	if p, ok := replica.(interface{ markPromoted() }); ok {
		p.markPromoted()
	}
	e.mu.Lock()
	e.nodes[0], e.nodes[1] = e.nodes[1], e.nodes[0]
	e.opts.Addrs = []string{e.nodes[0].Addr()}
	e.mu.Unlock()
	return nil
}

// Close stops every server lockbench started and removes their data
// directories (unless Config.KeepDir). It is idempotent and safe to call
// concurrently; later calls return the first call's error.
func (e *Env) Close() error {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		stop := e.stopWatch
		e.mu.Unlock()
		if stop != nil {
			stop()
		}
		var errs []error
		for i := len(e.closers) - 1; i >= 0; i-- {
			errs = append(errs, e.closers[i]())
		}
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}

// String is the one-line description printed when an Env starts; it never
// contains a password.
func (e *Env) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "redis: %s backend", e.backend)
	if s := e.info.Server(); s != "" {
		fmt.Fprintf(&b, ", %s", s)
	}
	switch {
	case len(e.sentinels) > 0:
		fmt.Fprintf(&b, ", primary at %s, replica at %s%s", e.nodes[0].Addr(), e.nodes[1].Addr(), sentinelString(e.sentinels))
	case e.opts.MasterName != "":
		fmt.Fprintf(&b, ", sentinel master %q via %s", e.opts.MasterName, strings.Join(e.opts.Addrs, ","))
	case e.opts.IsClusterMode && e.backend != BackendExternal:
		fmt.Fprintf(&b, ", cluster of %d nodes, primaries at %s", len(e.nodes), strings.Join(e.opts.Addrs, ","))
	case e.opts.IsClusterMode:
		fmt.Fprintf(&b, ", cluster seeds %s", strings.Join(e.opts.Addrs, ","))
	default:
		if len(e.nodes) > 1 {
			fmt.Fprintf(&b, ", primary at %s, replica at %s", e.opts.Addrs[0], e.nodes[1].Addr())
		} else {
			fmt.Fprintf(&b, ", at %s", e.opts.Addrs[0])
		}
	}
	if e.opts.TLSConfig != nil {
		b.WriteString(", TLS")
	}
	if e.why != "" {
		fmt.Fprintf(&b, " [%s]", e.why)
	}
	return b.String()
}

// serverInfo is what INFO says of the started server, zero when it could
// not be read.
func (e *Env) serverInfo(ctx context.Context) Info {
	rdb := e.NewClient()
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	info, err := Probe(ctx, rdb)
	if err != nil {
		return Info{}
	}
	return info
}

// StartFor starts the Redis cfg describes as Start does, but the Env then
// outlives ctx: an interrupt during the start aborts it, one during the
// run leaves the servers up until the caller has released its locks and
// read what it needs (the caller's Close ends them; a killed process's
// servers die with it, by their parent-death signal).
func StartFor(ctx context.Context, cfg Config) (*Env, error) {
	envCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	abort := context.AfterFunc(ctx, cancel)
	env, err := Start(envCtx, cfg)
	if !abort() || err != nil {
		cancel()
		if err == nil {
			// The cancel closes env from a goroutine of its own: wait for
			// that here, or the program could exit with it half done.
			_ = env.Close()
			err = fmt.Errorf("redisenv: start: %w", ctx.Err())
		}
		return nil, err
	}
	return env, nil
}

// waitInfo polls INFO section until field has want, or the timeout passes.
func waitInfo(ctx context.Context, rdb *redis.Client, section, field, want string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		s, err := rdb.Info(ctx, section).Result()
		if err == nil {
			last = infoField(s, field)
			if last == want {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for INFO %s %s:%s (last %q): %w", section, field, want, last, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// infoField returns the value of "field:value" in an INFO reply.
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}
