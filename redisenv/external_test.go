package redisenv_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url      string
		addrs    []string
		user     string
		pass     string
		db       int
		tls      bool
		cluster  bool
		master   string
		sentUser string
		sentPass string
		dial     time.Duration
	}{
		{url: "redis://127.0.0.1:6379", addrs: []string{"127.0.0.1:6379"}},
		{url: "redis://localhost", addrs: []string{"localhost:6379"}},
		{url: "127.0.0.1:7000", addrs: []string{"127.0.0.1:7000"}},
		{url: "redis://app:s3cret@db.internal:6380/3", addrs: []string{"db.internal:6380"}, user: "app", pass: "s3cret", db: 3},
		{url: "redis://:s3cret@h:1/0?dial_timeout=2s", addrs: []string{"h:1"}, pass: "s3cret", dial: 2 * time.Second},
		{url: "rediss://u:p@secure:6380/1", addrs: []string{"secure:6380"}, user: "u", pass: "p", db: 1, tls: true},
		{url: "h1:7000,h2:7001,h3:7002", addrs: []string{"h1:7000", "h2:7001", "h3:7002"}, cluster: true},
		{url: "redis://u:p@h1:7000,h2:7001", addrs: []string{"h1:7000", "h2:7001"}, user: "u", pass: "p", cluster: true},
		{url: "rediss://h1:7000,h2:7001/0", addrs: []string{"h1:7000", "h2:7001"}, tls: true, cluster: true},
		{url: "redis-sentinel://s1:26379,s2?master_name=mymaster", addrs: []string{"s1:26379", "s2:26379"}, master: "mymaster"},
		{url: "redis-sentinel://su:sp@s1:26379/2?master_name=m&username=app&password=mp", addrs: []string{"s1:26379"},
			master: "m", sentUser: "su", sentPass: "sp", user: "app", pass: "mp", db: 2},
		{url: "rediss-sentinel://s1:26379?master_name=m", addrs: []string{"s1:26379"}, master: "m", tls: true},
	} {
		t.Run(tc.url, func(t *testing.T) {
			o, err := redisenv.ParseURL(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(o.Addrs, ",") != strings.Join(tc.addrs, ",") {
				t.Errorf("Addrs = %v, want %v", o.Addrs, tc.addrs)
			}
			if o.Username != tc.user || o.Password != tc.pass {
				t.Errorf("user/pass = %q/%q, want %q/%q", o.Username, o.Password, tc.user, tc.pass)
			}
			if o.DB != tc.db {
				t.Errorf("DB = %d, want %d", o.DB, tc.db)
			}
			if (o.TLSConfig != nil) != tc.tls {
				t.Errorf("TLS = %v, want %v", o.TLSConfig != nil, tc.tls)
			}
			if o.IsClusterMode != tc.cluster {
				t.Errorf("IsClusterMode = %v, want %v", o.IsClusterMode, tc.cluster)
			}
			if o.MasterName != tc.master || o.SentinelUsername != tc.sentUser || o.SentinelPassword != tc.sentPass {
				t.Errorf("sentinel = %q %q/%q, want %q %q/%q", o.MasterName, o.SentinelUsername, o.SentinelPassword, tc.master, tc.sentUser, tc.sentPass)
			}
			if o.DialTimeout != tc.dial {
				t.Errorf("DialTimeout = %v, want %v", o.DialTimeout, tc.dial)
			}
		})
	}
}

func TestParseURLErrors(t *testing.T) {
	const secret = "hunter2"
	for _, tc := range []struct {
		url   string
		field string // the error must name it
	}{
		{"", "redis-url"},
		{"http://u:" + secret + "@h:6379", "field scheme"},
		{"redis://u:" + secret + "@h:notaport/0", "field host"},
		{"redis://u:" + secret + "@h:99999", "field host"},
		{"redis://u:" + secret + "@:6379", "field host"},
		{"redis://u:" + secret + "@h:6379/zero", "field db"},
		{"redis://u:" + secret + "@h1:1,h2:2/3", "field db"},
		{"redis://u:" + secret + "@h:6379/0?no_such_option=1", "no_such_option"},
		{"redis://u:" + secret + "@h:6379/0?dial_timeout=soon", "dial_timeout"},
		{"redis-sentinel://u:" + secret + "@s1:26379", "field master_name"},
		{"redis-sentinel://s1:26379?master_name=m&password=" + secret + "&bogus=1", "bogus"},
		{"h1:7000,nonsense", "field host"},
		{"redis://u:" + secret + "@h:6379#frag", "field fragment"},
		// Passwords that defeat naive splitting must not leak either.
		{"u:" + secret + "@h:6379", "field scheme"},
		{"redis://u:hun/" + secret + "@h:6379/0", "field userinfo"},
		{"redis://u:" + secret + "?x@h:6379/0", "field userinfo"},
		{"redis://u:" + secret + "%zz@h:6379/0", "field userinfo"},
		{"redis://u:" + secret + "@h:bad/0", "field host"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			_, err := redisenv.ParseURL(tc.url)
			if err == nil {
				t.Fatal("no error")
			}
			var ce *redisenv.ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("error %T is not a *ConfigError", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %q", err, tc.field)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error leaks the password: %q", err)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"redis://u:pw@h:1/0":                          "redis://u:xxxxx@h:1/0",
		"redis://pw@h:1":                              "redis://xxxxx@h:1",
		"redis://h:1/0":                               "redis://h:1/0",
		"rediss://u:p@w@h:1?a=1&password=zz":          "rediss://u:xxxxx@h:1?a=1&password=xxxxx",
		"redis-sentinel://s:1?sentinel_password=q#x":  "redis-sentinel://s:1?sentinel_password=xxxxx#x",
		"h1:1,h2:2":                                   "h1:1,h2:2",
		"redis://u:pw@h:bad:port:1/0?PASSWORD=abc&b=": "redis://u:xxxxx@h:bad:port:1/0?PASSWORD=xxxxx&b=",
		"u:pw@h:1":                                    "u:xxxxx@h:1",
		"redis://u:p/w?#@h:1/0":                       "redis://u:xxxxx@h:1/0",
		"redis://u:p%zz@h:1":                          "redis://u:xxxxx@h:1",
	} {
		if got := redisenv.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExternalBackend(t *testing.T) {
	ctx := context.Background()
	local := redisenvtest.Start(t)
	url := "redis://" + local.Addr() + "/2"
	env, err := redisenv.Start(ctx, redisenv.Config{Backend: redisenv.BackendExternal, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if env.Backend() != redisenv.BackendExternal || env.Addr() != local.Addr() {
		t.Errorf("backend %s addr %s, want external %s", env.Backend(), env.Addr(), local.Addr())
	}
	rdb := env.NewClient()
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The URL's database number is honoured: the key is in db 2, not 0.
	db0 := local.NewClient()
	defer db0.Close()
	if n, _ := db0.Exists(ctx, "k").Result(); n != 0 {
		t.Error("key written through a /2 URL landed in db 0")
	}
	// lockbench does not own an external server's process.
	if err := env.Primary().Pause(ctx); !errors.Is(err, redisenv.ErrNotManaged) {
		t.Errorf("Pause on external: %v, want ErrNotManaged", err)
	}
	if err := env.Promote(ctx); err == nil {
		t.Error("Promote on a single external Redis succeeded")
	}
}

func TestAutoPicksExternalFromEnv(t *testing.T) {
	local := redisenvtest.Start(t)
	t.Setenv(redisenv.EnvURL, "redis://"+local.Addr())
	var lines []string
	env, err := redisenv.Start(context.Background(), redisenv.Config{Logf: func(f string, a ...any) { lines = append(lines, f) }})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if env.Backend() != redisenv.BackendExternal {
		t.Errorf("auto with %s set chose %s, want external", redisenv.EnvURL, env.Backend())
	}
	if len(lines) != 1 {
		t.Errorf("auto printed %d lines, want exactly one: %q", len(lines), lines)
	}
	if !strings.Contains(env.String(), "auto: a URL was given") {
		t.Errorf("description %q does not say why", env.String())
	}
}

// TestEnvURLDoesNotOverrideExplicitBackend: $REDIS_URL fills in for auto
// and external only; --redis local still means a local server.
func TestEnvURLDoesNotOverrideExplicitBackend(t *testing.T) {
	t.Setenv(redisenv.EnvURL, "redis://127.0.0.1:1/0")
	env := redisenvtest.Start(t)
	if env.Backend() != redisenv.BackendLocal || env.Primary().PID() == 0 {
		t.Errorf("with %s set, local start gave %s", redisenv.EnvURL, env)
	}
}

func TestAutoWithoutURL(t *testing.T) {
	t.Setenv(redisenv.EnvURL, "")
	var cfg redisenv.Config
	if e := redisenvtest.CurrentEngine(); e != nil && e.Why == "" {
		cfg.Image = e.Image // auto's container must find its image here
	}
	env, err := redisenv.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	want := redisenv.BackendContainer
	if redisenv.DockerAvailable(context.Background()) != nil {
		want = redisenv.BackendLocal
	}
	if env.Backend() != want {
		t.Errorf("auto chose %s, want %s", env.Backend(), want)
	}
	if !strings.Contains(env.String(), "auto: no URL") {
		t.Errorf("description %q does not say why", env.String())
	}
}

// TestAutoFallsBackWithoutImage: auto, finding an engine that cannot run
// its image (none pulled, no registry), starts a local server instead and
// says why.
func TestAutoFallsBackWithoutImage(t *testing.T) {
	redisenvtest.ContainerConfig(t) // skips without an engine
	t.Setenv(redisenv.EnvURL, "")
	env, err := redisenv.Start(context.Background(), redisenv.Config{Image: "localhost/lockbench-no-such-image:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if env.Backend() != redisenv.BackendLocal || !strings.Contains(env.String(), "could not start localhost/lockbench-no-such-image:0") {
		t.Errorf("auto without the image: %s", env)
	}
}

func TestExternalUnreachable(t *testing.T) {
	const secret = "hunter2"
	// A closed port: refused at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	// A port that accepts but never answers: only the timeout ends it.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()

	for _, addr := range []string{closed, silent.Addr().String()} {
		const dial = 300 * time.Millisecond
		start := time.Now()
		_, err := redisenv.Start(context.Background(), redisenv.Config{
			URL: "redis://app:" + secret + "@" + addr + "/0", DialTimeout: dial,
		})
		took := time.Since(start)
		if err == nil {
			t.Fatalf("%s: Start succeeded", addr)
		}
		if !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: error %q must name the address and not the password", addr, err)
		}
		// Bounded by the dial timeout; the slack absorbs a loaded machine,
		// not go-redis's default 3 s read timeout.
		if took > dial+2*time.Second {
			t.Errorf("%s: took %v with a %v dial timeout", addr, took, dial)
		}
	}
}

func TestBadConfig(t *testing.T) {
	t.Setenv(redisenv.EnvURL, "")
	for _, tc := range []struct {
		cfg   redisenv.Config
		field string
	}{
		{redisenv.Config{Backend: "docker"}, "--redis"},
		{redisenv.Config{Topology: "ring"}, "--topology"},
		{redisenv.Config{AppendFsync: "sometimes"}, "--appendfsync"},
		{redisenv.Config{Backend: redisenv.BackendExternal}, "--redis-url"},
		{redisenv.Config{Backend: redisenv.BackendLocal, URL: "redis://u:pw@h:1"}, "--redis-url"},
		{redisenv.Config{URL: "redis://h:1", Topology: redisenv.TopologyReplica}, "--topology"},
	} {
		_, err := redisenv.Start(context.Background(), tc.cfg)
		var ce *redisenv.ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%+v: err = %v, want a *ConfigError", tc.cfg, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+v: error %q does not name %s", tc.cfg, err, tc.field)
		}
		if strings.Contains(err.Error(), ":pw@") {
			t.Errorf("error leaks the password: %q", err)
		}
	}
}

// TestContainerBackendWithoutEngine: where no engine listens, the
// container backend fails fast with a one-line reason.
func TestContainerBackendWithoutEngine(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "none.sock"))
	start := time.Now()
	_, err := redisenv.Start(context.Background(), redisenv.Config{Backend: redisenv.BackendContainer})
	took := time.Since(start)
	if !errors.Is(err, redisenv.ErrNoDocker) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("container Start without an engine: %v, want a one-line ErrNoDocker", err)
	}
	if took >= 2*time.Second {
		t.Errorf("container Start without an engine took %v, want < 2s", took)
	}
}

// TestContainerBackend: a primary and a replica in containers, reached at
// the address the engine binds their ports on; promote, pause, kill and
// restart as the local backend's.
func TestContainerBackend(t *testing.T) {
	ctx := context.Background()
	cfg := redisenvtest.ContainerConfig(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	env, err := redisenv.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if !strings.HasPrefix(env.Addr(), "127.0.0.1:") {
		t.Errorf("a local engine's container at %s, want it reached on 127.0.0.1", env.Addr())
	}
	rdb := env.NewClient()
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET on the primary: %v", err)
	}
	if err := env.Promote(ctx); err != nil {
		t.Fatalf("Promote: %v", err)
	}
	p := env.Primary()
	addr := p.Addr()
	if err := ping(t, addr, 5*time.Second); err != nil {
		t.Fatalf("PING: %v", err)
	}
	if err := p.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ping(t, addr, 300*time.Millisecond); err == nil {
		t.Error("PING answered while paused")
	}
	if err := p.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if p.Addr() != addr {
		t.Errorf("address after Restart %s, want %s", p.Addr(), addr)
	}
	if err := ping(t, addr, 5*time.Second); err != nil {
		t.Fatalf("PING after Restart: %v", err)
	}
}

// TestCancelledEngineProbeBlamesNothing: a probe of the engine, or a
// look for one, that its caller cancels says so: it found out nothing to
// blame the engine for (no ErrNoDocker, and not the bad input a
// DOCKER_HOST that serves nothing is).
func TestCancelledEngineProbeBlamesNothing(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "docker.sock"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := redisenv.DockerAvailable(ctx); !errors.Is(err, context.Canceled) || errors.Is(err, redisenv.ErrNoDocker) {
		t.Errorf("DockerAvailable, cancelled: %v; want context.Canceled, not ErrNoDocker", err)
	}
	var ce *redisenv.ConfigError
	if _, err := redisenv.OpenEngine(ctx); !errors.Is(err, context.Canceled) || errors.Is(err, redisenv.ErrNoDocker) || errors.As(err, &ce) {
		t.Errorf("OpenEngine, cancelled: %v; want context.Canceled, neither ErrNoDocker nor bad input", err)
	}
}

// TestDockerProbeBounded: a Docker socket that accepts connections but
// never answers must not stall the probe (and so auto) past its bound.
// testcontainers caches the Docker host per process, so the probe runs in
// a fresh process (this test binary, re-executed).
func TestDockerProbeBounded(t *testing.T) {
	if os.Getenv(probeHelperEnv) != "" {
		start := time.Now()
		err := redisenv.DockerAvailable(context.Background())
		fmt.Printf("noDocker=%v took=%d\n", errors.Is(err, redisenv.ErrNoDocker), time.Since(start).Milliseconds())
		os.Exit(0) // the abandoned probe is still blocked on the socket, by design
	}
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	defer func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	}()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDockerProbeBounded$")
	cmd.Env = append(os.Environ(), probeHelperEnv+"=1", "DOCKER_HOST=unix://"+sock)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe process: %v\n%s", err, out)
	}
	var noDocker bool
	var took int
	for _, line := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(line, "noDocker=%t took=%d", &noDocker, &took); err == nil {
			break
		}
	}
	if !noDocker {
		t.Fatalf("DockerAvailable with a silent socket did not report ErrNoDocker:\n%s", out)
	}
	if took >= 2000 {
		t.Errorf("probe took %d ms, want < 2000", took)
	}
	t.Logf("probe against a silent Docker socket gave up after %d ms", took)
}

const probeHelperEnv = "LOCKBENCH_DOCKER_PROBE_HELPER"

// TestExternalNotRedisOrNoSuchDB: a server that answers in another
// protocol (HTTP, an SSH banner) and a database the server lacks are bad
// input, said at once, not "unreachable" after the dial timeout.
func TestExternalNotRedisOrNoSuchDB(t *testing.T) {
	answer := func(reply string) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					_, _ = c.Write([]byte(reply))
					_, _ = io.Copy(io.Discard, c)
				}()
			}
		}()
		return l.Addr().String()
	}
	srv := redisenvtest.Start(t)
	for _, tc := range []struct{ url, want string }{
		{"redis://:pw@" + answer("HTTP/1.0 400 Bad Request\r\n\r\n"), "not a Redis server"},
		{"redis://" + answer("<!DOCTYPE HTML>\n<html>\r\n"), "not a Redis server"},
		{"redis://" + answer("SSH-2.0-OpenSSH_9.6\r\n"), "not a Redis server"},
		{"redis://" + srv.Addr() + "/16", "DB index out of range: the server has no database 16"},
	} {
		start := time.Now()
		env, err := redisenv.Start(context.Background(), redisenv.Config{URL: tc.url, DialTimeout: 5 * time.Second})
		if err == nil {
			env.Close()
			t.Errorf("%s: Start succeeded", redisenv.Redact(tc.url))
			continue
		}
		var ce *redisenv.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), ":pw@") {
			t.Errorf("%s: %v, want a *ConfigError saying %q without the password", redisenv.Redact(tc.url), err, tc.want)
		}
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("%s: took %v, as if waiting out the dial timeout", redisenv.Redact(tc.url), took)
		}
	}
}
