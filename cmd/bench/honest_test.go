package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/clitest"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// TestRunFailsItsErrorThreshold: mutex with a 1 ms wait fails most of its
// tryLocks. The run's throughput counts the successes, the summary says
// FAILED, and the exit code is 1; a threshold the user raises lets it pass.
func TestRunFailsItsErrorThreshold(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--redis", "local", "--profile", "mutex", "--wait", "1ms", "--duration", "1s", "--warmup", "0s", "--quiet", "--out", dir}
	code, out, errOut := runBench(t, args...)
	if code != cli.ExitFailure {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, cli.ExitFailure, out, errOut)
	}
	for _, want := range []string{"FAILED      ", "of operations failed", "over the 1% allowed (--max-error-rate)", "successful of"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "bench: run failed: ") {
		t.Errorf("stderr does not say the run failed:\n%s", errOut)
	}
	r := readResult(t, dir)
	if r.Throughput.Ops >= r.Throughput.Attempts || r.Throughput.OpsPerSec*r.Measured > float64(r.Throughput.Ops)*1.01+1 {
		t.Errorf("throughput %+v over %.2fs counts more than its successes", r.Throughput, r.Measured)
	}
	code, out, errOut = runBench(t, append(args, "--max-error-rate", "100%", "--out", t.TempDir())...)
	if code != cli.ExitOK || strings.Contains(out, "FAILED") {
		t.Errorf("with --max-error-rate 100%%: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestRunRefusesBadTargets: a read-only replica, a wrong password, TLS
// against a plain server, a server that is not Redis (HTTP) and a
// database the server does not have are each refused before any load,
// exit 2, at once.
func TestRunRefusesBadTargets(t *testing.T) {
	env := redisenvtest.Start(t, redisenv.Config{Topology: redisenv.TopologyReplica})
	locked := redisenvtest.Start(t)
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	rdb := locked.NewClient()
	if err := rdb.ConfigSet(context.Background(), "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	rdb.Close()
	for _, tc := range []struct {
		url, want string
	}{
		{"redis://" + env.Nodes()[1].Addr(), "a read-only replica (of " + env.Primary().Addr() + "); point --redis at its primary"},
		{"redis://:wrong-pw@" + locked.Addr(), "authentication failed"},
		{"rediss://:s3cret@" + locked.Addr(), "TLS handshake failed"},
		{"redis://:wrong-pw@" + strings.TrimPrefix(web.URL, "http://"), "not a Redis server: " + strings.TrimPrefix(web.URL, "http://") + " answered something other than Redis's protocol"},
		{"redis://" + env.Primary().Addr() + "/99", "DB index out of range: the server has no database 99"},
	} {
		out := t.TempDir()
		start := time.Now()
		code, _, errOut := runBench(t, "run", "--redis-url", tc.url, "--duration", "1s", "--quiet", "--out", out)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "wrong-pw") {
			t.Errorf("%s: exit %d, want %d saying %q:\n%s", redisenv.Redact(tc.url), code, cli.ExitUsage, tc.want, errOut)
		}
		// Told at once, not after the dial timeout (5 s) as an unreachable
		// server would be; the bound leaves a loaded machine room.
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("%s: refused after %v", redisenv.Redact(tc.url), took)
		}
		if files, _ := filepath.Glob(filepath.Join(out, "*.json")); len(files) != 0 {
			t.Errorf("%s: a load ran: %v", redisenv.Redact(tc.url), files)
		}
	}
}

// TestChecksBeforeTheLoad: what would make a run's end fail is refused
// before anything starts, as bad input naming the field.
func TestChecksBeforeTheLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "afile")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("afile", "x")
	nan := write("nan.yaml", "kind: rw\nread_ratio: .nan\n")
	empty := write("empty.yaml", "")
	twice := write("twice.json", `{"owners": 2, "owners": 3}`)
	long := write("long.yaml", "name: "+strings.Repeat("n", 300)+"\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--out", file}, "--out " + file + ": is a file, not a directory"},
		{[]string{"run", "--memprofile", filepath.Join(file, "mem.prof"), "--out", dir}, "--memprofile " + filepath.Join(file, "mem.prof") + ": " + file + " is a file, not a directory"},
		{[]string{"run", "--memprofile", "/proc/self/new/mem.prof", "--out", dir}, "--memprofile /proc/self/new/mem.prof: cannot create its directory"},
		{[]string{"run", "--cpuprofile", dir, "--out", dir}, "--cpuprofile " + dir + ": is a directory"},
		{[]string{"run", "--profile-file", nan, "--out", dir}, "read_ratio NaN: must be a finite number"},
		{[]string{"run", "--profile-file", empty, "--out", dir}, "the file has no fields"},
		{[]string{"run", "--profile-file", twice, "--out", dir}, "owners: appears twice"},
		{[]string{"run", "--profile-file", long, "--out", dir}, "keep it to 100"},
		{[]string{"run", "--lease", "500us", "--out", dir}, "at least 1ms"},
		{[]string{"run", "--depth", "1:0.7,2:0.7", "--out", dir}, "weights add up to 1.4"},
		{[]string{"run", "--max-error-rate", "150%", "--out", dir}, "--max-error-rate 150%"},
		{[]string{"run", "--topology", "cluster", "--replicas", "-1", "--out", dir}, `--replicas "-1"`},
		{[]string{"help", "nosuch"}, `unknown command "nosuch"`},
	} {
		code, _, errOut := runBench(t, tc.args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("bench %v: exit %d, want %d saying %q:\n%s", tc.args, code, cli.ExitUsage, tc.want, errOut)
		}
	}
	t.Setenv("REDIS_URL", "redis://h:99999")
	var out, errb bytes.Buffer
	if code := program().Main(context.Background(), []string{"run", "--out", dir}, &out, &errb); code != cli.ExitUsage || !strings.Contains(errb.String(), "$REDIS_URL") {
		t.Errorf("a bad $REDIS_URL: exit %d:\n%s", code, errb.String())
	}
}

// TestCompareAndReportOnFailedRuns: a run made of connection errors is not
// compared (its throughput measures nothing), and bench report never
// writes over the results it reads.
func TestCompareAndReportOnFailedRuns(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, run{profile: "rw90", host: "a", start: t0, acquire: time.Millisecond, ops: 500})
	// NEW: as a run whose Redis died at once writes it.
	c := results.NewCollector(t0.Add(time.Hour), 1, 0)
	for k := range 800 {
		at := int64(k+1) * int64(time.Millisecond)
		c.Shard(0).Record(results.Op{Start: at, Called: at, Released: at, Done: at + 100_000, Err: results.ErrConn}, nil, nil)
	}
	dead := c.Finish(t0.Add(time.Hour+time.Second), false, 1, results.Analysis{Labels: results.Labels{Owners: []string{"o0"}, Locks: []string{"l"}}})
	dead.Meta = results.Meta{Profile: "rw90", Host: "a", Start: t0.Add(time.Hour)}
	deadPath, err := results.WriteFiles(filepath.Join(dir, "new"), dead)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := compare(base, deadPath)
	if err == nil || cli.ExitCode(err) != cli.ExitFailure || !strings.Contains(out, "REFUSED: NEW has no successful operation") {
		t.Errorf("compare against a dead run: err %v\n%s", err, out)
	}
	code, _, errOut := runBench(t, "report", "--out", base, dir)
	if code != cli.ExitUsage || !strings.Contains(errOut, "is one of the report's inputs") {
		t.Errorf("report --out over an input: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runBench(t, "report", "--out", deadPath, base)
	if code != cli.ExitUsage || !strings.Contains(errOut, "holds a lockbench result file") {
		t.Errorf("report --out over another result: exit %d\n%s", code, errOut)
	}
	if r, err := results.ReadFile(base); err != nil || r.Throughput.Ops != 500 {
		t.Errorf("the base result after the refused reports: %v", err)
	}
}

// zeroDuration matches a duration of zero printed as a column of its own.
var zeroDuration = regexp.MustCompile(`(^|\s)0(\.0+)?(ns|µs|ms)(\s|$)`)

// TestSweepWhoseRedisDies: Redis killed before the second point. The dead
// point fails (no percentile printed from its empty histogram), no knee is
// named, nothing is said to "still rise", and the sweep exits 1.
func TestSweepWhoseRedisDies(t *testing.T) {
	env := redisenvtest.Start(t)
	dir := t.TempDir()
	var out bytes.Buffer
	errOut := &clitest.LineWriter{OnLine: func(l string) {
		if strings.Contains(l, "point 2 of 3") {
			_ = env.Primary().Kill(context.Background())
		}
	}}
	code := program().Main(context.Background(), []string{"sweep", "--redis-url", "redis://" + env.Addr(), "--profile", "mutex", "--clients", "1,2,4", "--owners", "1",
		"--duration", "1s", "--warmup", "0s", "--stop-after", "0", "--out", dir}, &out, errOut)
	if code != cli.ExitFailure {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out.String(), errOut.String())
	}
	text := out.String()
	for _, want := range []string{"FAILED point 2×1", "no operation succeeded", "no knee is named"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	// A zero duration as a whole column, not a tail of "350.0µs".
	if strings.Contains(text, "still rose") || zeroDuration.MatchString(text) {
		t.Errorf("summary claims a rise or prints an empty percentile:\n%s", text)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sw.Points[1:] {
		if p.MeetsSLO || p.Failure == "" {
			t.Errorf("point %s after the kill: meets %v, failure %q", p.Label(), p.MeetsSLO, p.Failure)
		}
	}
	// go-redis's complaints about the dead server go into the results,
	// never onto the terminal.
	if strings.Contains(errOut.String(), "connection pool") {
		t.Errorf("go-redis's log reached stderr:\n%s", errOut.String())
	}
	last, err := results.ReadFile(filepath.Join(dir, sw.Points[len(sw.Points)-1].File))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(last.ClientLog, "\n"), "connection pool") {
		t.Errorf("the dead point's result has no client log: %q", last.ClientLog)
	}
}

// TestFairQueuesOfAKilledRun: a fair run SIGKILLed mid-run leaves its
// waiters' queue entries with no TTL; the next fair run against the same
// Redis clears them once the killed run's registration has lapsed and its
// waiters' deadlines have passed.
func TestFairQueuesOfAKilledRun(t *testing.T) {
	env := redisenvtest.Start(t)
	rdb := env.NewClient()
	defer rdb.Close()
	ctx := context.Background()
	cmd, _ := startBench(t, "run --redis-url redis://"+env.Addr()+" --profile fair --wait 2s --duration 5m --warmup 0s --out "+t.TempDir(), "bench: running fair")
	// Wait for the event: waiters queued behind the holder.
	var queues []string
	deadline := time.Now().Add(30 * time.Second)
	for len(queues) == 0 && time.Now().Before(deadline) {
		queues, _ = rdb.Keys(ctx, "redisson_lock_queue:{lockbench:fair:*").Result()
	}
	if len(queues) == 0 {
		t.Fatal("the fair run never queued a waiter")
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	timeouts, _ := rdb.Keys(ctx, "redisson_lock_timeout:{lockbench:fair:*").Result()
	if len(timeouts) == 0 {
		t.Fatal("the killed run left no waiter deadlines: nothing to clear")
	}
	if ttl, _ := rdb.PTTL(ctx, timeouts[0]).Result(); ttl != -1 {
		t.Fatalf("%s has TTL %v; the test expects Redisson's none", timeouts[0], ttl)
	}
	// Stand in for the wait a real clean-up needs (the registration lapses
	// 30 s after its last renewal, waiters leave 10 s after their
	// deadline): move those times into the past.
	past := float64(time.Now().Add(-time.Hour).UnixMilli())
	runs, _ := rdb.ZRange(ctx, "lockbench:fair-runs", 0, -1).Result()
	if len(runs) != 1 {
		t.Fatalf("registered fair runs: %q, want the killed one", runs)
	}
	rdb.ZAdd(ctx, "lockbench:fair-runs", redis.Z{Score: past, Member: runs[0]})
	for _, k := range timeouts {
		ids, _ := rdb.ZRange(ctx, k, 0, -1).Result()
		for _, id := range ids {
			rdb.ZAdd(ctx, k, redis.Z{Score: past, Member: id})
		}
	}
	_, errOut := runBenchOK(t, "run", "--redis-url", "redis://"+env.Addr(), "--profile", "fair", "--duration", "500ms", "--warmup", "0s", "--quiet", "--out", t.TempDir())
	if !strings.Contains(errOut, "cleared the fair-lock queues of 1 earlier runs") {
		t.Errorf("the next run did not say it cleared the killed run's queues:\n%s", errOut)
	}
	for _, pattern := range []string{"redisson_lock_queue:{lockbench:fair:*", "redisson_lock_timeout:{lockbench:fair:*"} {
		if left, _ := rdb.Keys(ctx, pattern).Result(); len(left) != 0 {
			t.Errorf("still there after the next run: %v", left)
		}
	}
	if n, _ := rdb.ZCard(ctx, "lockbench:fair-runs").Result(); n != 0 {
		t.Errorf("%d fair runs still registered", n)
	}
}

// TestSignalAfterTheLoadEnded: a Ctrl-C that lands once the load is over
// (here, as the summary is printed) interrupts nothing: exit 0, no
// "interrupt" message, the result complete.
func TestSignalAfterTheLoadEnded(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"=run --redis local --profile mutex --owners 2 --duration 1s --warmup 0s --out "+out,
		"REDIS_URL=", "TMPDIR="+t.TempDir())
	var errText bytes.Buffer
	cmd.Stderr = &errText
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "throughput") {
			_ = cmd.Process.Signal(syscall.SIGINT)
			break
		}
	}
	for sc.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit %v after a SIGINT that landed after the load, want 0\n%s", err, errText.String())
	}
	if strings.Contains(errText.String(), "interrupt") {
		t.Errorf("stderr speaks of an interrupt:\n%s", errText.String())
	}
	if r := readResult(t, out); r.Partial {
		t.Errorf("result marked partial: %s", r.PartialReason)
	}
}

// TestInterruptWhileRedisStalls: Ctrl-C while Redis is SIGSTOPped exits
// promptly (the bound is 0.5 s for in-flight calls plus writing the
// files; it took 22 s before), with the partial result saying so.
func TestInterruptWhileRedisStalls(t *testing.T) {
	env := redisenvtest.Start(t)
	node := env.Primary()
	t.Cleanup(func() { _ = node.Resume(context.Background()) })
	out := t.TempDir()
	cmd, sc := startBench(t, "run --redis-url redis://"+env.Addr()+" --profile rw90 --duration 5m --warmup 0s --out "+out, "bench: running rw90")
	go func() {
		for sc.Scan() {
		}
	}()
	// Let the load run, then freeze Redis under it and interrupt.
	rdb := env.NewClient()
	defer rdb.Close()
	deadline := time.Now().Add(30 * time.Second)
	for n := 0; n == 0 && time.Now().Before(deadline); {
		keys, _ := rdb.Keys(context.Background(), "*lockbench:rw90:*").Result()
		n = len(keys)
	}
	if err := node.Pause(context.Background()); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	took := time.Since(sent)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitInterrupted {
		t.Errorf("exit %v, want %d", err, cli.ExitInterrupted)
	}
	// About 1.5 s on an idle machine (the cut, then the result and its
	// report rendered by a race-built child): 10 s leaves room for a
	// loaded one and still catches the 22 s hang.
	if took > 10*time.Second {
		t.Errorf("bench took %v to exit after Ctrl-C with Redis stalled", took)
	}
	r := readResult(t, out)
	if !r.Partial || !strings.Contains(r.PartialReason, "interrupted") {
		t.Errorf("result: partial %v (%q)", r.Partial, r.PartialReason)
	}
	t.Logf("exited %v after the SIGINT; %s", took.Round(time.Millisecond), r.PartialReason)
}

// TestNoEmptyOutBehind: a run or sweep that never started (Redis
// unreachable) leaves no --out it created, while a directory the user
// already had stays, empty or not; bench report --out into a missing
// directory creates it, as bench run --out does.
func TestNoEmptyOutBehind(t *testing.T) {
	dir := t.TempDir()
	dead := "redis://127.0.0.1:1" // refused at once
	had := filepath.Join(dir, "had")
	if err := os.Mkdir(had, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		out  string
		keep bool
	}{
		{[]string{"run", "--redis-url", dead, "--quiet"}, filepath.Join(dir, "new", "results"), false},
		{[]string{"run", "--redis-url", dead, "--quiet", "--cpuprofile", filepath.Join(dir, "prof", "cpu.prof")}, filepath.Join(dir, "new2"), false},
		{[]string{"sweep", "--redis-url", dead, "--clients", "1,2"}, filepath.Join(dir, "sweep"), false},
		{[]string{"run", "--redis-url", dead, "--quiet"}, had, true},
	} {
		code, _, errOut := runBench(t, append(tc.args, "--out", tc.out)...)
		if code == cli.ExitOK {
			t.Fatalf("bench %v: exit 0 against a dead Redis", tc.args)
		}
		if _, err := os.Stat(tc.out); (err == nil) != tc.keep {
			t.Errorf("bench %v --out %s: exists %v after a run that never started, want %v:\n%s", tc.args, tc.out, err == nil, tc.keep, errOut)
		}
	}
	for _, p := range []string{filepath.Join(dir, "new"), filepath.Join(dir, "prof")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created for a run that never started and left behind", p)
		}
	}

	src := writeRun(t, filepath.Join(dir, "runs"), run{profile: "mutex", host: "h", start: t0, acquire: time.Millisecond, ops: 50})
	report := filepath.Join(dir, "reports", "today", "r.html")
	code, out, errOut := runBench(t, "report", "--out", report, src)
	if code != cli.ExitOK {
		t.Fatalf("bench report --out into a missing directory: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(report); err != nil {
		t.Errorf("report not written: %v", err)
	}
	code, _, errOut = runBench(t, "report", "--out", filepath.Join(dir, "reports2", "r.html"), filepath.Join(dir, "nothing-here"))
	if _, err := os.Stat(filepath.Join(dir, "reports2")); code != cli.ExitUsage || err == nil {
		t.Errorf("a report refused (exit %d) left its --out directory: %v\n%s", code, err, errOut)
	}
}

// TestHoldsCutByTheEnd: holds far longer than the run are cut by its end
// and are no throughput: the run did not finish an operation and says so
// (exit 1), where it counted each cut hold as an operation done.
func TestHoldsCutByTheEnd(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runBench(t, "run", "--redis", "local", "--profile", "rw90", "--hold", "1000h", "--clients", "1", "--owners", "4",
		"--duration", "1s", "--warmup", "0s", "--quiet", "--out", dir)
	if code != cli.ExitFailure {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, cli.ExitFailure, out, errOut)
	}
	for _, want := range []string{"throughput  0.0 ops/s  (0 successful of 0 attempts", "FAILED      no operation finished in the measured time: the run's end cut all 4 short", "cut by the end 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	r := readResult(t, dir)
	if r.Throughput.Ops != 0 || r.Throughput.OpsPerSec != 0 || r.Throughput.Cut != 4 || r.Safety.Sections == 0 {
		t.Errorf("throughput %+v, safety sections %d: want no operation, 4 cut, the holds still checked", r.Throughput, r.Safety.Sections)
	}
}

// TestFairnessOnFewAcquisitions: fairness drawn from the 5 acquisitions
// --max-ops 5 kept of a whole run says it rests on them, in the summary,
// the result and the report.
func TestFairnessOnFewAcquisitions(t *testing.T) {
	dir := t.TempDir()
	out, _ := runBenchOK(t, "run", "--redis", "local", "--profile", "mutex", "--clients", "2", "--owners", "2", "--max-ops", "5",
		"--duration", "1s", "--warmup", "0s", "--quiet", "--out", dir)
	r := readResult(t, dir)
	if r.Fairness.Counted != 5 || r.Fairness.Total <= 5 || !strings.Contains(r.Fairness.Caveat, "rests on 5 of") {
		t.Errorf("result fairness counted %d of %d, caveat %q", r.Fairness.Counted, r.Fairness.Total, r.Fairness.Caveat)
	}
	if !strings.Contains(out, r.Fairness.Caveat) {
		t.Errorf("summary lacks the fairness caveat %q:\n%s", r.Fairness.Caveat, out)
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil || len(pages) != 1 {
		t.Fatalf("report: %v %v", pages, err)
	}
	if b, err := os.ReadFile(pages[0]); err != nil || !strings.Contains(string(b), html.EscapeString(r.Fairness.Caveat)) {
		t.Errorf("report lacks the fairness caveat (%v)", err)
	}
}

// TestSettingsThatCannotTakeEffect: a setting that would silently do
// nothing is refused before anything starts where that can be seen (the
// topology the run starts, a flag whose field the profile ignores), and
// recorded and printed where only the run finds out (an external Redis):
// the result's topology is the one that ran.
func TestSettingsThatCannotTakeEffect(t *testing.T) {
	dir := t.TempDir()
	quick := []string{"--duration", "300ms", "--warmup", "0s", "--clients", "1", "--owners", "2", "--quiet"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile", "rw90-synced", "--topology", "single"}, "replica_sync true: cannot take effect on the single topology: no replica, nothing sent (profile rw90-synced is meant for topology replica)"},
		{[]string{"--profile", "rw90-synced", "--topology", "cluster", "--replicas", "0"}, "replica_sync true: cannot take effect on the cluster topology: no replica"},
		{[]string{"--profile", "mutex", "--impl", "raw", "--topology", "replica"}, "replica_sync true: cannot take effect on the replica topology: raw sends no WAIT"},
		{[]string{"--profile", "rw90", "--zipf-s", "2"}, "--zipf-s 2: has no effect: zipf_s shapes popularity zipf only"},
		{[]string{"--profile", "mutex", "--popularity", "per-owner", "--locks", "8"}, "--locks 8: has no effect: popularity per-owner gives each owner a lock of its own"},
		{[]string{"--profile", "mutex", "--appendfsync", "always"}, "--appendfsync \"always\": sets the AOF's fsync, and started servers keep no AOF without --appendonly"},
		{[]string{"--profile", "mutex", "--appendonly", "--redis-url", "redis://127.0.0.1:1"}, "--appendonly: turns on AOF in servers lockbench starts, and an external Redis keeps the persistence it has"},
	} {
		code, _, errOut := runBench(t, append(append([]string{"run", "--out", filepath.Join(dir, "refused")}, tc.args...), quick...)...)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("bench run %v: exit %d, want %d and one line saying %q:\n%s", tc.args, code, cli.ExitUsage, tc.want, errOut)
		}
	}

	// An external single server: only the run can tell it has no replica.
	single := redisenvtest.Start(t)
	out, _ := runBenchOK(t, append([]string{"run", "--profile", "rw90-synced", "--redis-url", "redis://" + single.Addr(), "--out", dir}, quick...)...)
	if !strings.Contains(out, "\n  no effect: replica_sync: no replica, nothing sent (profile rw90-synced is meant for topology replica)\n") {
		t.Errorf("summary does not say replica sync sent nothing:\n%s", out)
	}
	r := readResult(t, dir)
	b, err := json.Marshal(r.Profile)
	if err != nil {
		t.Fatal(err)
	}
	var ran workloads.Profile
	if err := json.Unmarshal(b, &ran); err != nil {
		t.Fatal(err)
	}
	if ran.Topology != "single" || r.Meta.RedisTopology != "single" || len(r.NoEffect) != 1 {
		t.Errorf("result: profile topology %q, meta topology %q, no effect %q; want single, single and the replica sync note", ran.Topology, r.Meta.RedisTopology, r.NoEffect)
	}
}
