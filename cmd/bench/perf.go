package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

const perfUsage = `
Measures the harness itself, on one Redis, and prints the figures with
their targets:

  overhead  lock+unlock cycles/s of lockimpl on the uncontended profile
            against redis-benchmark driving the same two Lua scripts at the
            same concurrency, in alternating rounds (median of the rounds'
            ratios), with bare go-redis loops as a third column. Target >= 0.9.
  scale     1,008 owners across 16 clients for 60 s: peak RSS and
            goroutines early vs late in the run (growth is a leak).
  handoff   handoff p50 on the mutex profile (32 owners, one lock) against
            the PING p50 of the same run: pub/sub wake-up should make it a
            small multiple of the round trip. Target <= 10x.

Needs redis-benchmark (Debian package redis-tools, installed with
redis-server). Each part's result file goes to --out. Missing a target is
reported (MISS) but is not an error: these are measurements of this
machine, not assertions.`

func perfCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("bench", "perf", perfUsage, stderr)
	var cfg redisenv.Config
	cfg.RegisterFlags(fs)
	only := fs.String("only", "overhead,scale,handoff", "which parts to run, comma-separated")
	rounds := fs.Int("rounds", 5, "overhead: alternating rounds")
	overheadD := fs.Duration("overhead-duration", 3*time.Second, "overhead: measured time of each lockbench round")
	scaleD := fs.Duration("scale-duration", 60*time.Second, "scale: measured time")
	scaleClients := fs.Int("scale-clients", 16, "scale: clients")
	scaleOwners := fs.Int("scale-owners", 63, "scale: owners per client")
	scaleLocks := fs.Int("scale-locks", 256, "scale: lock names")
	handoffD := fs.Duration("handoff-duration", 10*time.Second, "handoff: measured time")
	rbBin := fs.String("redis-benchmark", "redis-benchmark", "redis-benchmark binary")
	out := fs.String("out", "bench-results", "directory for the result files")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	parts := strings.Split(*only, ",")
	for _, p := range parts {
		if !slices.Contains([]string{"overhead", "scale", "handoff"}, p) {
			return cli.Usagef("--only %q: unknown part %q; use overhead, scale and/or handoff", *only, p)
		}
	}
	for name, d := range map[string]time.Duration{"overhead-duration": *overheadD, "scale-duration": *scaleD, "handoff-duration": *handoffD} {
		if d <= 0 {
			return cli.Usagef("--%s %v: must be positive", name, d)
		}
	}
	if *rounds < 1 || *scaleClients < 1 || *scaleOwners < 1 || *scaleLocks < 1 {
		return cli.Usagef("--rounds, --scale-clients, --scale-owners and --scale-locks must be at least 1")
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	bin := ""
	if slices.Contains(parts, "overhead") {
		var err error
		if bin, err = exec.LookPath(*rbBin); err != nil {
			return cli.Usagef("--redis-benchmark %q: not found; install it (apt-get install -y redis-tools) or run --only scale,handoff", *rbBin)
		}
	}
	env, err := cli.StartEnvFor(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer env.Close()
	host, _ := os.Hostname()
	base := workloads.Config{
		NewRedis: newRedis(env),
		Meta: results.Meta{
			Lockbench: cli.VersionString(), Go: runtime.Version(), Host: host, GOMAXPROCS: runtime.GOMAXPROCS(0),
			Start: time.Now(), RedisVersion: env.Version(), RedisBackend: string(env.Backend()), RedisAddr: env.Addr(),
			Args: append([]string{"perf"}, redactArgs(args)...),
		},
	}
	save := func(r *results.Result) string {
		r.Meta.Start = time.Now()
		path, err := results.WriteFiles(*out, r)
		if err != nil {
			return "(not saved: " + err.Error() + ")"
		}
		return path
	}
	fmt.Fprintf(stdout, "bench perf on Redis %s (%s %s), GOMAXPROCS %d\n", env.Version(), env.Backend(), env.Addr(), runtime.GOMAXPROCS(0))

	if slices.Contains(parts, "scale") {
		fmt.Fprintf(stderr, "scale: %d clients × %d owners for %v...\n", *scaleClients, *scaleOwners, *scaleD)
		s, err := workloads.MeasureScale(ctx, base, *scaleClients, *scaleOwners, *scaleLocks, *scaleD)
		if s.Result != nil {
			r := s.Result
			verdict := "OK"
			if s.Grew() {
				verdict = "GREW"
			}
			fmt.Fprintf(stdout, "\nscale     %d owners (%d clients × %d), %d locks, rw90 shape, %.0fs measured\n",
				*scaleClients**scaleOwners, *scaleClients, *scaleOwners, *scaleLocks, r.Measured)
			fmt.Fprintf(stdout, "          %.0f ops/s · peak RSS %.1f MiB · Go heap %.1f MiB early, %.1f MiB late · goroutines %d early, %d late, %d max: %s · safety violations %d\n",
				r.Throughput.OpsPerSec, float64(r.Runtime.PeakRSSBytes)/(1<<20), float64(s.HeapEarly)/(1<<20), float64(s.HeapLate)/(1<<20),
				s.GoroutinesEarly, s.GoroutinesLate, r.Runtime.GoroutinesMax, verdict, r.Safety.Violations)
			fmt.Fprintf(stdout, "          %s\n", save(r))
		}
		if err != nil {
			return err
		}
	}
	if slices.Contains(parts, "overhead") {
		fmt.Fprintf(stderr, "overhead: %d rounds of %v lockbench + redis-benchmark...\n", *rounds, *overheadD)
		h, p, _ := net.SplitHostPort(env.Addr())
		srv := workloads.Server{Host: h, Port: p, Password: env.Options().Password}
		o, err := workloads.MeasureOverhead(ctx, base, bin, srv, *rounds, *overheadD)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\noverhead  uncontended, %d owners = redis-benchmark -c %d, %d rounds (median)\n", o.Owners, o.Owners, len(o.Rounds))
		for i, r := range o.Rounds {
			fmt.Fprintf(stdout, "          round %d: lockbench %.0f · bare go-redis %.0f · redis-benchmark %.0f cycles/s (lock %.0f/s, unlock %.0f/s)\n",
				i+1, r.Lockbench, r.GoRedis, r.Baseline.CyclesPerSec(), r.Baseline.LockPerSec, r.Baseline.UnlockPerSec)
		}
		fmt.Fprintf(stdout, "          medians: lockbench %.0f · bare go-redis %.0f · redis-benchmark %.0f cycles/s\n", o.Lockbench, o.GoRedis, o.Baseline)
		fmt.Fprintf(stdout, "          lockbench / redis-benchmark, median of rounds %.3f (rounds %.3f..%.3f; target >= %.1f) %s\n",
			o.Ratio, o.RatioMin, o.RatioMax, workloads.OverheadTarget, pass(o.Ratio >= workloads.OverheadTarget))
		fmt.Fprintf(stdout, "          lockbench / bare go-redis, median of rounds %.3f: the cost of lockimpl and recording over the Go client itself\n", o.GoRedisRatio)
	}
	if slices.Contains(parts, "handoff") {
		fmt.Fprintf(stderr, "handoff: mutex profile for %v...\n", *handoffD)
		h, err := workloads.MeasureHandoff(ctx, base, *handoffD)
		if h.Result != nil {
			r := h.Result
			hl := r.Latency[results.Handoff.String()]
			fmt.Fprintf(stdout, "\nhandoff   mutex: %d owners, 1 lock, %.0fs measured, %d handoffs\n", r.Fairness.Owners, r.Measured, hl.Count)
			fmt.Fprintf(stdout, "          handoff p50 %.1fµs (p99 %.1fµs) vs ping p50 %.1fµs: %.1f× (target <= %.0f×) %s\n",
				h.HandoffUs, hl.P99, h.PingUs, h.Ratio, workloads.HandoffTarget, pass(h.Ratio > 0 && h.Ratio <= workloads.HandoffTarget))
			fmt.Fprintf(stdout, "          %s\n", save(r))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func pass(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}
