package lockimpl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
)

// clusterSetup is a fixture on a local cluster of shards primaries with
// replicas each (redisenv.NoReplicas for none).
func clusterSetup(t *testing.T, shards, replicas int) *fixture {
	t.Helper()
	f := setup(t, redisenv.Config{Topology: redisenv.TopologyCluster, Shards: shards, Replicas: replicas})
	if _, ok := f.raw.(*redis.ClusterClient); !ok {
		t.Fatalf("cluster fixture gave a %T", f.raw)
	}
	return f
}

// nameOn returns a lock name, with prefix, whose slot the shard serves.
func nameOn(t *testing.T, s redisenv.Shard, prefix string) string {
	t.Helper()
	for i := range 100000 {
		name := fmt.Sprintf("%s-%d", prefix, i)
		if s.Owns(redisenv.KeySlot(name)) {
			return name
		}
	}
	t.Fatalf("no name with prefix %s on shard %s", prefix, s.Primary.Name())
	return ""
}

// handoff has a waiter of another client block on l's name while the
// holder holds it, then unlocks, and fails t unless the waiter acquires
// long before the holder's TTL could have run out.
func handoff(t *testing.T, f *fixture, holder, waiter *lockimpl.Lock, sharded bool) {
	t.Helper()
	held := lock(t, holder)
	got := lockAsync(waiter)
	f.waitSubscribed(waiter.Owner().Client(), channelOf(waiter), sharded, 1)
	start := time.Now()
	unlock(t, held)
	recvOK(t, got.err, lockimpl.DefaultWatchdogTimeout/3, "waiter woken by the unlock message")
	if d := time.Since(start); d > lockimpl.DefaultWatchdogTimeout/3 {
		t.Errorf("handoff took %v", d)
	}
	unlock(t, got.h)
}

func channelOf(l *lockimpl.Lock) string {
	switch l.Kind() {
	case lockimpl.Read, lockimpl.Write:
		return lockimpl.RWLockChannel(l.Name())
	}
	return lockimpl.LockChannel(l.Name())
}

// TestClusterLockKinds runs the three lock kinds on a 3-primary cluster,
// one shard each, with sharded pub/sub: every script's keys in one slot
// (a cross-slot script fails), the Redis state as on one server, and
// waiters woken by SPUBLISH.
func TestClusterLockKinds(t *testing.T) {
	f := clusterSetup(t, 3, redisenv.NoReplicas)
	shards, err := f.env.Shards(bg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.client(lockimpl.Options{}), f.client(lockimpl.Options{})
	if a.PublishCommand() != "SPUBLISH" {
		t.Fatalf("on Redis Cluster 7 the publish command is %s, want SPUBLISH", a.PublishCommand())
	}
	// An autopipeliner hides the cluster behind it; the ClusterClient
	// with Options.AutoPipeline is the way.
	ap, err := f.raw.(*redis.ClusterClient).AsyncAutoPipeline()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockimpl.NewClient(bg, ap, lockimpl.Options{SkipReplicaSync: true}); !errors.Is(err, lockimpl.ErrInvalidOptions) ||
		!strings.Contains(err.Error(), "Options.AutoPipeline") {
		t.Errorf("NewClient(an autopipeliner over a cluster) = %v, want ErrInvalidOptions naming Options.AutoPipeline", err)
	}

	t.Run("reentrant", func(t *testing.T) {
		name := nameOn(t, shards[0], "re")
		l := a.NewOwner().Lock(name)
		h := lock(t, l)
		reenter(t, h)
		f.wantHash(name, map[string]string{l.Owner().ID(): "2"})
		unlock(t, h)
		unlock(t, h)
		f.wantAbsent(name)
		handoff(t, f, a.NewOwner().Lock(name), b.NewOwner().Lock(name), true)
	})

	t.Run("fair", func(t *testing.T) {
		name := nameOn(t, shards[1], "fair")
		holder := lock(t, a.NewOwner().FairLock(name))
		w := b.NewOwner().FairLock(name)
		got := lockAsync(w)
		queue := "redisson_lock_queue:{" + name + "}"
		testkit.Eventually(t, "the waiter queued", func() bool { return len(f.list(queue)) == 1 })
		if q := f.list(queue); q[0] != w.Owner().ID() {
			t.Fatalf("queue %v, want the waiter %s", q, w.Owner().ID())
		}
		unlock(t, holder)
		recvOK(t, got.err, lockimpl.DefaultWatchdogTimeout/3, "fair waiter woken")
		unlock(t, got.h)
		f.wantAbsent(name, queue, "redisson_lock_timeout:{"+name+"}")
	})

	t.Run("read-write", func(t *testing.T) {
		name := nameOn(t, shards[2], "rw")
		r1 := a.NewOwner().ReadWriteLock(name).ReadLock()
		r2 := b.NewOwner().ReadWriteLock(name).ReadLock()
		h1, h2 := lock(t, r1), lock(t, r2)
		if got := f.hash(name)["mode"]; got != "read" {
			t.Fatalf("mode %q with two readers, want read", got)
		}
		// The per-hold timeout keys the scripts build share the name's slot.
		for _, k := range f.keys("{" + name + "}:*") {
			if redisenv.KeySlot(k) != redisenv.KeySlot(name) {
				t.Errorf("key %s is in slot %d, the lock in %d", k, redisenv.KeySlot(k), redisenv.KeySlot(name))
			}
		}
		unlock(t, h1)
		unlock(t, h2)
		f.wantAbsent(name)
		handoff(t, f, a.NewOwner().ReadWriteLock(name).WriteLock(), b.NewOwner().ReadWriteLock(name).ReadLock(), true)
	})

	t.Run("braces", func(t *testing.T) {
		// A name with braces keeps its own hash tag (Redisson's rule): all
		// its keys hash to the tag's slot, whatever surrounds it.
		name := "orders{" + nameOn(t, shards[0], "tag") + "}:42"
		unlock(t, lock(t, a.NewOwner().FairLock(name)))
		unlock(t, lock(t, a.NewOwner().ReadWriteLock(name).ReadLock()))
		if got := lockimpl.LockChannel(name); got != "redisson_lock__channel:"+name {
			t.Errorf("channel of a braced name is %s", got)
		}
	})
}

// TestClusterPlainPubSub: with sharded pub/sub turned off, PUBLISH on one
// node reaches a SUBSCRIBE on another (the cluster bus broadcasts it).
func TestClusterPlainPubSub(t *testing.T) {
	f := clusterSetup(t, 3, redisenv.NoReplicas)
	opts := lockimpl.Options{PublishMode: lockimpl.PublishPlain}
	a, b := f.client(opts), f.client(opts)
	if a.PublishCommand() != "PUBLISH" {
		t.Fatalf("publish command %s, want PUBLISH", a.PublishCommand())
	}
	holder := lock(t, a.NewOwner().Lock("plain"))
	got := lockAsync(b.NewOwner().Lock("plain"))
	testkit.Eventually(t, "the waiter subscribed", func() bool { return b.SubscriptionRefs(lockimpl.LockChannel("plain")) == 1 })
	// Plain subscriptions are per node; wait until some node counts it.
	testkit.Eventually(t, "a node counts the subscription", func() bool {
		found := false
		_ = f.raw.(*redis.ClusterClient).ForEachShard(bg, func(ctx context.Context, c *redis.Client) error {
			n, err := c.PubSubNumSub(ctx, lockimpl.LockChannel("plain")).Result()
			if err == nil && n[lockimpl.LockChannel("plain")] > 0 {
				found = true
			}
			return nil
		})
		return found
	})
	unlock(t, holder)
	recvOK(t, got.err, lockimpl.DefaultWatchdogTimeout/3, "waiter woken by a PUBLISH from another node")
	unlock(t, got.h)
}

// replicated waits until the replica at addr has key (READONLY lets a
// cluster replica answer reads of its primary's slots).
func replicated(t *testing.T, addr, key string) {
	t.Helper()
	rep := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1,
		OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }})
	defer rep.Close()
	testkit.Eventually(t, "the replica has "+key, func() bool {
		n, err := rep.Exists(bg, key).Result()
		return err == nil && n == 1
	})
}

// unlockThrough retries an unlock while the cluster settles after a
// failover: the outcome of an unlock that failed in flight is unknown, and
// the latch makes a second one safe.
func unlockThrough(t *testing.T, h *lockimpl.Hold) {
	t.Helper()
	deadline := time.Now().Add(testkit.Patience)
	for {
		err := h.Unlock(bg)
		if err == nil || errors.Is(err, lockimpl.ErrNotHeld) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("unlock after failover: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterWaiterWokenAfterFailover: a waiter blocks on a lock whose
// shard's primary is then killed and replaced by its replica. The waiter's
// sharded subscription must follow the slot to the new primary, so that
// the holder's unlock there wakes it long before the 30 s TTL.
func TestClusterWaiterWokenAfterFailover(t *testing.T) {
	f := clusterSetup(t, 3, 1)
	shards, err := f.env.Shards(bg)
	if err != nil {
		t.Fatal(err)
	}
	sh := shards[1]
	name := nameOn(t, sh, "fo")
	holder := lock(t, f.client(lockimpl.Options{}).NewOwner().Lock(name))
	wc := f.client(lockimpl.Options{})
	waiter := wc.NewOwner().Lock(name)
	replicated(t, sh.Replicas[0].Addr(), name)
	var acquiredAt atomic.Int64
	got := make(chan error, 1)
	waiterHold := make(chan *lockimpl.Hold, 1)
	var connErrs atomic.Int64
	askUntil := time.Now().Add(testkit.Patience)
	go func() {
		for {
			h, err := waiter.Lock(bg, lockimpl.LockOptions{})
			// An attempt that meets the dead primary before the slot map
			// moved on fails, as Redisson's lock() throws: the outcome of
			// an acquisition sent there is unknown, so lockimpl does not
			// resend it. The application asks again, as this one does.
			if err != nil && isConnError(err) && time.Now().Before(askUntil) {
				connErrs.Add(1)
				time.Sleep(100 * time.Millisecond) // the failover's pace, not a wait for an assertion
				continue
			}
			acquiredAt.Store(time.Now().UnixNano())
			waiterHold <- h
			got <- err
			return
		}
	}()
	f.waitSubscribed(wc, lockimpl.LockChannel(name), true, 1)

	if err := sh.Primary.Kill(bg); err != nil {
		t.Fatal(err)
	}
	if err := f.env.ClusterFailover(bg, sh.Replicas[0], redisenv.FailoverForce); err != nil {
		t.Fatal(err)
	}
	// The subscription is re-established on the promoted replica.
	promoted := redis.NewClient(&redis.Options{Addr: sh.Replicas[0].Addr()})
	defer promoted.Close()
	testkit.Eventually(t, "the waiter subscribed at the new primary", func() bool {
		n, err := promoted.PubSubShardNumSub(bg, lockimpl.LockChannel(name)).Result()
		return err == nil && n[lockimpl.LockChannel(name)] == 1
	})
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter's Lock failed before the unlock: %v", err)
		}
		t.Fatal("waiter acquired while the holder held the lock (replicated, so not lost)")
	default:
	}
	if n := connErrs.Load(); n > 0 {
		t.Logf("the waiter's Lock met the dead primary %d times and was asked again", n)
	}
	unlocked := time.Now()
	unlockThrough(t, holder)
	recvOK(t, got, lockimpl.DefaultWatchdogTimeout/3, "waiter woken after the failover")
	if at := time.Unix(0, acquiredAt.Load()); at.Before(unlocked) {
		t.Fatalf("waiter acquired %v before the unlock", unlocked.Sub(at))
	}
	t.Logf("waiter acquired %v after the unlock on the promoted replica", time.Since(unlocked))
	unlockThrough(t, <-waiterHold)
}

// isConnError reports an error of the connection, not of Redis.
func isConnError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// TestClusterWaiterFollowsSlotMigration: the slot of a held, contended
// lock moves to another primary (keys with it). The source node drops the
// waiter's sharded subscription (SUNSUBSCRIBE); the waiter subscribes at
// the target and the holder's unlock, now run there, wakes it.
func TestClusterWaiterFollowsSlotMigration(t *testing.T) {
	f := clusterSetup(t, 3, redisenv.NoReplicas)
	shards, err := f.env.Shards(bg)
	if err != nil {
		t.Fatal(err)
	}
	name := nameOn(t, shards[0], "mig")
	holder := lock(t, f.client(lockimpl.Options{}).NewOwner().Lock(name))
	wc := f.client(lockimpl.Options{})
	waiter := lockAsync(wc.NewOwner().Lock(name))
	f.waitSubscribed(wc, lockimpl.LockChannel(name), true, 1)

	if _, err := f.env.MigrateSlot(bg, redisenv.KeySlot(name), shards[2].Primary, redisenv.MigrateOptions{Hold: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	target := redis.NewClient(&redis.Options{Addr: shards[2].Primary.Addr()})
	defer target.Close()
	testkit.Eventually(t, "the waiter subscribed at the slot's new primary", func() bool {
		n, err := target.PubSubShardNumSub(bg, lockimpl.LockChannel(name)).Result()
		return err == nil && n[lockimpl.LockChannel(name)] == 1
	})
	if n, err := target.Exists(bg, name).Result(); err != nil || n != 1 {
		t.Fatalf("the lock did not move with its slot: EXISTS %s at the target = %d, %v", name, n, err)
	}
	select {
	case err := <-waiter.err:
		t.Fatalf("waiter acquired while the lock was held: %v", err)
	default:
	}
	unlock(t, holder)
	recvOK(t, waiter.err, lockimpl.DefaultWatchdogTimeout/3, "waiter woken after the slot moved")
	unlock(t, waiter.h)
}

// TestClusterClientRereadsSlotMapAfterFailover: go-redis rereads its slot
// map after MOVED, but not when a primary stops answering, so on its own a
// cluster client keeps dialling a killed primary until its periodic reload
// (a minute by default). lockimpl asks for a reload after such errors, so
// acquisitions reach the promoted replica within seconds.
func TestClusterClientRereadsSlotMapAfterFailover(t *testing.T) {
	f := clusterSetup(t, 3, 1)
	shards, err := f.env.Shards(bg)
	if err != nil {
		t.Fatal(err)
	}
	var seeds []string
	for _, s := range shards {
		seeds = append(seeds, s.Primary.Addr())
	}
	// A plain go-redis cluster client: the default one-minute reload.
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds, Protocol: 2})
	defer rdb.Close()
	c, err := lockimpl.NewClient(bg, rdb, testOptions(lockimpl.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sh := shards[0]
	name := nameOn(t, sh, "reload")
	l := c.NewOwner().Lock(name)
	unlock(t, lock(t, l)) // the client now knows the slot map
	if err := sh.Primary.Kill(bg); err != nil {
		t.Fatal(err)
	}
	if err := f.env.ClusterFailover(bg, sh.Replicas[0], redisenv.FailoverForce); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var h *lockimpl.Hold
	testkit.Eventually(t, "an acquisition on the promoted replica", func() bool {
		h, _ = tryOnce(l)
		return h != nil
	})
	t.Logf("first acquisition after the failover took %v", time.Since(start))
	unlock(t, h)
}
