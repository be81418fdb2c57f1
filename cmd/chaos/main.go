// Command chaos runs fault scenarios against Redisson-style Redis locks.
// Each scenario is judged against its expected verdict; chaos matrix runs
// the mitigation matrix.
package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/scenarios"
)

func main() { cli.Exit(program()) }

func program() cli.Program {
	return cli.Program{
		Name: "chaos",
		Synopsis: `chaos injects faults (latency, partitions, resets, Redis pause/kill/restart,
failover, clock skew, client freezes) while Redisson-style locks are in use,
and checks that each scenario's verdict matches its expected one.`,
		Examples: `  chaos list                                    # the scenarios
  chaos describe watchdog-loss --quick          # what it does, its invariant and fault plan
  chaos run watchdog-loss lease-expiry --quick  # two scenarios, scaled down
  chaos run --all --quick --junit chaos.xml     # the suite as make chaos runs it
  chaos run --all --out nightly/                # full timings (Redisson's 30 s watchdog)
  chaos matrix --quick                          # what honour, WAIT and fencing buy, and cost
`,
		Commands: map[string]cli.Command{
			"list":     {Summary: "list the scenarios with their expected verdicts", Run: listCmd},
			"describe": {Summary: "describe a scenario: what happens, the invariant, the fault plan", Run: describeCmd},
			"run":      {Summary: "run scenarios and check their verdicts", Run: runCmd},
			"matrix":   {Summary: "the mitigation matrix: lost updates per scenario and mitigation, and what each costs", Run: matrixCmd},
			"env":      cli.EnvCommand("chaos"),
		},
	}
}

const listUsage = `
Lists the chaos scenarios: name, expected verdict, what needs a Redis that
lockbench starts itself (process faults), and a one-line summary.`

func listCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("chaos", "list", listUsage, stderr)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tEXPECTED\tNEEDS\tSUMMARY")
	for _, s := range scenarios.All() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Expected(), needs(s), s.Summary)
	}
	return tw.Flush()
}

func needs(s *scenarios.Scenario) string {
	var n []string
	if s.Process {
		n = append(n, "process faults")
	}
	if s.Topology != "" {
		n = append(n, string(s.Topology))
	}
	if s.FakeClock {
		n = append(n, "libfaketime (local backend)")
	}
	if len(n) == 0 {
		return "-"
	}
	return strings.Join(n, ", ")
}

const describeUsage = `
Describes scenario NAME: what happens and why it matters, the invariant,
the expected verdict, its variants and the fault plan (times from the start
of each variant). The plan depends on --quick and --seed only: the same seed
always gives the same schedule.`

func describeCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("chaos", "describe NAME", describeUsage, stderr)
	quick := fs.Bool("quick", false, "show the scaled-down timings of --quick")
	seed := fs.Uint64("seed", 1, "seed of the fault schedule")
	names, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(names) != 1 {
		return cli.Usagef("describe needs one scenario name; one of: %s", strings.Join(scenarios.Names(), ", "))
	}
	s, err := find(names[0])
	if err != nil {
		return err
	}
	t := scenarios.TimingFor(*quick)
	fmt.Fprintf(stdout, "%s\n\n%s\n\ninvariant: %s\nexpected:  %s\nneeds:     %s\ntiming:    %s (watchdog timeout %v)\n",
		s.Name, wrap(s.Description, 78), s.Invariant, s.Expected(), needs(s), timingName(*quick), t.Watchdog)
	var vs []string
	for _, v := range s.Variants {
		vs = append(vs, v.Name)
	}
	fmt.Fprintf(stdout, "variants:  %s\n\nfault plan (seed %d):\n", strings.Join(vs, ", "), *seed)
	lines := scenarios.PlanLines(s, t, *seed)
	if len(lines) == 0 {
		fmt.Fprintln(stdout, "  none: the fault is in the configuration (see the description)")
	}
	for _, l := range lines {
		fmt.Fprintf(stdout, "  %s\n", l)
	}
	return nil
}

func timingName(quick bool) string {
	if quick {
		return "quick"
	}
	return "full"
}

func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

func find(name string) (*scenarios.Scenario, error) {
	s, ok := scenarios.Find(name)
	if !ok {
		return nil, cli.Usagef("unknown scenario %q; one of: %s (see chaos list)", name, strings.Join(scenarios.Names(), ", "))
	}
	return s, nil
}

const runUsage = `
Runs the named scenarios (or --all) one after another, each against a Redis
of its own (started per --redis; failover starts a primary and a replica),
with every client behind its own toxiproxy proxy (embedded, or --toxiproxy).

For each scenario it prints the verdict:
  PASS                          the invariant held, as expected
  EXPECTED VIOLATION DETECTED   the scenario provokes a violation and the
                                checker caught it, as expected
  FAIL                          a check came out otherwise (the reason says which)
  SKIPPED                       the Redis cannot host it (process faults on
                                an external server); never counted as a pass
  INCOMPLETE                    interrupted before its checks could be made
with the checks behind it and the figures (violations, unsafe window, lost
acquisitions, throughput under the fault). --out gets a report per scenario
(<scenario>-<time>.chaos.json, with the fault timeline) and each variant's
result (<...>.json and .hlog), and the suite's HTML report with charts
(chaos-<time>.html: verdicts, checks, throughput with fault windows shaded,
holder timelines with overlaps in red); --junit writes JUnit XML for CI
dashboards.

Exit status: 0 when every verdict matches its expectation, 1 otherwise (a
suite whose every scenario was skipped ran nothing, and fails too), 2 on
bad input (a suite of scenarios none of which this Redis can host
included), 130 when interrupted (the reports so far are written, the one
interrupted marked partial, and every fault is reverted).`

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("chaos", "run NAME...|--all", runUsage, stderr)
	all := fs.Bool("all", false, "run every scenario")
	quick := fs.Bool("quick", false, "scaled-down timings (3 s watchdog, seconds-long faults): the suite takes a few minutes")
	seedFlag := fs.String("seed", "1", "seed of the fault schedules: same seed, same schedule")
	out := fs.String("out", "chaos-results", "directory for reports and results (empty: write none)")
	junit := fs.String("junit", "", "also write JUnit XML to this file")
	toxi := fs.String("toxiproxy", "", "external toxiproxy HTTP API, e.g. http://127.0.0.1:8474 (default: embedded in-process)")
	guardFlag := fs.String("guard", "off", "critical sections update a guarded counter in a second Redis and runs report lost updates: off, plain, or fenced (fenced locks, stale tokens refused)")
	guardURL := fs.String("guard-url", "", "with --guard: the counter's Redis (default: a redis-server of its own)")
	var rcfg redisenv.Config
	rcfg.RegisterFlags(fs)
	fs.Lookup("topology").Usage = redisenv.TopologyUsage("each scenario starts its own (failover a primary and a replica), so only single is accepted")
	names, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	gm, err := guard.ParseMode(*guardFlag)
	if err != nil {
		return cli.Usagef("--guard %q: use off, plain or fenced", *guardFlag)
	}
	if *guardURL != "" && gm == guard.Off {
		return cli.Usagef("--guard-url applies with --guard plain or fenced")
	}
	if err := harness.CheckGuardURL(*guardURL); err != nil {
		return err
	}
	if err := cli.CheckRedissonJar(); err != nil {
		return err
	}
	seed, err := strconv.ParseUint(*seedFlag, 10, 64)
	if err != nil {
		return cli.Usagef("--seed %q: want a non-negative integer, e.g. 42", *seedFlag)
	}
	var list []*scenarios.Scenario
	switch {
	case *all && len(names) > 0:
		return cli.Usagef("give scenario names or --all, not both")
	case *all:
		list = scenarios.All()
	case len(names) == 0:
		return cli.Usagef("name the scenarios to run, or --all; one of: %s", strings.Join(scenarios.Names(), ", "))
	}
	for _, name := range names {
		s, err := find(name)
		if err != nil {
			return err
		}
		list = append(list, s)
	}
	if err := rcfg.Validate(); err != nil {
		return err
	}
	if rcfg.Topology != "" && rcfg.Topology != redisenv.TopologySingle {
		return cli.Usagef("--topology %s: scenarios choose their own topology (failover starts a primary and a replica); drop --topology", rcfg.Topology)
	}
	var made cli.Created
	defer func() { made.Prune() }() // a suite that ran nothing wrote nothing
	if *out != "" {
		m, err := cli.CheckOutDir("--out", *out)
		if err != nil {
			return err
		}
		made = append(made, m...)
	}
	if *junit != "" {
		m, err := cli.CheckOutFile("--junit", *junit)
		if err != nil {
			return err
		}
		made = append(made, m...)
	}
	if err := harness.CheckRunnable(list, rcfg); err != nil {
		return err
	}
	if err := harness.CheckFaketime(list, rcfg); err != nil {
		return err
	}
	tp := faults.NewEmbedded()
	if *toxi != "" {
		if tp, err = faults.Connect(ctx, *toxi); err != nil {
			return err
		}
	}
	defer tp.Close()
	fmt.Fprintf(stderr, "chaos: %s, %s timings, seed %d, %s\n", results.Count(len(list), "scenario"), timingName(*quick), seed, tp)

	logw := cli.Locked(stderr) // faults and actors log from their own goroutines
	logf := func(f string, a ...any) { fmt.Fprintf(logw, "  "+f+"\n", a...) }
	opts := scenarios.Options{Redis: rcfg, Toxiproxy: tp, Quick: *quick, Seed: seed, Out: *out, Logf: logf}
	rcfg.Logf = logf
	opts.Redis = rcfg
	o, err := harness.Chaos(ctx, harness.ChaosOptions{
		Scenarios: list, Run: opts, Out: *out, JUnit: *junit, Version: cli.VersionString(), Guard: gm, GuardURL: *guardURL,
		Starting: func(i int, s *scenarios.Scenario) { fmt.Fprintf(stderr, "chaos: [%d/%d] %s\n", i+1, len(list), s.Name) },
		Done: func(rep *results.ChaosReport, path string) {
			_ = report.WriteChaosSummary(stdout, rep)
			if path != "" {
				fmt.Fprintf(stdout, "  report: %s\n", path)
			}
		},
	})
	if err != nil {
		return err
	}
	if o.JUnit != "" {
		fmt.Fprintf(stdout, "junit: %s\n", o.JUnit)
	}
	if o.HTML != "" {
		fmt.Fprintf(stdout, "html report: %s\n", o.HTML)
	}
	cli.LoadEnded(ctx)
	if err := report.WriteChaosTally(stdout, o.Reports, time.Since(o.Began)); err != nil {
		return err
	}
	return o.Verdict(ctx, len(list))
}

const matrixUsage = `
Runs the mitigation matrix. Each scenario in which holds are lost runs once
per mitigation, its critical sections updating a guarded counter in a
second Redis (read, hold, write; started here unless --guard-url):

  none              holders carry on after a loss (Redisson's API); no WAIT
  honour            holders stop at Lost() and do not write
  wait              replica sync (WAIT) after every acquisition, for the
                    replicas INFO counts
  min-acks          WAIT for one replica whatever INFO counts; fewer acks:
                    the acquisition is given back and refused
  min-replicas      the server refuses writes without a current replica
                    (min-replicas-to-write 1, min-replicas-max-lag 3)
  fencing           fenced locks; the store refuses a token lower than the
                    highest it saw
  honour+fencing    both: held to 0 lost updates wherever either alone is
  redlock           redsync on five independent primaries (quorum 3);
                    holders stop when their validity ends
  redisson          a real Redisson holder, as configured by default
                    (checkLockSyncedSlaves on: a lock no replica it
                    counts acknowledged is refused)
  redisson-nocheck  checkLockSyncedSlaves off: Redisson still sends WAIT
                    but keeps a lock no replica acknowledged
  redisson+fencing  Redisson's fenced lock and the fencing store

Each cell gives lost updates (writes the store applied minus the counter's
final value: no clocks needed), violations, the unsafe window, stale
writes refused and acquisitions refused, and is judged against its
expected verdict (--expected prints them all with their reasons). Then
each lockimpl mitigation runs the mutex workload on a healthy primary and
replica, and again with the replica killed: what it costs in acquire
latency and throughput, and how many acquisitions it refuses while the
replica is gone; a figure far below its healthy run's comes with its
cause (refusals, failures, or slower acquisitions and releases, and why).
Cells without a topology of their own run on a primary
and a replica; the failover row on Sentinel (local backend). Exit 1 when
any cell misses its verdict, or when nothing ran (every cell skipped); 2
on bad input, such as a lock Redis of your own (--redis-url or
$REDIS_URL: the matrix starts, kills and fails over its own); 130 when
interrupted (what ran is written, marked PARTIAL).

--plant-broken-fencing plants a bug (the fenced store accepts lower
tokens): the fencing cells must then fail, which shows the gate works.
With --only, include a scenario where fencing alone is gated, for it to
fail: `

func matrixCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("chaos", "matrix", matrixUsage+harness.OrList(scenarios.FencingGated())+".", stderr)
	quick := fs.Bool("quick", false, "scaled-down timings (3 s watchdog; the Sentinel failover row 15 s): about 14 minutes")
	seedFlag := fs.String("seed", "1", "seed of the fault schedules")
	out := fs.String("out", "chaos-results", "directory for the matrix file and the cells' results (empty: write none)")
	only := fs.String("only", "", "comma-separated scenarios (default: all of "+strings.Join(scenarios.MitigationScenarios(), ", ")+")")
	noCosts := fs.Bool("no-costs", false, "skip the healthy runs that measure each mitigation's cost")
	guardURL := fs.String("guard-url", "", "the guarded counter's Redis (default: a redis-server of its own)")
	plant := fs.Bool("plant-broken-fencing", false, "plant a fenced store that accepts lower tokens (the matrix must fail)")
	expected := fs.Bool("expected", false, "print every cell's expected verdict and why, as Markdown, and run nothing")
	var rcfg redisenv.Config
	rcfg.RegisterFlags(fs)
	fs.Lookup("topology").Usage = redisenv.TopologyUsage("the matrix chooses its cells' topologies (a primary and a replica), so leave it out")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *expected {
		_, err := io.WriteString(stdout, scenarios.ExpectationsMarkdown(true))
		return err
	}
	seed, err := strconv.ParseUint(*seedFlag, 10, 64)
	if err != nil {
		return cli.Usagef("--seed %q: want a non-negative integer, e.g. 42", *seedFlag)
	}
	var list []string
	if *only != "" {
		list = strings.Split(*only, ",")
	}
	if err := rcfg.Validate(); err != nil {
		return err
	}
	if rcfg.Topology != "" {
		return cli.Usagef("--topology %s: the matrix chooses its topologies (a primary and a replica); drop --topology", rcfg.Topology)
	}
	if err := harness.CheckGuardURL(*guardURL); err != nil {
		return err
	}
	if err := cli.CheckRedissonJar(); err != nil {
		return err
	}
	if _, err := redisson.FindJar(); err != nil {
		// Said before the first cell, not only in each skipped one.
		fmt.Fprintf(stderr, "chaos: the Redisson columns will be skipped: %v\n", err)
	}
	o := harness.MitigationOptions{
		Run:      scenarios.Options{Redis: rcfg, Quick: *quick, Seed: seed, Out: *out},
		GuardURL: *guardURL, PlantBrokenFencing: *plant, Only: list, NoCosts: *noCosts, Out: *out, Version: cli.VersionString(),
	}
	if err := harness.CheckMitigation(o); err != nil {
		return err
	}
	if *out != "" {
		made, err := cli.CheckOutDir("--out", *out)
		if err != nil {
			return err
		}
		defer made.Prune()
	}
	tp := faults.NewEmbedded()
	defer tp.Close()
	logw := cli.Locked(stderr)
	logf := func(f string, a ...any) { fmt.Fprintf(logw, "  "+f+"\n", a...) }
	o.Run.Redis.Logf, o.Run.Logf, o.Run.Toxiproxy = logf, logf, tp
	o.Progress = func(s string) { fmt.Fprintf(logw, "chaos: matrix: %s\n", s) }
	fmt.Fprintf(stderr, "chaos: mitigation matrix, %s timings, seed %d, %s\n", timingName(*quick), seed, tp)
	m, path, err := harness.Mitigation(ctx, o)
	if m != nil {
		_ = report.WriteMitigationSummary(stdout, m)
	}
	if path != "" {
		fmt.Fprintf(stdout, "matrix file: %s\nhtml report: %s\n", path, strings.TrimSuffix(path, ".json")+".html")
	}
	cli.LoadEnded(ctx)
	if err != nil {
		return err
	}
	return harness.MitigationVerdict(ctx, m)
}
