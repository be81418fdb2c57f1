// Command bench measures Redisson-style Redis locks: throughput, latency
// percentiles, fairness and safety under a workload profile.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv"
)

func main() {
	ctx, stop := cli.NotifyContext(context.Background(), os.Stderr)
	code := program().Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func program() cli.Program {
	return cli.Program{
		Name: "bench",
		Synopsis: `bench drives Redisson-compatible Redis locks (reentrant, fair, read-write)
with a workload profile against a real Redis and reports throughput, latency
percentiles, fairness and mutual-exclusion safety.`,
		Examples: `  bench run --profile rw90                      # local redis-server, rw90 profile
  bench run --profile rw90 --redis-url redis://10.0.0.5:6379/0
  bench env                                     # which Redis a run would use
`,
		Commands: map[string]cli.Command{
			"run": {Summary: "run a workload profile and report", Run: runCmd},
			"env": cli.EnvCommand("bench"),
		},
	}
}

const runUsage = `
Runs a workload profile against Redis and reports.

The workload driver (profiles, HDR results, fairness, safety) arrives with
issue 4. Until then, run brings up the Redis a run would use and measures its
PING round trip for --duration: a real check of the environment, not of locks.`

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("bench", "run", runUsage, stderr)
	var cfg redisenv.Config
	cfg.RegisterFlags(fs)
	profile := fs.String("profile", "rw90", "workload profile: a built-in name or a YAML/JSON file")
	d := fs.Duration("duration", 3*time.Second, "how long to run")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *d <= 0 {
		return cli.Usagef("--duration %v: must be positive, e.g. 30s", *d)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "profile:  %s (the workload driver arrives with issue 4; checking the environment)\n", *profile)
	return cli.CheckEnv(ctx, cfg, *d, stdout, stderr)
}
