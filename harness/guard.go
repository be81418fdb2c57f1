package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/redisenv"
)

// GuardStore is the guarded resource of a run: a counter in a Redis that
// is not the lock's.
type GuardStore struct {
	Store *guard.Store
	// Where names the store's Redis for the result.
	Where string
	env   *redisenv.Env
	rdb   redis.UniversalClient
}

// StartGuard starts the store of a run whose profile has guard mode m: a
// server of its own on a free loopback port (server names it as
// redisenv.Config.Server does: a run on Valkey keeps its counter on
// Valkey too, so a host with one server installed runs), or the Redis at
// url (never the lock's: $REDIS_URL is not consulted). key names the counters:
// empty is a fresh key, cleared; machines of one run give the same key
// (and url), so that one store counts every machine's updates. Close
// stops what it started.
func StartGuard(ctx context.Context, m guard.Mode, url, key, server string) (*GuardStore, error) {
	cfg := redisenv.Config{Backend: redisenv.BackendLocal, Topology: redisenv.TopologySingle, Server: server}
	if url != "" {
		cfg = redisenv.Config{Backend: redisenv.BackendExternal, URL: url}
	}
	// The store outlives an interrupt: the run reads its tallies after.
	env, err := redisenv.StartFor(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("guarded store: %w", guardURLError(err))
	}
	fresh := key == ""
	if fresh {
		key = fmt.Sprintf("lockbench:guard:%d", time.Now().UnixNano())
	}
	// No retries: a re-sent write script would apply one update twice.
	o := env.ClientOptions(16)
	o.MaxRetries = -1
	rdb := redisenv.NewUniversalClient(o)
	s := guard.New(rdb, key, m)
	if !fresh {
		return &GuardStore{Store: s, Where: "redis://" + env.Addr(), env: env, rdb: rdb}, nil
	}
	if err := s.Reset(ctx); err != nil {
		_ = rdb.Close()
		_ = env.Close()
		return nil, fmt.Errorf("guarded store: %w", err)
	}
	return &GuardStore{Store: s, Where: "redis://" + env.Addr(), env: env, rdb: rdb}, nil
}

// CheckGuardURL checks a store URL's form (scheme, address, options)
// without connecting, so that a mistyped --guard-url is refused, naming
// that flag, before anything starts. Empty is the default store.
func CheckGuardURL(url string) error {
	if url == "" {
		return nil
	}
	if err := (redisenv.Config{Backend: redisenv.BackendExternal, URL: url}).Validate(); err != nil {
		return guardURLError(err)
	}
	return nil
}

// guardURLError makes err, which redisenv words for the lock's Redis
// (--redis-url, --redis), name the flag the user gave the store's URL
// with: --guard-url. Bad input stays bad input (a *redisenv.ConfigError,
// exit 2), and what err wraps stays reachable.
func guardURLError(err error) error {
	rename := strings.NewReplacer("--redis-url", "--guard-url", "point --redis at", "point --guard-url at").Replace
	var ce *redisenv.ConfigError
	if errors.As(err, &ce) {
		c := *ce
		if c.Field == "redis-url" || c.Field == "$"+redisenv.EnvURL {
			c.Field = "guard-url"
		}
		c.Fix = rename(c.Fix)
		return &c
	}
	return &renamedError{msg: rename(err.Error()), err: err}
}

// renamedError is err with its message reworded.
type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

// Close stops the store's Redis when StartGuard started it.
func (g *GuardStore) Close() error {
	if g == nil {
		return nil
	}
	_ = g.rdb.Close()
	return g.env.Close()
}

func (g *GuardStore) store() *guard.Store {
	if g == nil {
		return nil
	}
	return g.Store
}

func (g *GuardStore) where() string {
	if g == nil {
		return ""
	}
	return g.Where + " " + g.Store.Key()
}
