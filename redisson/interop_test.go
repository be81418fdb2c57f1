package redisson_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/redisson"
)

// The interop tests run on Redis and again on Valkey.
func TestMain(m *testing.M) {
	redisenvtest.MainIn(m, []redisenvtest.Dimension{redisenvtest.Valkey("")})
}

// start returns a Redis and a Redisson driver on it; without Java or the
// driver's jar the test is skipped with one line saying how to get them.
func start(t *testing.T) (*redisenv.Env, *redisson.Driver) {
	t.Helper()
	return startWith(t, redisson.Config{})
}

// startWith is start with the driver's cfg (Addr is the Redis's).
func startWith(t *testing.T, cfg redisson.Config) (*redisenv.Env, *redisson.Driver) {
	t.Helper()
	if _, err := redisson.FindJar(); errors.Is(err, redisson.ErrUnavailable) {
		t.Skip(err)
	}
	env := redisenvtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg.Addr = env.Addr()
	d, err := redisson.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return env, d
}

// goClient is a lockimpl client on env with opts.
func goClient(t *testing.T, env *redisenv.Env, opts lockimpl.Options) *lockimpl.Client {
	t.Helper()
	rdb := env.NewClient()
	t.Cleanup(func() { rdb.Close() })
	c, err := lockimpl.NewClient(testkit.Context(t), rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
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
		d, err := redisson.Start(context.Background(), redisson.Config{Servers: redisson.Servers{Addr: os.Getenv("LOCKBENCH_DRIVER_CHILD")}})
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
