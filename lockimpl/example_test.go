package lockimpl_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// Example is a lock's whole life: one Client per process, one Owner per
// goroutine, and a Hold for each acquisition, which unlocks and says when
// the lock was lost.
func Example() {
	ctx := context.Background()
	// Any go-redis client: lockimpl never resends an acquisition, whatever
	// its MaxRetries (Options.AutoPipeline would batch the owners'
	// commands through go-redis's autopipeliner).
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr()})
	defer rdb.Close()
	client, err := lockimpl.NewClient(ctx, rdb, lockimpl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	owner := client.NewOwner() // this goroutine's identity
	hold, err := owner.Lock("orders:42").Lock(ctx, lockimpl.LockOptions{})
	if err != nil {
		log.Fatal(err)
	}
	select {
	case <-hold.Lost():
		fmt.Println("lost: stop the work, another holder may have it")
	default:
		fmt.Println("holding orders:42")
	}
	if err := hold.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("released")
	// Output:
	// holding orders:42
	// released
}

// ExampleLock_TryLock waits a bounded time, with a fixed lease that is
// never renewed.
func ExampleLock_TryLock() {
	ctx := context.Background()
	client := exampleClient()
	defer client.Close()

	first, err := client.NewOwner().Lock("report").Lock(ctx, lockimpl.LockOptions{})
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.NewOwner().Lock("report").TryLock(ctx, lockimpl.TryLockOptions{Wait: 50 * time.Millisecond, Lease: 10 * time.Second})
	fmt.Println("second owner:", errors.Is(err, lockimpl.ErrNotAcquired))
	_ = first.Unlock(ctx)
	// Output:
	// second owner: true
}

// ExampleOwner_FencedLock guards a write with the fencing token: the store
// keeps the highest token it has seen and refuses older ones, so a holder
// that lost its lock without noticing cannot overwrite a newer holder's work.
func ExampleOwner_FencedLock() {
	ctx := context.Background()
	client := exampleClient()
	defer client.Close()

	highest := int64(0) // what the guarded store remembers
	write := func(token int64) bool {
		if token < highest {
			return false
		}
		highest = token
		return true
	}
	first, err := client.NewOwner().FencedLock("ledger").Lock(ctx, lockimpl.LockOptions{})
	if err != nil {
		log.Fatal(err)
	}
	stale := first.Token()
	_ = first.Unlock(ctx) // as if its lease had run out
	second, err := client.NewOwner().FencedLock("ledger").Lock(ctx, lockimpl.LockOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("newer holder writes:", write(second.Token()))
	fmt.Println("stale holder writes:", write(stale))
	_ = second.Unlock(ctx)
	// Output:
	// newer holder writes: true
	// stale holder writes: false
}

// ExampleOwner_NewMultiLock takes two accounts' locks all or none.
func ExampleOwner_NewMultiLock() {
	ctx := context.Background()
	client := exampleClient()
	defer client.Close()

	owner := client.NewOwner()
	both, err := owner.NewMultiLock(owner.Lock("account:7"), owner.Lock("account:3"))
	if err != nil {
		log.Fatal(err)
	}
	hold, err := both.TryLock(ctx, lockimpl.TryLockOptions{Wait: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hold.Holds() {
		fmt.Println("holding", h.Lock().Name())
	}
	if err := hold.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// holding account:3
	// holding account:7
}

// ExampleHold_Reenter re-enters through the hold, as a Redisson thread
// calls lock() again; each acquisition needs its unlock.
func ExampleHold_Reenter() {
	ctx := context.Background()
	client := exampleClient()
	defer client.Close()

	owner := client.NewOwner()
	hold, err := owner.Lock("cart").Lock(ctx, lockimpl.LockOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := hold.Reenter(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("count:", hold.Count())
	// A second Lock by the same owner is refused: only the hold re-enters,
	// so two goroutines sharing an owner cannot silently share the lock.
	_, err = owner.Lock("cart").Lock(ctx, lockimpl.LockOptions{})
	fmt.Println("second Lock by the owner:", errors.Is(err, lockimpl.ErrHeld))
	_ = hold.Unlock(ctx)
	_ = hold.Unlock(ctx)
	fmt.Println("count:", hold.Count())
	// Output:
	// count: 2
	// second Lock by the owner: true
	// count: 0
}

// exampleClient is a lockimpl client on the examples' server.
func exampleClient() *lockimpl.Client {
	rdb := redis.NewClient(&redis.Options{Addr: exampleAddr()})
	c, err := lockimpl.NewClient(context.Background(), rdb, lockimpl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	exampleClose = append(exampleClose, func() { rdb.Close() })
	return c
}

var (
	exampleOnce  sync.Once
	exampleEnv   *redisenv.Env
	exampleClose []func()
)

// exampleAddr starts the examples' redis-server on first use; TestMain
// stops it.
func exampleAddr() string {
	exampleOnce.Do(func() {
		env, err := redisenv.Start(context.Background(), redisenv.Config{Server: redisenvtest.Server()})
		if err != nil {
			log.Fatal(err)
		}
		exampleEnv = env
	})
	return exampleEnv.Addr()
}

// stopExamples closes what the examples opened.
func stopExamples() {
	for _, f := range exampleClose {
		f()
	}
	if exampleEnv != nil {
		exampleEnv.Close()
	}
}

// ExampleHold_Context passes the critical section a context that ends with
// the hold, so work on it (a database call taking ctx) stops when the hold
// is lost, and checks the hold again right before the irreversible step.
func ExampleHold_Context() {
	ctx := context.Background()
	client := exampleClient()
	defer client.Close()

	hold, err := client.NewOwner().Lock("invoice:7").Lock(ctx, lockimpl.LockOptions{Lease: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	work, cancel := hold.Context(ctx)
	defer cancel()
	// ... prepare the write with work ...
	if work.Err() == nil && time.Now().Before(hold.Deadline()) {
		fmt.Println("still held: write")
	}
	_ = hold.Unlock(ctx) // with ctx: work ends once the hold does
	<-work.Done()
	fmt.Println("after the unlock, lost:", errors.Is(context.Cause(work), lockimpl.ErrLost))
	// Output:
	// still held: write
	// after the unlock, lost: false
}
