package workloads_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// TestClassifyRefused: an acquisition a safety setting refuses is
// counted as refused, not as a Redis or other error: the server's
// min-replicas-to-write without a replica (NOREPLICAS from the lock
// script), and MinReplicaAcks without an acknowledgement.
func TestClassifyRefused(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{ServerArgs: []string{"min-replicas-to-write 1"}})
	for _, tc := range []struct {
		name string
		opts lockimpl.Options
	}{
		{"server refuses", lockimpl.Options{SkipReplicaSync: true}},
		{"no acknowledgement", lockimpl.Options{MinReplicaAcks: 1, ReplicaSyncTimeout: 50 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := env.NewClient()
			defer rdb.Close()
			c, err := lockimpl.NewClient(context.Background(), rdb, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			h, err := c.NewOwner().Lock("refused").TryLock(context.Background(), lockimpl.TryLockOptions{})
			if h != nil || err == nil {
				t.Fatalf("TryLock = %v, %v; want refused", h, err)
			}
			if got := workloads.Classify(err); got != results.ErrRefused {
				t.Errorf("Classify(%v) = %s, want refused", err, got)
			}
		})
	}
}
