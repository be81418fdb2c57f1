package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// TestChaosOnContainers: process and network faults on Redis containers
// give the verdicts they give on local servers; failover included, whose
// replication cut is an ACL and so needs no proxy in the replication path.
func TestChaosOnContainers(t *testing.T) {
	cfg := redisenvtest.ContainerConfig(t)
	out := t.TempDir()
	code, stdout, stderr := runChaos(t, "run", "watchdog-loss", "partition-heal", "redis-restart", "failover", "--quick",
		"--redis", "container", "--redis-image", cfg.Image, "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		`(?m)^watchdog-loss +EXPECTED VIOLATION DETECTED`,
		`(?m)^partition-heal +PASS`,
		`(?m)^redis-restart +EXPECTED VIOLATION DETECTED`,
		`(?m)^failover +EXPECTED VIOLATION DETECTED`,
	} {
		if !regexp.MustCompile(want).MatchString(stdout) {
			t.Errorf("verdicts lack %s:\n%s", want, stdout)
		}
	}
	if regexp.MustCompile(`(?m)^\S+ +SKIPPED`).MatchString(stdout) || strings.Contains(stderr, "Testcontainers") {
		t.Errorf("a scenario was skipped, or testcontainers printed:\n%s\n%s", stdout, stderr)
	}
}
