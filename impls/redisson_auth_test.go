package impls_test

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/workloads"
)

// TestRedissonRefusedCredentials: credentials Redis refuses stop a
// Redisson run before any load, as one line naming the connect and
// Redis's reply (no Java stack, the implementation named once), that the
// CLIs take as bad input (exit 2), without the password.
func TestRedissonRefusedCredentials(t *testing.T) {
	needDriver(t, impls.RedissonName)
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	if err := rdb.ConfigSet(bg, "requirepass", "s3cretPW").Err(); err != nil {
		t.Fatal(err)
	}
	rdb.Close()
	const wrong = "n0t-the-PW"
	p := builtin(t, "mutex")
	p.Clients, p.Owners, p.Warmup = 1, 1, 0
	newRedis := func(pool int) redis.UniversalClient {
		return redis.NewClient(&redis.Options{Addr: env.Addr(), Password: wrong, PoolSize: pool})
	}
	_, err := workloads.Run(bg, workloads.Config{Profile: p, NewRedis: newRedis, Impl: lookup(t, impls.RedissonName)})
	t.Log(err)
	var u interface{ IsUsage() bool }
	switch msg := fmt.Sprint(err); {
	case !strings.HasPrefix(msg, "redisson: connect c0 to "+env.Addr()+": authentication failed (WRONGPASS"),
		strings.Contains(msg, "\n"), strings.Contains(msg, wrong):
		t.Errorf("want one line: redisson: connect c0 to %s: authentication failed (WRONGPASS ...), without the password; got:\n%s", env.Addr(), msg)
	case !errors.As(err, &u) || !u.IsUsage():
		t.Errorf("%v is not bad input (IsUsage)", err)
	}
}

// TestRedissonConfigRefusesTLS: the driver's clients connect without TLS,
// so a TLS URL (whose password would go in clear) is refused as bad input.
func TestRedissonConfigRefusesTLS(t *testing.T) {
	cfg, err := impls.RedissonConfig(&redis.Options{Addr: "127.0.0.1:6380", Username: "u", Password: "pw", DB: 2, TLSConfig: &tls.Config{}})
	var fe *workloads.FieldError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("TLS options: %+v, %v; want a FieldError about TLS", cfg, err)
	}
	cfg, err = impls.RedissonConfig(&redis.Options{Addr: "127.0.0.1:6379", Username: "u", Password: "pw", DB: 2})
	if err != nil || cfg.Username != "u" || cfg.Password != "pw" || cfg.DB != 2 {
		t.Errorf("plain options: %+v, %v; want the user, password and db", cfg, err)
	}
}
