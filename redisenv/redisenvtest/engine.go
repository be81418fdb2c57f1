package redisenvtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"go.uber.org/goleak"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
)

// The container tests run for real wherever an engine can be had, found
// as a CLI run finds it (redisenv.OpenEngine): DOCKER_HOST's, Docker's
// socket, or a Podman API service of this test binary's own. The image is
// the configured one where it can be pulled, else one made here from the
// installed redis-server (redisenv.BuildImage). Everything made for the
// tests (the service and its dir, the image, leftover containers and
// networks) goes at teardown.

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
	Own   bool   // a Podman API service of this binary's own
	// Why is set when no engine could be had: the container tests skip
	// with it.
	Why string

	engine  *redisenv.Engine // released at teardown (stopping a Podman service of our own)
	built   string           // the image tag made here, removed at teardown
	used    int              // container tests that ran on it
	skipped int              // container tests that skipped for want of it
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
	if e.used+e.skipped == 0 {
		return
	}
	line := fmt.Sprintf("container tests of %s: %d ran on %s at %s with image %s", filepath.Base(os.Args[0]), e.used, e.Name, e.Host, e.Image)
	if e.Why != "" {
		line = fmt.Sprintf("container tests of %s: %d skipped: %s", filepath.Base(os.Args[0]), e.skipped, e.Why)
	}
	if e.Own {
		line += " (a Podman API service of its own, stopped at the end)"
	}
	if e.built != "" {
		line += " (image made from the installed redis-server, removed at the end)"
	}
	appendLog(line)
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
	// The engine a CLI run would use: DOCKER_HOST's, Docker's socket, or a
	// Podman API service of this binary's own, kept until teardown.
	eng, err := redisenv.OpenEngine(ctx)
	if err != nil {
		return err
	}
	e.engine, e.Host, e.Own = eng, eng.Host, eng.Own
	api, err := client.New(client.WithHost(e.Host))
	if err != nil {
		return fmt.Errorf("engine client: %w", err)
	}
	defer api.Close()
	e.Name = engineName(ctx, api)
	redisenv.SweepLeftovers(ctx, api, false)
	return e.image(ctx, api)
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

// image makes sure the tests' image is there: present, pulled, or made
// from the installed redis-server.
func (e *Engine) image(ctx context.Context, api client.APIClient) error {
	want := os.Getenv(EnvImage)
	if want == "" {
		want = redisenv.DefaultImage
	}
	err := redisenv.FindImage(ctx, api, want)
	if err == nil {
		e.Image = want
		return nil
	}
	tag, berr := redisenv.BuildImage(ctx, api, redisenv.DefaultServerPath)
	if berr != nil {
		return fmt.Errorf("image %s cannot be pulled (%s), and none could be made from redis-server: %v", want, oneLine(err), berr)
	}
	e.Image, e.built = tag, tag
	return nil
}

func (e *Engine) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if e.Host != "" {
		if api, err := client.New(client.WithHost(e.Host)); err == nil {
			redisenv.SweepLeftovers(ctx, api, true) // a failed test's, and the image made here
			api.Close()
		}
	}
	if e.engine != nil {
		_ = e.engine.Close()
		e.engine = nil
	}
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// Main runs a test binary's tests with the container engine prepared
// (SetupEngine) and torn down after, then checks that no goroutine was
// leaked (goleak, with opts), and exits. Call it from TestMain.
func Main(m *testing.M, opts ...goleak.Option) {
	teardown := SetupEngine()
	code := m.Run()
	teardown()
	os.Exit(testkit.CheckLeaks(code, opts...))
}

// Owned lists the containers, networks and images on the engine whose
// owner label (redisenv.OwnerLabel) names process pid, one line each
// ("image localhost/lockbench-redis:12-1").
func Owned(api client.APIClient, pid int) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mine := func(labels map[string]string) bool {
		return strings.HasPrefix(labels[redisenv.OwnerLabel], strconv.Itoa(pid)+" ")
	}
	f := client.Filters{}.Add("label", redisenv.OwnerLabel)
	var found []string
	cs, err := api.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	for _, c := range cs.Items {
		if mine(c.Labels) {
			found = append(found, "container "+c.ID[:12]+" ("+string(c.State)+")")
		}
	}
	ns, err := api.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	for _, n := range ns.Items {
		if mine(n.Labels) {
			found = append(found, "network "+n.Name)
		}
	}
	is, err := api.ImageList(ctx, client.ImageListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	for _, img := range is.Items {
		if mine(img.Labels) {
			found = append(found, "image "+strings.Join(img.RepoTags, ","))
		}
	}
	return found, nil
}
