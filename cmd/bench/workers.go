package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// The environment variables worker mode reads: an Indexed Job sets the
// first, the manifest fills the second with the Job's name, the third
// carries a store URL (which may hold a password) off the command line.
const (
	envWorkerIndex = "JOB_COMPLETION_INDEX"
	envRunID       = "LOCKBENCH_RUN_ID"
	envGuardURL    = "LOCKBENCH_GUARD_URL"
)

// workerFlags are bench run's flags for a run spread over several
// workers.
type workerFlags struct {
	workers int
	index   string
	runID   string
	timeout time.Duration
	spawn   bool
	ttl     time.Duration
	// indexFrom is what gave index: "--worker-index" or "$JOB_COMPLETION_INDEX".
	indexFrom string
}

func (w *workerFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&w.workers, "workers", 1, "spread the run over N workers (pods or processes) that start together, each driving its share of the profile's clients; bench collect merges their results")
	fs.StringVar(&w.index, "worker-index", "", "this worker's index, 0..N-1 (default $"+envWorkerIndex+", which a Kubernetes Indexed Job sets)")
	fs.StringVar(&w.runID, "run-id", "", "the id every worker of one run gives, new for each run (default $"+envRunID+" when the run is spread; deploy/k8s fills it with the Job's name)")
	fs.DurationVar(&w.timeout, "rendezvous-timeout", 2*time.Minute, "how long workers wait for each other before the load starts, at most "+shortDuration(workloads.MaxRendezvousTimeout)+"; the run fails naming those that never arrived")
	fs.BoolVar(&w.spawn, "spawn-local", false, "with --workers N: run the N workers as processes on this machine, then collect and merge their results (a spread run on a laptop)")
	fs.DurationVar(&w.ttl, "results-ttl", harness.DefaultResultsTTL, "how long the store keeps pushed results and start marks for bench collect, at most "+shortDuration(harness.MaxResultsTTL))
}

// shortDuration writes d without its zero minutes and seconds: "24h".
func shortDuration(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimSuffix(d.String(), "0s"), "0m")
}

// spread reports whether the run is one worker of a spread run (check
// decided it).
func (w *workerFlags) spread() bool { return w.runID != "" && !w.spawn }

// check resolves the environment's defaults and refuses what cannot run,
// before anything starts. f is the rest of the run's flags, p its profile.
// A run is a worker only when asked: by --workers N, a worker index (the
// flag, or an Indexed Job's $JOB_COMPLETION_INDEX) or --run-id; a
// $LOCKBENCH_RUN_ID left in the environment alone makes no worker.
func (w *workerFlags) check(f *runFlags, p workloads.Profile) error {
	switch {
	case w.workers < 1:
		return cli.Usagef("--workers %d: must be at least 1", w.workers)
	case w.timeout <= 0:
		return cli.Usagef("--rendezvous-timeout %v: must be positive, e.g. 2m", w.timeout)
	case w.timeout > workloads.MaxRendezvousTimeout:
		return cli.Usagef("--rendezvous-timeout %v: must be at most %s: a run's workers start together, and its keys would wait on the store for workers that will not come", w.timeout, shortDuration(workloads.MaxRendezvousTimeout))
	}
	if err := harness.CheckResultsTTL(w.ttl); err != nil {
		return cli.Usagef("--%v", err)
	}
	if w.spawn {
		switch {
		case w.workers < 2:
			return cli.Usagef("--spawn-local: needs --workers 2 or more")
		case w.index != "":
			return cli.Usagef("--worker-index %s: --spawn-local numbers its workers itself; drop --worker-index", w.index)
		}
		if w.runID == "" {
			w.runID = "local-" + workloads.NewRunID()
		}
		if err := workloads.CheckRunID(w.runID); err != nil {
			return err
		}
		_, err := p.Split(0, w.workers)
		return err
	}
	index := cli.FlagOrEnv("worker-index", w.index, envWorkerIndex)
	var why string
	switch {
	case w.workers > 1:
		why = fmt.Sprintf("--workers %d", w.workers)
	case index.Value != "":
		why = index.From
	case w.runID != "":
		why = "--run-id"
	default:
		return nil // a plain run
	}
	w.index, w.indexFrom = index.Value, index.From
	if w.index == "" && w.workers == 1 {
		w.index = "0" // a run of one worker: pushed for collect like any
	}
	if w.index == "" {
		return cli.Usagef("--worker-index: not given and $%s is unset; give each of the %d workers its index 0..%d (an Indexed Job sets $%s), or use --spawn-local", envWorkerIndex, w.workers, w.workers-1, envWorkerIndex)
	}
	if _, err := w.indexValue(); err != nil {
		return err
	}
	runID := cli.FlagOrEnv("run-id", w.runID, envRunID)
	if w.runID = runID.Value; w.runID == "" {
		return cli.Usagef("--run-id: not given and $%s is unset; give every worker of the run (%s makes this one a worker) the same new id", envRunID, why)
	}
	if err := workloads.CheckRunID(w.runID); err != nil {
		return runID.Blame(err)
	}
	if _, err := p.Split(w.mustIndex(), w.workers); err != nil {
		return err
	}
	if _, started := f.redis.PlannedReplicas(); started && f.redis.URL == "" {
		return cli.Usagef("%s: a worker of a spread run, and workers must share one Redis; give --redis-url (or $REDIS_URL), or use --spawn-local, which starts one for its workers", why)
	}
	if gm, _ := guard.ParseMode(p.Guard); gm != guard.Off && f.guardURL == "" {
		return cli.Usagef("--guard %s with %s: the workers must share one guarded store; give --guard-url (or $%s)", gm, why, envGuardURL)
	}
	return nil
}

func (w *workerFlags) indexValue() (int, error) {
	i, err := strconv.Atoi(w.index)
	if err != nil || i < 0 || i >= w.workers {
		return 0, cli.Usagef("%s %q: must be a number 0..%d for %d workers (--workers)", w.indexFrom, w.index, w.workers-1, w.workers)
	}
	return i, nil
}

func (w *workerFlags) mustIndex() int {
	i, _ := w.indexValue()
	return i
}

// options are the harness's worker options on store.
func (w *workerFlags) options(store *harness.WorkerStore) *harness.WorkerOptions {
	return &harness.WorkerOptions{RunID: w.runID, Index: w.mustIndex(), Workers: w.workers, Timeout: w.timeout, Store: store.Client(), TTL: w.ttl}
}

// spawnLocal runs the workers as processes of this program on this
// machine: it starts Redis (and the guarded store) for them, passes their
// URLs in the environment, waits for every worker, and collects their
// results as bench collect would.
func spawnLocal(ctx context.Context, f runFlags, p workloads.Profile, stderr io.Writer, args []string) (*results.Result, string, error) {
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", a...) }
	env, err := cli.StartEnvFor(ctx, f.redis, stderr)
	if err != nil {
		return nil, "", err
	}
	defer env.Close()
	// The user's own URL when there is one (it may name a Sentinel, TLS,
	// a cluster's password), else one for the servers started here.
	redisURL, from := f.redis.URL, ""
	if redisURL == "" && env.Backend() == redisenv.BackendExternal {
		redisURL, from = strings.TrimSpace(os.Getenv(redisenv.EnvURL)), "$"+redisenv.EnvURL
	}
	if redisURL == "" {
		redisURL, from = env.URL(), "the URL of the Redis started for the workers"
	}
	childEnv := []string{redisenv.EnvURL + "=" + redisURL}
	guardURL := f.guardURL
	if gm, _ := guard.ParseMode(p.Guard); gm != guard.Off && guardURL == "" {
		gs, err := harness.StartGuard(ctx, gm, "", harness.GuardKey(f.workers.runID), env.Binary())
		if err != nil {
			return nil, "", err
		}
		defer gs.Close()
		guardURL = gs.Where
		logf("guarded counters (%s) at %s for the %d workers", gm, gs.Where, f.workers.workers)
	}
	if guardURL != "" {
		childEnv = append(childEnv, envGuardURL+"="+guardURL)
	}
	store, err := harness.OpenWorkerStore(ctx, redisenv.Config{Backend: redisenv.BackendExternal, URL: redisURL, URLFrom: from}, guardURL)
	if err != nil {
		return nil, "", err
	}
	defer store.Close()
	if err := checkRunIDUnused(ctx, f.workers.runID, store, env, guardURL != ""); err != nil {
		return nil, "", err
	}

	base := childArgs(args, f.workers.runID)
	logf("run %s: %d workers on this machine, results to %s", f.workers.runID, f.workers.workers, filepath.Join(f.out, f.workers.runID))
	var wg sync.WaitGroup
	exits := make([]error, f.workers.workers)
	lasts := make([]string, f.workers.workers)
	for i := range f.workers.workers {
		out := filepath.Join(f.out, f.workers.runID, "w"+strconv.Itoa(i))
		a := append(slices.Clone(base), "--worker-index", strconv.Itoa(i), "--out", out)
		started := make(chan error, 1)
		wg.Go(func() { lasts[i], exits[i] = runChild(ctx, i, a, childEnv, stderr, started) })
		if err := <-started; err != nil {
			wg.Wait()
			return nil, "", err
		}
	}
	wg.Wait()
	cli.LoadEnded(ctx)
	if err := refusedWorkers(f.workers.runID, exits, lasts); err != nil {
		return nil, "", err
	}
	for i, e := range exits {
		var ee *exec.ExitError
		switch {
		case e == nil:
		case errors.As(e, &ee) && (ee.ExitCode() == cli.ExitFailure || ee.ExitCode() == cli.ExitInterrupted && ctx.Err() != nil):
			// Its own verdict failed, or it was interrupted with the rest:
			// the merged result says so.
		default:
			logf("worker %d: %v", i, e)
		}
	}
	m, path, err := harness.Collect(context.WithoutCancel(ctx), harness.CollectOptions{RunID: f.workers.runID, Stores: []harness.Store{store.Store()}, Out: f.out, Logf: logf})
	if errors.Is(err, harness.ErrNoResults) && ctx.Err() != nil {
		return nil, "", fmt.Errorf("run %s: interrupted before any worker finished its load: nothing to collect: %w", f.workers.runID, ctx.Err())
	}
	// Interrupted, the workers kept and pushed what they ran: merged, and
	// the run ends as an interrupted one does.
	return m, path, errors.Join(err, ctx.Err())
}

// checkRunIDUnused refuses, before any worker starts, a run id the
// workers' store or the lock's Redis (env, which a guarded run's workers
// mark too) already holds a run of.
func checkRunIDUnused(ctx context.Context, runID string, store *harness.WorkerStore, env *redisenv.Env, guarded bool) error {
	stores := []harness.Store{store.Store()}
	if guarded {
		lock := env.NewClient()
		defer lock.Close()
		stores = append(stores, harness.Store{Name: "the lock's Redis at " + env.Addr(), Client: lock})
	}
	return harness.CheckRunIDUnused(ctx, runID, stores...)
}

// refusedWorkers is the parent's error when any worker refused its input
// (exit 2: a run id another run took, say): the store may then hold
// another run's results under the id, which must not be collected as
// this run's. Each refusal is named by the worker's last line.
func refusedWorkers(runID string, exits []error, lasts []string) error {
	var why []string
	by := map[string][]int{}
	for i, e := range exits {
		var ee *exec.ExitError
		if !errors.As(e, &ee) || ee.ExitCode() != cli.ExitUsage {
			continue
		}
		line := strings.TrimPrefix(lasts[i], "bench: ")
		if line == "" {
			line = "it said nothing"
		}
		if by[line] == nil {
			why = append(why, line)
		}
		by[line] = append(by[line], i)
	}
	if len(why) == 0 {
		return nil
	}
	parts := make([]string, len(why))
	for j, line := range why {
		idx := make([]string, len(by[line]))
		for k, i := range by[line] {
			idx[k] = strconv.Itoa(i)
		}
		parts[j] = fmt.Sprintf("%s %s: %s", results.Noun(len(idx), "worker"), strings.Join(idx, ", "), line)
	}
	return cli.Usagef("run %s: its workers were refused, so nothing is collected: %s", runID, strings.Join(parts, "; "))
}

// childArgs are the parent's bench run arguments for its workers: without
// the flags the parent decides for them (where Redis and the store are,
// the spawning, the output) and with the run id.
func childArgs(args []string, runID string) []string {
	drop := map[string]bool{"spawn-local": true, "redis": true, "redis-url": true, "topology": true, "shards": true,
		"replicas": true, "guard-url": true, "out": true, "run-id": true, "image": true, "server": true,
		"appendonly": true, "appendfsync": true, "cpuprofile": true, "memprofile": true, "json": true, "quiet": true}
	bools := map[string]bool{"spawn-local": true, "appendonly": true, "json": true, "quiet": true}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		name, _, hasValue := strings.Cut(name, "=")
		if !strings.HasPrefix(a, "-") || !drop[name] {
			out = append(out, a)
			continue
		}
		if !hasValue && !bools[name] {
			i++ // its value
		}
	}
	return append(out, "--run-id", runID, "--quiet")
}

// spawnCommand makes a worker's process: this program, bench run.
var spawnCommand = func(args []string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.Command(exe, append([]string{"run"}, args...)...)
}

// runChild runs worker i and waits for it, its stderr lines prefixed
// with its index; last is the last of them, which says why it failed. The process dies with this one (a parent killed
// outright leaves no worker running), and an interrupt reaches it as
// SIGINT, so that it keeps and pushes its partial result.
func runChild(ctx context.Context, i int, args, env []string, stderr io.Writer, started chan<- error) (last string, err error) {
	// Pdeathsig is tied to the thread that started the child: keep it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := spawnCommand(args)
	cmd.Env = append(cmd.Environ(), env...)
	// A process group of its own: a terminal's Ctrl-C reaches only this
	// process, which passes it on once (a second SIGINT would make the
	// worker quit at once, without its result).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		started <- err
		return "", err
	}
	if err := cmd.Start(); err != nil {
		started <- fmt.Errorf("start worker %d: %w", i, err)
		return "", err
	}
	fmt.Fprintf(stderr, "bench: worker %d pid %d\n", i, cmd.Process.Pid)
	started <- nil
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Signal(os.Interrupt) })
	defer stop()
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		last = sc.Text()
		fmt.Fprintf(stderr, "w%d: %s\n", i, strings.TrimPrefix(last, "bench: "))
	}
	return last, cmd.Wait()
}

const collectUsage = `
Gathers the results the workers of one run (bench run --workers N, an
Indexed Job's pods) pushed to their store under the run id, writes each
worker's files to --out/<run id>/w<index>/ and the merged result beside
them, and prints its summary: throughput over the window every worker
measured, latencies from the added histograms, fairness over all owners,
a row per worker (ops/s, p99, who was the CPU limit) and the skew between
their starts on Redis's clock. The safety verdict across workers is the
guarded store's, which saw every critical section with no clock (profile
field guard plain or fenced); each worker's own checker covers its own.

The store is --guard-url when the run had a guarded store, else the lock's
Redis (--redis-url, default $REDIS_URL); an id that both hold a run of is
refused. It waits up to --wait for workers that have not pushed yet
(--grace once the first arrived: workers of one run end together); a
worker that started but never pushed leaves the result partial, naming
it, and the exit status 1. With no result to collect it says why: the
workers still meet or run, their rendezvous was abandoned, or they died.
Collecting a run again into one --out replaces its merge there.`

// collectFlags are bench collect's flags.
type collectFlags struct {
	runID, redisURL, guardURL, out string
	wait, grace                    time.Duration
	json                           bool
	// from are what gave the run id and the URLs: their flags, or the
	// environment variables read in their place.
	from struct{ runID, redisURL, guardURL cli.Sourced }
}

func (c *collectFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.runID, "run-id", "", "the run's id, as its workers gave it (default $"+envRunID+")")
	fs.StringVar(&c.redisURL, "redis-url", "", "the lock's Redis, where workers without a guarded store pushed (default $"+redisenv.EnvURL+")")
	fs.StringVar(&c.guardURL, "guard-url", "", "the guarded store the workers shared, where they pushed (default $"+envGuardURL+")")
	fs.StringVar(&c.out, "out", "bench-results", "directory for the workers' files and the merged result (a merge of the same run there is replaced)")
	fs.DurationVar(&c.wait, "wait", 10*time.Minute, "how long to wait for workers that have not pushed their result (0: take what is there)")
	fs.DurationVar(&c.grace, "grace", 2*time.Minute, "once one worker's result arrived, how long the others may still take")
	fs.BoolVar(&c.json, "json", false, "print the merged result JSON on stdout instead of the summary")
}

// check resolves the environment's defaults and refuses bad input before
// anything connects.
func (c *collectFlags) check() error {
	f := &c.from
	f.runID, f.guardURL, f.redisURL = cli.FlagOrEnv("run-id", c.runID, envRunID),
		cli.FlagOrEnv("guard-url", c.guardURL, envGuardURL), cli.FlagOrEnv("redis-url", c.redisURL, redisenv.EnvURL)
	c.runID, c.guardURL, c.redisURL = f.runID.Value, f.guardURL.Value, f.redisURL.Value
	switch {
	case c.runID == "":
		return cli.Usagef("--run-id: not given and $%s is unset; give the id the run's workers gave", envRunID)
	case c.wait < 0:
		return cli.Usagef("--wait %v: must not be negative", c.wait)
	case c.grace <= 0:
		return cli.Usagef("--grace %v: must be positive, e.g. 2m", c.grace)
	}
	if err := workloads.CheckRunID(c.runID); err != nil {
		return f.runID.Blame(err)
	}
	if err := harness.CheckGuardURL(c.guardURL); err != nil {
		return f.guardURL.Blame(err)
	}
	if c.redisURL == "" && c.guardURL == "" {
		return cli.Usagef("--redis-url: not given and $%s is unset; give the store the workers pushed to (--guard-url with a guarded store)", redisenv.EnvURL)
	}
	if c.redisURL == "" {
		return nil
	}
	return f.redisURL.Blame(c.store().Validate())
}

// stores opens where the workers may have pushed: the guarded store (a
// guarded run's), then the lock's Redis (an unguarded run's).
func (c *collectFlags) stores(ctx context.Context) ([]harness.Store, func(), error) {
	var opened []*harness.WorkerStore
	closeAll := func() {
		for _, s := range opened {
			_ = s.Close()
		}
	}
	var stores []harness.Store
	open := func(cfg redisenv.Config, guardURL string) error {
		s, err := harness.OpenWorkerStore(ctx, cfg, guardURL)
		if err != nil {
			closeAll()
			return err
		}
		opened, stores = append(opened, s), append(stores, s.Store())
		return nil
	}
	if c.guardURL != "" {
		if err := open(redisenv.Config{}, c.guardURL); err != nil {
			return nil, nil, err
		}
	}
	if c.redisURL != "" && c.redisURL != c.guardURL {
		if err := open(c.store(), ""); err != nil {
			return nil, nil, err
		}
	}
	return stores, closeAll, nil
}

// store is the Redis the workers pushed to when they had no guarded store.
func (c *collectFlags) store() redisenv.Config {
	return redisenv.Config{Backend: redisenv.BackendExternal, URL: c.redisURL}
}

func collectCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("bench", "collect", collectUsage, stderr)
	var c collectFlags
	c.register(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	made, err := cli.CheckOutDir("--out", c.out)
	if err != nil {
		return err
	}
	defer made.Prune()
	stores, closeStores, err := c.stores(ctx)
	if err != nil {
		return err
	}
	defer closeStores()
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", a...) }
	res, path, err := harness.Collect(ctx, harness.CollectOptions{RunID: c.runID, Stores: stores, Out: c.out, Wait: c.wait, Grace: c.grace, Logf: logf})
	if res == nil {
		var fe *workloads.FieldError
		switch {
		case errors.As(err, &fe):
			return c.from.runID.Blame(err)
		case errors.Is(err, harness.ErrNoResults) && c.from.runID.FromEnv():
			return fmt.Errorf("%w (the run id is $%s's)", err, envRunID)
		}
		return err
	}
	return finish(res, path, err, c.json, stdout)
}
