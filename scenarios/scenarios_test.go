package scenarios_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/scenarios"
)

// onValkey are the tests that run again on Valkey: the core scenarios, a
// client-side fault (watchdog-loss, lease-expiry, a frozen Redisson JVM)
// and each server-side one (Sentinel and cluster failover, a restart and
// Redisson's cells of all three, Redlock's restarted node), held to the
// same verdicts within a few minutes.
var onValkey = "^(" + strings.Join([]string{
	"TestWatchdogLoss", "TestLeaseExpiry", "TestClientFreezeRedisson",
	"TestFailover", "TestClusterFailover", "TestRedisRestartSlowRestart",
	"TestRedissonRows", "TestNodeRestart",
}, "|") + ")$"

// The Valkey run goes alongside the Redis one: this package is make
// test's longest, and its scenarios mostly wait on faults and leases.
func TestMain(m *testing.M) {
	redisenvtest.MainAlongside(m, []redisenvtest.Dimension{redisenvtest.Valkey(onValkey)}, testkit.ToxiproxyStage)
}

var bg = context.Background()

// options runs against local redis-servers under t and the embedded
// toxiproxy, with quick timings and result files in a temp dir.
func options(t *testing.T) scenarios.Options {
	t.Helper()
	tp := faults.NewEmbedded()
	t.Cleanup(func() {
		if err := tp.Close(); err != nil {
			t.Error(err)
		}
	})
	return scenarios.Options{
		Redis:     redisenv.Config{Backend: redisenv.BackendLocal, Server: redisenvtest.Server(), Dir: t.TempDir()},
		Toxiproxy: tp, Quick: true, Seed: 1, Logf: t.Logf, Out: t.TempDir(),
	}
}

func run(t *testing.T, name string, o scenarios.Options) *results.ChaosReport {
	t.Helper()
	redisenvtest.Long(t, "a chaos scenario")
	s, ok := scenarios.Find(name)
	if !ok {
		t.Fatalf("no scenario %s", name)
	}
	rep := scenarios.Run(bg, s, o)
	var b strings.Builder
	report.WriteChaosSummary(&b, rep)
	t.Log("\n" + b.String())
	return rep
}

// variant returns the run of the named variant.
func variant(t *testing.T, rep *results.ChaosReport, name string) results.RunSummary {
	t.Helper()
	i := slices.IndexFunc(rep.Runs, func(r results.RunSummary) bool { return r.Variant == name })
	if i < 0 {
		t.Fatalf("%s: no run of variant %s", rep.Scenario, name)
	}
	return rep.Runs[i]
}

// TestWatchdogLoss: partitioned past the watchdog timeout, a holder that
// ignores Lost overlaps the next owner and the checker says so; one that
// honours it does not.
func TestWatchdogLoss(t *testing.T) {
	o := options(t)
	rep := run(t, "watchdog-loss", o)
	if rep.Verdict != results.ExpectedViolation {
		t.Fatalf("verdict %s (%s), want %s", rep.Verdict, rep.Reason, results.ExpectedViolation)
	}
	ignore, honour := variant(t, rep, "ignore-lost"), variant(t, rep, "honour-lost")
	if ignore.Safety.Violations < 1 || ignore.Safety.UnsafeUs <= 0 {
		t.Errorf("ignore-lost: %+v; want a violation with an unsafe window", ignore.Safety)
	}
	if honour.Safety.Violations != 0 || honour.Lost != 1 {
		t.Errorf("honour-lost: %d violations, %d lost; want 0 and 1", honour.Safety.Violations, honour.Lost)
	}
	if rs, ok := redissonRun(t, rep); ok && (rs.Safety.Violations < 1 || rs.Safety.UnsafeUs <= 0 || rs.Lost != 1) {
		t.Errorf("redisson: %+v, lost %d; want a violation with an unsafe window and the hold lost", rs.Safety, rs.Lost)
	}
	// The fault timeline is kept with the result, and the files exist.
	for _, r := range rep.Runs {
		if len(r.Events) != 1 || r.Events[0].Kind != "blackhole" || r.Events[0].End-r.Events[0].Start < 5 {
			t.Errorf("%s: events %+v; want one 6 s blackhole", r.Variant, r.Events)
		}
		res, err := results.ReadFile(r.File)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Events) != 1 || res.Safety.Violations != r.Safety.Violations {
			t.Errorf("%s: result file has events %+v, safety %+v", r.File, res.Events, res.Safety)
		}
	}
	path, err := results.WriteChaosReport(o.Out, rep)
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadChaosReport(path)
	if err != nil || back.Verdict != rep.Verdict || len(back.Checks) != len(rep.Checks) {
		t.Errorf("report round trip: %v, %+v", err, back)
	}
}

func TestLeaseExpiry(t *testing.T) {
	rep := run(t, "lease-expiry", options(t))
	if rep.Verdict != results.ExpectedViolation {
		t.Fatalf("verdict %s (%s), want %s", rep.Verdict, rep.Reason, results.ExpectedViolation)
	}
	ignore, honour := variant(t, rep, "ignore-lost"), variant(t, rep, "honour-lost")
	if ignore.Safety.Violations < 1 || ignore.Lost < 1 || len(ignore.Safety.Examples) == 0 {
		t.Errorf("ignore-lost: %+v, lost %d; want counted, timed violations", ignore.Safety, ignore.Lost)
	}
	if honour.Safety.Violations != 0 || honour.Lost < 1 {
		t.Errorf("honour-lost: %d violations, %d lost; want 0 and ≥ 1", honour.Safety.Violations, honour.Lost)
	}
	if rs, ok := redissonRun(t, rep); ok && (rs.Safety.Violations < 1 || rs.Lost < 1) {
		t.Errorf("redisson: %+v, lost %d; want counted, timed violations", rs.Safety, rs.Lost)
	}
}

// TestClientFreezeRedisson: a real Redisson holder whose JVM is stopped
// (SIGSTOP) past its watchdog timeout overlaps the lockimpl contender
// that took the expired lock, and the checker says so.
func TestClientFreezeRedisson(t *testing.T) {
	rep := run(t, "client-freeze", options(t))
	if rep.Verdict != results.ExpectedViolation {
		t.Fatalf("verdict %s (%s), want %s", rep.Verdict, rep.Reason, results.ExpectedViolation)
	}
	rs, ok := redissonRun(t, rep)
	if !ok {
		return
	}
	if rs.Safety.Violations < 1 || rs.Safety.UnsafeUs <= 0 || rs.Lost != 1 {
		t.Errorf("redisson: %+v, lost %d; want a violation with an unsafe window and the hold lost", rs.Safety, rs.Lost)
	}
	if len(rs.Events) != 1 || rs.Events[0].Kind != "freeze" || rs.Events[0].Err != "" {
		t.Errorf("redisson: events %+v; want one freeze (SIGSTOP of the JVM)", rs.Events)
	}
}

// redissonRun is the run of rep's redisson variant; without Java or the
// driver's jar the variant must be listed as skipped (and ok is false).
func redissonRun(t *testing.T, rep *results.ChaosReport) (results.RunSummary, bool) {
	t.Helper()
	if _, err := redisson.FindJar(); err != nil {
		if !slices.ContainsFunc(rep.Skipped, func(s string) bool { return strings.HasPrefix(s, "redisson: ") }) {
			t.Errorf("no Redisson driver here (%v), but the redisson variant is not listed as skipped: %v", err, rep.Skipped)
		}
		return results.RunSummary{}, false
	}
	if rep.Redisson == "" {
		t.Error("the report does not name the Redisson version")
	}
	return variant(t, rep, "redisson"), true
}

func TestPartitionHeal(t *testing.T) {
	rep := run(t, "partition-heal", options(t))
	if rep.Verdict != results.Pass {
		t.Fatalf("verdict %s (%s), want PASS", rep.Verdict, rep.Reason)
	}
	if len(rep.Checks) < 5 {
		t.Errorf("only %d checks: %+v", len(rep.Checks), rep.Checks)
	}
}

// TestClusterFailover: on a 3×1 cluster, the lock the killed primary never
// replicated is lost in the failover; the checker and the holder see it.
func TestClusterFailover(t *testing.T) {
	rep := run(t, "cluster-failover", options(t))
	if rep.Verdict != results.ExpectedViolation {
		t.Fatalf("verdict %s (%s), want %s", rep.Verdict, rep.Reason, results.ExpectedViolation)
	}
	if r := variant(t, rep, "ignore-lost"); r.Safety.Violations < 1 || r.Safety.UnsafeUs <= 0 {
		t.Errorf("ignore-lost: %+v; want a violation with an unsafe window", r.Safety)
	}
	for _, r := range rep.Runs {
		kinds := map[string]bool{}
		for _, e := range r.Events {
			kinds[e.Kind] = e.Err == ""
		}
		if !kinds["replication_cut"] || !kinds["cluster_failover"] {
			t.Errorf("%s: events %+v; want a clean replication_cut and cluster_failover", r.Variant, r.Events)
		}
	}
}

// TestSlotMigration: a held, contended lock's slot moves; nothing overlaps
// and the blocked contenders are woken by the unlock at the new owner.
// TestFailover: the replica promoted by hand and the replica the Sentinels
// elect both lose the lock that never replicated; the Sentinels' variant
// times their detection and election, which cannot come before their
// down-after-milliseconds.
func TestFailover(t *testing.T) {
	rep := run(t, "failover", options(t))
	if rep.Verdict != results.ExpectedViolation {
		t.Fatalf("verdict %s (%s), want %s", rep.Verdict, rep.Reason, results.ExpectedViolation)
	}
	for _, v := range []string{"run", "sentinel"} {
		if r := variant(t, rep, v); r.Safety.Violations == 0 {
			t.Errorf("%s: no violation; want the lost lock's", v)
		}
	}
	figures := map[string]float64{}
	for _, f := range rep.Figures {
		figures[f.Name] = f.Value
	}
	elected, ok := figures["sentinel: replica elected (+switch-master) after the kill"]
	if detected := figures["sentinel: primary down (+odown) after the kill"]; !ok || detected < 1000 || elected < detected {
		t.Errorf("sentinel timings: down %vms, elected %vms; want the election after the detection, both after the 1s down-after", detected, elected)
	}
}

func TestSlotMigration(t *testing.T) {
	rep := run(t, "slot-migration", options(t))
	if rep.Verdict != results.Pass {
		t.Fatalf("verdict %s (%s), want PASS", rep.Verdict, rep.Reason)
	}
	r := variant(t, rep, "run")
	if r.Safety.Violations != 0 || r.Lost != 0 || len(r.Events) != 1 || r.Events[0].Kind != "slot_migration" {
		t.Errorf("%+v, lost %d, events %+v; want a clean migration with no violation or loss", r.Safety, r.Lost, r.Events)
	}
}

// TestInterruptRevertsAndMarksPartial: Ctrl-C in the middle of a fault
// ends the scenario INCOMPLETE and partial, with its fault reverted (the
// proxies are gone) and its result written.
func TestInterruptRevertsAndMarksPartial(t *testing.T) {
	o := options(t)
	s, _ := scenarios.Find("watchdog-loss")
	ctx, cancel := context.WithCancel(bg)
	o.Logf = func(f string, a ...any) {
		t.Logf(f, a...)
		if strings.Contains(f, "injected") {
			cancel() // mid-partition
		}
	}
	rep := scenarios.Run(ctx, s, o)
	cancel()
	if rep.Verdict != results.Incomplete || !rep.Partial {
		t.Fatalf("verdict %s partial %v (%s); want INCOMPLETE, partial", rep.Verdict, rep.Partial, rep.Reason)
	}
	if len(rep.Runs) != 1 || !rep.Runs[0].Partial || len(rep.Runs[0].Events) != 1 || rep.Runs[0].Events[0].Err != "" {
		t.Fatalf("runs %+v; want one partial run with its reverted fault", rep.Runs)
	}
	if _, err := os.Stat(rep.Runs[0].File); err != nil {
		t.Errorf("partial result not written: %v", err)
	}
}

// TestProcessScenarioSkippedOnExternal: process faults cannot be injected
// into a Redis lockbench did not start: SKIPPED, at once, never PASS.
func TestProcessScenarioSkippedOnExternal(t *testing.T) {
	env := redisenvtest.Start(t)
	o := options(t)
	o.Redis = redisenv.Config{Backend: redisenv.BackendExternal, URL: "redis://" + env.Addr()}
	for _, name := range []string{"redis-restart", "redis-pause", "failover", "cluster-failover", "slot-migration"} {
		began := time.Now()
		rep := run(t, name, o)
		if rep.Verdict != results.Skipped || !strings.Contains(rep.Reason, "external") || !rep.OK() {
			t.Errorf("%s on external Redis: %s (%s); want SKIPPED naming the reason", name, rep.Verdict, rep.Reason)
		}
		if d := time.Since(began); d > 5*time.Second {
			t.Errorf("%s: skipping took %v", name, d)
		}
	}
}

func TestCatalogue(t *testing.T) {
	want := []string{"watchdog-keepalive", "watchdog-loss", "lease-expiry", "latency", "partition-heal", "reset-storm",
		"redis-restart", "redis-pause", "failover", "cluster-failover", "slot-migration", "fair-clock-skew", "node-clock-jump", "client-freeze", "node-restart"}
	if got := scenarios.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	for _, s := range scenarios.All() {
		if s.Summary == "" || len(s.Description) < 100 || s.Invariant == "" || len(s.Variants) == 0 {
			t.Errorf("%s: summary, description, invariant and variants are all needed", s.Name)
		}
		for _, quick := range []bool{true, false} {
			tm := scenarios.TimingFor(quick)
			a, b := scenarios.PlanLines(s, tm, 7), scenarios.PlanLines(s, tm, 7)
			if !slices.Equal(a, b) {
				t.Errorf("%s: same seed, different plans:\n%v\n%v", s.Name, a, b)
			}
		}
	}
	// The storm's burst times come from the seed.
	s, _ := scenarios.Find("reset-storm")
	tm := scenarios.TimingFor(true)
	if slices.Equal(scenarios.PlanLines(s, tm, 7), scenarios.PlanLines(s, tm, 8)) {
		t.Error("reset-storm: seeds 7 and 8 gave the same storm")
	}
	if full, quick := scenarios.TimingFor(false), scenarios.TimingFor(true); full.Watchdog != lockimpl.DefaultWatchdogTimeout || quick.Watchdog >= full.Watchdog {
		t.Errorf("timings: full %v quick %v; full must be Redisson's default", full.Watchdog, quick.Watchdog)
	}
}
