package workloads_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

func TestMain(m *testing.M) {
	// go-redis probes a refused address once a second from a goroutine of
	// its own, which exits at its next probe after the pool is closed: the
	// library's, not ours, and bounded.
	redisenvtest.Main(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}

// keyPrefixSeq makes every run's lock names unique within the process.
var keyPrefixSeq atomic.Int64

// uniquePrefix is a key prefix no other run in this process uses.
func uniquePrefix(t *testing.T) string {
	return fmt.Sprintf("wltest:%s:%d:", strings.ReplaceAll(t.Name(), "/", "_"), keyPrefixSeq.Add(1))
}

// short returns built-in profile name cut down to a test's size: clients ×
// owners, warmup and duration as given.
func short(t *testing.T, name string, clients, owners int, warmup, d time.Duration) workloads.Profile {
	t.Helper()
	p, err := workloads.Builtin(name)
	if err != nil {
		t.Fatalf("Builtin(%q): %v", name, err)
	}
	p.Clients, p.Owners = clients, owners
	p.Warmup, p.Duration = workloads.Duration(warmup), workloads.Duration(d)
	return p
}

// counted makes p end after n measured operations instead of after its
// duration, which becomes only the bound for a host too slow to reach
// them (Patience): tests that judge what operations did then get enough of
// them on a loaded host too, and a run that stalls still ends, without.
func counted(p workloads.Profile, n int64) workloads.Profile {
	p.Ops, p.Duration = n, workloads.Duration(testkit.Patience)
	return p
}

// runOK runs cfg and fails t unless it finished whole.
func runOK(t *testing.T, cfg workloads.Config) *results.Result {
	t.Helper()
	start := time.Now()
	res, err := workloads.Run(testkit.Context(t), cfg)
	if err != nil {
		t.Fatalf("Run(%s): %v", cfg.Profile.Name, err)
	}
	if res == nil {
		t.Fatalf("Run(%s): nil result without error", cfg.Profile.Name)
	}
	if res.Partial {
		t.Fatalf("Run(%s): partial result (%s) without error", cfg.Profile.Name, res.PartialReason)
	}
	t.Logf("%s: %.0f ops/s, %d ops in %.2fs measured (run took %v), errors %v, safety %d/%d",
		cfg.Profile.Name, res.Throughput.OpsPerSec, res.Throughput.Ops, res.Measured, time.Since(start).Round(time.Millisecond),
		res.Errors, res.Safety.Violations, res.Safety.Sections)
	return res
}

// requireLatency fails t unless the result has metric m with samples.
func requireLatency(t *testing.T, res *results.Result, metrics ...string) {
	t.Helper()
	for _, m := range metrics {
		l, ok := res.Latency[m]
		if !ok || l.Count == 0 {
			t.Errorf("latency %q missing or empty (have %v)", m, latencyNames(res))
			continue
		}
		if l.Max < l.P50 || l.P50 < 0 {
			t.Errorf("latency %q inconsistent: %+v", m, l)
		}
	}
}

func latencyNames(res *results.Result) []string {
	var names []string
	for k, l := range res.Latency {
		names = append(names, fmt.Sprintf("%s=%d", k, l.Count))
	}
	return names
}

// requireSafe fails t unless the safety check saw sections and no overlap.
func requireSafe(t *testing.T, res *results.Result) {
	t.Helper()
	if res.Safety.Sections == 0 {
		t.Errorf("safety checked no critical sections")
	}
	if res.Safety.Violations != 0 || !res.Safety.OK() {
		t.Errorf("safety: %d violations in %d sections: %+v", res.Safety.Violations, res.Safety.Sections, res.Safety.Examples)
	}
	if res.Safety.Incomplete != "" {
		t.Errorf("safety incomplete: %s", res.Safety.Incomplete)
	}
}

// requireNoErrors fails t if any measured operation failed.
func requireNoErrors(t *testing.T, res *results.Result) {
	t.Helper()
	for class, n := range res.Errors {
		if n != 0 {
			t.Errorf("errors[%s] = %d, want 0 (all: %v)", class, n, res.Errors)
		}
	}
}

// requireFieldError fails t unless err is a *workloads.FieldError naming
// field, marked as usage.
func requireFieldError(t *testing.T, err error, field string) *workloads.FieldError {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want a FieldError on %q", field)
	}
	var fe *workloads.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %q (%T) is not a *workloads.FieldError", err, err)
	}
	if fe.Field != field {
		t.Fatalf("FieldError.Field = %q, want %q (error: %v)", fe.Field, field, err)
	}
	if !fe.IsUsage() {
		t.Errorf("FieldError.IsUsage() = false")
	}
	if fe.Fix == "" || !strings.Contains(err.Error(), field) {
		t.Errorf("error %q should name %q and say how to fix it", err, field)
	}
	return fe
}

// heldLocks lists the lock hashes whose names start with prefix: locks
// someone still holds.
func heldLocks(t *testing.T, rdb redis.UniversalClient, prefix string) []string {
	t.Helper()
	ctx := testkit.Context(t)
	var held []string
	iter := rdb.Scan(ctx, 0, "*"+prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		typ, err := rdb.Type(ctx, k).Result()
		if err != nil {
			t.Fatalf("TYPE %s: %v", k, err)
		}
		if typ == "hash" {
			fields, _ := rdb.HGetAll(ctx, k).Result()
			ttl, _ := rdb.PTTL(ctx, k).Result()
			held = append(held, fmt.Sprintf("%s %v (ttl %v)", k, fields, ttl))
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("SCAN %s*: %v", prefix, err)
	}
	return held
}
