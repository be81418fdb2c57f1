package impls_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/workloads"
)

// TestRedissonJVMCountsSuccesses: the JVM's own loop records every
// operation, and the result counts as done only those that acquired: on
// one name held 30 ms at a time by owners that wait 1 ms, most tryLocks
// give up, and each is a timeout, not an operation.
func TestRedissonJVMCountsSuccesses(t *testing.T) {
	needDriver(t, impls.RedissonJVMName)
	env := redisenvtest.Start(t)
	p := builtin(t, "mutex")
	p.Clients, p.Owners, p.Locks = 2, 2, 1
	p.Hold, p.Think = workloads.FixedDist(30*time.Millisecond), workloads.FixedDist(0)
	p.Wait = workloads.Duration(time.Millisecond)
	p.Warmup, p.Duration = workloads.Duration(200*time.Millisecond), workloads.Duration(1500*time.Millisecond)
	res, err := workloads.Run(bg, workloads.Config{Profile: p, NewRedis: env.NewPool, Impl: lookup(t, impls.RedissonJVMName)})
	if err != nil {
		t.Fatal(err)
	}
	tp := res.Throughput
	acquired := tp.Acquisitions["exclusive"]
	switch {
	case res.Meta.ImplName() != impls.RedissonJVMName:
		t.Errorf("impl %q", res.Meta.ImplName())
	case tp.Ops == 0 || res.Errors["timeout"] == 0:
		t.Errorf("ops %d, timeouts %d: want both", tp.Ops, res.Errors["timeout"])
	case tp.Ops != acquired || tp.Attempts != tp.Ops+res.Errors["timeout"]:
		t.Errorf("ops %d, acquired %d, attempts %d, timeouts %d: only acquisitions are operations", tp.Ops, acquired, tp.Attempts, res.Errors["timeout"])
	case res.Safety.Violations != 0:
		t.Errorf("safety: %+v", res.Safety)
	case res.CPU == nil || res.CPU.Load == 0 || res.CPU.Helper <= 0 || res.CPU.Helper > res.CPU.Load || res.CPU.HelperSys <= 0 || res.CPU.HelperSys > res.CPU.Helper:
		t.Errorf("cpu %+v: the JVM's CPU is the load's, and read apart as its helper's", res.CPU)
	}
	// A 30 ms hold on one name allows about 1.5 s / 30 ms of them.
	if max := int64(1.5/0.030) + 5; acquired > max {
		t.Errorf("%d acquisitions of a lock held 30 ms in 1.5 s: holds overlap or were not held", acquired)
	}
}

// TestRedissonTunedPool: redisson-tuned's RedissonClients keep the pool
// its tuning names (as many connections as owners), where Redisson's
// default keeps 24 per client open; the password reaches neither the
// JVM's command line nor its environment.
func TestRedissonTunedPool(t *testing.T) {
	needDriver(t, impls.RedissonTunedName)
	env := redisenvtest.Start(t)
	first := env.NewClient()
	defer first.Close()
	const pw = "tun3d-PW"
	if err := first.ConfigSet(bg, "requirepass", pw).Err(); err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(&redis.Options{Addr: env.Addr(), Password: pw})
	defer admin.Close()
	newRedis := func(pool int) redis.UniversalClient {
		return redis.NewClient(&redis.Options{Addr: env.Addr(), Password: pw, PoolSize: pool})
	}
	conns := map[string]int{}
	for _, tc := range []struct {
		name     string
		tunedSet bool
	}{
		{impls.RedissonName, false},
		{impls.RedissonTunedName, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := builtin(t, "uncontended")
			p.Clients, p.Owners = 2, 3
			p.Warmup, p.Duration = 0, workloads.Duration(3*time.Second)
			impl := lookup(t, tc.name)
			var argv, environ string
			started, done := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				<-started // the clients are connected
				time.Sleep(time.Second)
				conns[tc.name] = clientsNamed(t, admin)
				if pid := impl.(workloads.Processes).PIDs(); len(pid) > 0 {
					b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid[0]) + "/cmdline")
					e, _ := os.ReadFile("/proc/" + strconv.Itoa(pid[0]) + "/environ")
					argv, environ = string(b), string(e)
				}
			}()
			res, err := workloads.Run(bg, workloads.Config{Profile: p, NewRedis: newRedis, Impl: impl, Started: func(time.Time) { close(started) }})
			<-done
			if err != nil {
				t.Fatal(err)
			}
			if argv == "" || strings.Contains(argv, pw) || strings.Contains(environ, pw) {
				t.Errorf("JVM argv %q (empty: not read), or its environment, has the password", argv)
			}
			if got := strings.Contains(res.Meta.ImplNote, "nettyThreads"); got != tc.tunedSet {
				t.Errorf("note %q names the tuning: %v, want %v", res.Meta.ImplNote, got, tc.tunedSet)
			}
		})
	}
	// Tuned: a pool of 3 per client, plus a pub/sub connection each and
	// the harness's few; the default opens far more.
	if tuned, def := conns[impls.RedissonTunedName], conns[impls.RedissonName]; tuned > 2*(3+1)+4 || tuned >= def {
		t.Errorf("connections: tuned %d, default %d: want at most %d tuned, and fewer than the default", tuned, def, 2*(3+1)+4)
	}
}

// clientsNamed counts the server's client connections but those that
// name go-redis as their library (on servers that keep the name).
func clientsNamed(t *testing.T, admin *redis.Client) int {
	t.Helper()
	list, err := admin.ClientList(bg).Result()
	if err != nil {
		t.Error(err)
		return 0
	}
	n := 0
	for l := range strings.Lines(list) {
		if strings.TrimSpace(l) != "" && !strings.Contains(l, "lib-name=go-redis") {
			n++
		}
	}
	return n
}

// TestRedissonJVMInterrupted: a redisson-jvm run whose context ends stops
// its loops at once, returns what they did as a partial result with the
// context's error, and leaves none of its locks in Redis.
func TestRedissonJVMInterrupted(t *testing.T) {
	needDriver(t, impls.RedissonJVMName)
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	defer rdb.Close()
	p := builtin(t, "mutex")
	p.Clients, p.Owners, p.Locks = 2, 2, 2
	p.Hold = workloads.FixedDist(20 * time.Millisecond)
	p.Warmup, p.Duration = 0, workloads.Duration(time.Minute)
	prefix := "lockbench:jvm-interrupt-test:" + workloads.NewRunID() + ":"
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	// The bound runs from the interrupt, not from the start: a loaded host
	// takes its time to start the JVM.
	interrupted := make(chan time.Time, 1)
	go func() {
		heldSoon(rdb, prefix+"0")
		time.Sleep(500 * time.Millisecond)
		interrupted <- time.Now()
		cancel()
	}()
	res, err := workloads.Run(ctx, workloads.Config{Profile: p, NewRedis: env.NewPool, Impl: lookup(t, impls.RedissonJVMName), KeyPrefix: prefix})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	switch at := <-interrupted; {
	case time.Since(at) > 30*time.Second:
		t.Errorf("the run took %v after its interrupt", time.Since(at))
	case res == nil:
		t.Fatal("no result")
	case !res.Partial || res.Throughput.Ops == 0 || res.Safety.Violations != 0:
		t.Errorf("partial %v, ops %d, violations %d: want a partial result with operations and no violation", res.Partial, res.Throughput.Ops, res.Safety.Violations)
	}
	if keys, _ := rdb.Keys(bg, prefix+"*").Result(); len(keys) > 0 {
		t.Errorf("keys left: %v", keys)
	}
}

// TestRedissonFlightRecording: with $LOCKBENCH_REDISSON_JFR set, the run's
// JVM leaves a flight recording there, and beside it the frames its
// samples found on top, most first.
func TestRedissonFlightRecording(t *testing.T) {
	needDriver(t, impls.RedissonName)
	env := redisenvtest.Start(t)
	dir := t.TempDir()
	t.Setenv(impls.RedissonJFREnv, dir)
	p := builtin(t, "uncontended")
	p.Clients, p.Owners = 1, 2
	p.Warmup, p.Duration = 0, workloads.Duration(2*time.Second)
	if _, err := workloads.Run(bg, workloads.Config{Profile: p, NewRedis: env.NewPool, Impl: lookup(t, impls.RedissonName)}); err != nil {
		t.Fatal(err)
	}
	recs, _ := filepath.Glob(filepath.Join(dir, "*.jfr"))
	if len(recs) != 1 {
		t.Fatalf("recordings %v, want one", recs)
	}
	fs, total, err := redisson.TopFrames(bg, recs[0], 5)
	if err != nil || total == 0 || len(fs) == 0 || fs[0].Samples < fs[len(fs)-1].Samples {
		t.Errorf("top frames %v of %d samples, %v: want some, most first", fs, total, err)
	}
	if _, err := os.Stat(strings.TrimSuffix(recs[0], ".jfr") + ".top.txt"); err != nil {
		t.Error(err)
	}
}
