package main

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// TestRunContainer: bench run on the container backend, end to end: the
// engine's Redis answers at the address its port is bound on, the load
// succeeds, and nothing of testcontainers reaches the terminal.
func TestRunContainer(t *testing.T) {
	cfg := redisenvtest.ContainerConfig(t)
	dir := t.TempDir()
	out, errOut := runBenchOK(t, "run", "--redis", "container", "--redis-image", cfg.Image, "--profile", "rw90",
		"--duration", "2s", "--warmup", "0s", "--quiet", "--out", dir)
	r := readResult(t, dir)
	if r.Meta.RedisBackend != "container" || r.Throughput.Ops == 0 || len(r.Failures()) > 0 || !r.Safety.OK() {
		t.Errorf("container run: backend %s, %+v, failures %q, safety %s\n%s", r.Meta.RedisBackend, r.Throughput, r.Failures(), r.Safety.Verdict(), out)
	}
	for _, noise := range []string{"Testcontainers", "Shell not found", "SessionID"} {
		if strings.Contains(errOut, noise) || strings.Contains(out, noise) {
			t.Errorf("testcontainers' log reached the terminal (%q):\n%s", noise, errOut)
		}
	}
	t.Logf("container run: %.0f ops/s, acquire p99 %.0f µs", r.Throughput.OpsPerSec, r.Latency["acquire"].P99)
}
