package redisenv_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// serverAhead is how far node's TIME is ahead of this host's clock.
func serverAhead(t *testing.T, node redisenv.Node) time.Duration {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: node.Addr()})
	defer rdb.Close()
	before := time.Now()
	st, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return st.Sub(before)
}

// TestJumpClock: a jump forward past a key's TTL expires it at once, the
// server's TIME moves by the jump, the other node keeps the real clock,
// and the offset survives a restart.
func TestJumpClock(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyReplica, FakeClock: true})
	ctx := context.Background()
	primary, replica := env.Primary(), env.Replica()
	if d := serverAhead(t, primary); d < -time.Second || d > time.Second {
		t.Fatalf("before any jump the primary's clock is %v off", d)
	}
	rdb := redisenvtest.Raw(t, env)
	if err := rdb.Set(ctx, "k", "v", 30*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := env.JumpClock(ctx, primary, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Errorf("after a 60 s jump a 30 s key exists = %d (err %v), want gone", n, err)
	}
	if d := serverAhead(t, primary); d < 59*time.Second || d > 61*time.Second {
		t.Errorf("after a 60 s jump the primary's TIME is %v ahead, want about 60 s", d)
	}
	if d := serverAhead(t, replica); d < -time.Second || d > time.Second {
		t.Errorf("the replica's clock moved with the primary's: %v ahead", d)
	}
	// Jumps add up, and a jump back works as well.
	if err := env.JumpClock(ctx, primary, -45*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := primary.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if d := serverAhead(t, primary); d < 14*time.Second || d > 16*time.Second {
		t.Errorf("after +60 s, -45 s and a restart the primary's TIME is %v ahead, want about 15 s", d)
	}
}

// TestJumpClockRealClock: a node started without FakeClock has no clock
// to move.
func TestJumpClockRealClock(t *testing.T) {
	env := redisenvtest.Start(t)
	err := env.JumpClock(context.Background(), env.Primary(), time.Minute)
	if !errors.Is(err, redisenv.ErrNoFakeClock) {
		t.Errorf("JumpClock on the real clock = %v, want ErrNoFakeClock", err)
	}
}

// TestFakeClockBackends: FakeClock is refused where lockbench does not
// start the redis-server process, and turns auto into local.
func TestFakeClockBackends(t *testing.T) {
	for _, c := range []redisenv.Config{
		{Backend: redisenv.BackendContainer, FakeClock: true},
		{Backend: redisenv.BackendExternal, URL: "redis://127.0.0.1:6379", FakeClock: true},
		{URL: "redis://127.0.0.1:6379", FakeClock: true},
	} {
		requireConfigError(t, string(c.Backend)+" "+c.URL, c.Validate(), "--redis local")
	}
	env := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendAuto, FakeClock: true})
	if env.Backend() != redisenv.BackendLocal {
		t.Errorf("auto with FakeClock started %s, want local", env.Backend())
	}
}
