package impls_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/workloads"
)

// TestRedissonRunEndReleases: a Redisson run that ends while its owners
// hold and wait for a lock, interrupted (its context cancelled, as Ctrl-C
// does) or at its planned end, leaves none of the run's locks in Redis, or
// counts each one left as unreleased. Holds of 10 s outlast every end, so
// the end always finds a critical section in the JVM's hands and owners
// waiting behind it: in a section run whole in the JVM, in Redisson's
// lock() (wait 0), on a fair lock's queue, and held by the harness between
// nested acquisitions (depth above 1).
func TestRedissonRunEndReleases(t *testing.T) {
	needDriver(t, impls.RedissonName)
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	defer rdb.Close()
	for _, tc := range []struct {
		name, profile string
		wait          time.Duration
		depth         int
		interrupt     bool
	}{
		{"mutex interrupted", "mutex", 10 * time.Second, 1, true},
		{"mutex lock() interrupted", "mutex", 0, 1, true},
		{"fair interrupted", "fair", 10 * time.Second, 1, true},
		{"nested interrupted", "reentrant-deep", 10 * time.Second, 3, true},
		{"mutex at its end", "mutex", 10 * time.Second, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := builtin(t, tc.profile)
			p.Clients, p.Owners, p.Locks = 2, 2, 1
			p.Hold = workloads.FixedDist(10 * time.Second)
			p.Wait = workloads.Duration(tc.wait)
			p.Depth = workloads.FixedInt(tc.depth)
			p.Warmup, p.Duration = workloads.Duration(time.Minute), workloads.Duration(time.Minute)
			if !tc.interrupt {
				p.Warmup, p.Duration = 0, workloads.Duration(3*time.Second)
			}
			prefix := fmt.Sprintf("lockbench:end-test:%s:", workloads.NewRunID())
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			held := make(chan struct{})
			if tc.interrupt {
				// Ctrl-C once a critical section holds the lock.
				go func() {
					defer cancel()
					if heldSoon(rdb, prefix+"0") {
						close(held)
					}
				}()
			}
			res, err := workloads.Run(ctx, workloads.Config{Profile: p, NewRedis: env.NewPool, Impl: lookup(t, impls.RedissonName), KeyPrefix: prefix})
			switch {
			case tc.interrupt && !errors.Is(err, context.Canceled):
				t.Fatalf("interrupted run: %v, want context.Canceled", err)
			case tc.interrupt && !testkit.Closed(held):
				t.Fatalf("no critical section held %s0 within %v", prefix, testkit.Patience)
			case !tc.interrupt && err != nil:
				t.Fatal(err)
			}
			keys, err := rdb.Keys(bg, prefix+"*").Result()
			if err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, k := range keys {
				left = append(left, fmt.Sprintf("%s (%s, PTTL %v)", k, rdb.Type(bg, k).Val(), rdb.PTTL(bg, k).Val()))
			}
			if int64(len(left)) > res.Throughput.Unreleased {
				t.Errorf("the run left %d locks in Redis and reports %d unreleased: %s", len(left), res.Throughput.Unreleased, strings.Join(left, ", "))
			}
			if !tc.interrupt && res.Throughput.Cut == 0 {
				t.Errorf("no operation cut by the end (%+v): the end found no hold to release", res.Throughput)
			}
		})
	}
}

// TestRedissonStallEndCountsHeld: a Redisson run whose Redis stops
// answering (SIGSTOP) while a critical section runs whole in the JVM, the
// lock held, cannot release it: the run ends at its stall bound, and the
// lock, which Redis keeps, is counted as unreleased, never left out.
func TestRedissonStallEndCountsHeld(t *testing.T) {
	needDriver(t, impls.RedissonName)
	env := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal})
	node := env.Nodes()[0]
	t.Cleanup(func() { _ = node.Resume(context.Background()) })
	rdb := env.NewClient()
	defer rdb.Close()
	p := builtin(t, "mutex")
	p.Clients, p.Owners, p.Locks = 1, 2, 1
	p.Hold = workloads.FixedDist(10 * time.Second)
	p.Warmup, p.Duration = 0, workloads.Duration(3*time.Second)
	prefix := fmt.Sprintf("lockbench:stall-test:%s:", workloads.NewRunID())
	paused := make(chan error, 1)
	go func() {
		// Pause Redis once a critical section holds the lock.
		if !heldSoon(rdb, prefix+"0") {
			paused <- fmt.Errorf("no critical section held %s0 within %v", prefix, testkit.Patience)
			return
		}
		paused <- node.Pause(context.Background())
	}()
	res, err := workloads.Run(bg, workloads.Config{Profile: p, NewRedis: env.NewPool, Impl: lookup(t, impls.RedissonName), KeyPrefix: prefix})
	if perr := <-paused; perr != nil {
		t.Fatal(perr)
	}
	if err := node.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Stall == nil {
		t.Errorf("no stall recorded: %q", res.PartialReason)
	}
	n, err := rdb.Exists(bg, prefix+"0").Result()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lock left: %d, unreleased: %d (%s)", n, res.Throughput.Unreleased, res.PartialReason)
	if n > res.Throughput.Unreleased {
		t.Errorf("Redis still holds %s0 (PTTL %v), but the run reports %d unreleased", prefix, rdb.PTTL(bg, prefix+"0").Val(), res.Throughput.Unreleased)
	}
}

// heldSoon polls Redis until lock key exists (a run's critical section
// holds it), at most testkit.Patience, and reports whether it did.
func heldSoon(rdb redis.UniversalClient, key string) bool {
	deadline := time.Now().Add(testkit.Patience)
	for time.Now().Before(deadline) {
		if n, _ := rdb.Exists(bg, key).Result(); n == 1 {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}
