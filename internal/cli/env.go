package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/workloads"
)

// Sourced is a setting's value and what gave it: its flag, or the
// environment variable read in the flag's place, so that a message about
// the value names what the user set.
type Sourced struct {
	Value string
	// From is "--run-id", or "$LOCKBENCH_RUN_ID" when the variable gave
	// Value.
	From string
}

// FlagOrEnv is the flag's value when given (not empty), else env's
// (trimmed), with what gave it.
func FlagOrEnv(flag, value, env string) Sourced {
	if value != "" {
		return Sourced{Value: value, From: "--" + flag}
	}
	if v := strings.TrimSpace(os.Getenv(env)); v != "" {
		return Sourced{Value: v, From: "$" + env}
	}
	return Sourced{From: "--" + flag}
}

// FromEnv reports whether an environment variable gave the value.
func (s Sourced) FromEnv() bool { return strings.HasPrefix(s.From, "$") }

// Blame makes err, bad input about s's value, name the environment
// variable that gave it: a workloads.FieldError's or redisenv.ConfigError's
// field becomes the variable, and any other error is prefixed with it.
// Given by its flag, err already names it, and is returned as it is.
func (s Sourced) Blame(err error) error {
	if err == nil || !s.FromEnv() {
		return err
	}
	if fe := (*workloads.FieldError)(nil); errors.As(err, &fe) {
		c := *fe
		c.Field = s.From
		return &c
	}
	if ce := (*redisenv.ConfigError)(nil); errors.As(err, &ce) {
		c := *ce
		c.Field = s.From
		return &c
	}
	return fmt.Errorf("%s: %w", s.From, err)
}

// StartEnv starts the Redis that cfg describes, printing the one-line
// choice to stderr. Interrupted, it returns ctx's error alone, so that the
// program ends with the one line any interrupt ends with.
func StartEnv(ctx context.Context, cfg redisenv.Config, stderr io.Writer) (*redisenv.Env, error) {
	cfg.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	env, err := redisenv.Start(ctx, cfg)
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return nil, ctx.Err()
	}
	return env, err
}

// StartEnvFor starts the environment like StartEnv, but once started it
// outlives ctx (redisenv.StartFor): Ctrl-C during a run lets the run
// release its locks and write its results before the caller closes it.
func StartEnvFor(ctx context.Context, cfg redisenv.Config, stderr io.Writer) (*redisenv.Env, error) {
	cfg.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	env, err := redisenv.StartFor(ctx, cfg)
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return nil, ctx.Err()
	}
	return env, err
}

// CheckRedissonJar refuses a $LOCKBENCH_REDISSON_JAR that is no jar (a
// FIFO, a text file) before anything starts: commands whose Redisson part
// is optional would otherwise skip it or fail it midway. A driver that is
// only missing is left to each command, which says so where it matters.
func CheckRedissonJar() error {
	_, err := redisson.FindJar()
	if je := (*redisson.JarError)(nil); errors.As(err, &je) {
		return err
	}
	return nil
}

const envUsage = `
Starts (or connects to) Redis exactly as a run would, reports which backend
was chosen and why, the server's version and role, and the PING round trip
from one connection: the floor under every lock operation's latency here.
Servers it started are stopped before it exits.

Redis is chosen by --redis (default auto): an external Redis when a URL is
given (--redis-url or $REDIS_URL), else a container when a Docker engine
answers, else a local redis-server child process on 127.0.0.1.`

// EnvCommand is the "env" subcommand both programs share.
func EnvCommand(prog string) Command {
	return Command{
		Summary: "show which Redis a run would use, and its baseline round trip",
		Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := FlagSet(prog, "env", envUsage, stderr)
			var cfg redisenv.Config
			cfg.RegisterFlags(fs)
			d := fs.Duration("duration", 2*time.Second, "how long to measure the PING round trip")
			if err := Parse(fs, args); err != nil {
				return err
			}
			if *d <= 0 {
				return Usagef("--duration %v: must be positive, e.g. 2s", *d)
			}
			return CheckEnv(ctx, cfg, *d, stdout, stderr)
		},
	}
}

// CheckEnv starts the environment, probes it and measures the PING round
// trip for d. An interrupted measurement is still reported, marked partial.
func CheckEnv(ctx context.Context, cfg redisenv.Config, d time.Duration, stdout, stderr io.Writer) error {
	env, err := StartEnv(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer env.Close()
	rdb := env.NewClient()
	defer rdb.Close()
	info, err := redisenv.Probe(ctx, rdb)
	if err != nil {
		return err
	}
	compat := ""
	if info.Name != "redis" {
		compat = " (redis_version " + info.RedisVersion + ")"
	}
	fmt.Fprintf(stdout, "server:   %s%s, %s, role %s, %s\n", info.Server(), compat, info.Mode, info.Role, info.OS)
	for _, n := range env.Nodes() {
		line := fmt.Sprintf("node:     %-8s %s", n.Name(), n.Addr())
		if pid := n.PID(); pid > 0 { // only servers lockbench started have one
			line += fmt.Sprintf(" pid %d", pid)
		}
		fmt.Fprintln(stdout, line)
	}
	if env.Topology() == redisenv.TopologyCluster {
		names, _, err := env.ShardMap(ctx)
		if err != nil {
			return err
		}
		for _, n := range names {
			fmt.Fprintf(stdout, "shard:    %s\n", n)
		}
	}
	// Ctrl-C ends the measurement (and the Env with it); what was measured
	// until then is still reported.
	rtt, err := redisenv.MeasureRTT(ctx, rdb, d)
	if err != nil {
		return err
	}
	partial := ""
	if rtt.Partial {
		partial = " (PARTIAL: interrupted)"
	}
	fmt.Fprintf(stdout, "PING rtt: %d round trips in %v (%.0f/s), min %v p50 %v p99 %v max %v, %d errors%s\n",
		rtt.Count, rtt.Elapsed.Round(time.Millisecond), rtt.PerSec, us(rtt.Min), us(rtt.P50), us(rtt.P99), us(rtt.Max), rtt.ErrCount, partial)
	if rtt.Partial {
		return fmt.Errorf("measurement: %w", context.Cause(ctx))
	}
	return nil
}

func us(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
