package workloads_test

import (
	"context"
	"errors"
	"fmt"
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

// refusing is an error of another library's driver that says whether a
// safety setting refused the acquisition.
type refusing bool

func (r refusing) Error() string { return "driver error" }
func (r refusing) Refused() bool { return bool(r) }

// TestClassifyRefusedByDriver: a driver's error that says it is a
// refusal classifies as refused, wrapped or not; one that says it is not
// stays another error.
func TestClassifyRefusedByDriver(t *testing.T) {
	for _, c := range []struct {
		err  error
		want results.ErrClass
	}{
		{refusing(true), results.ErrRefused},
		{fmt.Errorf("holder 0: %w", refusing(true)), results.ErrRefused},
		{refusing(false), results.ErrOther},
		{errors.New("NoSyncedSlavesException"), results.ErrOther},
	} {
		if got := workloads.Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
