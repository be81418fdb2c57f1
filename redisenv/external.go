package redisenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// connectExternal parses the URL and checks, within the dial timeout, that
// the Redis behind it answers, takes writes (not a replica), accepts the
// URL's credentials and speaks the URL's protocol (TLS or not). Every
// error about the URL names where it came from: --redis-url or $REDIS_URL.
func (e *Env) connectExternal(ctx context.Context, cfg Config) error {
	opts, err := ParseURL(cfg.URL)
	if err != nil {
		return cfg.namedURLError(err)
	}
	switch {
	case cfg.Topology == TopologyCluster && !opts.IsClusterMode:
		return &ConfigError{Field: "topology", Value: string(cfg.Topology), Fix: "an external cluster is named by its seeds: --redis-url host1:port,host2:port (or drop --topology)"}
	case cfg.Topology == TopologyCluster && (cfg.Shards != DefaultShards || cfg.Replicas != DefaultReplicas):
		return &ConfigError{Field: "shards", Fix: "an external cluster has the shards and replicas it has; drop --shards and --replicas"}
	case cfg.Topology != TopologySingle && cfg.Topology != TopologyCluster:
		return &ConfigError{Field: "topology", Value: string(cfg.Topology), Fix: "an external Redis has the topology it has; drop --topology with --redis-url"}
	}
	switch {
	case opts.IsClusterMode:
		e.topology = TopologyCluster
	case opts.MasterName != "":
		e.topology = TopologySentinel // results say how it was reached
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = cfg.DialTimeout
	}
	timeout := opts.DialTimeout // the URL's dial_timeout, else the default
	e.opts = opts
	for _, a := range opts.Addrs {
		e.nodes = append(e.nodes, externalNode{addr: a})
	}
	bad := func(format string, args ...any) error {
		return cfg.urlError(fmt.Sprintf(format, args...))
	}

	if opts.TLSConfig != nil && !opts.IsClusterMode && opts.MasterName == "" {
		// A TLS client's hello to a plain server gets no answer: go-redis
		// would wait out the whole dial timeout and then say only "i/o
		// timeout". Ask in plain text first.
		if plainRESP(ctx, opts.Addrs[0], timeout) {
			return bad("TLS handshake failed: %s answers plain Redis, not TLS; use redis:// instead of rediss:// if the server does not speak TLS", opts.Addrs[0])
		}
	}

	// One dial attempt, bounded: an unreachable address must fail within
	// the dial timeout, not after go-redis's retries.
	probe := *opts
	probe.MaxRetries = -1
	probe.DialerRetries = 1
	probe.ContextTimeoutEnabled = true // else go-redis reads past ctx's deadline
	probe.ReadTimeout, probe.WriteTimeout = timeout, timeout
	rdb := redis.NewUniversalClient(&probe)
	defer rdb.Close()
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		msg := scrub(err, cfg.URL)
		switch {
		case strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "invalid password") || strings.Contains(msg, "invalid username-password"):
			return bad("authentication failed (%s); check the user and password in %s", msg, cfg.urlName())
		case strings.Contains(msg, "NOAUTH"):
			return bad("authentication required (%s): put the password in the URL, e.g. redis://:PASSWORD@%s/0", msg, opts.Addrs[0])
		case opts.TLSConfig != nil && (strings.Contains(msg, "tls:") || strings.Contains(msg, "x509")):
			return bad("TLS handshake failed (%s); check the server's certificate, or use redis:// instead of rediss:// if the server does not speak TLS", msg)
		case strings.Contains(msg, "redis: invalid reply") || strings.Contains(msg, "redis: can't parse"):
			// It answered, but not in RESP: an HTTP or SSH server, say.
			// Waiting would not change its answer.
			return bad("not a Redis server: %s answered something other than Redis's protocol (%s); check the host and port", opts.Addrs[0], msg)
		case strings.Contains(msg, "DB index is out of range"):
			return bad("DB index out of range: the server has no database %d (it has `databases` of them, 16 unless configured); use a lower /DB in the URL", opts.DB)
		case strings.Contains(msg, "SELECT is not allowed in cluster mode"):
			return bad("database %d on a Redis Cluster node, which has only database 0; drop the /DB path (or name the cluster by its seeds: host1:port,host2:port)", opts.DB)
		}
		// Not bad input as such (the server may be down for now): exit 1.
		return fmt.Errorf("redisenv: %s %q: %s", cfg.urlName(), Redact(cfg.URL), unreachable(err, msg, timeout))
	}
	if opts.IsClusterMode || opts.MasterName != "" {
		return nil // a cluster client or a sentinel finds the primaries itself
	}
	// A replica would refuse every lock write with READONLY (or, if
	// writable, keep writes its primary never sees): refuse it now.
	info, err := rdb.Info(pctx, "replication").Result()
	if err == nil && infoField(info, "role") == "slave" {
		of := net.JoinHostPort(infoField(info, "master_host"), infoField(info, "master_port"))
		target := "--redis" // which takes a URL too
		if cfg.urlFromEnv {
			target = "$" + EnvURL
		}
		if infoField(info, "slave_read_only") == "0" {
			return bad("a writable replica (of %s): its writes never reach its primary and its next sync drops them; point %s at its primary", of, target)
		}
		return bad("a read-only replica (of %s); point %s at its primary", of, target)
	}
	return nil
}

// unreachable says what happened to a server that did not answer a PING
// (err, msg its scrubbed text): refused at once, silent past the timeout,
// or otherwise out of reach (a name that does not resolve, no route).
func unreachable(err error, msg string, timeout time.Duration) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		at := "the address"
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Addr != nil {
			at = oe.Addr.String()
		}
		return fmt.Sprintf("connection refused: nothing listens at %s; start the server, or check the host and port", at)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %v: %s", timeout, msg)
	}
	return "unreachable: " + msg
}

// plainRESP reports whether the server at addr answers a plain-text PING
// as Redis does: a TLS client talking to it would otherwise wait out its
// whole dial timeout and then say only "i/o timeout".
func plainRESP(ctx context.Context, addr string, timeout time.Duration) bool {
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(min(timeout, time.Second)))
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return false
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(c, b); err != nil {
		return false
	}
	return b[0] == '+' || b[0] == '-' // +PONG, or -NOAUTH from a server with a password
}

// externalNode is a server lockbench reaches but does not own.
type externalNode struct{ addr string }

func (n externalNode) Name() string                  { return "external" }
func (n externalNode) Addr() string                  { return n.addr }
func (n externalNode) PID() int                      { return 0 }
func (n externalNode) Stop(context.Context) error    { return ErrNotManaged }
func (n externalNode) Kill(context.Context) error    { return ErrNotManaged }
func (n externalNode) Pause(context.Context) error   { return ErrNotManaged }
func (n externalNode) Resume(context.Context) error  { return ErrNotManaged }
func (n externalNode) Restart(context.Context) error { return ErrNotManaged }
func (n externalNode) LogTail(int) string            { return "" }
