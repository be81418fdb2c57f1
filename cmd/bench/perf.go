package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

const perfUsage = `
Measures lock implementations and the harness itself, on one Redis (or,
for the matrix, several servers side by side), and prints the figures
with their targets:

  matrix    (the default; make perf) the same workloads on every lock
            implementation (see bench impls): uncontended and mutex at 1, 8,
            32 and 64 owners on lockimpl, lockimpl+ap (--auto-pipeline
            true), raw, redsync, redislock and redisson, rw90 on
            lockimpl, lockimpl+ap, raw and redisson, plus, at each
            concurrency, redis-benchmark driving the acquire and unlock
            scripts (plain and -P 16) and bare go-redis loops (plain and
            autopipelined). Rounds alternate the order so drift hits all
            alike; lockimpl and lockimpl+ap run back to back, each first in
            turn, and after the rounds the two alone, until each cell has
            --matrix-pairs pairs. --doc writes the tables (ops/s, acquire
            p50/p99, handoff, CPU, each as a ratio to raw, redis-benchmark,
            bare go-redis and the -P 16 ceiling) as Markdown: make perf
            writes docs/perf.md. Targets: lockimpl >= 0.9x raw on
            uncontended; lockimpl+ap's ops/s no lower and acquire p99 and
            handoff p50 no higher than lockimpl's in every cell, within the
            pairs' spread (worse in every pair misses); lockimpl's handoff
            p50 on mutex >= 10x lower than redsync's and redislock's; the
            overhead part's targets; no safety violation anywhere.
  overhead  the pipelining targets in a few minutes: lockimpl plain and
            auto-pipelined (lockimpl+ap, as --auto-pipeline true) on
            uncontended and mutex at 32 owners, in alternating rounds,
            beside redis-benchmark -c 32 driving the same two Lua scripts
            (plain, and -P 16: the server's ceiling) and bare go-redis loops
            running them (plain and autopipelined). Targets, on medians of
            the rounds' ratios: lockimpl+ap >= 1.25x redis-benchmark's
            unpipelined cycles (stretch 1.4x); lockimpl >= 0.9x bare
            go-redis; lockimpl+ap's handoff p50 on mutex no higher than
            lockimpl's, within the rounds' spread (worse in every round
            misses). Each run also says whose CPU ran out.
  scale     the harness with 1,000, 10,000 and 100,000 owners in this
            process (--scale-owners), over 10 clients, each point 20 s of
            rw90 in open loop at 5,000 ops/s across all its owners, and
            10,000 in closed loop (--scale-closed: uncontended, every
            owner in a call at once): peak RSS, each point's own
            (targets: 10,000 owners <= 256 MiB, 100,000 <= 2 GiB), RSS
            per owner, goroutines early vs late (growth is a leak), ops/s,
            whether the safety checker and fairness judged the run, and
            what an owner costs by component (stacks, owner state,
            connections, records, workers). With matrix and --doc, the
            document gains the scale section.
  handoff   handoff p50 on the mutex profile (32 owners, one lock) against
            the PING p50 of the same run: pub/sub wake-up should make it a
            small multiple of the round trip. Target <= 10x.

--servers redis,valkey (make perf) compares servers in the matrix part
(the scale part, beside it, runs on the first):
the first runs the whole matrix; each other runs uncontended and mutex at
32 owners, rw90 and fair, on every implementation the matrix runs there,
with its own redis-benchmark baseline, taking turns with the first within
each round. The whole matrix on a second server would double the time
(make perf takes about 50 minutes in all, a quarter of it on the
second server); those four workloads are what a comparison of servers
needs. Every server runs on this machine, started by lockbench; --doc
gains a server table (ops/s, acquire p99 and the side that ran out of
CPU on each server, and each server's redis-benchmark baseline and -P 16
ceiling). A valkey-server that is not installed is left out, saying how
to install it.

matrix and overhead need redis-benchmark (Debian package redis-tools,
installed with redis-server). Each run's result files go to --out. Missing
a target is reported (MISS) but is not an error: these are measurements of
this machine, not assertions. A safety violation in any matrix run exits 1.
Ctrl-C stops the matrix; the rounds that finished are still written (the
--doc marked partial), and it exits 130.`

func perfCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("bench", "perf", perfUsage, stderr)
	var cfg redisenv.Config
	cfg.RegisterFlags(fs)
	only := fs.String("only", "matrix", "which parts to run, comma-separated: matrix, overhead, scale, handoff")
	matrixRounds := fs.Int("matrix-rounds", 3, "matrix: rounds (the order of implementations rotates each round)")
	matrixPairs := fs.Int("matrix-pairs", perf.DefaultPairs, "matrix: pairs of lockimpl and lockimpl+ap (back to back, each first in turn) per cell where both run, counting the matrix's rounds: beyond them the two run alone; the auto-pipelining verdicts read them all and need at least "+strconv.Itoa(results.MinPairs))
	matrixDuration := fs.Duration("matrix-duration", 4*time.Second, "matrix: measured time of each run")
	matrixWarmup := fs.Duration("matrix-warmup", time.Second, "matrix: warmup of each run")
	matrixImpls := fs.String("matrix-impls", strings.Join(impls.Names(), ","), "matrix: implementations (rw90 runs lockimpl, raw and redisson; fair and reentrant-deep lockimpl and redisson; redisson is left out of the default when its driver is not built)")
	doc := fs.String("doc", "", "matrix: write the tables as Markdown to this file (make perf: docs/perf.md)")
	servers := fs.String("servers", "", "matrix: the servers to compare, comma-separated, each as --server names it (redis, valkey or a path; make perf: redis,valkey): the first runs the whole matrix, each other "+strings.Join(perf.ServerProfiles, ", ")+" (uncontended and mutex at "+strconv.Itoa(perf.PipelineOwners)+" owners) in the same rounds, each with its own redis-benchmark baseline; a missing valkey-server is left out with how to install it (default: the one --server names)")
	rounds := fs.Int("rounds", perf.DefaultPairs, "overhead: alternating rounds, each a pair of lockimpl and lockimpl+ap (their comparison needs at least "+strconv.Itoa(results.MinPairs)+")")
	overheadD := fs.Duration("overhead-duration", 5*time.Second, "overhead: measured time of each run (after 1s warmup)")
	scaleD := fs.Duration("scale-duration", 20*time.Second, "scale: measured time of each point")
	scaleClients := fs.Int("scale-clients", perf.DefaultScaleClients, "scale: the lock clients each point's owners are spread over")
	scaleOwners := fs.String("scale-owners", joinInts(perf.DefaultScaleOwners), "scale: the open-loop points, comma-separated, each the owners in all (a multiple of --scale-clients)")
	scaleClosed := fs.String("scale-closed", joinInts(perf.DefaultScaleClosed), "scale: the closed-loop points (uncontended: every owner in a call at once), comma-separated like --scale-owners; \"\" for none")
	scaleRate := fs.Float64("scale-rate", perf.DefaultScaleRate, "scale: ops/s offered across all owners at every point (open loop)")
	scaleLocks := fs.Int("scale-locks", 256, "scale: lock names")
	handoffD := fs.Duration("handoff-duration", 10*time.Second, "handoff: measured time")
	rbBin := fs.String("redis-benchmark", "redis-benchmark", "redis-benchmark binary")
	out := fs.String("out", "bench-results", "directory for the result files")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	parts := strings.Split(*only, ",")
	for _, p := range parts {
		if !slices.Contains(perf.Parts, p) {
			return cli.Usagef("--only %q: unknown part %q; use matrix, overhead, scale and/or handoff", *only, p)
		}
	}
	for name, d := range map[string]time.Duration{"overhead-duration": *overheadD, "scale-duration": *scaleD, "handoff-duration": *handoffD, "matrix-duration": *matrixDuration} {
		if d <= 0 {
			return cli.Usagef("--%s %v: must be positive", name, d)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"rounds", *rounds}, {"matrix-rounds", *matrixRounds}, {"matrix-pairs", *matrixPairs}, {"scale-clients", *scaleClients}, {"scale-locks", *scaleLocks}} {
		if f.v < 1 {
			return cli.Usagef("--%s %d: must be at least 1", f.name, f.v)
		}
	}
	if *scaleRate <= 0 {
		return cli.Usagef("--scale-rate %g: must be positive", *scaleRate)
	}
	scalePoints, err := parseScalePoints(*scaleClients, *scaleOwners, *scaleClosed)
	if err != nil {
		return err
	}
	if *matrixWarmup < 0 {
		return cli.Usagef("--matrix-warmup %v: must not be negative", *matrixWarmup)
	}
	if !slices.Contains(parts, perf.PartMatrix) {
		for _, name := range []string{"doc", "matrix-impls", "matrix-rounds", "matrix-pairs", "matrix-duration", "matrix-warmup", "servers"} {
			if flagSet(fs, name) {
				return cli.Usagef("--%s applies to the matrix part; add matrix to --only (now %q)", name, *only)
			}
		}
	}
	if err := cli.CheckRedissonJar(); err != nil {
		return err
	}
	if !flagSet(fs, "matrix-impls") {
		if _, err := redisson.FindJar(); err != nil {
			// The default lists every implementation; without the JVM
			// driver the matrix runs the Go ones and says so.
			*matrixImpls = strings.Join(slices.DeleteFunc(impls.Names(), impls.IsRedisson), ",")
			fmt.Fprintf(stderr, "perf: matrix without redisson: %v\n", err)
		}
	}
	spec, err := perf.LineupSpecOf(strings.Split(*matrixImpls, ","))
	if err != nil {
		return cli.Usagef("--matrix-impls %q: %v", *matrixImpls, err)
	}
	spec.Rounds, spec.Pairs, spec.Duration, spec.Warmup = *matrixRounds, *matrixPairs, *matrixDuration, *matrixWarmup
	if *doc != "" {
		made, err := cli.CheckOutFile("--doc", *doc)
		if err != nil {
			return err
		}
		defer made.Prune()
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	others, err := perfServers(&cfg, *servers, parts, stderr)
	if err != nil {
		return err
	}
	bin := ""
	if perf.NeedsRedisBenchmark(parts) {
		var err error
		if bin, err = exec.LookPath(*rbBin); err != nil {
			return cli.Usagef("--redis-benchmark %q: not found; install it (apt-get install -y redis-tools) or run --only scale,handoff", *rbBin)
		}
	}
	var sites []perf.Site
	var named []string
	for _, c := range append([]redisenv.Config{cfg}, others...) {
		env, err := cli.StartEnvFor(ctx, c, stderr)
		if err != nil {
			return err
		}
		defer env.Close()
		if bin != "" && env.Options().Password != "" {
			// redis-benchmark takes a password only as an argument, which any
			// local user reads in ps for as long as it runs.
			return cli.Usagef("bench perf: this Redis needs a password, which redis-benchmark would have on its command line for any local user to read; run the matrix and overhead parts against a server without one (--redis local), or --only scale,handoff")
		}
		h, p, _ := net.SplitHostPort(env.Addr())
		sites = append(sites, perf.Site{Server: perf.Server{Host: h, Port: p}, Base: workloads.Config{
			NewRedis: env.NewPool,
			Meta:     harness.Meta(env, cli.VersionString(), append([]string{"perf"}, args...), ""),
		}})
		named = append(named, fmt.Sprintf("%s (%s %s)", env.Server(), env.Backend(), env.Addr()))
	}
	w := &partWriter{stdout: stdout, doc: *doc}
	fmt.Fprintf(stdout, "bench perf on %s, GOMAXPROCS %d\n", strings.Join(named, " beside "), runtime.GOMAXPROCS(0))
	return perf.Run(ctx, perf.Options{
		Parts:          parts,
		Base:           sites[0].Base,
		Matrix:         spec,
		OverheadRounds: *rounds, OverheadDuration: *overheadD,
		ScalePoints: scalePoints, ScaleLocks: *scaleLocks, ScaleRate: *scaleRate, ScaleDuration: *scaleD,
		HandoffDuration: *handoffD,
		RedisBenchmark:  bin,
		Server:          sites[0].Server,
		Servers:         sites[1:],
		Out:             *out,
		Progress: func(part, msg string) {
			if part == perf.PartMatrix {
				part = "perf"
			}
			fmt.Fprintf(stderr, "%s: %s\n", part, msg)
		},
		Finished: w.part,
	})
}

// partWriter prints each finished part and, with doc set, renders the
// matrix there as Markdown, again with the scale section once that part
// ends.
type partWriter struct {
	stdout io.Writer
	doc    string
	matrix *results.Lineup
}

func (pw *partWriter) part(p perf.Part) error {
	if len(p.Scale) > 0 {
		var rows []results.ScaleRow
		for i, s := range p.Scale {
			rows = append(rows, s.Row(p.ScaleSaved[i]))
		}
		if err := report.WriteScale(pw.stdout, rows); err != nil {
			return err
		}
		if pw.matrix == nil || pw.doc == "" {
			return nil
		}
		pw.matrix.Scale = rows
		return pw.writeDoc()
	}
	if err := writePart(pw.stdout, p); err != nil {
		return err
	}
	if p.Name == perf.PartMatrix && p.Lineup != nil && p.Saved != "" && pw.doc != "" {
		pw.matrix = p.Lineup
		return pw.writeDoc()
	}
	return nil
}

func (pw *partWriter) writeDoc() error {
	if err := report.Write(pw.doc, &report.Input{Lineups: []*results.Lineup{pw.matrix}}, report.Options{Format: report.Markdown, Generator: cli.VersionString()}); err != nil {
		return fmt.Errorf("perf: --doc: %w", err)
	}
	fmt.Fprintf(pw.stdout, "          written to %s\n", pw.doc)
	return nil
}

// parseScalePoints reads --scale-owners and --scale-closed, each point
// over clients.
func parseScalePoints(clients int, open, closed string) ([]perf.ScalePoint, error) {
	var lists [2][]int
	for i, f := range []struct{ flag, list string }{{"--scale-owners", open}, {"--scale-closed", closed}} {
		if i == 1 && strings.TrimSpace(f.list) == "" {
			continue
		}
		for _, v := range strings.Split(f.list, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 {
				return nil, cli.Usagef("%s %q: %q is not a count of owners", f.flag, f.list, v)
			}
			lists[i] = append(lists[i], n)
		}
	}
	pts, err := perf.ScalePoints(clients, lists[0], lists[1])
	if err != nil {
		return nil, cli.Usagef("--scale-owners %q, --scale-closed %q with --scale-clients %d: %v", open, closed, clients, err)
	}
	return pts, nil
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// writePart prints a finished matrix, overhead or handoff part.
func writePart(stdout io.Writer, p perf.Part) error {
	switch {
	case p.Handoff != nil:
		h := p.Handoff
		return report.WriteHandoff(stdout, report.Handoff{Result: h.Result, HandoffUs: h.HandoffUs, PingUs: h.PingUs, Ratio: h.Ratio, Target: perf.HandoffTarget, Saved: p.Saved})
	case p.Lineup == nil:
		return nil
	}
	if err := report.WriteLineupSummary(stdout, p.Lineup); err != nil {
		return err
	}
	for i := range p.Lineup.Servers {
		s := &p.Lineup.Servers[i]
		fmt.Fprintf(stdout, "\non %s:", s.Meta.ServerName())
		if err := report.WriteLineupSummary(stdout, s); err != nil {
			return err
		}
	}
	if err := report.WriteServerSummary(stdout, p.Lineup); err != nil {
		return err
	}
	if p.Saved != "" { // else not written: Run says why
		fmt.Fprintf(stdout, "          matrix %s\n", p.Saved)
	}
	return nil
}

// perfServers checks --servers before anything starts and sets cfg's
// Server to the first of them, returning a Config for each other. A
// valkey that is not installed is left out with one line saying how to
// install it, so that make perf runs where Valkey cannot; any other server
// that cannot run is bad input.
func perfServers(cfg *redisenv.Config, list string, parts []string, stderr io.Writer) ([]redisenv.Config, error) {
	if list == "" {
		return nil, nil
	}
	envURL := strings.TrimSpace(os.Getenv(redisenv.EnvURL)) != "" && (cfg.Backend == "" || cfg.Backend == redisenv.BackendAuto)
	switch {
	case slices.ContainsFunc(parts, func(p string) bool { return p != perf.PartMatrix && p != perf.PartScale }):
		// The scale part measures the harness, on the first server.
		return nil, cli.Usagef("--servers applies to the matrix part (and scale beside it, on the first server); run --only matrix or matrix,scale with --servers, and the other parts (now --only %s) without it", strings.Join(parts, ","))
	case cfg.Server != "":
		return nil, cli.Usagef("--server %q and --servers %q both name the server; drop --server (--servers lists every one, the first running the whole matrix)", cfg.Server, list)
	case cfg.URL != "" || cfg.Backend == redisenv.BackendExternal || envURL:
		return nil, cli.Usagef("--servers %q: compares servers that lockbench starts, and an external Redis (--redis-url or $%s) is the one server it is; drop --servers, or add --redis local", list, redisenv.EnvURL)
	case cfg.Image != "":
		return nil, cli.Usagef("--servers %q: each server runs from its binary (or, with --redis container, its own image), and --image %s would be every one; drop --image", list, cfg.Image)
	}
	var names, seen []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, cli.Usagef("--servers %q: an empty name; list servers as --server names them: redis, valkey or a path", list)
		}
		c := *cfg
		c.Server = s
		if err := c.Validate(); err != nil {
			if s == redisenv.ServerValkey && errors.Is(err, redisenv.ErrServerNotFound) {
				fmt.Fprintf(stderr, "perf: no valkey-server here, so the matrix runs without Valkey beside it; %s\n", redisenv.ValkeyInstallHint)
				continue
			}
			return nil, cli.Usagef("--servers %q: %v", list, err)
		}
		id := s
		if p, err := redisenv.FindServer(s); err == nil && cfg.Backend != redisenv.BackendContainer {
			id = p // the same binary by name and by path
		}
		if slices.Contains(seen, id) {
			return nil, cli.Usagef("--servers %q: %s is listed twice (as %s); list each server once", list, s, id)
		}
		seen, names = append(seen, id), append(names, s)
	}
	if len(names) == 0 {
		return nil, cli.Usagef("--servers %q: none of these servers is installed; %s", list, redisenv.ValkeyInstallHint)
	}
	cfg.Server = names[0]
	var others []redisenv.Config
	for _, s := range names[1:] {
		c := *cfg
		c.Server = s
		others = append(others, c)
	}
	return others, nil
}
