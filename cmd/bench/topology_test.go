package main

import (
	"errors"
	"testing"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/workloads"
)

// TestRunOnSentinelAndCluster: every implementation runs on a Sentinel
// deployment (go-redis's failover client, Redisson in its sentinel mode)
// and Redisson on a cluster (its cluster mode), each run taking locks and
// overlapping none.
func TestRunOnSentinelAndCluster(t *testing.T) {
	cases := []struct{ topology, impl string }{{"cluster", impls.RedissonName}}
	for _, impl := range impls.Names() {
		cases = append(cases, struct{ topology, impl string }{"sentinel", impl})
	}
	for _, tc := range cases {
		t.Run(tc.topology+"/"+tc.impl, func(t *testing.T) {
			if _, err := redisson.FindJar(); tc.impl == impls.RedissonName && errors.Is(err, redisson.ErrUnavailable) {
				t.Skip(err)
			}
			out := t.TempDir()
			args := []string{"run", "--redis", "local", "--topology", tc.topology, "--impl", tc.impl, "--profile", "mutex",
				"--clients", "2", "--owners", "2", "--duration", "1s", "--warmup", "0s", "--quiet", "--out", out}
			impl, err := impls.Lookup(tc.impl)
			if err != nil {
				t.Fatal(err)
			}
			if s, ok := impl.(workloads.ReplicaSyncer); !ok || !s.SyncsReplicas() {
				args = append(args, "--replica-sync", "false") // it sends no WAIT, and would be refused
			}
			code, stdout, stderr := runBench(t, args...)
			if code != cli.ExitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			res := readResult(t, out)
			if res.Throughput.Ops == 0 || res.Safety.Violations != 0 {
				t.Errorf("%d operations, %d violations; want some and none", res.Throughput.Ops, res.Safety.Violations)
			}
			if res.Meta.RedisTopology == "" {
				t.Errorf("the result does not say the topology")
			}
		})
	}
}
