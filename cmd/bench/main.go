// Command bench measures Redisson-style Redis locks under workload
// profiles. Its commands run, sweep, report, compare and merge, and
// measure the implementations side by side (perf).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

func main() { cli.Exit(program()) }

func program() cli.Program {
	return cli.Program{
		Name: "bench",
		Synopsis: `bench drives Redisson-compatible Redis locks (every kind of Redisson's lock
family a profile can name) with a workload profile against a real Redis and
reports throughput, latency percentiles, fairness and mutual-exclusion safety.`,
		Examples: `  bench run --profile rw90                      # local redis-server, rw90 profile
  bench run --profile mutex --owners 16 --duration 10s
  bench run --profile mutex --impl redsync      # the same workload on a peer library
  bench run --profile-file my.yaml --redis redis://10.0.0.5:6379/0
  bench profiles                                # the built-in profiles
  bench profiles show rw90 > my.yaml            # a profile to copy and edit
  bench perf                                    # harness overhead, scale, handoff
  bench sweep --profile rw90 --clients 1,2,4,8,16,32,64 --slo-p99 10ms
  bench report bench-results --format md        # a report of every run in a directory
  bench compare base.json new.json --max-regression 10%   # CI gate: exit 1 on regression
  bench merge host1/ host2/ --out merged        # runs of several load machines as one
  bench run --workers 3 --spawn-local           # one run spread over 3 worker processes
  bench collect --run-id ID                     # merge what a run's workers pushed ($REDIS_URL)
  bench env                                     # which Redis a run would use
`,
		Commands: map[string]cli.Command{
			"run":      {Summary: "run a workload profile and report", Run: runCmd},
			"profiles": {Summary: "list the built-in profiles, or show one as YAML", Run: profilesCmd},
			"perf":     {Summary: "measure the harness: overhead vs redis-benchmark, scale, handoff", Run: perfCmd},
			"env":      cli.EnvCommand("bench"),
			"impls":    {Summary: "list the lock implementations --impl can drive", Run: implsCmd},
			"compare":  {Summary: "compare two results; exit 1 when throughput or acquire p99 regressed", Run: compareCmd},
			"merge":    {Summary: "merge results of one profile run on several machines against one Redis", Run: mergeCmd},
			"collect":  {Summary: "gather the results a run's workers (run --workers) pushed to the store, and merge them", Run: collectCmd},
			"report":   {Summary: "turn result files into an HTML or Markdown report with charts", Run: reportCmd},
			"sweep":    {Summary: "capacity planning: run a profile over settings, find the SLO limit and the knee", Run: sweepCmd},
		},
	}
}

const runUsage = `
Runs a workload profile against Redis: owners (goroutines with their own
lock identity) across clients (each its own connection pool, like separate
JVMs) acquire, hold and release Redisson-compatible locks. It reports
throughput, HdrHistogram latency percentiles (acquire by mode, nested,
release, hold, wait, handoff, and PING for reference), fairness across
owners, and a mutual-exclusion check over every critical section.

--impl picks the lock implementation (bench impls lists them): lockimpl,
the raw scripts with no client logic, or a peer library. One lacking what
the profile needs (read-write, fair, reentrancy, a watchdog its holds
depend on) is refused, naming the feature; nothing is emulated.

The profile comes from --profile (a built-in: see bench profiles) or
--profile-file (YAML or JSON; bench profiles show rw90 prints one to edit).
The flags below the profile flags override single fields.

Throughput counts successful operations only: a tryLock that timed out, a
refused connection or a Redis error is an attempt, counted by class with
its first messages verbatim. A run fails (exit 1, after writing its
files) when more than --max-error-rate of its operations failed, when none
succeeded, when Redis stalled, on a safety violation, or when the guarded
counter lost updates.

A paused or unreachable Redis cannot stretch a run: calls still waiting
2s after the planned end (0.5s after Ctrl-C) are cut, counted as failed
("stalled") with the time they had waited, and the result is marked
partial with the reason.

Results go to --out as <profile>-<time>.json (schema lockbench.result/v2),
<profile>-<time>.hlog (HdrHistogram interval log) and <profile>-<time>.html
(the report with charts; bench report makes others). Every output path is
checked before the load starts. Ctrl-C stops the load, releases held
locks, writes the partial result ("partial": true) and exits 130; a second
Ctrl-C exits at once.`

// overrides maps flags to the profile fields they set.
var overrides = []struct{ flag, field, usage string }{
	{"duration", "duration", "measured time after warmup, e.g. 30s"},
	{"warmup", "warmup", "warmup excluded from the results, e.g. 5s (0: none)"},
	{"ops", "ops", "end after this many measured operations"},
	{"clients", "clients", "lockimpl clients, each with its own connection pool"},
	{"owners", "owners", "owners per client"},
	{"locks", "locks", "number of lock names"},
	{"rate", "rate", "open loop: target ops/s across all owners (0: closed loop)"},
	{"read-ratio", "read_ratio", "share of read acquisitions (kind rw), 0..1"},
	{"depth", "depth", "nested acquisitions per operation: N or 1:0.7,2:0.3"},
	{"hold", "hold", "hold time: 200us, uniform(100us,1ms) or exp(200us)"},
	{"think", "think", "think time between operations (closed loop)"},
	{"lease", "lease", "watchdog, or a fixed lease such as 10s"},
	{"wait", "wait", "tryLock wait time per acquisition (0: until the run ends)"},
	{"popularity", "popularity", "uniform, zipf or per-owner"},
	{"zipf-s", "zipf_s", "zipf exponent (> 1)"},
	{"seed", "seed", "random seed"},
	{"replica-sync", "replica_sync", "true: on a primary with replicas, WAIT for one after each acquisition (Redisson's default); false: send nothing"},
	{"auto-pipeline", "auto_pipeline", "true: each lockimpl client batches the lock commands of a crowd of owners that send again at once, on go-redis's autopipeliner; other commands go as on a plain client (lockimpl only)"},
	{"guard", "guard", "critical sections update a counter in a second Redis (read, hold, write; readers only enter and leave): off, plain, or fenced (kind fenced: stale tokens refused); lost updates and who was inside are counted"},
}

type runFlags struct {
	redis    redisenv.Config
	maxErr   percent
	impl     string
	profile  string
	file     string
	out      string
	quiet    bool
	json     bool
	maxOps   int
	cpuProf  string
	memProf  string
	guardURL string
	guardKey string
	spin     bool
	override map[string]string
	workers  workerFlags // bench run only
	// profileSet: --profile was given (its default is rw90).
	profileSet bool
}

// register adds the run flags to fs; the profile fields named in skip get
// no override flag (a sweep lists values for them instead), and "quiet",
// "json" and "profiling" (--cpuprofile, --memprofile) in skip drop those
// flags.
func (f *runFlags) register(fs *flag.FlagSet, skip ...string) {
	f.redis.RegisterFlags(fs)
	fs.Lookup("topology").Usage = redisenv.TopologyUsage("not given, the profile's topology field decides (rw90-synced's is replica), else single")
	f.profile = "rw90"
	fs.Func("profile", "built-in profile (bench profiles lists them; default rw90)", func(v string) error {
		return setOnce(&f.profile, &f.profileSet, "--profile", v)
	})
	fs.StringVar(&f.impl, "impl", impls.Default, "lock implementation: "+strings.Join(impls.Names(), ", ")+" (see bench impls)")
	fileSet := false
	fs.Func("profile-file", "profile file, YAML or JSON (instead of --profile)", func(v string) error {
		return setOnce(&f.file, &fileSet, "--profile-file", v)
	})
	fs.StringVar(&f.out, "out", "bench-results", "directory for the result files")
	if !slices.Contains(skip, "quiet") {
		fs.BoolVar(&f.quiet, "quiet", false, "no progress line")
	}
	if !slices.Contains(skip, "json") {
		fs.BoolVar(&f.json, "json", false, "print the result JSON on stdout instead of the summary table")
	}
	fs.IntVar(&f.maxOps, "max-ops", results.DefaultMaxOps, "operations kept for the safety and fairness analyses")
	fs.StringVar(&f.guardURL, "guard-url", "", "with guard plain or fenced: the guarded counter's Redis (redis://...; default: a redis-server of its own, never the lock's)")
	fs.StringVar(&f.guardKey, "guard-key", "", "with --guard-url: the counters' key, the same on every machine of one run so that one store counts them all (bench merge then merges the lost updates); default: a fresh key")
	fs.BoolVar(&f.spin, "spin-waits", false, "every wait (holds, think times, open-loop pacing) spins its last stretch to the deadline: exact, at the cost of up to a core taken from the host, and from Redis where it shares it; by default waits sleep on a high-resolution timer and holds spin at most their last tens of µs, only while the host has an idle core (the summary says which ran, and what it cost)")
	f.maxErr = percent(100 * results.DefaultMaxErrorRate)
	fs.Var(&f.maxErr, "max-error-rate", "fail the run when more than this `percentage` of its operations failed (timeouts, connection and Redis errors), e.g. 1% or 0 (none)")
	if !slices.Contains(skip, "profiling") {
		fs.StringVar(&f.cpuProf, "cpuprofile", "", "write a pprof CPU profile of the run (the load, not Redis's start) to this file")
		fs.StringVar(&f.memProf, "memprofile", "", "write a pprof allocation profile (allocs) at the end of the run to this file")
	}
	f.override = map[string]string{}
	for _, o := range overrides {
		if slices.Contains(skip, o.field) {
			continue
		}
		fs.Func(o.flag, o.usage, func(s string) error {
			return f.setOverride(o.field, s)
		})
	}
}

// setOnce sets a flag that names the profile: given twice, the values
// must agree, or which profile runs would be the order's accident.
func setOnce(dst *string, set *bool, flag, v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return errors.New("empty value: name a profile")
	case *set && v != *dst:
		return fmt.Errorf("given twice, as %q and %q: give one", *dst, v)
	}
	*dst, *set = v, true
	return nil
}

// setOverride keeps a profile field's flag value for load. An empty value
// would leave the profile's own in place unnoticed, and one that looks
// like a flag is a value forgotten before the next flag (which the flag
// package took as this one's value): both are refused here.
func (f *runFlags) setOverride(field, v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return fmt.Errorf("empty value: give one (as in the profile's %s field), or leave the flag out to keep the profile's", field)
	case strings.HasPrefix(v, "-") && len(v) > 1 && (v[1] < '0' || v[1] > '9') && v[1] != '.':
		return fmt.Errorf("no value given (%q is the next flag): give one, as in the profile's %s field", v, field)
	}
	f.override[field] = v
	return nil
}

// load resolves the profile and applies the flag overrides, refusing bad
// input (a profile the implementation cannot serve included) before
// anything starts.
func (f *runFlags) load() (workloads.Profile, error) {
	var p workloads.Profile
	var err error
	if f.file != "" && f.profileSet {
		return p, cli.Usagef("--profile %s and --profile-file %s: give one (bench profiles show %s > my.yaml gives a built-in to edit)", f.profile, f.file, f.profile)
	}
	if f.file != "" {
		p, err = workloads.LoadFile(f.file)
	} else {
		p, err = workloads.Builtin(f.profile)
	}
	if err != nil {
		return p, err
	}
	for _, o := range overrides {
		if v, ok := f.override[o.field]; ok {
			if err := p.Set(o.field, v); err != nil {
				return p, cli.Usagef("--%s: %v", o.flag, err)
			}
		}
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	for _, o := range overrides {
		if _, given := f.override[o.field]; given {
			if why := p.Ignored(o.field); why != "" {
				return p, cli.Usagef("--%s %s: has no effect: %s (or drop --%s)", o.flag, f.override[o.field], why, o.flag)
			}
		}
	}
	impl, err := impls.Lookup(f.impl)
	if err != nil {
		return p, err
	}
	if _, err := impl.Check(p); err != nil {
		return p, err
	}
	if _, started := f.redis.PlannedReplicas(); f.redis.Topology == "" && p.Topology != "" && started {
		// The profile's topology, unless the flags chose one or a Redis
		// (--redis-url or $REDIS_URL).
		f.redis.Topology = redisenv.Topology(p.Topology)
	}
	if err := f.redis.Validate(); err != nil {
		return p, err
	}
	// A replica sync that cannot take effect on the topology the run will
	// start is refused; on an external Redis the run finds out and says.
	if n, known := f.redis.PlannedReplicas(); known {
		if what, fix := workloads.ReplicaSyncGap(impl, p, n); what != "" {
			topo := f.redis.Topology
			if topo == "" {
				topo = redisenv.TopologySingle
			}
			return p, &workloads.FieldError{Field: "replica_sync", Value: "true",
				Fix: fmt.Sprintf("cannot take effect on the %s topology: %s; %s", topo, what, fix)}
		}
	}
	if f.maxOps < 1 {
		return p, cli.Usagef("--max-ops %d: must be at least 1", f.maxOps)
	}
	if f.maxErr > 100 {
		return p, cli.Usagef("--max-error-rate %s: must be between 0%% and 100%%, e.g. 1%%", f.maxErr.String())
	}
	guardURL := cli.Sourced{Value: f.guardURL, From: "--guard-url"}
	if gm, _ := guard.ParseMode(p.Guard); gm != guard.Off && f.guardURL == "" {
		guardURL = cli.FlagOrEnv("guard-url", "", envGuardURL)
		f.guardURL = guardURL.Value
	}
	if gm, _ := guard.ParseMode(p.Guard); gm == guard.Off && (f.guardURL != "" || f.guardKey != "") {
		return p, cli.Usagef("--guard-url and --guard-key apply with guard plain or fenced (--guard or the profile's guard field)")
	}
	if f.guardKey != "" && f.guardURL == "" {
		return p, cli.Usagef("--guard-key %q: a shared key needs a shared store; give --guard-url too", f.guardKey)
	}
	if err := harness.CheckGuardURL(f.guardURL); err != nil {
		return p, guardURL.Blame(err)
	}
	return p, nil
}

// errorLimit is --max-error-rate as workloads.Config.MaxErrorRate takes it:
// a share, negative for none allowed.
func (f *runFlags) errorLimit() float64 {
	if f.maxErr == 0 {
		return -1
	}
	return float64(f.maxErr) / 100
}

// checkOutputs refuses, before anything starts, an output the run could
// not write at its end: losing a whole run to a bad path is worse than
// being told at once. It returns the directories it created, which the
// caller prunes when the run wrote nothing into them.
func (f *runFlags) checkOutputs() (cli.Created, error) {
	made, err := cli.CheckOutDir("--out", f.out)
	if err != nil {
		return nil, err
	}
	for _, o := range []struct{ flag, path string }{{"--cpuprofile", f.cpuProf}, {"--memprofile", f.memProf}} {
		if o.path == "" {
			continue
		}
		m, err := cli.CheckOutFile(o.flag, o.path)
		made = append(made, m...)
		if err != nil {
			made.Prune()
			return nil, err
		}
	}
	return made, nil
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("bench", "run", runUsage, stderr)
	var f runFlags
	f.register(fs)
	f.workers.register(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var p workloads.Profile
	if err := cli.ReadInputs(ctx, func() (err error) {
		if p, err = f.load(); err != nil {
			return err
		}
		return f.workers.check(&f, p)
	}); err != nil {
		return err
	}
	made, err := f.checkOutputs()
	if err != nil {
		return err
	}
	defer made.Prune() // a run that never started wrote nothing
	var res *results.Result
	var path string
	if f.workers.spawn {
		res, path, err = spawnLocal(ctx, f, p, cli.Locked(stderr), args)
		if res == nil {
			return err
		}
	} else {
		var werr error
		if res, path, werr = runOne(ctx, f, p, stderr, args); res == nil {
			return werr
		}
		err = werr
	}
	return finish(res, path, err, f.json, stdout)
}

// finish draws the report of the result just written to path, prints the
// summary (or the JSON) and returns the run's exit: err (how the run
// ended), else its verdict.
func finish(res *results.Result, path string, err error, asJSON bool, stdout io.Writer) error {
	// The report is drawn from the files just written, as bench report
	// would; a failure to draw it loses no result.
	html := strings.TrimSuffix(path, ".json") + ".html"
	in, rerr := report.Load(path)
	if rerr == nil {
		rerr = report.Write(html, in, report.Options{Generator: cli.VersionString()})
	}
	if asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		if err := report.WriteSummary(stdout, res); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "result      %s\n", path)
		if rerr == nil {
			fmt.Fprintf(stdout, "report      %s\n", html)
		}
	}
	if rerr != nil {
		// %v: a report's trouble is never the run's bad input (exit 2).
		err = errors.Join(err, fmt.Errorf("report: %v", rerr))
	}
	if err != nil {
		return err
	}
	return runVerdict(res, path)
}

// runVerdict is the error a finished run exits with: every reason it
// failed (Result.Failures), or nil.
func runVerdict(res *results.Result, path string) error {
	var errs []error
	for _, f := range res.Failures() {
		errs = append(errs, fmt.Errorf("run failed: %s (details in %s)", f.Text, path))
	}
	return errors.Join(errs...)
}

// runOne runs p on this machine and writes its files, returning the
// result and the path of its JSON; a worker of several also pushes them
// to the workers' store for bench collect.
func runOne(ctx context.Context, f runFlags, p workloads.Profile, stderr io.Writer, args []string) (*results.Result, string, error) {
	var worker *harness.WorkerOptions
	if f.workers.spread() {
		store, err := harness.OpenWorkerStore(ctx, f.redis, f.guardURL)
		if err != nil {
			return nil, "", err
		}
		defer store.Close()
		worker = f.workers.options(store)
		if f.guardKey == "" {
			f.guardKey = harness.GuardKey(worker.RunID)
		}
	}
	res, err := bench(ctx, f, p, stderr, args, worker)
	if res == nil {
		return nil, "", err
	}
	path, werr := results.WriteFiles(f.out, res)
	if werr != nil {
		return nil, "", errors.Join(err, werr)
	}
	if worker != nil && res.Worker != nil {
		// Pushed even when interrupted: the collector merges what ran.
		if perr := worker.Push(context.WithoutCancel(ctx), path, res); perr != nil {
			err = errors.Join(err, fmt.Errorf("%v (the result stays in %s)", perr, path))
		}
	}
	return res, path, err
}

// bench starts Redis, runs p and closes Redis, returning what was measured.
func bench(ctx context.Context, f runFlags, p workloads.Profile, stderr io.Writer, args []string, worker *harness.WorkerOptions) (*results.Result, error) {
	env, err := cli.StartEnvFor(ctx, f.redis, stderr)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	impl, _ := impls.Lookup(f.impl) // checked by load
	o := harness.RunOptions{
		GuardURL:     f.guardURL,
		GuardKey:     f.guardKey,
		Profile:      p,
		Impl:         impl,
		MaxOps:       f.maxOps,
		MaxErrorRate: f.errorLimit(),
		SpinWaits:    f.spin,
		Logf:         func(format string, a ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", a...) },
		Meta:         harness.Meta(env, cli.VersionString(), args, impl.Name()),
		Worker:       worker,
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "bench: running %s on %s (%s); Ctrl-C stops it and keeps the partial result\n", p.Name, f.impl, runLength(p))
		for _, n := range env.Nodes() {
			if n.PID() > 0 {
				fmt.Fprintf(stderr, "bench: redis %s at %s pid %d\n", n.Name(), n.Addr(), n.PID())
			}
		}
		if !f.json {
			o.Progress = progressLine(stderr)
		}
	}
	stopProf, err := startProfiles(f.cpuProf, f.memProf)
	if err != nil {
		return nil, err
	}
	res, err := harness.Run(ctx, env, o)
	// From here on a Ctrl-C interrupts nothing: the files get written.
	cli.LoadEnded(ctx)
	if perr := stopProf(); perr != nil {
		err = errors.Join(err, perr)
	}
	if o.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	return res, err
}

func runLength(p workloads.Profile) string {
	var parts []string
	if p.Duration > 0 {
		parts = append(parts, fmt.Sprintf("%v after %v warmup", time.Duration(p.Duration), time.Duration(p.Warmup)))
	}
	if p.Ops > 0 {
		parts = append(parts, fmt.Sprintf("%d measured operations", p.Ops))
	}
	return strings.Join(parts, " or ")
}

// progressLine redraws one status line on a terminal; on a pipe or file it
// prints nothing, so logs stay clean.
func progressLine(w io.Writer) func(workloads.Progress) {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return func(p workloads.Progress) { fmt.Fprintf(f, "\r\033[K%s", p) }
}

const profilesUsage = `
Lists the built-in workload profiles, or with "show NAME" prints one as
YAML: every field with a comment, ready to save, edit and pass to
bench run --profile-file.`

func profilesCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("bench", "profiles [show NAME]", profilesUsage, stderr)
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) == 0:
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		for _, p := range workloads.Builtins() {
			fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Description)
		}
		return tw.Flush()
	case rest[0] == "show" && len(rest) == 2:
		b, err := workloads.BuiltinYAML(rest[1])
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	}
	return cli.Usagef("usage: bench profiles [show NAME]; got %q", strings.Join(rest, " "))
}

const implsUsage = `
Lists the lock implementations bench run, sweep and perf can drive with
--impl, and what each is. Peers lacking a feature a profile needs refuse
the profile; bench perf runs them side by side.`

func implsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("bench", "impls", implsUsage, stderr)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, i := range impls.All() {
		fmt.Fprintf(tw, "%s\t%s\n", i.Name, i.Summary)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%s: Redisson's Config as its docs advise for throughput (default → tuned: why):\n", impls.RedissonTunedName)
	for _, t := range impls.RedissonTuning(workloads.Profile{}) {
		fmt.Fprintf(stdout, "  %s: %s → %s: %s\n", t.Name, t.Default, t.Tuned, t.Reason)
	}
	return nil
}

// startProfiles starts a CPU profile to cpu and returns the function that
// stops it and writes the allocation profile to mem (either may be "").
func startProfiles(cpu, mem string) (func() error, error) {
	var cf *os.File
	if cpu != "" {
		var err error
		if cf, err = os.Create(cpu); err != nil {
			return nil, cli.Usagef("--cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(cf); err != nil {
			cf.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	return func() error {
		var errs []error
		if cf != nil {
			pprof.StopCPUProfile()
			errs = append(errs, cf.Close())
		}
		if mem != "" {
			mf, err := os.Create(mem)
			if err != nil {
				return errors.Join(append(errs, fmt.Errorf("--memprofile: %w", err))...)
			}
			errs = append(errs, pprof.Lookup("allocs").WriteTo(mf, 0), mf.Close())
		}
		return errors.Join(errs...)
	}, nil
}
