package redisenvtest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"go.uber.org/goleak"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
)

// The container tests run for real wherever an engine can be had: an
// engine that already answers (Docker on a CI runner, DOCKER_HOST), or,
// as root with Podman installed, a Podman API service of this test
// binary's own. The image is the configured one where it can be pulled,
// else one made here from the installed redis-server. Everything made
// for the tests (the service, its socket and configuration, the image
// tag, leftover containers and networks) goes at teardown.

// EnvImage names the image the container tests use (default
// redisenv.DefaultImage, made locally when it cannot be pulled).
const EnvImage = "LOCKBENCH_TEST_IMAGE"

// EnvNoEngine, when set, makes the container tests skip without looking
// for an engine.
const EnvNoEngine = "LOCKBENCH_NO_ENGINE"

// EnvEngineLog names a file each test binary appends one line to at its
// end: the engine and image its container tests used and how many ran, or
// why they skipped. `make test` prints it, since go test shows nothing of
// a passing package.
const EnvEngineLog = "LOCKBENCH_ENGINE_LOG"

// Engine is the container engine the tests of this binary use.
type Engine struct {
	Host  string // DOCKER_HOST of the engine
	Name  string // e.g. "Docker 28.2.2" or "Podman 4.3.1"
	Image string // the Redis image the tests start
	// Why is set when no engine could be had: the container tests skip
	// with it.
	Why string

	dir     string        // our Podman service's files, removed at teardown
	service *exec.Cmd     // our Podman service, stopped at teardown
	exited  chan struct{} // closed once the service is reaped
	built   string        // the image tag made here, removed at teardown
	used    int           // container tests that ran on it
	skipped int           // container tests that skipped for want of it
}

var (
	engineMu sync.Mutex
	engine   *Engine
	prepared bool // SetupEngine was called: ContainerConfig may make the engine
)

// SetupEngine lets this test binary's container tests have an engine
// (call it from TestMain, before m.Run) and returns the teardown to run
// after. The engine is prepared when the first container test asks for it
// (ContainerConfig), so a binary, or a re-executed helper process, that
// runs none starts nothing. It never fails: where no engine can be had,
// ContainerConfig skips with the reason.
func SetupEngine() (teardown func()) {
	engineMu.Lock()
	prepared = true
	engineMu.Unlock()
	return func() {
		engineMu.Lock()
		defer engineMu.Unlock()
		if engine != nil {
			engine.report()
			engine.teardown()
		}
	}
}

// prepare makes the engine on first use; the caller holds engineMu.
func prepare() *Engine {
	if engine != nil || !prepared {
		return engine
	}
	e := &Engine{}
	engine = e
	if err := e.setup(); err != nil {
		e.Why = err.Error()
		e.teardown()
	}
	return e
}

// report appends the binary's line to $LOCKBENCH_ENGINE_LOG.
func (e *Engine) report() {
	path := os.Getenv(EnvEngineLog)
	if path == "" || e.used+e.skipped == 0 {
		return
	}
	line := fmt.Sprintf("container tests of %s: %d ran on %s at %s with image %s", filepath.Base(os.Args[0]), e.used, e.Name, e.Host, e.Image)
	if e.Why != "" {
		line = fmt.Sprintf("container tests of %s: %d skipped: %s", filepath.Base(os.Args[0]), e.skipped, e.Why)
	}
	if e.service != nil {
		line += " (a Podman API service of its own, stopped at the end)"
	}
	if e.built != "" {
		line += " (image made from the installed redis-server, removed at the end)"
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintln(f, line)
	f.Close()
}

// ContainerConfig is cfg for the container backend on the prepared
// engine, with its image, or skips t naming why there is none.
func ContainerConfig(t testing.TB, cfg ...redisenv.Config) redisenv.Config {
	t.Helper()
	Long(t, "a Redis container")
	engineMu.Lock()
	e := prepare()
	if e != nil && e.Why != "" {
		e.skipped++
	} else if e != nil {
		e.used++
	}
	engineMu.Unlock()
	switch {
	case e == nil:
		t.Skip("container backend: no engine prepared (TestMain does not call redisenvtest.SetupEngine)")
	case e.Why != "":
		t.Skip("container backend: " + e.Why)
	}
	var c redisenv.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	c.Backend, c.Image = redisenv.BackendContainer, e.Image
	t.Logf("container backend: %s at %s, image %s", e.Name, e.Host, e.Image)
	return c
}

// CurrentEngine is the engine, prepared if need be; nil without
// SetupEngine.
func CurrentEngine() *Engine {
	engineMu.Lock()
	defer engineMu.Unlock()
	return prepare()
}

func (e *Engine) setup() error {
	if os.Getenv(EnvNoEngine) != "" {
		return fmt.Errorf("%s is set", EnvNoEngine)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := redisenv.DockerAvailable(ctx); err != nil {
		if os.Getenv("DOCKER_HOST") != "" {
			return fmt.Errorf("DOCKER_HOST is set but %v", err)
		}
		if err := e.startPodman(ctx); err != nil {
			return err
		}
	}
	e.Host = os.Getenv("DOCKER_HOST")
	if e.Host == "" {
		e.Host = "unix:///var/run/docker.sock"
	}
	api, err := client.New(client.WithHost(e.Host))
	if err != nil {
		return fmt.Errorf("engine client: %w", err)
	}
	defer api.Close()
	e.Name = engineName(ctx, api)
	sweepLeftovers(ctx, api, false)
	sweepTestImages(ctx, api)
	return e.image(ctx, api)
}

// startPodman starts `podman system service` on a socket of its own and
// points DOCKER_HOST at it. Podman's defaults need two settings here: the
// runc runtime (crun fails on hybrid cgroups) and container rlimits a
// sandbox lets a process set.
func (e *Engine) startPodman(ctx context.Context) error {
	podman, err := exec.LookPath("podman")
	if err != nil {
		return errors.New("no Docker engine answers and podman is not installed (make setup installs it as root)")
	}
	if os.Geteuid() != 0 {
		return errors.New("no Docker engine answers, and a Podman API service needs root here")
	}
	sweepEngineDirs()
	if e.dir, err = os.MkdirTemp("", "lockbench-engine-"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(e.dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	conf := "[containers]\ndefault_ulimits = [\"nofile=4096:4096\", \"nproc=4096:4096\"]\n"
	if _, err := exec.LookPath("runc"); err == nil {
		conf += "[engine]\nruntime = \"runc\"\n"
	}
	confPath := filepath.Join(e.dir, "containers.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return err
	}
	sock := filepath.Join(e.dir, "podman.sock")
	log, err := os.Create(filepath.Join(e.dir, "service.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(podman, "system", "service", "--time=0", "unix://"+sock)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+confPath)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = serviceAttr()
	// The parent-death signal is tied to the thread that forks the child
	// (golang/go#27505): fork from a goroutine that keeps its thread for
	// the service's life, and reap it there.
	started := make(chan error, 1)
	e.exited = make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(e.exited)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start podman system service: %w", err)
	}
	e.service = cmd
	host := "unix://" + sock
	for {
		if err := ping(sock); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			b, _ := os.ReadFile(filepath.Join(e.dir, "service.log"))
			return fmt.Errorf("podman system service did not answer: %s", strings.TrimSpace(string(b)))
		case <-time.After(50 * time.Millisecond):
		}
	}
	os.Setenv("DOCKER_HOST", host)
	os.Setenv("CONTAINERS_CONF", confPath)
	if err := redisenv.DockerAvailable(ctx); err != nil {
		return fmt.Errorf("podman service at %s: %v", host, err)
	}
	return nil
}

// sweepEngineDirs removes the service dirs of test binaries that died
// before their teardown (their service died with them).
func sweepEngineDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "lockbench-engine-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(d)
		}
	}
}

func ping(sock string) error {
	c := http.Client{Timeout: time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	resp, err := c.Get("http://engine/_ping")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// engineName is the engine's product and version as its API reports them.
func engineName(ctx context.Context, api client.APIClient) string {
	v, err := api.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return "unknown engine"
	}
	name := "Docker"
	for _, c := range v.Components {
		if strings.Contains(strings.ToLower(c.Name), "podman") {
			name = "Podman"
		}
	}
	return name + " " + v.Version
}

// sweepLeftovers removes the containers and networks that a lockbench
// (or a test of it) started and could not remove because it was killed;
// with mine, also those this process started (a failed test's).
func sweepLeftovers(ctx context.Context, api client.APIClient, mine bool) {
	left := func(label string) bool {
		pid, _, _ := strings.Cut(label, " ")
		return redisenv.OwnerGone(label) || mine && pid == strconv.Itoa(os.Getpid())
	}
	f := client.Filters{}.Add("label", redisenv.OwnerLabel)
	cs, err := api.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err == nil {
		for _, c := range cs.Items {
			if left(c.Labels[redisenv.OwnerLabel]) {
				_, _ = api.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
			}
		}
	}
	ns, err := api.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err == nil {
		for _, n := range ns.Items {
			if left(n.Labels[redisenv.OwnerLabel]) {
				_, _ = api.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
			}
		}
	}
}

// testImageRepo is the repository of the images made here; the tag is
// the making process's pid.
const testImageRepo = "localhost/lockbench-redis-test"

// sweepTestImages removes images made by test binaries that died before
// their teardown (a helper process killed on purpose, say).
func sweepTestImages(ctx context.Context, api client.APIClient) {
	imgs, err := api.ImageList(ctx, client.ImageListOptions{})
	if err != nil {
		return
	}
	for _, img := range imgs.Items {
		for _, tag := range img.RepoTags {
			pid, ok := strings.CutPrefix(tag, testImageRepo+":")
			if n, err := strconv.Atoi(pid); ok && err == nil && syscall.Kill(n, 0) == syscall.ESRCH {
				_, _ = api.ImageRemove(ctx, tag, client.ImageRemoveOptions{Force: true})
			}
		}
	}
}

// image makes sure the tests' image is there: present, pulled, or made
// from the installed redis-server.
func (e *Engine) image(ctx context.Context, api client.APIClient) error {
	want := os.Getenv(EnvImage)
	if want == "" {
		want = redisenv.DefaultImage
	}
	if _, err := api.ImageInspect(ctx, want); err == nil {
		e.Image = want
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	pull, err := api.ImagePull(pctx, want, client.ImagePullOptions{})
	if err == nil {
		err = pull.Wait(pctx)
		pull.Close()
	}
	cancel()
	if err == nil {
		e.Image = want
		return nil
	}
	// No registry: make one from the redis-server here, as `podman
	// import` of its binary and the libraries ldd lists.
	tag, berr := buildLocalImage(ctx, api)
	if berr != nil {
		return fmt.Errorf("image %s cannot be pulled (%s), and none could be made from redis-server: %v", want, oneLine(err), berr)
	}
	e.Image, e.built = tag, tag
	return nil
}

var lddPath = regexp.MustCompile(`(/[^\s]+)`)

// buildLocalImage imports a root filesystem of the installed
// redis-server, its libraries and an empty /data, tagged with this
// process's id so that parallel test binaries never share (or remove)
// each other's tag.
func buildLocalImage(ctx context.Context, api client.APIClient) (string, error) {
	bin, err := exec.LookPath(redisenv.DefaultServerPath)
	if err != nil {
		return "", fmt.Errorf("redis-server not found: %w", err)
	}
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		return "", fmt.Errorf("ldd %s: %w", bin, err)
	}
	files := append([]string{bin}, lddPath.FindAllString(string(out), -1)...)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	addDir := func(d string) error {
		for _, part := range parents(d) {
			if dirs[part] {
				continue
			}
			dirs[part] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: part + "/", Mode: 0o755}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range []string{"data", "tmp"} {
		if err := addDir(d); err != nil {
			return "", err
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f) // follows symlinks: the image holds the real files
		if err != nil {
			return "", err
		}
		name := strings.TrimPrefix(f, "/")
		if err := addDir(filepath.Dir(name)); err != nil {
			return "", err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(b))}); err != nil {
			return "", err
		}
		if _, err := tw.Write(b); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	tag := fmt.Sprintf("%s:%d", testImageRepo, os.Getpid())
	res, err := api.ImageImport(ctx, client.ImageImportSource{Source: &buf, SourceName: "-"}, tag,
		client.ImageImportOptions{Changes: []string{`ENTRYPOINT ["/usr/bin/redis-server"]`, "WORKDIR /data", "EXPOSE 6379"}})
	if err != nil {
		return "", fmt.Errorf("import: %w", err)
	}
	_, _ = io.Copy(io.Discard, res)
	res.Close()
	return tag, nil
}

// parents lists d and its parent directories, outermost first ("a/b" →
// "a", "a/b").
func parents(d string) []string {
	if d == "." || d == "" || d == "/" {
		return nil
	}
	return append(parents(filepath.Dir(d)), d)
}

func (e *Engine) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if e.Host != "" {
		if api, err := client.New(client.WithHost(e.Host)); err == nil {
			sweepLeftovers(ctx, api, true)
			if e.built != "" {
				_, _ = api.ImageRemove(ctx, e.built, client.ImageRemoveOptions{Force: true})
			}
			api.Close()
		}
	}
	if e.service != nil && e.service.Process != nil {
		_ = syscall.Kill(-e.service.Process.Pid, syscall.SIGTERM)
		select {
		case <-e.exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-e.service.Process.Pid, syscall.SIGKILL)
			<-e.exited
		}
		e.service = nil
	}
	if e.dir != "" {
		_ = os.RemoveAll(e.dir)
		e.dir = ""
	}
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// Main runs a test binary's tests with the container engine prepared
// (SetupEngine) and torn down after, then checks that no goroutine was
// leaked (goleak, with opts), and exits. Call it from TestMain.
func Main(m *testing.M, opts ...goleak.Option) {
	// testcontainers' reaper (Ryuk) keeps goroutines past a test by
	// design; the tests terminate their containers themselves and the
	// engine's teardown sweeps what a failed one left.
	if _, set := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !set {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	teardown := SetupEngine()
	code := m.Run()
	teardown()
	os.Exit(testkit.CheckLeaks(code, opts...))
}
