package workloads_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// noWait is lockimpl under another name that, like the peers, sends no
// WAIT whatever replica_sync says.
type noWait struct{ li workloads.Lockimpl }

func (noWait) Name() string                                { return "nowait" }
func (n noWait) Check(p workloads.Profile) (string, error) { return n.li.Check(p) }
func (n noWait) NewClient(ctx context.Context, rdb redis.UniversalClient, p workloads.Profile, c int) (workloads.ImplClient, error) {
	p.ReplicaSync = false
	return n.li.NewClient(ctx, rdb, p, c)
}

// TestReplicaSyncGap: replica_sync says what it cannot do, for a profile
// meant for replicas on a server without any, and for an implementation
// that sends no WAIT where there are replicas; where it does what it
// says, or was not asked, nothing.
func TestReplicaSyncGap(t *testing.T) {
	synced, _ := workloads.Builtin("rw90-synced") // topology replica
	plain, _ := workloads.Builtin("rw90")         // topology single
	off := synced
	off.ReplicaSync = false
	for _, tc := range []struct {
		name     string
		impl     workloads.Impl
		p        workloads.Profile
		replicas int
		want     string
	}{
		{"meant for replicas, none", workloads.Lockimpl{}, synced, 0, "no replica, nothing sent (profile rw90-synced is meant for topology replica)"},
		{"meant for replicas, has one", workloads.Lockimpl{}, synced, 1, ""},
		{"turned off", workloads.Lockimpl{}, off, 0, ""},
		{"if any, none", workloads.Lockimpl{}, plain, 0, ""},
		{"no WAIT sent, replicas", noWait{}, plain, 2, "nowait sends no WAIT: no acquisition waits for a replica"},
		{"no WAIT sent, none", noWait{}, plain, 0, ""},
	} {
		what, fix := workloads.ReplicaSyncGap(tc.impl, tc.p, tc.replicas)
		if what != tc.want || (what != "") != strings.Contains(fix, "--replica-sync false") {
			t.Errorf("%s: %q (fix %q), want %q and a fix naming --replica-sync false", tc.name, what, fix, tc.want)
		}
	}
}

// TestRunRecordsWhatReplicaSyncDid: a profile meant for a replica run on
// a single server records that replica sync sent nothing, and its result's
// profile has the topology that ran; on a primary with a replica, lockimpl
// waits and nothing is noted, while an implementation sending no WAIT is.
func TestRunRecordsWhatReplicaSyncDid(t *testing.T) {
	single := redisenvtest.Start(t)
	p := short(t, "rw90-synced", 1, 2, 0, 300*time.Millisecond)
	res := runOK(t, workloads.Config{Profile: p, NewRedis: single.NewPool, KeyPrefix: uniquePrefix(t), Topology: "single"})
	if len(res.NoEffect) != 1 || !strings.HasPrefix(res.NoEffect[0], "replica_sync: no replica, nothing sent") {
		t.Errorf("no effect %q, want replica_sync: no replica, nothing sent", res.NoEffect)
	}
	if ran := res.Profile.(workloads.Profile); ran.Topology != "single" {
		t.Errorf("result's profile says topology %q; single ran", ran.Topology)
	}

	// A single server the run was not told the topology of (an external
	// URL) that has a replica is a primary with a replica.
	replica := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	res = runOK(t, workloads.Config{Profile: p, NewRedis: replica.NewPool, KeyPrefix: uniquePrefix(t), Topology: "single",
		Meta: resultsMeta("single")})
	if len(res.NoEffect) != 0 || res.Profile.(workloads.Profile).Topology != "replica" || res.Meta.RedisTopology != "replica" {
		t.Errorf("on a primary with a replica: no effect %q, profile topology %q, meta %q", res.NoEffect, res.Profile.(workloads.Profile).Topology, res.Meta.RedisTopology)
	}
	res = runOK(t, workloads.Config{Profile: p, NewRedis: replica.NewPool, KeyPrefix: uniquePrefix(t), Impl: noWait{}})
	if len(res.NoEffect) != 1 || !strings.Contains(res.NoEffect[0], "nowait sends no WAIT") {
		t.Errorf("no effect %q, want the implementation's missing WAIT", res.NoEffect)
	}
}

func resultsMeta(topology string) results.Meta { return results.Meta{RedisTopology: topology} }
