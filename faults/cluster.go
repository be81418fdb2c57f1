package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
)

// Faults on a Redis Cluster's shards. Each is built for the shard that
// serves one key's slot, looked up when it is injected, since failovers
// and migrations move shards around.

// shardFault finds its shard when injected.
type shardFault struct {
	kind, target, detail string
	env                  *redisenv.Env
	key                  string
	inject               func(ctx context.Context, sh redisenv.Shard) (func(context.Context) error, error)
}

func (f *shardFault) Kind() string   { return f.kind }
func (f *shardFault) Target() string { return f.target }
func (f *shardFault) Detail() string { return f.detail }

func (f *shardFault) Inject(ctx context.Context) (func(context.Context) error, error) {
	// Outside a cluster the one "shard" is the primary and its replicas.
	sh := redisenv.Shard{Primary: f.env.Primary(), Replicas: f.env.Nodes()[1:]}
	if f.env.Topology() == redisenv.TopologyCluster {
		var err error
		if sh, err = f.env.ShardOf(ctx, redisenv.KeySlot(f.key)); err != nil {
			return nil, fmt.Errorf("faults: %s: %w", f.kind, err)
		}
	}
	revert, err := f.inject(ctx, sh)
	if err != nil {
		return nil, fmt.Errorf("faults: %s %s: %w", f.kind, sh.Primary.Name(), err)
	}
	return revert, nil
}

// nodeClient is a one-connection client to a node, no retries.
func nodeClient(n redisenv.Node) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1, PoolSize: 1, Protocol: 2})
}

// ReplicationCut stops the primary of key's shard (outside a cluster, the
// primary) from replicating to its replicas, as a saturated or broken
// replication link does: the primary's
// default user loses the PSYNC and SYNC commands (so the replicas' redials
// are refused) and their links are closed. Clients are untouched: the
// primary goes on acknowledging writes that no replica will ever see. The
// revert gives the commands back, if the primary still runs; a killed
// primary restarts with its ACLs reset anyway.
func ReplicationCut(env *redisenv.Env, key string) Fault {
	target := "redis:primary"
	if key != "" {
		target = "redis:shard-of-" + key
	}
	return &shardFault{kind: "replication_cut", target: target, env: env, key: key,
		detail: "primary refuses PSYNC/SYNC and drops its replicas' links",
		inject: func(ctx context.Context, sh redisenv.Shard) (func(context.Context) error, error) {
			if len(sh.Replicas) == 0 {
				return nil, errors.New("the shard has no replica (start the cluster with --replicas 1)")
			}
			p := nodeClient(sh.Primary)
			defer p.Close()
			if err := p.Do(ctx, "ACL", "SETUSER", "default", "-psync", "-sync").Err(); err != nil {
				return nil, err
			}
			restore := func(ctx context.Context) error {
				c := nodeClient(sh.Primary)
				defer c.Close()
				err := c.Do(ctx, "ACL", "SETUSER", "default", "+psync", "+sync").Err()
				if err != nil && isDown(err) {
					return nil // killed meanwhile: it restarts with default ACLs
				}
				return err
			}
			if err := p.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
				return nil, errors.Join(err, restore(ctx))
			}
			// The cut is in once every replica sees its link down.
			for _, r := range sh.Replicas {
				if err := waitLinkDown(ctx, r); err != nil {
					return nil, errors.Join(err, restore(ctx))
				}
			}
			return restore, nil
		}}
}

// isDown reports a connection-level failure: the node is not answering.
func isDown(err error) bool {
	var rerr redis.Error
	return err != nil && !errors.As(err, &rerr)
}

func waitLinkDown(ctx context.Context, n redisenv.Node) error {
	c := nodeClient(n)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		s, err := c.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(s, "master_link_status:down") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("replica %s still linked to its primary: %w", n.Name(), ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// ClusterFailover kills (SIGKILL) the primary of key's shard and promotes
// its first replica with CLUSTER FAILOVER FORCE (TAKEOVER if the vote does
// not come through), waiting until the cluster agrees. Clients find the
// new primary themselves (MOVED, topology rescans). Its revert restarts
// the killed server, which rejoins as a replica of the promoted one: a
// failover is not undone, only its casualty revived.
func ClusterFailover(env *redisenv.Env, key string) Fault {
	return &shardFault{kind: "cluster_failover", target: "redis:shard-of-" + key, env: env, key: key,
		detail: "SIGKILL the shard's primary, CLUSTER FAILOVER FORCE on its replica",
		inject: func(ctx context.Context, sh redisenv.Shard) (func(context.Context) error, error) {
			if len(sh.Replicas) == 0 {
				return nil, errors.New("the shard has no replica (start the cluster with --replicas 1)")
			}
			old, rep := sh.Primary, sh.Replicas[0]
			if err := old.Kill(ctx); err != nil {
				return nil, fmt.Errorf("kill primary: %w", err)
			}
			revert := func(ctx context.Context) error {
				if err := old.Restart(ctx); err != nil {
					return fmt.Errorf("restart the old primary: %w", err)
				}
				return env.WaitHealthy(ctx)
			}
			fctx, cancel := context.WithTimeout(ctx, 4*redisenv.DefaultClusterNodeTimeout)
			err := env.ClusterFailover(fctx, rep, redisenv.FailoverForce)
			cancel()
			if err != nil {
				if err2 := env.ClusterFailover(ctx, rep, redisenv.FailoverTakeover); err2 != nil {
					return nil, errors.Join(fmt.Errorf("promote %s: %w", rep.Name(), err), err2, revert(ctx))
				}
			}
			return revert, nil
		}}
}

// SlotMigration moves the slot of key to another primary, keys and all,
// with CLUSTER SETSLOT and MIGRATE, keeping the slot half-moved for hold so
// that clients meet ASK redirects. Its revert moves the slot back the same
// way.
func SlotMigration(env *redisenv.Env, key string, hold time.Duration) Fault {
	slot := redisenv.KeySlot(key)
	return &shardFault{kind: "slot_migration", target: fmt.Sprintf("redis:slot-%d", slot), env: env, key: key,
		detail: fmt.Sprintf("slot %d to another primary (SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE), held half-moved %v", slot, hold),
		inject: func(ctx context.Context, src redisenv.Shard) (func(context.Context) error, error) {
			shards, err := env.Shards(ctx)
			if err != nil {
				return nil, err
			}
			var to redisenv.Node
			for i, s := range shards {
				if s.ID == src.ID {
					to = shards[(i+1)%len(shards)].Primary
				}
			}
			if to == nil || to.Addr() == src.Primary.Addr() {
				return nil, errors.New("a slot migration needs at least two primaries")
			}
			opts := redisenv.MigrateOptions{Hold: hold}
			if _, err := env.MigrateSlot(ctx, slot, to, opts); err != nil {
				return nil, err
			}
			return func(ctx context.Context) error {
				_, err := env.MigrateSlot(ctx, slot, src.Primary, opts)
				return err
			}, nil
		}}
}
