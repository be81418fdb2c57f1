package faults_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

func TestMain(m *testing.M) { os.Exit(testkit.CheckLeaks(m.Run())) }

var bg = context.Background()

// proxied is a Redis behind one proxy, and a client through it with short
// timeouts so that a dropped request fails fast.
func proxied(t *testing.T, tp *faults.Toxiproxy) (*redisenv.Env, *faults.Proxy, *redis.Client) {
	t.Helper()
	env := redisenvtest.Start(t)
	p, err := tp.NewProxy(t.Name(), env.Addr())
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), Protocol: 2, MaxRetries: -1,
		ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, DialTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(bg).Err(); err != nil {
		t.Fatalf("PING through the proxy: %v", err)
	}
	return env, p, rdb
}

func embedded(t *testing.T) *faults.Toxiproxy {
	tp := faults.NewEmbedded()
	t.Cleanup(func() {
		if err := tp.Close(); err != nil {
			t.Error(err)
		}
	})
	return tp
}

func pingTime(t *testing.T, rdb *redis.Client) (time.Duration, error) {
	t.Helper()
	t0 := time.Now()
	err := rdb.Ping(bg).Err()
	return time.Since(t0), err
}

// checkToxics exercises every network fault through p: each misbehaves
// while injected and the link is healthy again after its revert.
func checkToxics(t *testing.T, p *faults.Proxy, rdb *redis.Client) {
	t.Run("latency", func(t *testing.T) {
		undo := inject(t, faults.Latency("client:0", []*faults.Proxy{p}, 150*time.Millisecond, 0, faults.Downstream))
		if d, err := pingTime(t, rdb); err != nil || d < 140*time.Millisecond {
			t.Errorf("PING under 150ms latency: %v, %v; want ≥ 140ms", d, err)
		}
		revert(t, undo)
		// The fastest of three: one PING slowed by a loaded machine is
		// not the 150 ms toxic still in place.
		fastest := time.Hour
		for range 3 {
			d, err := pingTime(t, rdb)
			if err != nil {
				t.Fatalf("PING after revert: %v", err)
			}
			fastest = min(fastest, d)
		}
		if fastest > 100*time.Millisecond {
			t.Errorf("PING after revert: the fastest of 3 took %v; want fast", fastest)
		}
	})
	t.Run("blackhole", func(t *testing.T) {
		undo := inject(t, faults.Blackhole("client:0", []*faults.Proxy{p}, faults.Both))
		var ne net.Error
		if _, err := pingTime(t, rdb); !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("PING into a blackhole: %v; want a timeout", err)
		}
		revert(t, undo)
		testkit.Eventually(t, "PING after the blackhole", func() bool { return rdb.Ping(bg).Err() == nil })
	})
	t.Run("reset_peer", func(t *testing.T) {
		undo := inject(t, faults.ResetPeer("client:0", []*faults.Proxy{p}, 0))
		if _, err := pingTime(t, rdb); err == nil {
			t.Error("PING succeeded through reset_peer")
		}
		revert(t, undo)
		testkit.Eventually(t, "PING after the resets", func() bool { return rdb.Ping(bg).Err() == nil })
	})
	t.Run("down", func(t *testing.T) {
		undo := inject(t, faults.Down("client:0", []*faults.Proxy{p}))
		if _, err := pingTime(t, rdb); !errors.Is(err, syscall.ECONNREFUSED) && !isClosedConn(err) {
			t.Errorf("PING through a downed proxy: %v; want refused or closed", err)
		}
		revert(t, undo)
		testkit.Eventually(t, "PING after the link came back", func() bool { return rdb.Ping(bg).Err() == nil })
	})
	t.Run("bandwidth, slicer and slow_close pass data", func(t *testing.T) {
		ps := []*faults.Proxy{p}
		for _, f := range []faults.Fault{
			faults.Bandwidth("client:0", ps, 64, faults.Both),
			faults.Slicer("client:0", ps, 64, 16, 10*time.Microsecond, faults.Downstream),
			faults.SlowClose("client:0", ps, 50*time.Millisecond),
		} {
			undo := inject(t, f)
			val := strings.Repeat("x", 5000)
			if err := rdb.Set(bg, "k", val, 0).Err(); err != nil {
				t.Errorf("%s: SET: %v", f.Kind(), err)
			}
			if got, err := rdb.Get(bg, "k").Result(); err != nil || got != val {
				t.Errorf("%s: GET: %d bytes, %v", f.Kind(), len(got), err)
			}
			revert(t, undo)
		}
	})
}

func isClosedConn(err error) bool {
	return err != nil && (errors.Is(err, syscall.ECONNRESET) || strings.Contains(err.Error(), "EOF"))
}

func inject(t *testing.T, f faults.Fault) func(context.Context) error {
	t.Helper()
	undo, err := f.Inject(bg)
	if err != nil {
		t.Fatalf("inject %s: %v", f.Kind(), err)
	}
	return undo
}

func revert(t *testing.T, undo func(context.Context) error) {
	t.Helper()
	if err := undo(bg); err != nil {
		t.Fatalf("revert: %v", err)
	}
}

func TestEmbeddedToxics(t *testing.T) {
	_, p, rdb := proxied(t, embedded(t))
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") || strings.HasSuffix(p.Addr(), ":0") {
		t.Errorf("proxy listens on %q; want a 127.0.0.1 ephemeral port", p.Addr())
	}
	checkToxics(t, p, rdb)
}

// TestExternalToxiproxy drives a toxiproxy server through its HTTP API,
// as a user's toxiproxy container would be: the same faults behave alike.
func TestExternalToxiproxy(t *testing.T) {
	zerolog.SetGlobalLevel(zerolog.Disabled)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Routes(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() {
		_ = hs.Close()
		_ = srv.Collection.Clear()
	})
	tp, err := faults.Connect(bg, "http://"+ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tp.Close(); err != nil {
			t.Error(err)
		}
	})
	_, p, rdb := proxied(t, tp)
	checkToxics(t, p, rdb)
}

func TestConnectBadURL(t *testing.T) {
	for _, u := range []string{"127.0.0.1:8474", "ftp://x", "http://"} {
		_, err := faults.Connect(bg, u)
		var ce *faults.ConfigError
		if !errors.As(err, &ce) || ce.Field != "toxiproxy" || !ce.IsUsage() {
			t.Errorf("Connect(%q) = %v; want a usage error naming --toxiproxy", u, err)
		}
	}
	// Nothing listens on port 1: a clear error, quickly.
	if _, err := faults.Connect(bg, "http://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "embedded") {
		t.Errorf("Connect to nothing: %v; want an error that suggests the embedded toxiproxy", err)
	}
}

func TestSetUpstream(t *testing.T) {
	tp := embedded(t)
	_, p, rdb := proxied(t, tp)
	other := redisenvtest.Start(t)
	raw := other.NewClient()
	defer raw.Close()
	if err := raw.Set(bg, "where", "other", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := p.SetUpstream(other.Addr()); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the proxy to reach the other server", func() bool {
		v, err := rdb.Get(bg, "where").Result()
		return err == nil && v == "other"
	})
	if p.Upstream() != other.Addr() {
		t.Errorf("Upstream() = %s, want %s", p.Upstream(), other.Addr())
	}
}

func TestProcessFaults(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: env.Addr(), Protocol: 2, MaxRetries: -1, ReadTimeout: 200 * time.Millisecond})
	defer rdb.Close()
	rdb.Set(bg, "k", "v", 0)

	undo := inject(t, faults.Pause(env.Primary()))
	if err := rdb.Ping(bg).Err(); err == nil {
		t.Error("PING answered by a paused server")
	}
	revert(t, undo)
	testkit.Eventually(t, "PING after resume", func() bool { return rdb.Ping(bg).Err() == nil })

	pid := env.Primary().PID()
	undo = inject(t, faults.Kill(env.Primary()))
	if redisenvtest.ProcessAlive(pid) {
		// SIGKILL is asynchronous; wait for it rather than assume.
		redisenvtest.WaitProcessGone(t, pid, testkit.Patience)
	}
	revert(t, undo)
	testkit.Eventually(t, "PING after restart", func() bool { return rdb.Ping(bg).Err() == nil })
	if n, _ := rdb.Exists(bg, "k").Result(); n != 0 {
		t.Error("a server without persistence kept its data across kill and restart")
	}
}

func TestFailover(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	tp := embedded(t)
	p, err := tp.NewProxy("failover", env.Addr())
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), Protocol: 2, MaxRetries: -1, ReadTimeout: 500 * time.Millisecond})
	defer rdb.Close()
	oldPrimary := env.Primary().Addr()
	undo := inject(t, faults.Failover(env, []*faults.Proxy{p}))
	if env.Primary().Addr() == oldPrimary || p.Upstream() != env.Primary().Addr() {
		t.Fatalf("after failover: primary %s (was %s), proxy → %s", env.Primary().Addr(), oldPrimary, p.Upstream())
	}
	testkit.Eventually(t, "a write through the repointed proxy", func() bool { return rdb.Set(bg, "k", "v", 0).Err() == nil })
	revert(t, undo)
	if env.Replica().PID() == 0 {
		t.Error("the killed primary was not restarted on revert")
	}
}

func TestClockSkewAndRevert(t *testing.T) {
	var c faults.Clock
	undo := inject(t, faults.ClockSkew("client:1", &c, -3*time.Minute))
	if d := time.Until(c.Now()); d > -2*time.Minute {
		t.Errorf("skewed clock is %v from now; want about -3m", d)
	}
	revert(t, undo)
	if c.Offset() != 0 {
		t.Errorf("offset after revert = %v", c.Offset())
	}
}

func TestFreezeBlocksAtGateAndDropsTraffic(t *testing.T) {
	_, p, rdb := proxied(t, embedded(t))
	g := faults.NewGate()
	if g.Frozen() || g.Wait(bg) != nil {
		t.Fatal("a new gate is closed")
	}
	undo := inject(t, faults.Freeze("client:0", g, []*faults.Proxy{p}))
	if !g.Frozen() {
		t.Fatal("gate open during a freeze")
	}
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	if err := g.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait during a freeze = %v; want it to block until ctx ends", err)
	}
	cancel()
	if err := rdb.Ping(bg).Err(); err == nil {
		t.Error("traffic passed during a freeze")
	}
	woke := make(chan error, 1)
	go func() { woke <- g.Wait(bg) }()
	revert(t, undo)
	select {
	case err := <-woke:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(testkit.Patience):
		t.Fatal("Wait did not return after the freeze ended")
	}
	testkit.Eventually(t, "PING after the freeze", func() bool { return rdb.Ping(bg).Err() == nil })
}

// TestClockJump: the jump expires a key whose TTL it passes, and the
// revert leaves the clock jumped.
func TestClockJump(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{FakeClock: true})
	rdb := redisenvtest.Raw(t, env)
	if err := rdb.Set(bg, "k", "v", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	f := faults.ClockJump(env, env.Primary(), 20*time.Second)
	if f.Kind() != "clock_jump" || f.Target() != "redis:primary" {
		t.Errorf("fault is %s on %s, want clock_jump on redis:primary", f.Kind(), f.Target())
	}
	revert, err := f.Inject(bg)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.Exists(bg, "k").Result(); n != 0 {
		t.Error("a 10 s key outlived a 20 s jump")
	}
	if err := revert(bg); err != nil {
		t.Fatal(err)
	}
	st, err := rdb.Time(bg).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ahead := time.Until(st); ahead < 19*time.Second {
		t.Errorf("after the revert the server's clock is %v ahead, want the jump kept (20 s)", ahead)
	}
}
