package redisenv

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// connectExternal parses the URL and checks, within the dial timeout, that
// the Redis behind it answers.
func (e *Env) connectExternal(ctx context.Context, cfg Config) error {
	opts, err := ParseURL(cfg.URL)
	if err != nil {
		return err
	}
	switch {
	case cfg.Topology == TopologyCluster && !opts.IsClusterMode:
		return &ConfigError{Field: "topology", Value: string(cfg.Topology), Fix: "an external cluster is named by its seeds: --redis-url host1:port,host2:port (or drop --topology)"}
	case cfg.Topology == TopologyCluster && (cfg.Shards != DefaultShards || cfg.Replicas != DefaultReplicas):
		return &ConfigError{Field: "shards", Fix: "an external cluster has the shards and replicas it has; drop --shards and --replicas"}
	case cfg.Topology != TopologySingle && cfg.Topology != TopologyCluster:
		return &ConfigError{Field: "topology", Value: string(cfg.Topology), Fix: "an external Redis has the topology it has; drop --topology with --redis-url"}
	}
	if opts.IsClusterMode {
		e.topology = TopologyCluster
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = cfg.DialTimeout
	}
	e.opts = opts
	for _, a := range opts.Addrs {
		e.nodes = append(e.nodes, externalNode{addr: a})
	}

	// One dial attempt, bounded: an unreachable address must fail within
	// the dial timeout, not after go-redis's retries.
	probe := *opts
	probe.MaxRetries = -1
	probe.DialerRetries = 1
	probe.ContextTimeoutEnabled = true // else go-redis reads past ctx's deadline
	probe.ReadTimeout, probe.WriteTimeout = cfg.DialTimeout, cfg.DialTimeout
	rdb := redis.NewUniversalClient(&probe)
	defer rdb.Close()
	pctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		return fmt.Errorf("redisenv: external Redis at %s unreachable within %v: %s",
			strings.Join(opts.Addrs, ","), cfg.DialTimeout, scrub(err, cfg.URL))
	}
	return nil
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
