package impls_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// redlockNodes starts five redis-servers, Redlock's nodes, and returns
// them with a client of each.
func redlockNodes(t *testing.T) ([]*redisenv.Env, []redis.UniversalClient) {
	t.Helper()
	var envs []*redisenv.Env
	var rdbs []redis.UniversalClient
	for range 5 {
		e := redisenvtest.Start(t)
		envs, rdbs = append(envs, e), append(rdbs, redisenvtest.Raw(t, e))
	}
	return envs, rdbs
}

// redsyncLocker is an owner's lock on name through impls.Redsync on nodes.
func redsyncLocker(t *testing.T, nodes []redis.UniversalClient, name string) workloads.Locker {
	t.Helper()
	c, err := impls.Redsync{Nodes: func(int) []redis.UniversalClient { return nodes }}.NewClient(bg, nil, builtin(t, "mutex"), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c.NewOwner().Locker(name, results.Exclusive)
}

// TestRedsyncDeadNodeLeavesAQuorum: with one of five nodes dead, an
// acquisition short of a quorum because the lock is held on some nodes is
// contention, tried again within the wait (the dead node's error is no
// failure: four nodes leave a quorum), and it succeeds once they free it.
// Errors from more nodes than a quorum can spare end the wait at once.
func TestRedsyncDeadNodeLeavesAQuorum(t *testing.T) {
	envs, rdbs := redlockNodes(t)
	if err := envs[0].Primary().Kill(bg); err != nil {
		t.Fatal(err)
	}
	const name = "lockbench:test:redlock-minority"
	// Another holder has it on two nodes: two free, two taken, one dead.
	for _, r := range rdbs[1:3] {
		if err := r.Set(bg, name, "other", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	l := redsyncLocker(t, rdbs, name)
	if ok, err := l.Acquire(bg, time.Second, 0); ok || err != nil {
		t.Fatalf("Acquire with the lock taken on two nodes and one node dead = %v, %v; want not acquired within the wait, no error", ok, err)
	}
	for _, r := range rdbs[1:3] {
		r.Del(bg, name)
	}
	if ok, err := l.Acquire(bg, time.Second, 0); !ok || err != nil {
		t.Fatalf("Acquire on four free nodes of five = %v, %v; want acquired", ok, err)
	}
	if err := l.Release(bg); err != nil {
		t.Errorf("Release on four nodes of five: %v", err)
	}
	// Three dead: no quorum whoever holds the lock.
	for _, e := range envs[1:3] {
		if err := e.Primary().Kill(bg); err != nil {
			t.Fatal(err)
		}
	}
	const wait = time.Hour
	start := time.Now()
	ok, err := l.Acquire(bg, wait, 0)
	var re *redsync.RedisError
	if ok || !errors.As(err, &re) || time.Since(start) >= wait {
		t.Errorf("Acquire with three nodes of five dead = %v, %v after %v; want the nodes' errors at once", ok, err, time.Since(start))
	}
}

// TestRedsyncWaitsForEveryNode is the evidence for RedsyncDeadNode: with
// one of five nodes hung (SIGSTOP: it never answers), redsync with its
// defaults holds an acquisition until it gives up on that node, at expiry
// × 0.05 (400 ms), though four nodes answered at once; WithFailFast(true)
// returns at the quorum.
func TestRedsyncWaitsForEveryNode(t *testing.T) {
	envs, rdbs := redlockNodes(t)
	if err := envs[0].Primary().Pause(bg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = envs[0].Primary().Resume(bg) })
	cut := time.Duration(float64(impls.RedsyncExpiry) * 0.05)

	l := redsyncLocker(t, rdbs, "lockbench:test:redlock-hung-default")
	start := time.Now()
	if ok, err := l.Acquire(bg, time.Minute, 0); !ok || err != nil {
		t.Fatalf("Acquire with one node of five hung = %v, %v; want acquired", ok, err)
	}
	if took := time.Since(start); took < cut {
		t.Errorf("with redsync's defaults the acquisition took %v, under the %v it waits for the hung node: RedsyncDeadNode is wrong", took, cut)
	}

	var pools []redsyncredis.Pool
	for _, r := range rdbs {
		pools = append(pools, goredis.NewPool(r))
	}
	m := redsync.New(pools...).NewMutex("lockbench:test:redlock-hung-failfast", redsync.WithFailFast(true))
	start = time.Now()
	if err := m.TryLockContext(bg); err != nil {
		t.Fatalf("TryLock with WithFailFast(true): %v", err)
	}
	if took := time.Since(start); took >= cut {
		t.Errorf("with WithFailFast(true) the acquisition took %v, as long as the defaults' wait for the hung node (%v): RedsyncDeadNode's remedy is wrong", took, cut)
	}
}

// TestRedsyncSlowQuorumTriesAgain: nodes that do not answer within
// redsync's try budget (three of five hung with SIGSTOP, their clients
// bounded by the try's context, as on a dial) deny a try, not the wait:
// the owner tries again, as LockContext does, and acquires once they
// answer. A wait that runs out on them ends in their error, never as
// contention.
func TestRedsyncSlowQuorumTriesAgain(t *testing.T) {
	envs, _ := redlockNodes(t)
	var rdbs []redis.UniversalClient
	for _, e := range envs {
		o := e.ClientOptions(8)
		o.ContextTimeoutEnabled = true
		rdb := redisenv.NewUniversalClient(o)
		t.Cleanup(func() { _ = rdb.Close() })
		rdbs = append(rdbs, rdb)
	}
	resume := func() {
		for _, e := range envs[:3] {
			_ = e.Primary().Resume(bg)
		}
	}
	t.Cleanup(resume)
	for _, e := range envs[:3] {
		if err := e.Primary().Pause(bg); err != nil {
			t.Fatal(err)
		}
	}
	l := redsyncLocker(t, rdbs, "lockbench:test:redlock-slow-quorum")
	const wait = 2 * time.Second // five tries' budgets
	start := time.Now()
	ok, err := l.Acquire(bg, wait, 0)
	var re *redsync.RedisError
	if ok || !errors.As(err, &re) || !workloads.TimedOut(re.Err) || time.Since(start) < wait {
		t.Errorf("Acquire with three nodes of five hung = %v, %v after %v; want their timeouts once the %v wait has passed", ok, err, time.Since(start), wait)
	}

	// Hung for several tries, then answering: acquired within the wait.
	done := make(chan error, 1)
	go func() {
		ok, err := l.Acquire(bg, time.Minute, 0)
		if err == nil && !ok {
			err = errors.New("not acquired")
		}
		done <- err
	}()
	time.Sleep(wait)
	resume()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Acquire with three nodes of five hung for a while, then answering: %v; want acquired", err)
		}
	case <-time.After(time.Minute + 10*time.Second):
		t.Fatal("Acquire did not return within its minute's wait")
	}
	if err := l.Release(bg); err != nil {
		t.Errorf("Release: %v", err)
	}
}
