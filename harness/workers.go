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

// MaxResultsTTL bounds WorkerOptions.TTL: what a spread run leaves on the
// user's Redis (its results, its id's mark) is gone within a month.
const MaxResultsTTL = 30 * 24 * time.Hour

// KeyPrefix is the lock names' prefix every worker of run id gives, so
// that they contend on the same locks.
func KeyPrefix(profile, runID string) string {
	return fmt.Sprintf("lockbench:%s:%s:", profile, runID)
}

// GuardKey is the guarded counters' key every worker of run id gives.
func GuardKey(runID string) string { return "lockbench:guard:" + runID }

// resultsKey holds a run's pushed results: per worker its start on
// Redis's clock ("<i>:start"), when its load is due to end ("<i>:end",
// for a run of a set duration), its result JSON ("<i>:json") and
// interval log ("<i>:hlog"), and the worker count ("workers").
func resultsKey(runID string) string { return "lockbench:results:{" + runID + "}" }

// markKey marks a run id as taken, in every store the run touches (the
// one its workers meet on and the lock's Redis), for as long as its
// results stay: a later run given the id on any of them is refused, so
// that no collector finds two runs of one id.
func markKey(runID string) string { return "lockbench:run:{" + runID + "}" }

func (w *WorkerOptions) ttl() time.Duration {
	if w.TTL > 0 {
		return w.TTL
	}
	return DefaultResultsTTL
}

// CheckResultsTTL refuses a --results-ttl the store cannot keep to.
func CheckResultsTTL(d time.Duration) error {
	switch {
	case d <= 0:
		return &workloads.FieldError{Field: "results-ttl", Value: d.String(), Fix: "must be positive, e.g. 24h"}
	case d > MaxResultsTTL:
		return &workloads.FieldError{Field: "results-ttl", Value: d.String(),
			Fix: fmt.Sprintf("must be at most %.0fh (30 days): what a run leaves on a Redis expires within a month, and a collector comes within a day", MaxResultsTTL.Hours())}
	}
	return nil
}

// loadSettings are the run options beyond the profile that shape a
// spread run's load, which every worker must share: the rendezvous
// compares them with the profile's (workloads.Profile.LoadSettings). A
// field added to RunOptions goes here, or into notLoadOptions with why.
func (o RunOptions) loadSettings() []workloads.Setting {
	impl := ""
	if o.Impl != nil {
		impl = o.Impl.Name()
	}
	return []workloads.Setting{
		{Name: "impl", Value: impl},
		// The counters every worker's sections update: one store's count
		// only when every worker updates the same.
		{Name: "guard-key", Value: o.GuardKey},
		// How every wait is timed shapes the holds and think times, and
		// what the waiting takes from the host.
		{Name: "spin-waits", Value: strconv.FormatBool(o.SpinWaits)},
	}
}

// notLoadOptions are the RunOptions fields loadSettings leaves out, and
// why.
var notLoadOptions = map[string]string{
	"Profile":      "compared field by field: workloads.Profile.LoadSettings",
	"MaxOps":       "bounds the operations a worker keeps for its analyses, not those it runs",
	"MaxErrorRate": "each worker's own verdict; the merge holds the run to the strictest",
	"Meta":         "describes each worker's own machine",
	"Logf":         "where a worker prints",
	"Progress":     "where a worker prints",
	"Guard":        "a store the caller started; its key is guard-key",
	"GuardURL":     "may hold a password, which never goes into a store; the workers meet on it, so it is one store",
	"Worker":       "this worker's own place in the run",
}

// configure makes cfg run the worker's share of o's profile, meeting the
// others before its load; lock is the lock's Redis, where the run id is
// checked and marked too.
func (w *WorkerOptions) configure(cfg *workloads.Config, o RunOptions, lock redis.UniversalClient) error {
	if w.TTL != 0 {
		if err := CheckResultsTTL(w.TTL); err != nil {
			return err
		}
	}
	s, err := cfg.Profile.Split(w.Index, w.Workers)
	if err != nil {
		return err
	}
	cfg.Profile, cfg.Share = s.Profile, &s
	cfg.KeyPrefix = KeyPrefix(s.Whole.Name, w.RunID)
	cfg.KeysTTL = w.ttl()
	rv := workloads.Rendezvous{RunID: w.RunID, Index: w.Index, Workers: w.Workers, Timeout: w.Timeout, Used: markKey(w.RunID),
		Settings: append(s.Whole.LoadSettings(), o.loadSettings()...)}
	cfg.Rendezvous = func(ctx context.Context) (time.Time, results.Worker, error) {
		if err := w.checkUnmarked(ctx, lock); err != nil {
			return time.Time{}, results.Worker{}, err
		}
		m, err := rv.Meet(ctx, w.Store)
		if err != nil {
			return time.Time{}, results.Worker{}, err
		}
		var end time.Time
		if d := s.Profile.Duration; d > 0 {
			end = m.RedisStart.Add(time.Duration(s.Profile.Warmup) + time.Duration(d))
		}
		if err := w.markStarted(ctx, m.RedisStart, end, lock); err != nil {
			return time.Time{}, results.Worker{}, err
		}
		if o.Logf != nil {
			o.Logf("%s: all arrived; the load starts at %s on Redis's clock (±%v)",
				s, m.RedisStart.UTC().Format("15:04:05.000000"), m.Uncertainty.Round(time.Microsecond))
		}
		return m.Start, results.Worker{
			RunID: w.RunID, RedisStart: m.RedisStart, Clients: s.Profile.Clients, TotalOwners: s.TotalOwners,
			UncertaintyUs: float64(m.Uncertainty) / 1e3, LateMs: float64(m.Late) / 1e6,
		}, nil
	}
	return nil
}

// checkUnmarked refuses a run id that a run already took on the lock's
// Redis (a guarded run's mark, whose results sit in its guarded store):
// the rendezvous checks the store the workers meet on. Every worker of
// one run checks before the first marks, which is after all arrived.
func (w *WorkerOptions) checkUnmarked(ctx context.Context, lock redis.UniversalClient) error {
	n, err := lock.Exists(ctx, markKey(w.RunID)).Result()
	if err != nil {
		return fmt.Errorf("worker %d: read the run id's mark on the lock's Redis: %w", w.Index, err)
	}
	if n > 0 {
		return &workloads.FieldError{Field: "run-id", Value: fmt.Sprintf("%q", w.RunID),
			Fix: "a run with this id already ran on the lock's Redis (its results may sit in another store); give every worker of this run a new id"}
	}
	return nil
}

// markStarted records that the worker started, and when its load is
// due to end (end, zero when unknown): a collector that later finds no
// result from it knows whether it still runs or died mid-run. It marks
// the run id taken on the store and on lock, the lock's Redis.
func (w *WorkerOptions) markStarted(ctx context.Context, at, end time.Time, lock redis.UniversalClient) error {
	key, i := resultsKey(w.RunID), strconv.Itoa(w.Index)
	stamp := at.UTC().Format(time.RFC3339Nano)
	_, err := w.Store.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, "workers", w.Workers, i+":start", stamp)
		if !end.IsZero() {
			p.HSet(ctx, key, i+":end", end.UTC().Format(time.RFC3339Nano))
		}
		p.Expire(ctx, key, w.ttl())
		p.Set(ctx, markKey(w.RunID), stamp, w.ttl())
		return nil
	})
	if err == nil {
		err = lock.Set(ctx, markKey(w.RunID), stamp, w.ttl()).Err()
	}
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

// Store is a Redis a spread run keeps its keys on, named for messages
// (its address, never its URL: that may hold a password).
type Store struct {
	Name   string
	Client redis.UniversalClient
}

// CollectOptions is what Collect gathers and where it writes.
type CollectOptions struct {
	RunID string
	// Stores are where the workers may have pushed (the guarded store,
	// the lock's Redis): the one that holds the run is read, and an id
	// two of them hold is refused.
	Stores []Store
	// Out is the directory the merged result goes to; each worker's files
	// go to Out/<run id>/w<index>/ first, as the workers wrote them. A
	// merge of the run already there is replaced.
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

// ErrNoResults is Collect's error when the store holds no result of the
// run; its message says why (still running, abandoned, died, unknown).
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
	var store Store
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
		if t.workers == 0 {
			// A rendezvous abandoned starts no load: nothing will come.
			if rv, _, err := rendezvousOf(ctx, o.Stores, o.RunID); err == nil && rv.Abandoned != nil {
				break
			}
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
		return nil, "", noResults(ctx, o.Stores, store, t, o.RunID)
	}
	runs, hists, paths, err := writeWorkerFiles(ctx, o, store.Client, t.pushed)
	if err != nil {
		return nil, "", err
	}
	m, err := results.MergeWorkers(runs, hists, absent(t.pushed, t.workers))
	if err != nil {
		return nil, "", err
	}
	m.MergedFrom = paths
	path, replaced, err := results.WriteWorkersMerged(o.Out, m)
	for _, r := range replaced {
		logf("run %s: replaced the earlier merge %s", o.RunID, r)
	}
	return m, path, err
}

// findRun is the store that holds run id's results, and what it holds
// (the last store's empty tally when none does). Two stores holding a run
// of the id are refused: which run is meant cannot be told.
func findRun(ctx context.Context, stores []Store, runID string) (Store, tally, error) {
	if len(stores) == 0 {
		return Store{}, tally{}, errors.New("collect: no store to read")
	}
	var holders []string
	found, ft := stores[len(stores)-1], tally{}
	for _, s := range stores {
		t, err := tallyOf(ctx, s.Client, runID)
		if err != nil {
			return s, t, err
		}
		if t.workers > 0 {
			if holders = append(holders, s.Name); len(holders) == 1 {
				found, ft = s, t
			}
		}
	}
	if len(holders) > 1 {
		return Store{}, tally{}, &workloads.FieldError{Field: "run-id", Value: fmt.Sprintf("%q", runID),
			Fix: fmt.Sprintf("%s each hold a run with this id, and which is meant cannot be told; collect from one store alone (give only its URL)", strings.Join(holders, " and "))}
	}
	return found, ft, nil
}

// rendezvousOf is the state of run id's rendezvous in the first store
// that holds one, and that store.
func rendezvousOf(ctx context.Context, stores []Store, runID string) (workloads.RendezvousState, Store, error) {
	for _, s := range stores {
		st, err := workloads.ReadRendezvous(ctx, s.Client, runID)
		if err != nil || st.Workers > 0 {
			return st, s, err
		}
	}
	return workloads.RendezvousState{}, Store{}, nil
}

// noResults says why no worker of run id pushed a result, as far as the
// stores tell: its workers still run, or still meet; their rendezvous was
// abandoned; they started and never pushed; or the stores hold nothing
// of it. It wraps ErrNoResults.
func noResults(ctx context.Context, stores []Store, store Store, t tally, runID string) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("run %s: %w"+format, append([]any{runID, ErrNoResults}, a...)...)
	}
	if t.workers > 0 {
		return startedNoResults(ctx, store, t, runID, fail)
	}
	rv, _, err := rendezvousOf(ctx, stores, runID)
	switch {
	case err != nil:
		return fail(" (and reading its rendezvous failed: %v)", err)
	case rv.Abandoned != nil:
		return fail(": its rendezvous was abandoned, so none ran: %v", rv.Abandoned)
	case rv.Workers > 0 && rv.Start.IsZero():
		return fail(" yet: its workers are still meeting (%s of %d arrived, waiting for %s); collect once they run, or give --wait",
			indexes(rv.Arrived, "none"), rv.Workers, indexes(absent(rv.Arrived, rv.Workers), "none"))
	case rv.Workers > 0:
		return fail(" yet: its %d workers met and start at %s (Redis's clock); collect once they ran, or give --wait", rv.Workers, clock(rv.Start))
	}
	return fail(", and the store holds nothing of it (is the run id right? did its keys expire?)")
}

// pushGrace is how long after its load's planned end a worker may take
// to push its result: its stalled calls are cut seconds after the end,
// then it writes its files and pushes them.
const pushGrace = time.Minute

// startedNoResults says why workers that marked their start pushed no
// result: still running (their load is due to end later than Redis's
// clock reads now), or gone.
func startedNoResults(ctx context.Context, store Store, t tally, runID string, fail func(string, ...any) error) error {
	fields := make([]string, 0, 2*t.workers)
	for i := range t.workers {
		fields = append(fields, strconv.Itoa(i)+":start", strconv.Itoa(i)+":end")
	}
	v, err := store.Client.HMGet(ctx, resultsKey(runID), fields...).Result()
	if err != nil {
		return fail(" (and reading its workers' starts failed: %v)", err)
	}
	var started []int
	var first, end time.Time
	endKnown := true
	for i := range t.workers {
		st, _ := v[2*i].(string)
		at, err := time.Parse(time.RFC3339Nano, st)
		if err != nil {
			continue
		}
		started = append(started, i)
		if first.IsZero() || at.Before(first) {
			first = at
		}
		e, _ := v[2*i+1].(string)
		et, err := time.Parse(time.RFC3339Nano, e)
		if err != nil {
			endKnown = false
			continue
		}
		end = later(end, et)
	}
	if len(started) == 0 {
		return fail(" (its store names %d workers but no start)", t.workers)
	}
	who := fmt.Sprintf("%s %s of %d", results.Noun(len(started), "worker"), indexes(started, ""), t.workers)
	are := "are"
	if len(started) == 1 {
		are = "is"
	}
	now, err := store.Client.Time(ctx).Result()
	switch {
	case endKnown && err == nil && now.Before(end.Add(pushGrace)):
		return fail(" yet: %s started at %s and %s still running (the load ends at about %s on Redis's clock); collect after that, or give --wait", who, clock(first), are, clock(end))
	case endKnown:
		return fail(": %s started at %s, were due to end by %s, and none pushed its result: they died, or could not reach the store", who, clock(first), clock(end))
	}
	return fail(" yet: %s started at %s and none has pushed: still running (a run bounded by ops), or died; give --wait to wait for them", who, clock(first))
}

// indexes lists worker indexes, "0, 2"; none when there are none.
func indexes(idx []int, none string) string {
	if len(idx) == 0 {
		return none
	}
	s := make([]string, len(idx))
	for i, x := range idx {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// absent are the indexes 0..n-1 not in have.
func absent(have []int, n int) []int {
	var out []int
	for i := range n {
		if !slices.Contains(have, i) {
			out = append(out, i)
		}
	}
	return out
}

// clock writes an instant of Redis's clock for a message.
func clock(t time.Time) string { return t.UTC().Format("15:04:05Z") }

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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
	env  *redisenv.Env
	rdb  redis.UniversalClient
	name string
}

// OpenWorkerStore connects to guardURL when given, else to the Redis cfg
// names (which must be one already running: an external URL).
func OpenWorkerStore(ctx context.Context, cfg redisenv.Config, guardURL string) (*WorkerStore, error) {
	what := "the lock's Redis"
	if guardURL != "" {
		cfg, what = redisenv.Config{Backend: redisenv.BackendExternal, URL: guardURL}, "the guarded store"
	}
	// It outlives an interrupt: the worker pushes its partial result.
	env, err := redisenv.StartFor(ctx, cfg)
	if err != nil {
		if guardURL != "" {
			err = guardURLError(err)
		}
		return nil, fmt.Errorf("workers' store: %w", err)
	}
	return &WorkerStore{env: env, rdb: env.NewPool(4), name: what + " at " + env.Addr()}, nil
}

// Client is the store's client.
func (s *WorkerStore) Client() redis.UniversalClient { return s.rdb }

// Store is the store, named for messages: "the guarded store at
// host:port".
func (s *WorkerStore) Store() Store { return Store{Name: s.name, Client: s.rdb} }

// Close disconnects.
func (s *WorkerStore) Close() error {
	return errors.Join(s.rdb.Close(), s.env.Close())
}

// CheckRunIDUnused refuses a run id any of stores knows: a run of it met,
// meets, or left its results there. A parent starting workers checks
// before it starts them; each worker checks again as it arrives.
func CheckRunIDUnused(ctx context.Context, runID string, stores ...Store) error {
	for _, s := range stores {
		n, err := s.Client.Exists(ctx, markKey(runID), resultsKey(runID)).Result()
		if err != nil {
			return fmt.Errorf("run %s: read %s: %w", runID, s.Name, err)
		}
		rv, err := workloads.ReadRendezvous(ctx, s.Client, runID)
		if err != nil {
			return fmt.Errorf("run %s: read %s: %w", runID, s.Name, err)
		}
		if n > 0 || rv.Workers > 0 {
			return &workloads.FieldError{Field: "run-id", Value: fmt.Sprintf("%q", runID),
				Fix: fmt.Sprintf("a run with this id already ran, or runs, on %s (its keys are there); give a new id, or leave --run-id out for a fresh one", s.Name)}
		}
	}
	return nil
}

// URLOf is a URL of env's Redis that another process can connect with
// (for its environment, never its command line: it may hold a password).
func URLOf(env *redisenv.Env) string { return env.URL() }
