package lockimpl_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/lockimpl/protocol"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// The benchmarks time lockimpl's hot paths against a real redis-server on
// loopback, so ns/op is mostly round trips; allocs/op and B/op are the
// client's own and are what a regression shows in (go test -bench .
// -benchmem ./lockimpl, or make gobench). BenchmarkRawScripts is the floor:
// the same scripts sent with no client logic.

// benchClient starts a redis-server and returns a lockimpl client on it
// (with opts, or none).
func benchClient(b *testing.B, opts ...lockimpl.Options) (*lockimpl.Client, redis.UniversalClient) {
	b.Helper()
	env := redisenvtest.Start(b)
	rdb := env.NewClient()
	var o lockimpl.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	c, err := lockimpl.NewClient(context.Background(), rdb, o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Close()
		rdb.Close()
	})
	return c, rdb
}

func must(b *testing.B, err error) {
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLockUnlock is one uncontended Lock (watchdog lease) and Unlock.
func BenchmarkLockUnlock(b *testing.B) {
	c, _ := benchClient(b)
	l := c.NewOwner().Lock("bench")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h, err := l.Lock(ctx, lockimpl.LockOptions{})
		must(b, err)
		must(b, h.Unlock(ctx))
	}
}

// BenchmarkLockUnlockLease is the same with a fixed lease: no watchdog.
func BenchmarkLockUnlockLease(b *testing.B) {
	c, _ := benchClient(b)
	l := c.NewOwner().Lock("bench")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h, err := l.Lock(ctx, lockimpl.LockOptions{Lease: 30 * time.Second})
		must(b, err)
		must(b, h.Unlock(ctx))
	}
}

// BenchmarkLockUnlockParallel is uncontended lock cycles from GOMAXPROCS
// goroutines, each its own owner and name, on one client.
func BenchmarkLockUnlockParallel(b *testing.B) { lockUnlockParallel(b, lockimpl.Options{}) }

// BenchmarkLockUnlockAutoPipeline is the same with the client on go-redis's
// autopipeliner (Options.AutoPipeline), 8 goroutines per GOMAXPROCS so
// that batches form.
func BenchmarkLockUnlockAutoPipeline(b *testing.B) {
	b.SetParallelism(8)
	lockUnlockParallel(b, lockimpl.Options{AutoPipeline: true})
}

func lockUnlockParallel(b *testing.B, opts lockimpl.Options) {
	c, _ := benchClient(b, opts)
	ctx := context.Background()
	b.ReportAllocs()
	n := 0
	names := make(chan string, 1024)
	for range cap(names) {
		n++
		names <- fmt.Sprintf("bench:%d", n)
	}
	b.RunParallel(func(pb *testing.PB) {
		l := c.NewOwner().Lock(<-names)
		for pb.Next() {
			h, err := l.Lock(ctx, lockimpl.LockOptions{})
			if err != nil {
				b.Error(err)
				return
			}
			if err := h.Unlock(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkReentry is one re-entry and its unlock by an owner that holds
// the lock: count 1 → 2 → 1.
func BenchmarkReentry(b *testing.B) {
	c, _ := benchClient(b)
	l := c.NewOwner().Lock("bench")
	ctx := context.Background()
	h, err := l.Lock(ctx, lockimpl.LockOptions{})
	must(b, err)
	b.ReportAllocs()
	for b.Loop() {
		must(b, h.Reenter(ctx))
		must(b, h.Unlock(ctx))
	}
	b.StopTimer()
	must(b, h.Unlock(ctx))
}

// BenchmarkReadLock100Readers is one read acquisition and its unlock while
// 100 other owners hold read locks on the same name: the read unlock
// script scans every reader's holds, so its cost grows with them.
func BenchmarkReadLock100Readers(b *testing.B) {
	c, _ := benchClient(b)
	ctx := context.Background()
	for range 100 {
		_, err := c.NewOwner().ReadWriteLock("bench").ReadLock().Lock(ctx, lockimpl.LockOptions{})
		must(b, err)
	}
	l := c.NewOwner().ReadWriteLock("bench").ReadLock()
	b.ReportAllocs()
	for b.Loop() {
		h, err := l.Lock(ctx, lockimpl.LockOptions{})
		must(b, err)
		must(b, h.Unlock(ctx))
	}
}

// BenchmarkRawScripts is the floor under BenchmarkLockUnlock: the same
// acquire and unlock scripts by EVALSHA with no client logic (no hold
// bookkeeping, watchdog, pub/sub or latch cleanup), as bench --impl raw
// sends them.
func BenchmarkRawScripts(b *testing.B) {
	_, rdb := benchClient(b)
	ctx := context.Background()
	acq, unl, err := protocol.Calls(lockimpl.Reentrant, "bench", "raw:1", lockimpl.DefaultWatchdogTimeout, "")
	must(b, err)
	// Fresh latch keys made before the clock starts, so allocs/op counts
	// only what sending costs: a reused latch would replay its answer.
	latches := make([]string, 1<<16)
	made := 0 // latch names made so far
	fill := func() {
		for j := range latches {
			latches[j] = protocol.LatchKey("bench", fmt.Sprint(made))
			made++
		}
	}
	fill()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := acq.Run(ctx, rdb).Err(); !errors.Is(err, redis.Nil) {
			b.Fatalf("acquire: %v", err)
		}
		if i == len(latches) { // all used: new names, off the clock
			b.StopTimer()
			fill()
			b.StartTimer()
			i = 0
		}
		unl.Keys[len(unl.Keys)-1] = latches[i]
		i++
		must(b, unl.Run(ctx, rdb).Err())
	}
}
