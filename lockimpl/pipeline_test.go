package lockimpl_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
)

// The ways a lockimpl client meets Redis: a plain go-redis client,
// Options.AutoPipeline (lockimpl makes the autopipeliner), and an
// autopipeliner the application made and passes as the client, the
// blocking face (given) or the deferred one (deferred).
var sendModes = []string{"plain", "option", "given", "deferred"}

// modeClient returns a lockimpl client on rdb in mode.
func modeClient(t *testing.T, rdb *redis.Client, mode string, opts lockimpl.Options) *lockimpl.Client {
	t.Helper()
	var via redis.UniversalClient = rdb
	switch mode {
	case "option":
		opts.AutoPipeline = true
	case "given":
		ap, err := rdb.AutoPipeline()
		if err != nil {
			t.Fatal(err)
		}
		via = ap
	case "deferred":
		ap, err := rdb.AsyncAutoPipeline()
		if err != nil {
			t.Fatal(err)
		}
		via = ap
	}
	c, err := lockimpl.NewClient(bg, via, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// dropReplies returns a client of f's Redis (go-redis's default of 3
// retries) whose connections lose the reply to the next n script calls:
// the command reaches Redis and runs, then its connection reads a reset
// instead of the reply, so its sender cannot know the outcome. Other
// commands, such as a new connection's HELLO, pass, so a resent command
// does reach Redis.
func dropReplies(t *testing.T, f *fixture) (*redis.Client, func(n int64)) {
	t.Helper()
	d := &replyDropper{}
	rdb := redis.NewClient(&redis.Options{Addr: f.env.Addr(), Protocol: 2, Dialer: d.dial})
	t.Cleanup(func() { rdb.Close() })
	return rdb, d.left.Store
}

type replyDropper struct {
	left atomic.Int64 // script replies still to drop
}

func (d *replyDropper) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &dropConn{Conn: c, d: d}, nil
}

// dropConn resets itself when a script call it sent is answered.
type dropConn struct {
	net.Conn
	d    *replyDropper
	drop atomic.Bool
}

func (c *dropConn) Write(b []byte) (int, error) {
	if bytes.Contains(bytes.ToLower(b), []byte("evalsha")) && c.d.left.Add(-1) >= 0 {
		c.drop.Store(true)
	}
	return c.Conn.Write(b)
}

func (c *dropConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err == nil && c.drop.Swap(false) {
		_ = c.Conn.Close() // the reply came: the script ran
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	}
	return n, err
}

// slowReplies returns a client of f's Redis whose connections hold back
// the reply to each script call by d: the command runs at once, its
// sender hears of it d later.
func slowReplies(t *testing.T, f *fixture, d time.Duration) *redis.Client {
	t.Helper()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &slowConn{Conn: c, d: d}, nil
	}
	rdb := redis.NewClient(&redis.Options{Addr: f.env.Addr(), Protocol: 2, Dialer: dial})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// slowConn delays the read that follows a script call it sent.
type slowConn struct {
	net.Conn
	d    time.Duration
	slow atomic.Bool
}

func (c *slowConn) Write(b []byte) (int, error) {
	if bytes.Contains(bytes.ToLower(b), []byte("evalsha")) {
		c.slow.Store(true)
	}
	return c.Conn.Write(b)
}

func (c *slowConn) Read(b []byte) (int, error) {
	if c.slow.Swap(false) {
		time.Sleep(c.d) // the network's delay, not a wait for the test's sake
	}
	return c.Conn.Read(b)
}

// TestCommandSeenThroughPastContext: a lock command whose reply comes
// after the caller's context ended is waited for, on every way to Redis,
// so that what the caller is told is what Redis did. On a deferred
// autopipeliner go-redis sends a queued command even after its caller
// gave up: abandoned there, an acquisition would hold the lock for a
// lease with no hold to release it, and an unlock could land after its
// own re-send, releasing a newer hold.
func TestCommandSeenThroughPastContext(t *testing.T) {
	for _, mode := range sendModes {
		t.Run(mode, func(t *testing.T) {
			f := setup(t)
			c := modeClient(t, slowReplies(t, f, 300*time.Millisecond), mode, lockimpl.Options{SkipReplicaSync: true})
			l := c.NewOwner().Lock("late")
			unlock(t, lock(t, l)) // scripts loaded: no NOSCRIPT round

			ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
			h, err := l.TryLock(ctx, lockimpl.TryLockOptions{})
			cancel()
			if err != nil {
				t.Fatalf("TryLock whose reply outlived its context = %v; want the hold Redis granted", err)
			}
			if got := f.raw.HGet(bg, "late", l.Owner().ID()).Val(); got != "1" {
				t.Fatalf("hold count in Redis = %q, want 1", got)
			}

			ctx, cancel = context.WithTimeout(bg, 50*time.Millisecond)
			err = h.Unlock(ctx)
			cancel()
			if err != nil {
				t.Fatalf("Unlock whose reply outlived its context = %v; want it released", err)
			}
			if n := f.raw.Exists(bg, "late").Val(); n != 0 {
				t.Errorf("lock still held after an unlock that succeeded")
			}

			// A context already over sends nothing.
			ctx, cancel = context.WithCancel(bg)
			cancel()
			if _, err := l.TryLock(ctx, lockimpl.TryLockOptions{}); !errors.Is(err, context.Canceled) {
				t.Errorf("TryLock on a cancelled context = %v, want context.Canceled", err)
			}
			if n := f.raw.Exists(bg, "late").Val(); n != 0 {
				t.Errorf("a TryLock on a cancelled context took the lock")
			}
		})
	}
}

// evalshaCalls is how many EVALSHA commands the server has run.
func evalshaCalls(t *testing.T, f *fixture) int {
	t.Helper()
	info, err := f.raw.Info(bg, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:calls="); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}

// TestAcquireNeverResent: an acquisition that Redis applied but whose
// reply was lost is not sent again, on a client that retries, plain or
// autopipelined (an autopipeliner retries whole batches): a resent
// acquire would count the hold twice, and the owner's single unlock
// would leave the lock held.
func TestAcquireNeverResent(t *testing.T) {
	for _, mode := range sendModes {
		t.Run(mode, func(t *testing.T) {
			f := setup(t)
			rdb, drop := dropReplies(t, f)
			c := modeClient(t, rdb, mode, lockimpl.Options{SkipReplicaSync: true})
			l := c.NewOwner().Lock("once")
			unlock(t, lock(t, l)) // scripts loaded

			before := evalshaCalls(t, f)
			drop(1)
			_, err := l.TryLock(bg, lockimpl.TryLockOptions{})
			if err == nil || errors.Is(err, lockimpl.ErrNotAcquired) {
				t.Fatalf("TryLock with its reply reset = %v, want a connection error", err)
			}
			if n := evalshaCalls(t, f) - before; n != 1 {
				t.Errorf("the acquire script ran %d times, want 1 (never resent)", n)
			}
			if got := f.raw.HGet(bg, "once", l.Owner().ID()).Val(); got != "1" {
				t.Errorf("hold count in Redis = %q, want 1", got)
			}
		})
	}
}

// TestUnlockResentWithLatch: an unlock whose reply was lost is sent again
// with its latch (by go-redis on a plain client, by lockimpl on an
// autopipeliner, where nothing lockimpl sends is resent by go-redis), and
// the latch makes the repeats change nothing: one unlock of a hold of
// count 2 leaves 1.
func TestUnlockResentWithLatch(t *testing.T) {
	for _, mode := range sendModes {
		t.Run(mode, func(t *testing.T) {
			f := setup(t)
			rdb, drop := dropReplies(t, f)
			c := modeClient(t, rdb, mode, lockimpl.Options{SkipReplicaSync: true})
			l := c.NewOwner().Lock("latched")
			unlock(t, lock(t, l)) // scripts loaded
			h := lock(t, l)
			reenter(t, h)

			before := evalshaCalls(t, f)
			drop(100)
			err := h.Unlock(bg)
			drop(0)
			if err == nil {
				t.Fatal("Unlock with every reply reset succeeded, want a connection error")
			}
			if n := evalshaCalls(t, f) - before; n != 4 {
				t.Errorf("the unlock script ran %d times, want 4 (the unlock and 3 re-sends)", n)
			}
			if got := f.raw.HGet(bg, "latched", l.Owner().ID()).Val(); got != "1" {
				t.Errorf("hold count in Redis after one unlock = %q, want 1 (the latch absorbed the re-sends)", got)
			}
			unlock(t, h)
			if n := f.raw.Exists(bg, "latched").Val(); n != 0 {
				t.Errorf("lock still exists after the last unlock")
			}
		})
	}
}

// TestGivenAutoPipelinerExcludes: owners of two clients, each on an
// autopipeliner the application made (the blocking face), contend for one
// name; waiters are woken by pub/sub and no two critical sections overlap.
func TestGivenAutoPipelinerExcludes(t *testing.T) {
	f := setup(t)
	const clients, owners, rounds = 2, 4, 50
	var inside, overlaps, sections atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		rdb := f.env.NewClient().(*redis.Client)
		t.Cleanup(func() { rdb.Close() })
		c := modeClient(t, rdb, "given", lockimpl.Options{})
		for range owners {
			l := c.NewOwner().Lock("contended")
			wg.Go(func() {
				for range rounds {
					h, err := l.Lock(bg, lockimpl.LockOptions{})
					if err != nil {
						t.Error(err)
						return
					}
					if inside.Add(1) > 1 {
						overlaps.Add(1)
					}
					sections.Add(1)
					time.Sleep(200 * time.Microsecond) // a critical section another holder could overlap
					inside.Add(-1)
					if err := h.Unlock(bg); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if n := overlaps.Load(); n > 0 {
		t.Errorf("%d critical sections overlapped", n)
	}
	if n, want := sections.Load(), int64(clients*owners*rounds); n != want {
		t.Errorf("%d critical sections, want %d", n, want)
	}
	if n := f.raw.Exists(bg, "contended").Val(); n != 0 {
		t.Errorf("lock left held after every unlock")
	}
}

// TestAutoPipelineNeedsAClient: Options.AutoPipeline on a client type
// that has no autopipeliner of its own is refused, naming the fix.
func TestAutoPipelineNeedsAClient(t *testing.T) {
	f := setup(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": f.env.Addr()}})
	defer ring.Close()
	_, err := lockimpl.NewClient(bg, ring, lockimpl.Options{AutoPipeline: true})
	if !errors.Is(err, lockimpl.ErrInvalidOptions) || !strings.Contains(err.Error(), "*redis.Client") {
		t.Fatalf("NewClient(ring, AutoPipeline) = %v, want ErrInvalidOptions naming *redis.Client", err)
	}
}

// TestCrowdOnlyForQuickOwners: with Options.AutoPipeline, owners that
// send again at once share go-redis's waiting autopipeliner once a crowd
// of them is in flight, while owners that pause between commands never
// ride it, even when they all send at the same moment: its wait for the
// owners of the last batch would find nobody.
func TestCrowdOnlyForQuickOwners(t *testing.T) {
	const owners = 16
	// run has each owner lock and unlock its own name rounds times. With
	// a pause, every round starts at once for all owners, pause after the
	// last of them finished the one before.
	run := func(t *testing.T, c *lockimpl.Client, rounds int, pause time.Duration) {
		t.Helper()
		start := make([]chan struct{}, rounds)
		for r := range start {
			start[r] = make(chan struct{})
		}
		var round sync.WaitGroup
		go func() {
			for r := range rounds {
				if pause > 0 {
					if r > 0 {
						round.Wait()
						time.Sleep(pause)
					}
					round.Add(owners)
				}
				close(start[r])
			}
		}()
		var wg sync.WaitGroup
		errs := make(chan error, owners)
		for i := range owners {
			l := c.NewOwner().Lock("crowd-" + strconv.Itoa(i))
			wg.Go(func() {
				for r := range rounds {
					<-start[r]
					h, err := l.Lock(bg, lockimpl.LockOptions{})
					if err == nil {
						err = h.Unlock(bg)
					}
					if pause > 0 {
						round.Done()
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	f := setup(t)
	t.Run("quick", func(t *testing.T) {
		c := f.client(lockimpl.Options{SkipReplicaSync: true, AutoPipeline: true})
		run(t, c, 300, 0)
		if c.Crowded() == 0 {
			t.Errorf("no command of %d owners in a tight loop rode the crowd", owners)
		}
	})
	t.Run("pausing", func(t *testing.T) {
		c := f.client(lockimpl.Options{SkipReplicaSync: true, AutoPipeline: true})
		run(t, c, 30, 3*time.Millisecond) // the mean turnaround grows past the bound
		before := c.Crowded()
		run(t, c, 30, 3*time.Millisecond)
		if n := c.Crowded() - before; n != 0 {
			t.Errorf("%d commands of owners pausing 3 ms rode the crowd, want 0", n)
		}
	})
}
