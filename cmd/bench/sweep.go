package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/cli"
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

Each curve over concurrency or shards is fitted with the Universal
Scalability Law, X(N) = λN / (1 + σ(N−1) + κN(N−1)): σ is contention
(serialised work: a hot lock), κ coherency (crosstalk growing with every
pair: fan-out, retries). The summary gives λ, σ, κ with 95% intervals,
R², the predicted peak N* and its throughput, the largest N predicted to
keep p99 under --slo-p99, and which term limits. N is clients × owners
in all (or shards). A fit with fewer than 5 successful points, σ at 1, R²
under 0.9 with residuals over 5% RMS, or residuals over 15% RMS predicts
nothing and says why. bench compare of two sweeps says which parameter's
change explains a regression.

--out gets points/ (each point's result and histogram log), sweep.json
(schema ` + results.SweepSchema + `), capacity-throughput.png, capacity-p99.png and
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
	var p workloads.Profile
	if err := cli.ReadInputs(ctx, func() (err error) { p, err = f.load(); return err }); err != nil {
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
		out = filepath.Join("bench-results", fmt.Sprintf("sweep-%s-%s", name, results.Stamp(time.Now())))
	}
	if _, err := os.Stat(filepath.Join(out, "sweep.json")); err == nil {
		return cli.Usagef("--out %s already holds a sweep; give a new directory (or leave --out out: each sweep gets its own)", out)
	}
	made, err := cli.CheckOutDir("--out", out)
	if err != nil {
		return err
	}
	defer made.Prune() // a sweep that ran no point wrote nothing
	sloText := "no SLO"
	if *slo > 0 {
		sloText = fmt.Sprintf("SLO acquire p99 ≤ %v", *slo)
	}
	fmt.Fprintf(stderr, "bench: sweeping %s on %s over %s (%v each after %v warmup), %s; Ctrl-C keeps finished points\n",
		p.Name, f.impl, results.Count(len(pts), "point"), *duration, time.Duration(p.Warmup), sloText)
	o, err := harness.Sweep(ctx, harness.SweepOptions{
		Plan: plan, Impl: impl, Redis: f.redis, Out: out, MaxOps: f.maxOps, SpinWaits: f.spin, Version: cli.VersionString(), Args: args,
		StartEnv: func(ctx context.Context, cfg redisenv.Config) (*redisenv.Env, error) {
			return cli.StartEnvFor(ctx, cfg, stderr)
		},
		Logf:      func(format string, a ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", a...) },
		LoadEnded: func() { cli.LoadEnded(ctx) },
	})
	if o == nil {
		return err
	}
	_ = report.WriteSweepSummary(stdout, o.Sweep)
	fmt.Fprintf(stdout, "sweep       %s\n", o.Path)
	for _, c := range o.Charts {
		fmt.Fprintf(stdout, "chart       %s\n", c)
	}
	if o.Report != "" {
		fmt.Fprintf(stdout, "report      %s\n", o.Report)
	}
	return err
}

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

// flagSet reports whether name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
