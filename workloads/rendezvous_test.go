package workloads_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/workloads"
)

// meetAll runs a rendezvous of workers with the given indexes, each in its
// own goroutine on its own client, and returns what each got (by index).
func meetAll(t *testing.T, rdb func() redis.UniversalClient, base workloads.Rendezvous, indexes ...int) ([]workloads.Meeting, []error) {
	t.Helper()
	ctx := testkit.Context(t)
	meetings := make([]workloads.Meeting, base.Workers)
	errs := make([]error, base.Workers)
	var wg sync.WaitGroup
	for _, i := range indexes {
		c := rdb()
		t.Cleanup(func() { _ = c.Close() })
		r := base
		r.Index = i
		wg.Go(func() { meetings[i], errs[i] = r.Meet(ctx, c) })
	}
	wg.Wait()
	return meetings, errs
}

func TestRendezvousAgreesOnOneStart(t *testing.T) {
	env := redisenvtest.Start(t)
	r := workloads.Rendezvous{RunID: "agree-" + workloads.NewRunID(), Workers: 3, Timeout: testkit.Patience}
	before := time.Now()
	meetings, errs := meetAll(t, env.NewClient, r, 0, 1, 2)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	for i, m := range meetings {
		t.Logf("worker %d: start in %v, redis start %v, offset %v ± %v, late %v",
			i, m.Start.Sub(before), m.RedisStart.Format(time.StampMicro), m.Offset, m.Uncertainty, m.Late)
		if !m.RedisStart.Equal(meetings[0].RedisStart) {
			t.Errorf("worker %d's Redis start %v differs from worker 0's %v", i, m.RedisStart, meetings[0].RedisStart)
		}
		if m.Uncertainty <= 0 {
			t.Errorf("worker %d reports uncertainty %v, want > 0", i, m.Uncertainty)
		}
		if !m.Start.After(before) {
			t.Errorf("worker %d's start %v is before the rendezvous began (%v)", i, m.Start, before)
		}
		// One machine, one clock: the workers' local starts agree within
		// the uncertainties they report.
		for j := range i {
			o := meetings[j]
			if d := m.Start.Sub(o.Start).Abs(); d > m.Uncertainty+o.Uncertainty {
				t.Errorf("workers %d and %d start %v apart, more than their uncertainties %v + %v", i, j, d, m.Uncertainty, o.Uncertainty)
			}
		}
	}

	// Every key the rendezvous left expires.
	ctx := testkit.Context(t)
	rdb := env.NewClient()
	defer rdb.Close()
	keys, err := rdb.Keys(ctx, "lockbench:rendezvous:{"+r.RunID+"}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Errorf("rendezvous keys %v, want the arrivals and the start", keys)
	}
	for _, k := range keys {
		if ttl, err := rdb.PTTL(ctx, k).Result(); err != nil || ttl <= 0 {
			t.Errorf("PTTL %s = %v, %v; want a TTL", k, ttl, err)
		}
	}

	// A fourth process claiming index 1 again is told so.
	late := r
	late.Index = 1
	_, err = late.Meet(ctx, rdb)
	requireFieldError(t, err, "worker-index")
	if !strings.Contains(err.Error(), "already arrived") {
		t.Errorf("a second worker 1: %v, want it to say index 1 already arrived", err)
	}
}

func TestRendezvousNamesTheMissingWorker(t *testing.T) {
	env := redisenvtest.Start(t)
	r := workloads.Rendezvous{RunID: "missing-" + workloads.NewRunID(), Workers: 4, Timeout: 700 * time.Millisecond}
	start := time.Now()
	_, errs := meetAll(t, env.NewClient, r, 0, 2)
	took := time.Since(start)
	for _, i := range []int{0, 2} {
		var re *workloads.RendezvousError
		if !errors.As(errs[i], &re) {
			t.Fatalf("worker %d: %v (%T), want a *RendezvousError", i, errs[i], errs[i])
		}
		if !slices.Equal(re.Missing, []int{1, 3}) {
			t.Errorf("worker %d: missing %v, want [1 3] (%v)", i, re.Missing, re)
		}
		if msg := re.Error(); !strings.Contains(msg, "workers 1, 3 of 4 never arrived") || !strings.Contains(msg, re.RunID) {
			t.Errorf("worker %d's error %q should name the run and workers 1, 3", i, msg)
		}
		t.Logf("worker %d: %v", i, re)
	}
	if took < r.Timeout {
		t.Errorf("the workers gave up after %v, before the %v timeout", took, r.Timeout)
	}

	// Abandoned is abandoned: a straggler arriving now fails the same way
	// instead of waiting for workers that left.
	rdb := env.NewClient()
	defer rdb.Close()
	straggler := r
	straggler.Index, straggler.Timeout = 1, testkit.Patience
	_, err := straggler.Meet(testkit.Context(t), rdb)
	var re *workloads.RendezvousError
	if !errors.As(err, &re) || !slices.Equal(re.Missing, []int{1, 3}) {
		t.Errorf("straggler 1 after the abandonment: %v, want the RendezvousError naming 1 and 3", err)
	}
}

func TestRendezvousInterrupted(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	defer rdb.Close()
	r := workloads.Rendezvous{RunID: "interrupted-" + workloads.NewRunID(), Workers: 2, Timeout: testkit.Patience}
	ctx, cancel := context.WithCancel(testkit.Context(t))
	done := make(chan error, 1)
	go func() { _, err := r.Meet(ctx, rdb); done <- err }()
	testkit.Eventually(t, "worker 0 arrived", func() bool {
		n, _ := rdb.HLen(testkit.Context(t), "lockbench:rendezvous:{"+r.RunID+"}:arrived").Result()
		return n == 3 // the worker count, the settings and worker 0
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted Meet: %v, want context.Canceled", err)
	}
	// Worker 1 learns at once that the run will not start.
	other := r
	other.Index = 1
	_, err := other.Meet(testkit.Context(t), rdb)
	var re *workloads.RendezvousError
	if !errors.As(err, &re) || re.By != 0 || !strings.Contains(re.Reason, "interrupted") {
		t.Errorf("worker 1 after worker 0 was interrupted: %v, want a RendezvousError by worker 0 saying it was interrupted", err)
	}
}

func TestRendezvousRefusesBadInput(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	defer rdb.Close()
	ok := workloads.Rendezvous{RunID: "bad-" + workloads.NewRunID(), Index: 0, Workers: 2, Timeout: time.Second}
	for i, c := range []struct {
		field string
		edit  func(*workloads.Rendezvous)
	}{
		{"run-id", func(r *workloads.Rendezvous) { r.RunID = "" }},
		{"run-id", func(r *workloads.Rendezvous) { r.RunID = "a{b}" }},
		{"run-id", func(r *workloads.Rendezvous) { r.RunID = "a b" }},
		{"run-id", func(r *workloads.Rendezvous) { r.RunID = "../x" }},
		{"run-id", func(r *workloads.Rendezvous) { r.RunID = "a/b" }},
		{"run-id", func(r *workloads.Rendezvous) { r.RunID = strings.Repeat("x", 129) }},
		{"workers", func(r *workloads.Rendezvous) { r.Workers = 0 }},
		{"worker-index", func(r *workloads.Rendezvous) { r.Index = 2 }},
		{"worker-index", func(r *workloads.Rendezvous) { r.Index = -1 }},
		{"rendezvous-timeout", func(r *workloads.Rendezvous) { r.Timeout = 0 }},
		// A timeout whose keys' expiry would overflow, or outlive the run
		// by years.
		{"rendezvous-timeout", func(r *workloads.Rendezvous) { r.Timeout = 2562047*time.Hour + 47*time.Minute }},
		{"rendezvous-timeout", func(r *workloads.Rendezvous) { r.Timeout = 100000 * time.Hour }},
		{"rendezvous-timeout", func(r *workloads.Rendezvous) { r.Timeout = workloads.MaxRendezvousTimeout + time.Second }},
		{"rendezvous-lead", func(r *workloads.Rendezvous) { r.Lead = -time.Second }},
		{"rendezvous-lead", func(r *workloads.Rendezvous) { r.Lead = time.Hour }},
		{"rendezvous-ttl", func(r *workloads.Rendezvous) { r.TTL = 1000 * time.Hour }},
	} {
		r := ok
		c.edit(&r)
		t.Run(fmt.Sprintf("%d-%s", i, c.field), func(t *testing.T) {
			_, err := r.Meet(testkit.Context(t), rdb)
			requireFieldError(t, err, c.field)
		})
	}

	// A worker told another worker count than the first is refused.
	ctx := testkit.Context(t)
	first := ok
	first.Workers, first.Timeout = 3, 200*time.Millisecond
	firstDone := make(chan error, 1)
	go func() { _, err := first.Meet(ctx, rdb); firstDone <- err }()
	testkit.Eventually(t, "worker 0 arrived", func() bool {
		n, _ := rdb.Exists(ctx, "lockbench:rendezvous:{"+ok.RunID+"}:arrived").Result()
		return n == 1
	})
	second := ok
	second.Index = 1
	_, err := second.Meet(ctx, rdb)
	requireFieldError(t, err, "workers")
	if !strings.Contains(err.Error(), "3 workers") {
		t.Errorf("mismatched count: %v, want it to say the run has 3 workers", err)
	}
	var re *workloads.RendezvousError
	if err := <-firstDone; !errors.As(err, &re) || !slices.Equal(re.Missing, []int{1, 2}) {
		t.Errorf("worker 0, alone of 3: %v, want a RendezvousError naming 1 and 2", err)
	}
}

// TestRendezvousOnCluster: on a Redis Cluster every worker reads the
// clock of the node holding the run's keys, and hears the start through
// cluster-wide pub/sub.
func TestRendezvousOnCluster(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyCluster})
	r := workloads.Rendezvous{RunID: "cluster-" + workloads.NewRunID(), Workers: 3, Timeout: testkit.Patience}
	meetings, errs := meetAll(t, env.NewClient, r, 0, 1, 2)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
		if m := meetings[i]; !m.RedisStart.Equal(meetings[0].RedisStart) {
			t.Errorf("worker %d's Redis start %v differs from worker 0's %v", i, m.RedisStart, meetings[0].RedisStart)
		}
	}
}

// TestRendezvousRefusesAUsedRunID: once a run of an id has met and left
// its mark (Used), a later rendezvous with that id is refused, even after
// the rendezvous keys expired.
func TestRendezvousRefusesAUsedRunID(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := testkit.Context(t)
	id := "used-" + workloads.NewRunID()
	r := workloads.Rendezvous{RunID: id, Workers: 1, Timeout: testkit.Patience, Used: "lockbench:results:{" + id + "}"}
	if _, err := r.Meet(ctx, rdb); err != nil {
		t.Fatalf("first run: %v", err)
	}
	if err := rdb.HSet(ctx, r.Used, "0:start", "then").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, "lockbench:rendezvous:{"+id+"}:arrived", "lockbench:rendezvous:{"+id+"}:start").Err(); err != nil {
		t.Fatal(err)
	}
	_, err := r.Meet(ctx, rdb)
	requireFieldError(t, err, "run-id")
}

// TestRendezvousRefusesOtherSettings: a worker whose load would differ
// from the first worker's is refused before any load, naming every
// setting that differs, and the others learn at once that the run will
// not start instead of waiting out the timeout.
func TestRendezvousRefusesOtherSettings(t *testing.T) {
	env := redisenvtest.Start(t)
	ctx := testkit.Context(t)
	p := workloads.Default()
	first := workloads.Rendezvous{RunID: "settings-" + workloads.NewRunID(), Workers: 2, Timeout: testkit.Patience, Settings: p.LoadSettings()}
	rdb0, rdb1 := env.NewClient(), env.NewClient()
	t.Cleanup(func() { _, _ = rdb0.Close(), rdb1.Close() })
	firstDone := make(chan error, 1)
	go func() { _, err := first.Meet(ctx, rdb0); firstDone <- err }()
	testkit.Eventually(t, "worker 0 arrived", func() bool {
		n, _ := rdb1.HLen(ctx, "lockbench:rendezvous:{"+first.RunID+"}:arrived").Result()
		return n == 3
	})

	q := p
	for f, v := range map[string]string{"duration": "8s", "warmup": "3s", "seed": "7"} {
		if err := q.Set(f, v); err != nil {
			t.Fatal(err)
		}
	}
	second := first
	second.Index, second.Settings = 1, q.LoadSettings()
	start := time.Now()
	_, err := second.Meet(ctx, rdb1)
	var se *workloads.SettingsError
	if !errors.As(err, &se) || !se.IsUsage() {
		t.Fatalf("worker 1 with other settings: %v (%T), want a *SettingsError", err, err)
	}
	want := "worker 1: duration 8s differs from worker 0's 30s, warmup 3s from 5s, seed 7 from 1; every worker of run " + first.RunID
	if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal %q, want one line starting %q", err, want)
	}
	var re *workloads.RendezvousError
	if err := <-firstDone; !errors.As(err, &re) || re.By != 1 || !strings.Contains(re.Reason, "duration 8s differs") {
		t.Errorf("worker 0: %v, want the rendezvous abandoned by worker 1 naming the settings", err)
	}
	if took := time.Since(start); took > testkit.Patience/2 {
		t.Errorf("worker 0 learned after %v: it waited out the timeout", took)
	}

	// The same settings meet.
	ok := first
	ok.RunID = "settings-same-" + workloads.NewRunID()
	if _, errs := meetAll(t, env.NewClient, ok, 0, 1); errs[0] != nil || errs[1] != nil {
		t.Errorf("workers with the same settings: %v", errs)
	}
}

// TestLoadSettingsCoverEveryField: every profile field shapes the load,
// and changing it changes exactly that setting, unless the field is one
// that only describes the run. A field added to Profile fails this test
// until it gets another value below: the rendezvous then compares it.
func TestLoadSettingsCoverEveryField(t *testing.T) {
	other := map[string]string{
		"name": "other", "kind": "fair", "read_ratio": "0.5", "depth": "2", "read_in_write": "0.25",
		"clients": "7", "owners": "3", "locks": "5", "popularity": "zipf", "zipf_s": "1.5", "hold": "3ms",
		"think": "uniform(1ms,2ms)", "lease": "5s", "wait": "2s", "duration": "8s", "ops": "100", "warmup": "1s",
		"rate": "50", "seed": "7", "multi": "3", "replica_sync": "false", "auto_pipeline": "true",
		"topology": "replica", "guard": "plain",
	}
	notLoad := map[string]bool{"description": true}
	base := workloads.Default()
	for _, f := range workloads.Fields() {
		p := base
		if notLoad[f] {
			if err := p.Set(f, "changed"); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.LoadSettings(), base.LoadSettings()) {
				t.Errorf("%s changed the load settings, but it only describes the run", f)
			}
			continue
		}
		v, ok := other[f]
		if !ok {
			t.Errorf("profile field %s: give it another value here (the rendezvous compares it), or leave it out of LoadSettings if it cannot shape the load", f)
			continue
		}
		if err := p.Set(f, v); err != nil {
			t.Fatalf("%s %s: %v", f, v, err)
		}
		var changed []string
		a, b := base.LoadSettings(), p.LoadSettings()
		for i := range a {
			if a[i] != b[i] {
				changed = append(changed, a[i].Name)
			}
		}
		if !slices.Equal(changed, []string{f}) {
			t.Errorf("setting %s to %s changed the settings %v, want [%s]", f, v, changed, f)
		}
	}
}

// TestReadRendezvous: a collector reads who arrived, the start, and an
// abandonment's reason.
func TestReadRendezvous(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := testkit.Context(t)
	if st, err := workloads.ReadRendezvous(ctx, rdb, "none"); err != nil || st.Workers != 0 || st.Abandoned != nil {
		t.Errorf("no rendezvous: %+v, %v", st, err)
	}
	met := workloads.Rendezvous{RunID: "read-" + workloads.NewRunID(), Workers: 2, Timeout: testkit.Patience}
	meetings, errs := meetAll(t, env.NewClient, met, 0, 1)
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	st, err := workloads.ReadRendezvous(ctx, rdb, met.RunID)
	if err != nil || st.Workers != 2 || !slices.Equal(st.Arrived, []int{0, 1}) || !st.Start.Equal(meetings[0].RedisStart) || st.Abandoned != nil {
		t.Errorf("met: %+v, %v; want both arrived and the start %v", st, err, meetings[0].RedisStart)
	}
	gone := workloads.Rendezvous{RunID: "read-gone-" + workloads.NewRunID(), Workers: 3, Timeout: 300 * time.Millisecond}
	meetAll(t, env.NewClient, gone, 1)
	st, err = workloads.ReadRendezvous(ctx, rdb, gone.RunID)
	if err != nil || !slices.Equal(st.Arrived, []int{1}) || st.Abandoned == nil || !slices.Equal(st.Abandoned.Missing, []int{0, 2}) {
		t.Errorf("abandoned: %+v (%v), %v; want worker 1 arrived and 0, 2 named missing", st, st.Abandoned, err)
	}
}
