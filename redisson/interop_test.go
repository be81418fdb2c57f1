package redisson_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/redisson"
)

func TestMain(m *testing.M) { redisenvtest.Main(m) }

// start returns a Redis and a Redisson driver on it; without Java or the
// driver's jar the test is skipped with one line saying how to get them.
func start(t *testing.T) (*redisenv.Env, *redisson.Driver) {
	t.Helper()
	if _, err := redisson.FindJar(); errors.Is(err, redisson.ErrUnavailable) {
		t.Skip(err)
	}
	env := redisenvtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := redisson.Start(ctx, redisson.Config{Addr: env.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return env, d
}

// section is one critical section on CLOCK_MONOTONIC, by a Java or Go owner.
type section struct {
	from, to int64
	java     bool
}

// TestInteropReentrantExclusion: two Redisson owners (Java threads) and two
// lockimpl owners contend for one reentrant lock; their critical sections,
// on one monotonic clock, never overlap, the lock passes between the
// languages hundreds of times, and each side wakes the other's waiters by
// pub/sub (no handoff waits for a lease).
func TestInteropReentrantExclusion(t *testing.T) {
	env, d := start(t)
	ctx := testkit.Context(t)
	rdb := env.NewClient()
	defer rdb.Close()
	c, err := lockimpl.NewClient(ctx, rdb, lockimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Logf("Redisson %s", d.Version())

	const rounds = 300
	var mu sync.Mutex
	var secs []section
	add := func(s section) {
		mu.Lock()
		secs = append(secs, s)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, owner := range []string{"j1", "j2"} {
		wg.Go(func() {
			for range rounds {
				got, err := d.Call(ctx, "lock", owner, "reentrant", "x", -1, 0)
				if err != nil {
					errs <- err
					return
				}
				time.Sleep(200 * time.Microsecond)
				rel, err := d.Call(ctx, "unlock", owner, "reentrant", "x", 0, 0)
				if err != nil {
					errs <- err
					return
				}
				add(section{got.End, rel.Start, true})
			}
		})
	}
	for range 2 {
		o := c.NewOwner()
		wg.Go(func() {
			for range rounds {
				h, err := o.Lock("x").Lock(ctx, lockimpl.LockOptions{})
				if err != nil {
					errs <- err
					return
				}
				from := redisson.Now()
				time.Sleep(200 * time.Microsecond)
				to := redisson.Now()
				if err := h.Unlock(ctx); err != nil {
					errs <- err
					return
				}
				add(section{from, to, false})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	slices.SortFunc(secs, func(a, b section) int { return int(a.from - b.from) })
	var overlaps, cross int
	var gaps []time.Duration
	for i := 1; i < len(secs); i++ {
		prev, cur := secs[i-1], secs[i]
		if cur.from < prev.to {
			overlaps++
			continue
		}
		if cur.java != prev.java {
			cross++
			gaps = append(gaps, time.Duration(cur.from-prev.to))
		}
	}
	if len(secs) != 4*rounds {
		t.Fatalf("%d critical sections, want %d", len(secs), 4*rounds)
	}
	if overlaps != 0 {
		t.Fatalf("%d overlapping critical sections between owners", overlaps)
	}
	if cross < 50 {
		t.Fatalf("only %d handoffs between the languages in %d sections: the test did not contend", cross, len(secs))
	}
	slices.Sort(gaps)
	p50, worst := gaps[len(gaps)/2], gaps[len(gaps)-1]
	t.Logf("%d sections, 0 overlaps, %d cross-language handoffs: p50 %v, max %v", len(secs), cross, p50, worst)
	// A waiter woken by the other side's unlock message, not by its TTL
	// (the watchdog's 30 s), takes the lock within milliseconds.
	if p50 > 10*time.Millisecond || worst > 5*time.Second {
		t.Errorf("cross-language handoff p50 %v, max %v: want p50 under 10ms and no wait for a lease", p50, worst)
	}
}

// TestInteropFencedTokens: Redisson's and lockimpl's fenced locks take
// tokens from one counter.
func TestInteropFencedTokens(t *testing.T) {
	env, d := start(t)
	ctx := testkit.Context(t)
	rdb := env.NewClient()
	defer rdb.Close()
	c, err := lockimpl.NewClient(ctx, rdb, lockimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var tokens []string
	for i := range 3 {
		r, err := d.Call(ctx, "lock", "j", "fenced", "f", -1, 0)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, r.Value)
		if _, err := d.Call(ctx, "unlock", "j", "fenced", "f", 0, 0); err != nil {
			t.Fatal(err)
		}
		h, err := c.NewOwner().FencedLock("f").Lock(ctx, lockimpl.LockOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(2*i + 2); h.Token() != want {
			t.Errorf("Go acquisition %d: token %d, want %d", i, h.Token(), want)
		}
		if err := h.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(tokens, []string{"1", "3", "5"}) {
		t.Errorf("Java tokens %v, want 1 3 5 (Go took 2 4 6)", tokens)
	}
	if r, err := d.Call(ctx, "token", "j", "fenced", "f", 0, 0); err != nil || r.Value != "6" {
		t.Errorf("Redisson getToken after 6 acquisitions: %q, %v", r.Value, err)
	}
}

// TestInteropNonReentrantRefusal: Redisson's non-reentrant lock refuses
// its holder; lockimpl refuses its own holder the same way and excludes the
// Java holder.
func TestInteropNonReentrantRefusal(t *testing.T) {
	env, d := start(t)
	ctx := testkit.Context(t)
	rdb := env.NewClient()
	defer rdb.Close()
	c, err := lockimpl.NewClient(ctx, rdb, lockimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := d.Call(ctx, "lock", "j", "non-reentrant", "n", -1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Call(ctx, "lock", "j", "non-reentrant", "n", 0, 0); err == nil {
		t.Error("Redisson let its holder take a non-reentrant lock twice")
	}
	if _, err := c.NewOwner().NonReentrantLock("n").TryLock(ctx, lockimpl.TryLockOptions{}); !errors.Is(err, lockimpl.ErrNotAcquired) {
		t.Errorf("Go owner on a lock Java holds: %v, want ErrNotAcquired", err)
	}
	if _, err := d.Call(ctx, "unlock", "j", "non-reentrant", "n", 0, 0); err != nil {
		t.Fatal(err)
	}
	h, err := c.NewOwner().NonReentrantLock("n").Lock(ctx, lockimpl.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := d.Call(ctx, "lock", "j", "non-reentrant", "n", 50*time.Millisecond, 0); err != nil || r.Value != "0" {
		t.Errorf("Java tryLock on a lock Go holds: %q, %v; want not acquired", r.Value, err)
	}
	if err := h.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestDriverDiesWithHarness: a harness process that is SIGKILLed (no
// chance to close anything) takes its JVM with it.
func TestDriverDiesWithHarness(t *testing.T) {
	if os.Getenv("LOCKBENCH_DRIVER_CHILD") != "" {
		d, err := redisson.Start(context.Background(), redisson.Config{Addr: os.Getenv("LOCKBENCH_DRIVER_CHILD")})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("jvm", d.PID())
		select {} // until killed
	}
	env, _ := start(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDriverDiesWithHarness$")
	cmd.Env = append(os.Environ(), "LOCKBENCH_DRIVER_CHILD="+env.Addr())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("child: %v", err)
	}
	var pid int
	if _, err := fmt.Sscanf(line, "jvm %d", &pid); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("child said %q", line)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("JVM %d not running before the kill: %v", pid, err)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	redisenvtest.WaitProcessGone(t, pid, 30*time.Second)
}
