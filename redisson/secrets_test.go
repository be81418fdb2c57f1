package redisson_test

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/redisson"
)

// needJar skips t without Java or the driver's jar, as start does.
func needJar(t *testing.T) {
	t.Helper()
	if _, err := redisson.FindJar(); errors.Is(err, redisson.ErrUnavailable) {
		t.Skip(err)
	}
}

// startCtx bounds a driver's start: a JVM's on a loaded machine, and
// Redisson's retries of a connect that fails (several seconds).
func startCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// lockedRedis is a Redis whose default user needs password, and a client
// that gives it.
func lockedRedis(t *testing.T, password string) (*redisenv.Env, *redis.Client) {
	t.Helper()
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	defer rdb.Close()
	if err := rdb.ConfigSet(context.Background(), "requirepass", password).Err(); err != nil {
		t.Fatal(err)
	}
	authed := redis.NewClient(&redis.Options{Addr: env.Addr(), Password: password})
	t.Cleanup(func() { authed.Close() })
	return env, authed
}

// aclRedis is a Redis with the user alice (password alicePW), whose
// default user is disabled, and a client of alice's on db.
func aclRedis(t *testing.T, db int) (*redisenv.Env, *redis.Client) {
	t.Helper()
	env := redisenvtest.Start(t)
	redisenvtest.ACLUser(t, env, "alice", "alicePW")
	alice := redis.NewClient(&redis.Options{Addr: env.Addr(), Username: "alice", Password: "alicePW", DB: db})
	t.Cleanup(func() { alice.Close() })
	return env, alice
}

// jvmSees fails t if the JVM's command line or environment, which any
// local user can read (ps, /proc), holds any of secrets. It names the
// argument or variable that does, never the rest: the environment is the
// host's, which may hold secrets of its own.
func jvmSees(t *testing.T, pid int, secrets ...string) {
	t.Helper()
	for _, f := range []string{"cmdline", "environ"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, entry := range strings.Split(string(b), "\x00") {
			for _, s := range secrets {
				if !strings.Contains(entry, s) {
					continue
				}
				what := fmt.Sprintf("argument %d", i)
				if f == "environ" {
					name, _, _ := strings.Cut(entry, "=")
					what = "variable " + name
				}
				t.Errorf("/proc/%d/%s: %s holds %q", pid, f, what, s)
			}
		}
	}
}

// lockShows takes name as owner in the driver and checks, with rdb, that
// Redis holds it (so the driver really authenticated), then unlocks.
func lockShows(t *testing.T, d *redisson.Driver, rdb *redis.Client, owner, name string) {
	t.Helper()
	ctx := startCtx(t)
	if r, err := d.Call(ctx, "lock", owner, "reentrant", name, -1, 0); err != nil || r.Value != "1" {
		t.Fatalf("lock %s as %s: %q, %v", name, owner, r.Value, err)
	}
	if n, err := rdb.Exists(ctx, name).Result(); err != nil || n != 1 {
		t.Errorf("Redis (db %d) has %s: %d, %v; want the lock", rdb.Options().DB, name, n, err)
	}
	if _, err := d.Call(ctx, "unlock", owner, "reentrant", name, 0, 0); err != nil {
		t.Fatal(err)
	}
}

// lockOnBoth starts a driver with cfg on env, checks that its command
// line and environment show none of secrets, and that its first client
// and one added by Connect lock on Redis (rdb sees the locks), which
// they can only when the credentials and database reached them.
func lockOnBoth(t *testing.T, env *redisenv.Env, cfg redisson.Config, rdb *redis.Client, secrets ...string) {
	t.Helper()
	cfg.Addr = env.Addr()
	d, err := redisson.Start(startCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	jvmSees(t, d.PID(), secrets...)
	lockShows(t, d, rdb, "o", "first")
	if err := d.Connect(startCtx(t), "c1", env.Addr()); err != nil {
		t.Fatal(err)
	}
	lockShows(t, d, rdb, "c1/o", "connected")
}

// TestDriverPasswordOffTheCommandLine: the password reaches the JVM over
// its standard input, never its command line or environment, and works
// whatever characters it has (tabs and newlines included).
func TestDriverPasswordOffTheCommandLine(t *testing.T) {
	needJar(t)
	const password = "s3cretPW\twith a tab\nand a newline, = % é"
	env, authed := lockedRedis(t, password)
	lockOnBoth(t, env, redisson.Config{Password: password}, authed, "s3cretPW", "newline")
}

// TestDriverEnvironmentHasNoSecret: the JVM is given only the variables
// a JVM reads, so neither $REDIS_URL's password nor any other secret of
// the harness's environment is in its /proc/PID/environ (which a JVM's
// crash log copies), and it still locks on Redis.
func TestDriverEnvironmentHasNoSecret(t *testing.T) {
	needJar(t)
	const password = "s3cretPW"
	env, authed := lockedRedis(t, password)
	t.Setenv("REDIS_URL", "redis://:"+password+"@"+env.Addr()+"/0")
	t.Setenv("REDISCLI_AUTH", password)
	t.Setenv("SOME_TOOL_TOKEN", "token-"+password)
	lockOnBoth(t, env, redisson.Config{Password: password}, authed, password)
}

// TestDriverACLUser: a user of Redis's ACLs reaches the driver with its
// password and database; the default user is disabled, so only alice's
// AUTH can work.
func TestDriverACLUser(t *testing.T) {
	needJar(t)
	env, alice := aclRedis(t, 3)
	lockOnBoth(t, env, redisson.Config{Username: "alice", Password: "alicePW", DB: 3}, alice, "alicePW")
}

// TestDriverRefusedCredentials: credentials Redis refuses, at the start
// or at a Connect, are one line saying so with Redis's reply (no Java
// stack), bad input (the CLIs exit 2), and never show the password.
func TestDriverRefusedCredentials(t *testing.T) {
	needJar(t)
	const wrong = "n0t-the-PW"
	env, _ := lockedRedis(t, "s3cretPW")
	check := func(what string, err error) {
		t.Helper()
		t.Logf("%s: %v", what, err)
		var u interface{ IsUsage() bool }
		switch msg := fmt.Sprint(err); {
		case err == nil:
			t.Fatalf("%s: connected with a wrong password", what)
		case strings.Contains(msg, "\n"), !strings.Contains(msg, "authentication failed (WRONGPASS"), strings.Contains(msg, wrong):
			t.Errorf("%s: want one line saying authentication failed (WRONGPASS ...), without the password; got:\n%s", what, msg)
		case !errors.As(err, &u) || !u.IsUsage():
			t.Errorf("%s: %v is not bad input (IsUsage)", what, err)
		}
	}
	d, err := redisson.Start(startCtx(t), redisson.Config{Servers: redisson.Servers{Addr: env.Addr()}, Password: wrong})
	if err == nil {
		d.Close()
	}
	check("start", err)
	d, err = redisson.Start(startCtx(t), redisson.Config{Password: wrong})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	check("connect", d.Connect(startCtx(t), "c1", env.Addr()))
}

// TestDriverRefusesNonUTF8Password: Redisson sends a password as a Java
// string, so one that is not UTF-8 could never authenticate: refused
// before the JVM starts, as bad input, without the password.
func TestDriverRefusesNonUTF8Password(t *testing.T) {
	needJar(t)
	d, err := redisson.Start(startCtx(t), redisson.Config{Servers: redisson.Servers{Addr: "127.0.0.1:1"}, Password: "pw\xff\xfe"})
	if err == nil {
		d.Close()
		t.Fatal("started with a password that is not UTF-8")
	}
	var u interface{ IsUsage() bool }
	if msg := err.Error(); !errors.As(err, &u) || !u.IsUsage() || !strings.Contains(msg, "password: not UTF-8") || strings.Contains(msg, "pw\xff") {
		t.Errorf("got %v; want bad input (IsUsage) saying the password is not UTF-8, without it", err)
	}
}

// TestDriverStderrRedacted: the JVM's standard error, which an error
// carries when the JVM exits before its greeting, is one line and never
// shows the password. The JVM prints $JAVA_TOOL_OPTIONS there; a jar
// whose main class is missing makes it exit, with a cause on a line of
// its own.
func TestDriverStderrRedacted(t *testing.T) {
	needJar(t)
	const password = "s3cretPW"
	t.Setenv("JAVA_TOOL_OPTIONS", "-Dlockbench.test="+password)
	jar := filepath.Join(t.TempDir(), "no-main.jar")
	f, err := os.Create(jar)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	w, err := z.Create("META-INF/MANIFEST.MF")
	if err == nil {
		_, err = io.WriteString(w, "Manifest-Version: 1.0\r\nMain-Class: nosuch.Main\r\n\r\n")
	}
	if err := errors.Join(err, z.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	d, err := redisson.Start(startCtx(t), redisson.Config{Jar: jar, Servers: redisson.Servers{Addr: "127.0.0.1:1"}, Password: password})
	if err == nil {
		d.Close()
		t.Fatal("a JVM without its main class started")
	}
	msg := err.Error()
	t.Log(msg)
	if !strings.Contains(msg, "JAVA_TOOL_OPTIONS") || !strings.Contains(msg, "ClassNotFoundException") || strings.Contains(msg, password) || strings.Contains(msg, "\n") {
		t.Errorf("want one line with the JVM's stderr, the password masked; got:\n%s", msg)
	}
}
