package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

const sweepUsage = `
Answers "how far can we go": runs the profile at each listed setting, one
point after another against the same Redis, and reports the highest
throughput whose acquire p99 meets the SLO, the concurrency (or offered
rate) where it is reached, where throughput saturates (the knee: the
first point within 10% of the peak), and the headroom at the profile's
own setting.

Listed values cross: --clients 1,2,4 --read-ratio 0.5,0.9 is six points,
two curves. The x axis is concurrency (clients × owners) unless several
--rate values are given (open loop), then the offered rate. A curve stops
once --stop-after points in a row break the SLO (a point breaks it with
p99 over --slo-p99, more than --max-error-rate of its operations failed,
no successful operation, a stalled Redis, or a safety violation). A curve
with a failed point names no knee: a failure is not saturation.

--out gets points/ (each point's result and histogram log), sweep.json
(schema lockbench.sweep/v1), capacity-throughput.png, capacity-p99.png and
report.html. Ctrl-C stops the current point, keeps every finished one,
writes the sweep and report marked partial, and exits 130.`

type listFlag[T any] struct {
	vals  []T
	parse func(string) (T, error)
	hint  string
}

func (l *listFlag[T]) String() string { return "" }

func (l *listFlag[T]) Set(s string) error {
	l.vals = nil
	for part := range strings.SplitSeq(s, ",") {
		v, err := l.parse(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("%q: want a comma-separated list such as %s", part, l.hint)
		}
		l.vals = append(l.vals, v)
	}
	return nil
}

func sweepCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("bench", "sweep", sweepUsage, stderr)
	var f runFlags
	f.register(fs, "clients", "owners", "read_ratio", "rate", "duration", "quiet", "json", "profiling")
	clients := &listFlag[int]{parse: strconv.Atoi, hint: "1,2,4,8,16,32,64"}
	owners := &listFlag[int]{parse: strconv.Atoi, hint: "1,4,16"}
	ratios := &listFlag[float64]{parse: parseFloat, hint: "0.5,0.9,0.99"}
	rates := &listFlag[float64]{parse: parseFloat, hint: "1000,2000,4000"}
	fs.Var(clients, "clients", "lockimpl clients per point, e.g. 1,2,4,8,16,32,64 (default: the profile's)")
	fs.Var(owners, "owners", "owners per client per point, e.g. 1,4,16 (default: the profile's)")
	fs.Var(ratios, "read-ratio", "read shares per point, e.g. 0.5,0.9,0.99 (kind rw; default: the profile's)")
	fs.Var(rates, "rate", "open-loop ops/s per point, e.g. 1000,2000,4000 (several: the x axis is the rate)")
	// --shards, a single count for bench run, is a list here: each point
	// gets a cluster of its own with that many primaries.
	shards := &listFlag[int]{parse: strconv.Atoi, hint: "1,3,6"}
	sf := fs.Lookup("shards")
	sf.Value, sf.Usage = shards, "Redis Cluster primaries per point, e.g. 1,3,6: each point runs on a fresh local cluster of that size (implies --topology cluster; several counts at one concurrency: the x axis is the shard count)"
	slo := fs.Duration("slo-p99", 10*time.Millisecond, "acquire p99 each point must meet (0: no SLO)")
	stopAfter := fs.Int("stop-after", 2, "stop a curve after this many points in a row break the SLO (0: never)")
	duration := fs.Duration("duration", 20*time.Second, "measured time per point, after the profile's warmup")
	fs.Lookup("out").DefValue = "bench-results/sweep-<profile>-<time>"
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *duration <= 0 {
		return cli.Usagef("--duration %v: must be positive, e.g. 20s", *duration)
	}
	f.override["duration"] = duration.String()
	if len(shards.vals) > 0 {
		switch f.redis.Topology {
		case "", redisenv.TopologyCluster:
			f.redis.Topology = redisenv.TopologyCluster
		default:
			return cli.Usagef("--shards %v sweeps Redis Cluster primaries, but --topology is %s; drop one of them", shards.vals, f.redis.Topology)
		}
		f.redis.Shards = shards.vals[0]
		if err := f.redis.Validate(); err != nil {
			return err
		}
		if f.redis.Backend == redisenv.BackendExternal || f.redis.URL != "" {
			return cli.Usagef("--shards starts a cluster per point, which an external Redis cannot do; drop --redis-url (or --shards)")
		}
	}
	p, err := f.load()
	if err != nil {
		return err
	}
	plan := workloads.SweepPlan{Base: p, Clients: clients.vals, Owners: owners.vals, ReadRatios: ratios.vals, Rates: rates.vals, Shards: shards.vals, SLO: *slo, StopAfter: *stopAfter,
		MaxErrorRate: f.errorLimit()}
	pts, err := plan.Points()
	if err != nil {
		return err
	}
	impl, _ := impls.Lookup(f.impl) // checked by load
	out := f.out
	if !flagSet(fs, "out") {
		name := p.Name
		if impl.Name() != impls.Default {
			name += "-" + impl.Name()
		}
		out = filepath.Join("bench-results", fmt.Sprintf("sweep-%s-%s", name, time.Now().UTC().Format("20060102T150405Z")))
	}
	if _, err := os.Stat(filepath.Join(out, "sweep.json")); err == nil {
		return cli.Usagef("--out %s already holds a sweep; give a new directory (or leave --out out: each sweep gets its own)", out)
	}
	pointsDir := filepath.Join(out, "points")
	if err := os.MkdirAll(pointsDir, 0o755); err != nil {
		return cli.Usagef("--out %s: %v", out, err)
	}

	envs := &pointEnvs{cfg: f.redis, stderr: stderr}
	defer envs.close()
	env, err := envs.get(ctx, shardsOf(pts[0]))
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	meta := results.Meta{Lockbench: cli.VersionString(), Go: runtime.Version(), Host: host, GOMAXPROCS: runtime.GOMAXPROCS(0),
		Start: time.Now(), RedisVersion: env.Version(), RedisBackend: string(env.Backend()), RedisTopology: env.Shape(), RedisAddr: env.Addr(), Args: redactArgs(args), Impl: f.impl}
	sloText := "no SLO"
	if *slo > 0 {
		sloText = fmt.Sprintf("SLO acquire p99 ≤ %v", *slo)
	}
	fmt.Fprintf(stderr, "bench: sweeping %s on %s over %d points (%v each after %v warmup), %s; Ctrl-C keeps finished points\n",
		p.Name, f.impl, len(pts), *duration, time.Duration(p.Warmup), sloText)
	cfg := workloads.SweepConfig{
		Plan: plan,
		Run: func(ctx context.Context, pt workloads.PlannedPoint) (*results.Result, error) {
			env, err := envs.get(ctx, shardsOf(pt))
			if err != nil {
				return nil, err
			}
			names, of, err := cli.ShardMap(ctx, env)
			if err != nil {
				return nil, err
			}
			m := meta
			m.Start = time.Now()
			m.RedisTopology, m.RedisAddr = env.Shape(), env.Addr()
			mark := redisenv.ClientLogMark()
			res, err := workloads.Run(ctx, workloads.Config{Profile: pt.Profile, Impl: impl, NewRedis: newRedis(env), MaxOps: f.maxOps, Meta: m,
				ShardNames: names, ShardOf: of, MaxErrorRate: f.errorLimit(),
				Logf: func(format string, a ...any) { fmt.Fprintf(stderr, "bench:   "+format+"\n", a...) }})
			if res != nil {
				res.ClientLog, res.ClientLogDropped = redisenv.ClientLogSince(mark)
			}
			return res, err
		},
		Record: func(r *results.Result, pt results.SweepPoint) (string, error) {
			path, err := results.WriteFiles(pointsDir, r)
			if err != nil {
				return "", err
			}
			mark := "meets the SLO"
			switch {
			case pt.Partial:
				mark = "PARTIAL, left off the curves"
			case pt.Violations > 0:
				mark = fmt.Sprintf("%d SAFETY VIOLATIONS", pt.Violations)
			case pt.Failure != "":
				mark = "FAILED, breaks the SLO: " + pt.Failure
			case !pt.MeetsSLO:
				mark = "BREAKS the SLO"
			}
			fmt.Fprintf(stderr, "bench:   %s ops/s, acquire p99 %s, %s of %s operations failed: %s\n",
				results.CommasFloat(pt.OpsPerSec), pt.Percentile(pt.P99Us), results.Commas(pt.Errors), results.Commas(pt.Attempts), mark)
			return filepath.Rel(out, path)
		},
		Checkpoint: func(sw *results.Sweep) error {
			_, err := results.WriteSweep(out, sw)
			return err
		},
		Progress: func(sp workloads.SweepProgress) {
			fmt.Fprintf(stderr, "bench: point %d of %d: %s — about %v left\n", sp.Index, sp.Total, describePoint(sp.Point), sp.ETA.Round(time.Second))
		},
		Skipped: func(pt workloads.PlannedPoint, why string) {
			fmt.Fprintf(stderr, "bench: skipping %s: its curve stopped (%s)\n", describePoint(pt), why)
		},
	}
	sw, runErr := workloads.Sweep(ctx, cfg, meta)
	cli.LoadEnded(ctx)
	if sw == nil {
		return runErr
	}
	path, err := results.WriteSweep(out, sw)
	if err != nil {
		return errors.Join(runErr, err)
	}
	charts, cerr := report.WriteCapacityCharts(out, sw)
	if errors.Is(cerr, plots.ErrNoData) {
		cerr = nil // no finished point: nothing to draw, and the sweep says why
	}
	in, lerr := report.Load(path)
	if lerr == nil {
		lerr = report.Write(filepath.Join(out, "report.html"), in, report.Options{Generator: cli.VersionString()})
	}
	if cerr != nil {
		cerr = fmt.Errorf("charts: %v", cerr) // not bad input, whatever the cause
	}
	if lerr != nil {
		lerr = fmt.Errorf("report: %v", lerr)
	}
	writeSweepSummary(stdout, sw)
	fmt.Fprintf(stdout, "sweep       %s\n", path)
	for _, c := range charts {
		fmt.Fprintf(stdout, "chart       %s\n", c)
	}
	if lerr == nil {
		fmt.Fprintf(stdout, "report      %s\n", filepath.Join(out, "report.html"))
	}
	var unsafe, failed error
	if n := violations(sw); n > 0 {
		unsafe = fmt.Errorf("%d mutual-exclusion violations in the sweep's points (see the violations column and points/)", n)
	}
	var bad []string
	for _, p := range sw.Points {
		if p.Failure != "" {
			bad = append(bad, p.Label())
		}
	}
	if len(bad) > 0 {
		failed = fmt.Errorf("sweep failed: the runs at %s failed (see FAILED above and points/)", strings.Join(bad, ", "))
	}
	return errors.Join(runErr, unsafe, failed, cerr, lerr)
}

// pointEnvs keeps the Redis of the sweep's current shard count: points on
// the same count share it, a new count replaces it with a fresh cluster.
type pointEnvs struct {
	cfg    redisenv.Config
	stderr io.Writer
	env    *redisenv.Env
	shards int
}

// shardsOf is the primaries a point asks for; 0 keeps the configured Redis.
func shardsOf(pt workloads.PlannedPoint) int { return pt.Shards }

func (p *pointEnvs) get(ctx context.Context, shards int) (*redisenv.Env, error) {
	if p.env != nil && (shards == 0 || shards == p.shards) {
		return p.env, nil
	}
	p.close()
	cfg := p.cfg
	if shards > 0 {
		cfg.Shards = shards
	}
	env, err := cli.StartEnvFor(ctx, cfg, p.stderr)
	if err != nil {
		return nil, err
	}
	p.env, p.shards = env, shards
	return env, nil
}

func (p *pointEnvs) close() {
	if p.env != nil {
		_ = p.env.Close()
		p.env = nil
	}
}

func violations(sw *results.Sweep) int64 {
	var n int64
	for _, p := range sw.Points {
		n += p.Violations
	}
	return n
}

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

// flagSet reports whether name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func describePoint(pt workloads.PlannedPoint) string {
	s := fmt.Sprintf("clients %d × owners %d", pt.Profile.Clients, pt.Profile.Owners)
	if pt.Shards > 0 {
		s += " on " + results.ShardCount(pt.Shards)
	}
	if pt.Profile.Rate > 0 {
		s += fmt.Sprintf(" at %g ops/s", pt.Profile.Rate)
	}
	if pt.Series != "" {
		s += " (" + pt.Series + ")"
	}
	return s
}

// failedShare is a point's failed operations and their share: "12 (0.4%)".
func failedShare(p results.SweepPoint) string {
	n := p.Ops + p.Errors
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%s (%s)", results.Commas(p.Errors), results.Percent(float64(p.Errors)/float64(n)))
}

// writeSweepSummary prints the points and what each curve says.
func writeSweepSummary(w io.Writer, sw *results.Sweep) {
	title := "lockbench sweep " + sw.Meta.Profile
	if sw.Partial {
		title += "  [PARTIAL: " + sw.PartialReason + "]"
	}
	fmt.Fprintf(w, "%s\n\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "series\tx\tclients×owners\tops/s\tp50\tp99\tfailed\tviolations\tSLO\t")
	for _, p := range sw.Points {
		mark := "meets"
		switch {
		case p.Failure != "":
			mark = "FAILED"
		case !p.MeetsSLO:
			mark = "broken"
		}
		fmt.Fprintf(tw, "%s\t%g\t%d×%d\t%s\t%s\t%s\t%s\t%d\t%s\t\n", p.Series, p.X, p.Clients, p.Owners,
			results.CommasFloat(p.OpsPerSec), p.Percentile(p.P50Us), p.Percentile(p.P99Us), failedShare(p), p.Violations, mark)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, c := range sw.Capacity {
		if c.Series != "" {
			fmt.Fprintf(w, "%s:\n", c.Series)
		}
		for _, line := range c.Statement(sw.Axis, sw.SLOP99Us) {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	for _, p := range sw.Points {
		if p.Failure != "" {
			fmt.Fprintf(w, "FAILED point %s: %s\n", p.Label(), p.Failure)
		}
	}
	fmt.Fprintln(w)
}
