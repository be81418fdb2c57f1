package lockimpl_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// pipelineEnv, set, makes every fixture client ride go-redis's
// autopipeliner (Options.AutoPipeline). TestMain sets it to run the tests
// again, so that each correctness test holds in both modes.
const pipelineEnv = "LOCKIMPL_TEST_AUTOPIPELINE"

var autoPipelined = os.Getenv(pipelineEnv) != ""

func TestMain(m *testing.M) {
	code := m.Run()
	stopExamples()
	code = testkit.CheckLeaks(code)
	// Each correctness test holds in both send modes and on both servers.
	os.Exit(redisenvtest.Rerun(code,
		redisenvtest.Dimension{Name: "autopipelined", Env: pipelineEnv, Value: "1"},
		redisenvtest.Valkey("")))
}

// testOptions is opts as this run's mode has them: on the autopipeliner
// when pipelineEnv is set.
func testOptions(opts lockimpl.Options) lockimpl.Options {
	opts.AutoPipeline = opts.AutoPipeline || autoPipelined
	return opts
}

var bg = context.Background()

// fixture is a fresh Redis, a raw client to inspect it, and lockimpl
// clients built on their own connection pools (as separate processes).
type fixture struct {
	t   *testing.T
	env *redisenv.Env
	raw redis.UniversalClient
}

func setup(t *testing.T, cfg ...redisenv.Config) *fixture {
	t.Helper()
	env := redisenvtest.Start(t, cfg...)
	raw := env.NewClient()
	t.Cleanup(func() { raw.Close() })
	return &fixture{t: t, env: env, raw: raw}
}

// client returns a new lockimpl client with its own pool, closed at cleanup.
func (f *fixture) client(opts lockimpl.Options) *lockimpl.Client {
	f.t.Helper()
	rdb := f.env.NewClient()
	c, err := lockimpl.NewClient(bg, rdb, testOptions(opts))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		c.Close()
		rdb.Close()
	})
	return c
}

// lock takes l, waiting, with opts (none: a watchdog lease); it fails t
// on error.
func lock(t testing.TB, l *lockimpl.Lock, opts ...lockimpl.LockOptions) *lockimpl.Hold {
	t.Helper()
	var o lockimpl.LockOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	h, err := l.Lock(bg, o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// unlock gives back one acquisition of h; it fails t on error.
func unlock(t testing.TB, h *lockimpl.Hold) {
	t.Helper()
	if err := h.Unlock(bg); err != nil {
		t.Fatal(err)
	}
}

// reenter re-enters h; it fails t on error.
func reenter(t testing.TB, h *lockimpl.Hold) {
	t.Helper()
	if err := h.Reenter(bg); err != nil {
		t.Fatal(err)
	}
}

// async is an acquisition running in the background: err delivers its
// outcome, after which h is the hold (nil on error).
type async struct {
	err chan error
	h   *lockimpl.Hold
}

// lockAsync starts taking l (watchdog lease) in a new goroutine.
func lockAsync(l *lockimpl.Lock) *async {
	a := &async{err: make(chan error, 1)}
	go func() {
		h, err := l.Lock(bg, lockimpl.LockOptions{})
		a.h = h
		a.err <- err
	}()
	return a
}

// tryOnce makes one attempt at l with opts.Lease: the hold, or nil when
// others hold it.
func tryOnce(l *lockimpl.Lock, opts ...lockimpl.TryLockOptions) (*lockimpl.Hold, error) {
	var o lockimpl.TryLockOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	h, err := l.TryLock(bg, o)
	if errors.Is(err, lockimpl.ErrNotAcquired) {
		return nil, nil
	}
	return h, err
}

func (f *fixture) hash(key string) map[string]string {
	f.t.Helper()
	h, err := f.raw.HGetAll(bg, key).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return h
}

// wantHash fails unless key holds exactly want (nil: the key is absent).
func (f *fixture) wantHash(key string, want map[string]string) {
	f.t.Helper()
	got := f.hash(key)
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if !maps.Equal(got, want) {
		f.t.Fatalf("HGETALL %s = %v, want %v", key, got, want)
	}
}

func (f *fixture) pttl(key string) time.Duration {
	f.t.Helper()
	n, err := f.raw.Do(bg, "PTTL", key).Int64()
	if err != nil {
		f.t.Fatal(err)
	}
	return time.Duration(n) * time.Millisecond
}

// wantPTTL fails unless key's PTTL is in (lo, hi].
func (f *fixture) wantPTTL(key string, lo, hi time.Duration) {
	f.t.Helper()
	if d := f.pttl(key); d <= lo || d > hi {
		f.t.Fatalf("PTTL %s = %v, want in (%v, %v]", key, d, lo, hi)
	}
}

func (f *fixture) wantAbsent(keys ...string) {
	f.t.Helper()
	for _, k := range keys {
		if n, _ := f.raw.Exists(bg, k).Result(); n != 0 {
			f.t.Fatalf("key %s exists, want absent", k)
		}
	}
}

func (f *fixture) str(key string) string {
	f.t.Helper()
	v, err := f.raw.Get(bg, key).Result()
	if err != nil {
		f.t.Fatalf("GET %s: %v", key, err)
	}
	return v
}

func (f *fixture) list(key string) []string {
	f.t.Helper()
	v, err := f.raw.LRange(bg, key, 0, -1).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

func (f *fixture) zset(key string) map[string]float64 {
	f.t.Helper()
	v, err := f.raw.ZRangeWithScores(bg, key, 0, -1).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]float64{}
	for _, z := range v {
		out[z.Member.(string)] = z.Score
	}
	return out
}

// keys lists the keys matching pattern, sorted.
func (f *fixture) keys(pattern string) []string {
	f.t.Helper()
	ks, err := f.raw.Keys(bg, pattern).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	slices.Sort(ks)
	return ks
}

// recorder collects what is published on some channels, in order.
type recorder struct {
	t    *testing.T
	ps   *redis.PubSub
	mu   sync.Mutex
	msgs []string // "channel=payload"
	done chan struct{}
}

const sentinel = "lockimpl-test-sentinel"

// record subscribes (pattern subscriptions when psub) and returns once the
// subscriptions are confirmed.
func (f *fixture) record(psub bool, channels ...string) *recorder {
	f.t.Helper()
	chans := append([]string{sentinel}, channels...)
	var ps *redis.PubSub
	if psub {
		ps = f.raw.PSubscribe(bg, chans...)
	} else {
		ps = f.raw.Subscribe(bg, chans...)
	}
	for range chans {
		if _, err := ps.Receive(bg); err != nil {
			f.t.Fatal(err)
		}
	}
	r := &recorder{t: f.t, ps: ps, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			m, err := ps.ReceiveMessage(bg)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.msgs = append(r.msgs, m.Channel+"="+m.Payload)
			r.mu.Unlock()
		}
	}()
	f.t.Cleanup(func() {
		ps.Close()
		<-r.done
	})
	return r
}

// sync publishes a sentinel and waits for it: every message published
// before it has then been recorded (one connection delivers in order).
// It returns what was recorded, sentinels left out.
func (r *recorder) sync(f *fixture) []string {
	r.t.Helper()
	token := fmt.Sprint(time.Now().UnixNano())
	if err := f.raw.Publish(bg, sentinel, token).Err(); err != nil {
		r.t.Fatal(err)
	}
	var out []string
	testkit.Eventually(r.t, "the sentinel message", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		out = out[:0]
		seen := false
		for _, m := range r.msgs {
			if m == sentinel+"="+token {
				seen = true
			} else if len(m) < len(sentinel) || m[:len(sentinel)] != sentinel {
				out = append(out, m)
			}
		}
		return seen
	})
	return out
}

func zm(member string, score float64) redis.Z { return redis.Z{Score: score, Member: member} }

// recvOK fails t unless ch delivers a nil error within d.
func recvOK(t *testing.T, ch <-chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// waitSubscribed waits until Redis counts exactly one subscription to
// channel (sharded or not) and refs owners of c use it.
func (f *fixture) waitSubscribed(c *lockimpl.Client, channel string, sharded bool, refs int) {
	f.t.Helper()
	testkit.Eventually(f.t, fmt.Sprintf("%d owner(s) on one subscription to %s", refs, channel), func() bool {
		var n map[string]int64
		var err error
		if sharded {
			n, err = f.raw.PubSubShardNumSub(bg, channel).Result()
		} else {
			n, err = f.raw.PubSubNumSub(bg, channel).Result()
		}
		return err == nil && n[channel] == 1 && c.SubscriptionRefs(channel) == refs
	})
}

// clockAt returns a client clock fixed at ms since the epoch, moved by hand.
func clockAt(ms int64) *fixedClock {
	c := &fixedClock{}
	c.ms.Store(ms)
	return c
}
