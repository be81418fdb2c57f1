package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// WorkerOptions is a bench run's place among the workers of one run
// spread over several machines (bench run --workers): each runs its share
// of the profile (workloads.Profile.Split), all start together after a
// rendezvous on Store, and each pushes its result files there for
// Collect.
type WorkerOptions struct {
	RunID          string
	Index, Workers int
	// Timeout bounds the wait for the other workers at the start.
	Timeout time.Duration
	// Store is the Redis the workers meet on and push their results to:
	// the guard store's when the run has one, else the lock's.
	Store redis.UniversalClient
	// TTL is how long pushed results and start marks stay (default
	// DefaultResultsTTL).
	TTL time.Duration
}

// DefaultResultsTTL is how long the store keeps a run's pushed results:
// a day for the collector to come.
const DefaultResultsTTL = 24 * time.Hour

// KeyPrefix is the lock names' prefix every worker of run id gives, so
// that they contend on the same locks.
func KeyPrefix(profile, runID string) string {
	return fmt.Sprintf("lockbench:%s:%s:", profile, runID)
}

// GuardKey is the guarded counters' key every worker of run id gives.
func GuardKey(runID string) string { return "lockbench:guard:" + runID }

// resultsKey holds a run's pushed results: per worker its start on
// Redis's clock ("<i>:start"), its result JSON ("<i>:json") and interval
// log ("<i>:hlog"), and the worker count ("workers").
func resultsKey(runID string) string { return "lockbench:results:{" + runID + "}" }

func (w *WorkerOptions) ttl() time.Duration {
	if w.TTL > 0 {
		return w.TTL
	}
	return DefaultResultsTTL
}

// configure makes cfg run the worker's share of its profile, meeting the
// others before its load.
func (w *WorkerOptions) configure(cfg *workloads.Config, logf func(string, ...any)) error {
	s, err := cfg.Profile.Split(w.Index, w.Workers)
	if err != nil {
		return err
	}
	cfg.Profile, cfg.Share = s.Profile, &s
	cfg.KeyPrefix = KeyPrefix(s.Whole.Name, w.RunID)
	cfg.GuardTTL = w.ttl()
	rv := workloads.Rendezvous{RunID: w.RunID, Index: w.Index, Workers: w.Workers, Timeout: w.Timeout, Used: resultsKey(w.RunID)}
	cfg.Rendezvous = func(ctx context.Context) (time.Time, results.Worker, error) {
		m, err := rv.Meet(ctx, w.Store)
		if err != nil {
			return time.Time{}, results.Worker{}, err
		}
		if err := w.markStarted(ctx, m.RedisStart); err != nil {
			return time.Time{}, results.Worker{}, err
		}
		if logf != nil {
			logf("%s: all arrived; the load starts at %s on Redis's clock (±%v)",
				s, m.RedisStart.UTC().Format("15:04:05.000000"), m.Uncertainty.Round(time.Microsecond))
		}
		return m.Start, results.Worker{
			RunID: w.RunID, RedisStart: m.RedisStart,
			UncertaintyUs: float64(m.Uncertainty) / 1e3, LateMs: float64(m.Late) / 1e6,
		}, nil
	}
	return nil
}

// markStarted records that the worker started: a collector that later
// finds no result from it knows it died mid-run.
func (w *WorkerOptions) markStarted(ctx context.Context, at time.Time) error {
	key := resultsKey(w.RunID)
	_, err := w.Store.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, "workers", w.Workers, strconv.Itoa(w.Index)+":start", at.UTC().Format(time.RFC3339Nano))
		p.Expire(ctx, key, w.ttl())
		return nil
	})
	if err != nil {
		return fmt.Errorf("worker %d: mark the start in the store: %w", w.Index, err)
	}
	return nil
}

// Push stores the result files bench run wrote (jsonPath and the
// interval log it names) under the run id, for Collect.
func (w *WorkerOptions) Push(ctx context.Context, jsonPath string, r *results.Result) error {
	js, err := os.ReadFile(jsonPath)
	if err != nil {
		return fmt.Errorf("push result: %w", err)
	}
	var hlog []byte
	if r.HistogramLog != "" {
		if hlog, err = os.ReadFile(filepath.Join(filepath.Dir(jsonPath), r.HistogramLog)); err != nil {
			return fmt.Errorf("push result: %w", err)
		}
	}
	key, i := resultsKey(w.RunID), strconv.Itoa(w.Index)
	_, err = w.Store.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, "workers", w.Workers, i+":hlog", hlog, i+":json", js)
		p.Expire(ctx, key, w.ttl())
		return nil
	})
	if err != nil {
		return fmt.Errorf("push result of worker %d to the store: %w", w.Index, err)
	}
	return nil
}

// CollectOptions is what Collect gathers and where it writes.
type CollectOptions struct {
	RunID string
	// Stores are where the workers may have pushed (the guarded store,
	// the lock's Redis): the first that holds the run is read.
	Stores []redis.UniversalClient
	// Out is the directory the merged result goes to; each worker's files
	// go to Out/<run id>/w<index>/ first, as the workers wrote them.
	Out string
	// Wait bounds the wait for results not pushed yet (0: take what is
	// there); Grace is how long, once one result arrived, the others may
	// still take (default two minutes): workers of one run end together.
	Wait, Grace time.Duration
	Logf        func(format string, args ...any)
}

// tally is what a store holds of a run, by field name: how many workers
// it has, and whose results are in.
type tally struct {
	workers int
	pushed  []int
}

func (t tally) complete() bool { return t.workers > 0 && len(t.pushed) == t.workers }

// tallyOf reads the field names of run id's results (not the files, which
// may be large): polled while waiting.
func tallyOf(ctx context.Context, rdb redis.UniversalClient, runID string) (tally, error) {
	fields, err := rdb.HKeys(ctx, resultsKey(runID)).Result()
	if err != nil {
		return tally{}, fmt.Errorf("read the results of run %s: %w", runID, err)
	}
	var t tally
	if len(fields) > 0 {
		if t.workers, err = rdb.HGet(ctx, resultsKey(runID), "workers").Int(); err != nil {
			return tally{}, fmt.Errorf("read the results of run %s: %w", runID, err)
		}
	}
	for _, f := range fields {
		idx, field, ok := strings.Cut(f, ":")
		if i, err := strconv.Atoi(idx); ok && err == nil && field == "json" {
			t.pushed = append(t.pushed, i)
		}
	}
	slices.Sort(t.pushed)
	return t, nil
}

// ErrNoResults is Collect's error when the store holds nothing of the run.
var ErrNoResults = errors.New("no worker of the run pushed a result")

// Collect gathers the results of run id's workers from the store, waits
// (bounded) for those not pushed yet, writes each worker's files and the
// merged result, and returns the merged result and its path. A worker that
// started but never pushed leaves the result partial, naming it.
func Collect(ctx context.Context, o CollectOptions) (*results.Result, string, error) {
	if o.Grace <= 0 {
		o.Grace = 2 * time.Minute
	}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	deadline := time.Now().Add(o.Wait)
	var store redis.UniversalClient
	var t tally
	seen := -1
	for {
		var err error
		if store, t, err = findRun(ctx, o.Stores, o.RunID); err != nil {
			return nil, "", err
		}
		if len(t.pushed) != seen {
			seen = len(t.pushed)
			switch {
			case t.workers == 0 && o.Wait > 0:
				logf("run %s: nothing in the store yet; waiting up to %v", o.RunID, o.Wait.Round(time.Second))
			case t.workers > 0:
				logf("run %s: results of %d of %d workers in the store", o.RunID, len(t.pushed), t.workers)
			}
		}
		if t.complete() || !time.Now().Before(deadline) {
			break
		}
		if len(t.pushed) > 0 {
			deadline = earlierTime(deadline, time.Now().Add(o.Grace))
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-time.After(time.Second):
		}
	}
	if len(t.pushed) == 0 {
		return nil, "", fmt.Errorf("run %s: %w (is the run id right? did its workers fail to meet, or its keys expire?)", o.RunID, ErrNoResults)
	}
	runs, hists, paths, err := writeWorkerFiles(ctx, o, store, t.pushed)
	if err != nil {
		return nil, "", err
	}
	var missing []int
	for i := range t.workers {
		if !slices.Contains(t.pushed, i) {
			missing = append(missing, i)
		}
	}
	m, err := results.MergeWorkers(runs, hists, missing)
	if err != nil {
		return nil, "", err
	}
	m.MergedFrom = paths
	path, err := results.WriteFiles(o.Out, m)
	return m, path, err
}

// findRun is the first store that holds run id's results, and what it
// holds (the last store's empty tally when none does).
func findRun(ctx context.Context, stores []redis.UniversalClient, runID string) (redis.UniversalClient, tally, error) {
	if len(stores) == 0 {
		return nil, tally{}, errors.New("collect: no store to read")
	}
	for _, s := range stores {
		t, err := tallyOf(ctx, s, runID)
		if err != nil || t.workers > 0 {
			return s, t, err
		}
	}
	return stores[len(stores)-1], tally{}, nil
}

func earlierTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// writeWorkerFiles writes each pushed worker's files as it wrote them and
// reads them back as results do.
func writeWorkerFiles(ctx context.Context, o CollectOptions, store redis.UniversalClient, idx []int) ([]*results.Result, []map[string]*hdr.Histogram, []string, error) {
	var runs []*results.Result
	var hists []map[string]*hdr.Histogram
	var paths []string
	for _, i := range idx {
		dir := filepath.Join(o.Out, o.RunID, "w"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, nil, err
		}
		js, hlog, err := fetchFiles(ctx, store, o.RunID, i)
		if err != nil {
			return nil, nil, nil, err
		}
		r := new(results.Result)
		if err := json.Unmarshal(js, r); err != nil {
			return nil, nil, nil, fmt.Errorf("worker %d's result: %w", i, err)
		}
		if r.Worker == nil || r.Worker.Index != i || r.Worker.RunID != o.RunID {
			return nil, nil, nil, fmt.Errorf("worker %d's result is not worker %d's of run %s", i, i, o.RunID)
		}
		if r.HistogramLog != filepath.Base(r.HistogramLog) {
			return nil, nil, nil, fmt.Errorf("worker %d's result names its interval log %q, not a file beside it", i, r.HistogramLog)
		}
		if r.HistogramLog != "" {
			if err := results.WriteAtomic(filepath.Join(dir, filepath.Base(r.HistogramLog)), hlog); err != nil {
				return nil, nil, nil, err
			}
		}
		path := filepath.Join(dir, r.Stem()+".json")
		if err := results.WriteAtomic(path, js); err != nil {
			return nil, nil, nil, err
		}
		if r, err = results.ReadFile(path); err != nil {
			return nil, nil, nil, err
		}
		h, err := results.LoadHistograms(path, r)
		if err != nil {
			return nil, nil, nil, err
		}
		runs, hists, paths = append(runs, r), append(hists, h), append(paths, path)
	}
	return runs, hists, paths, nil
}

// fetchFiles reads worker i's pushed result JSON and interval log.
func fetchFiles(ctx context.Context, rdb redis.UniversalClient, runID string, i int) (js, hlog []byte, err error) {
	v, err := rdb.HMGet(ctx, resultsKey(runID), strconv.Itoa(i)+":json", strconv.Itoa(i)+":hlog").Result()
	if err != nil {
		return nil, nil, fmt.Errorf("read worker %d's result of run %s: %w", i, runID, err)
	}
	j, _ := v[0].(string)
	h, _ := v[1].(string)
	if j == "" {
		return nil, nil, fmt.Errorf("worker %d's result of run %s is gone from the store (expired?)", i, runID)
	}
	return []byte(j), []byte(h), nil
}

// WorkerStore is the Redis a run's workers meet on and push their results
// to, and bench collect reads: the guarded store's when the run has one,
// else the lock's.
type WorkerStore struct {
	env *redisenv.Env
	rdb redis.UniversalClient
}

// OpenWorkerStore connects to guardURL when given, else to the Redis cfg
// names (which must be one already running: an external URL).
func OpenWorkerStore(ctx context.Context, cfg redisenv.Config, guardURL string) (*WorkerStore, error) {
	if guardURL != "" {
		cfg = redisenv.Config{Backend: redisenv.BackendExternal, URL: guardURL}
	}
	// It outlives an interrupt: the worker pushes its partial result.
	env, err := redisenv.StartFor(ctx, cfg)
	if err != nil {
		if guardURL != "" {
			err = guardURLError(err)
		}
		return nil, fmt.Errorf("workers' store: %w", err)
	}
	return &WorkerStore{env: env, rdb: env.NewPool(4)}, nil
}

// Client is the store's client.
func (s *WorkerStore) Client() redis.UniversalClient { return s.rdb }

// Close disconnects.
func (s *WorkerStore) Close() error {
	return errors.Join(s.rdb.Close(), s.env.Close())
}

// URLOf is a URL of env's Redis that another process can connect with
// (for its environment, never its command line: it may hold a password).
func URLOf(env *redisenv.Env) string { return env.URL() }
