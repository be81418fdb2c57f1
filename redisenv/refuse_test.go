package redisenv_test

import (
	"context"
	"errors"
	"flag"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// startExternal connects to url as the external backend and returns the
// error, closing any Env it got.
func startExternal(t *testing.T, url string) error {
	t.Helper()
	env, err := redisenv.Start(context.Background(), redisenv.Config{Backend: redisenv.BackendExternal, URL: url})
	if err == nil {
		env.Close()
	}
	return err
}

// requireConfigError fails t unless err is bad input (exit 2) that says
// want and never shows the password.
func requireConfigError(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	var ce *redisenv.ConfigError
	if !errors.As(err, &ce) || !ce.IsUsage() {
		t.Fatalf("%s: err = %v (%T), want a *ConfigError", what, err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not say %q", what, err, w)
		}
	}
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "wrong-pw") {
		t.Errorf("%s: error leaks the password: %q", what, err)
	}
}

// TestExternalReplicaRefused: a read-only replica as the target would
// fail every acquisition with READONLY; it is refused before any load,
// with one line naming its primary.
func TestExternalReplicaRefused(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal, Topology: redisenv.TopologyReplica})
	replica := env.Nodes()[1]
	err := startExternal(t, "redis://"+replica.Addr())
	requireConfigError(t, "replica", err)
	want := `redisenv: --redis-url "redis://` + replica.Addr() + `": a read-only replica (of ` + env.Primary().Addr() + `); point --redis at its primary`
	if err.Error() != want {
		t.Errorf("replica refused with\n\t%s\nwant\n\t%s", err, want)
	}
	// A bare host:port names one server too.
	requireConfigError(t, "replica as host:port", startExternal(t, replica.Addr()), "a read-only replica")
	if err := startExternal(t, "redis://"+env.Primary().Addr()); err != nil {
		t.Errorf("the primary itself refused: %v", err)
	}
	// A writable replica is refused too, and not called read-only.
	rdb := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	defer rdb.Close()
	if err := rdb.ConfigSet(context.Background(), "replica-read-only", "no").Err(); err != nil {
		t.Fatal(err)
	}
	requireConfigError(t, "writable replica", startExternal(t, "redis://"+replica.Addr()),
		"a writable replica (of "+env.Primary().Addr()+"): its writes never reach its primary", "point --redis at its primary")
}

// passwordServer starts a local Redis that requires the password s3cret.
func passwordServer(t *testing.T) *redisenv.Env {
	t.Helper()
	return redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal, ServerArgs: []string{"requirepass s3cret"}})
}

// TestExternalAuthAndTLS: a wrong password, a missing one, and TLS against
// a plain server each get their own line, promptly.
func TestExternalAuthAndTLS(t *testing.T) {
	addr := passwordServer(t).Addr()
	err := startExternal(t, "redis://:wrong-pw@"+addr+"/0")
	requireConfigError(t, "wrong password", err, `--redis-url "redis://:xxxxx@`+addr+`/0": authentication failed (WRONGPASS`, "check the user and password in --redis-url")
	err = startExternal(t, "redis://"+addr+"/0")
	requireConfigError(t, "no password", err, "authentication required (NOAUTH", "put the password in the URL, e.g. redis://:PASSWORD@"+addr+"/0")
	start := time.Now()
	err = startExternal(t, "rediss://:s3cret@"+addr+"/0")
	requireConfigError(t, "TLS to plain", err, "TLS handshake failed", "use redis:// instead of rediss:// if the server does not speak TLS")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("TLS against a plain server took %v to be refused; the dial timeout is %v", took, redisenv.DefaultDialTimeout)
	}
	if err := startExternal(t, "redis://:s3cret@"+addr+"/0"); err != nil {
		t.Errorf("the right password refused: %v", err)
	}
}

// TestErrorsNameTheirSource: an error about a URL read from $REDIS_URL
// names the variable, not a --redis-url the user never typed, whatever
// went wrong with it; flags echo what was typed.
func TestErrorsNameTheirSource(t *testing.T) {
	replicated := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal, Topology: redisenv.TopologyReplica})
	locked := passwordServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	// A listener nobody serves: connections are taken, and never answered.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	for _, tc := range []struct {
		what, url string
		usage     bool // bad input (exit 2), else a failure (exit 1)
		want      string
	}{
		{"parse", "foo://x:1", true, `redisenv: $REDIS_URL "foo://x:1": field scheme`},
		// Refused at once: said so, not "unreachable within" the timeout.
		{"refused", "redis://" + closed + "/0", false, `redisenv: $REDIS_URL "redis://` + closed + `/0": connection refused: nothing listens at ` + closed + "; start the server"},
		{"silent", "redis://" + silent.Addr().String() + "/0?dial_timeout=200ms", false, `: no answer within 200ms`},
		{"replica", "redis://" + replicated.Nodes()[1].Addr(), true, "a read-only replica (of " + replicated.Primary().Addr() + "); point $REDIS_URL at its primary"},
		{"wrong password", "redis://:wrong-pw@" + locked.Addr(), true, "authentication failed (WRONGPASS"},
		{"no password", "redis://" + locked.Addr(), true, "authentication required"},
		{"TLS to plain", "rediss://" + locked.Addr(), true, "TLS handshake failed"},
	} {
		t.Setenv(redisenv.EnvURL, tc.url)
		_, err := redisenv.Start(context.Background(), redisenv.Config{DialTimeout: 2 * time.Second})
		if err == nil {
			t.Errorf("%s: Start succeeded", tc.what)
			continue
		}
		var ce *redisenv.ConfigError
		if errors.As(err, &ce) != tc.usage {
			t.Errorf("%s: %v is a ConfigError: %v, want %v", tc.what, err, !tc.usage, tc.usage)
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `$REDIS_URL "`) {
			t.Errorf("%s: error\n\t%s\ndoes not say\n\t%s", tc.what, err, tc.want)
		}
		if strings.Contains(err.Error(), "--redis-url") || strings.Contains(err.Error(), "wrong-pw") {
			t.Errorf("%s: error %q names --redis-url for a URL from the environment, or shows its password", tc.what, err)
		}
	}
	// Validate refuses a URL that cannot be parsed before anything starts.
	t.Setenv(redisenv.EnvURL, "foo://x:1")
	if err := (redisenv.Config{}).Validate(); err == nil || !strings.HasPrefix(err.Error(), `redisenv: $REDIS_URL "foo://x:1": `) {
		t.Errorf("Validate with a bad $REDIS_URL: %v", err)
	}
	if err := (redisenv.Config{URL: "foo://x:1"}).Validate(); err == nil || !strings.HasPrefix(err.Error(), `redisenv: --redis-url "foo://x:1": `) {
		t.Errorf("Validate with a bad --redis-url: %v", err)
	}
	t.Setenv(redisenv.EnvURL, "")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--topology", "cluster", "--replicas", "-1"}, `--replicas "-1"`},
		{[]string{"--topology", "cluster", "--replicas", "-7"}, `--replicas "-7"`},
		{[]string{"--topology", "cluster", "--shards", "-3"}, `--shards "-3"`},
		{[]string{"--topology", "cluster", "--shards", "0"}, `--shards "0"`},
		{[]string{"--replicas", "-1"}, `--replicas "-1"`},
		{[]string{"--shards", "-3"}, `--shards "-3"`},
	} {
		var cfg redisenv.Config
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		cfg.RegisterFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := cfg.Validate()
		var ce *redisenv.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a ConfigError that echoes %s", tc.args, err, tc.want)
		}
	}
	// --replicas 0 still means none.
	var cfg redisenv.Config
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse([]string{"--topology", "cluster", "--replicas", "0"}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil || cfg.Replicas != redisenv.NoReplicas {
		t.Errorf("--replicas 0: %v, Replicas %d; want valid and NoReplicas", err, cfg.Replicas)
	}
}
