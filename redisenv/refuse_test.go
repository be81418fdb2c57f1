package redisenv_test

import (
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

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
// fail every acquisition with READONLY; it is refused before any load.
func TestExternalReplicaRefused(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal, Topology: redisenv.TopologyReplica})
	replica := env.Nodes()[1]
	err := startExternal(t, "redis://"+replica.Addr())
	requireConfigError(t, "replica", err, "a read-only replica (of "+env.Primary().Addr()+")", "point --redis at its primary")
	if err := startExternal(t, "redis://"+env.Primary().Addr()); err != nil {
		t.Errorf("the primary itself refused: %v", err)
	}
}

// TestExternalAuthAndTLS: a wrong password, a missing one, and TLS against
// a plain server each get their own line, promptly.
func TestExternalAuthAndTLS(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Backend: redisenv.BackendLocal})
	addr := env.Primary().Addr()
	rdb := env.NewClient()
	if err := rdb.ConfigSet(context.Background(), "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	rdb.Close()
	requireConfigError(t, "wrong password", startExternal(t, "redis://:wrong-pw@"+addr+"/0"), "authentication failed", "WRONGPASS", "check the user and password")
	requireConfigError(t, "no password", startExternal(t, "redis://"+addr+"/0"), "authentication required", "redis://:PASSWORD@")
	start := time.Now()
	requireConfigError(t, "TLS to plain", startExternal(t, "rediss://:s3cret@"+addr+"/0"), "TLS handshake failed", "use redis://")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("TLS against a plain server took %v to be refused; the dial timeout is %v", took, redisenv.DefaultDialTimeout)
	}
	if err := startExternal(t, "redis://:s3cret@"+addr+"/0"); err != nil {
		t.Errorf("the right password refused: %v", err)
	}
}

// TestErrorsNameTheirSource: a bad $REDIS_URL is named as the variable,
// not as a --redis-url the user never typed; flags echo what was typed.
func TestErrorsNameTheirSource(t *testing.T) {
	t.Setenv(redisenv.EnvURL, "foo://x:1")
	_, err := redisenv.Start(context.Background(), redisenv.Config{})
	requireConfigError(t, "bad $REDIS_URL", err, "$REDIS_URL")
	if strings.Contains(err.Error(), "--redis-url") {
		t.Errorf("error %q names --redis-url for a URL from the environment", err)
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
	} {
		var cfg redisenv.Config
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		cfg.RegisterFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want it to echo %s", tc.args, err, tc.want)
		}
	}
}
