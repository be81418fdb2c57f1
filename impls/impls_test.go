package impls_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

func TestMain(m *testing.M) { redisenvtest.Main(m) }

var bg = context.Background()

func builtin(t *testing.T, name string) workloads.Profile {
	t.Helper()
	p, err := workloads.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func lookup(t *testing.T, name string) workloads.Impl {
	t.Helper()
	impl, err := impls.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return impl
}

// TestEveryImplExcludes runs the mutex profile (owners of two clients on
// one name) against each implementation on a real redis-server: the
// safety checker over every critical section must find no overlap, the
// lock must change hands (except under raw, see below), and the result
// must say which implementation ran.
func TestEveryImplExcludes(t *testing.T) {
	env := redisenvtest.Start(t)
	for _, name := range impls.Names() {
		t.Run(name, func(t *testing.T) {
			needDriver(t, name)
			p := builtin(t, "mutex")
			p.Clients, p.Owners = 2, 3
			p.Warmup, p.Duration = 0, workloads.Duration(1500*time.Millisecond)
			res, err := workloads.Run(bg, workloads.Config{Profile: p, NewRedis: env.NewPool, Impl: lookup(t, name)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Meta.ImplName() != name {
				t.Errorf("result impl = %q, want %q", res.Meta.ImplName(), name)
			}
			if res.Safety.Violations != 0 || res.Safety.Incomplete != "" {
				t.Errorf("safety: %+v", res.Safety)
			}
			handoffs := res.Latency[results.Handoff.String()].Count
			switch {
			case res.Throughput.Ops == 0:
				t.Error("no operations")
			case name == "raw":
				// Waiters sleep for the 30 s TTL they are told (capped by the
				// 10 s wait): the holder re-acquires again and again, so the
				// lock need not change hands in this short run.
			case handoffs == 0:
				t.Errorf("%d ops, no handoff: the lock never changed hands", res.Throughput.Ops)
			}
			if n := res.ErrorCount(); n > 0 {
				t.Errorf("%d errors: %v", n, res.Errors)
			}
			if name != "lockimpl" && res.Meta.ImplNote == "" {
				t.Error("no impl note in the result")
			}
		})
	}
}

// TestRawReadWrite: raw serves kind rw (Redis counts the holds) and
// stays safe.
func TestRawReadWrite(t *testing.T) {
	env := redisenvtest.Start(t)
	p := builtin(t, "rw90")
	p.Clients, p.Owners, p.Locks = 2, 3, 2
	p.Warmup, p.Duration = 0, workloads.Duration(1500*time.Millisecond)
	res, err := workloads.Run(bg, workloads.Config{Profile: p, NewRedis: env.NewPool, Impl: lookup(t, "raw")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Safety.Violations != 0 || res.Throughput.Acquisitions["read"] == 0 || res.Throughput.Acquisitions["write"] == 0 {
		t.Errorf("violations %d, acquisitions %v", res.Safety.Violations, res.Throughput.Acquisitions)
	}
}

// TestRefusals: an implementation lacking what a profile needs refuses it
// with a usage error naming --impl and the feature, before any Redis work.
func TestRefusals(t *testing.T) {
	longHolds := builtin(t, "mutex")
	longHolds.Name = "long"
	longHolds.Hold = workloads.FixedDist(5 * time.Second)
	cases := []struct {
		impl, profile string
		p             *workloads.Profile
		want          string
	}{
		{"redsync", "rw90", nil, "read-write lock"},
		{"redislock", "rw90", nil, "read-write lock"},
		{"redsync", "fair", nil, "fair lock"},
		{"raw", "fair", nil, "fair lock"},
		{"redislock", "reentrant-deep", nil, "reentrancy"},
		{"redsync", "fenced", nil, "fencing tokens"},
		{"raw", "fenced", nil, "fencing tokens"},
		{"redislock", "spin", nil, "spin lock"},
		{"raw", "spin", nil, "spin lock"},
		{"redsync", "mutex-nonreentrant", nil, "refuses its holder"},
		{"redislock", "multi", nil, "multi-lock"},
		{"raw", "multi", nil, "multi-lock"},
		{"redsync", "", &longHolds, "watchdog lease"},
		{"redislock", "", &longHolds, "outlive redislock's 8s expiry"},
	}
	for _, c := range cases {
		p := c.p
		if p == nil {
			b := builtin(t, c.profile)
			p = &b
		}
		// No Redis: the refusal must come first.
		_, err := workloads.Run(bg, workloads.Config{Profile: *p, Impl: lookup(t, c.impl), NewRedis: func(int) redis.UniversalClient {
			t.Fatal("Run reached Redis before refusing")
			return nil
		}})
		var fe *workloads.FieldError
		if !errors.As(err, &fe) || fe.Field != "--impl" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %s: %v; want a --impl FieldError mentioning %q", c.impl, p.Name, err, c.want)
		}
	}
	// A fixed lease serves the long holds: no watchdog needed.
	longHolds.Lease = workloads.Lease{Fixed: 20 * time.Second}
	if _, err := lookup(t, "redsync").Check(longHolds); err != nil {
		t.Errorf("redsync refused a fixed-lease profile: %v", err)
	}
	// Holds that outlive a fixed lease need a loss signal: redsync has one
	// (Until), raw and redislock do not.
	longHolds.Lease = workloads.Lease{Fixed: 2 * time.Second}
	if _, err := lookup(t, "redsync").Check(longHolds); err != nil {
		t.Errorf("redsync refused holds past its lease: %v", err)
	}
	for _, name := range []string{"raw", "redislock"} {
		if _, err := lookup(t, name).Check(longHolds); err == nil || !strings.Contains(err.Error(), "a loss signal") {
			t.Errorf("%s with holds past a fixed lease: %v; want the loss-signal refusal", name, err)
		}
	}
	if _, err := impls.Lookup("zookeeper"); err == nil || !strings.Contains(err.Error(), "redislock") {
		t.Errorf("Lookup(zookeeper) = %v; want an error listing the implementations", err)
	}
	for _, name := range impls.Names() {
		if impl, err := impls.Lookup(name); err != nil || impl == nil || impl.Name() != name {
			t.Errorf("Lookup(%s) = %v, %v; want the implementation of that name", name, impl, err)
		}
	}
}

// needDriver skips the Redisson subtest where Java or the driver's jar is
// missing, with the reason.
func needDriver(t *testing.T, name string) {
	t.Helper()
	if !impls.IsRedisson(name) {
		return
	}
	if _, err := redisson.FindJar(); err != nil {
		t.Skip(err)
	}
}

// TestLockerContract checks each peer's Locker against one Redis: a held
// lock makes a bounded acquire report false without error, a release of a
// lock not held matches ErrNotHeld, and raw retries after the TTL it was
// told (its only wake-up).
func TestLockerContract(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := env.NewPool(4)
	defer rdb.Close()
	p := builtin(t, "mutex")
	p.Lease = workloads.Lease{Fixed: 400 * time.Millisecond}
	for _, name := range []string{"raw", "redsync", "redislock", impls.RedissonName} {
		t.Run(name, func(t *testing.T) {
			needDriver(t, name)
			impl := lookup(t, name)
			c, err := impl.NewClient(bg, rdb, p, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			a := c.NewOwner().Locker("contract:"+name, results.Exclusive)
			b := c.NewOwner().Locker("contract:"+name, results.Exclusive)
			if ok, err := a.Acquire(bg, time.Second, p.Lease.Fixed); !ok || err != nil {
				t.Fatalf("first acquire = %v, %v", ok, err)
			}
			if ok, err := b.Acquire(bg, 50*time.Millisecond, p.Lease.Fixed); ok || err != nil {
				t.Fatalf("acquire of a held lock with a 50ms wait = %v, %v; want false, nil", ok, err)
			}
			// The 400ms lease expires; a patient waiter gets the lock.
			start := time.Now()
			if ok, err := b.Acquire(bg, testkit.Patience, p.Lease.Fixed); !ok || err != nil {
				t.Fatalf("acquire after the lease = %v, %v", ok, err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("acquire after a 400ms lease took %v", d)
			}
			if err := a.Release(bg); !errors.Is(err, workloads.ErrNotHeld) {
				t.Errorf("release of an expired hold = %v; want ErrNotHeld", err)
			} else if msg := err.Error(); !strings.HasPrefix(msg, name+": lock not held by this owner") || strings.Contains(msg, "lockimpl") {
				t.Errorf("release of an expired hold says %q; want %s named once, and not lockimpl", msg, name)
			}
			if err := b.Release(bg); err != nil {
				t.Errorf("release = %v", err)
			}
			ctx, cancel := context.WithCancel(bg)
			cancel()
			if ok, err := a.Acquire(ctx, time.Second, p.Lease.Fixed); ok || err == nil {
				t.Errorf("acquire with a cancelled context = %v, %v; want an error", ok, err)
			}
		})
	}
}
