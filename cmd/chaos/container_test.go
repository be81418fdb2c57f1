package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/internal/clitest"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// TestChaosOnContainers: process and network faults on Redis containers
// give the verdicts they give on local servers; failover included, whose
// replication cut is an ACL and so needs no proxy in the replication path.
func TestChaosOnContainers(t *testing.T) {
	cfg := redisenvtest.ContainerConfig(t)
	out := t.TempDir()
	code, stdout, stderr := runChaos(t, "run", "watchdog-loss", "partition-heal", "redis-restart", "failover", "--quick",
		"--redis", "container", "--image", cfg.Image, "--out", out)
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

// TestChaosContainerInterruptedStarting: Ctrl-C as a scenario's container
// Redis starts (its image made from the installed redis-server, then its
// container made) exits 130 and leaves nothing of the run's on the engine.
func TestChaosContainerInterruptedStarting(t *testing.T) {
	redisenvtest.ContainerConfig(t)
	e := redisenvtest.CurrentEngine()
	api, err := client.New(client.WithHost(e.Host))
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	t.Setenv("REDIS_URL", "")
	// The run is this process: what it made carries this pid, as does the
	// tests' own image.
	runs := func() []string {
		found, _ := redisenvtest.Owned(api, os.Getpid()) // an error: Podman lists no image while one is half made
		var left []string
		for _, f := range found {
			if f != "image "+e.Image {
				left = append(left, f)
			}
		}
		return left
	}
	for _, step := range []string{"image", "container"} {
		t.Run(step, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stdout, stderr clitest.LineWriter
			done := make(chan int, 1)
			go func() {
				done <- program().Main(ctx, []string{"run", "watchdog-loss", "--quick", "--redis", "container", "--image", "local", "--out", t.TempDir()}, &stdout, &stderr)
			}()
			deadline := time.Now().Add(testkit.Patience)
		wait:
			for {
				for _, f := range runs() {
					if strings.HasPrefix(f, step+" ") {
						break wait
					}
				}
				select {
				case code := <-done:
					t.Fatalf("chaos ended (exit %d) before its %s was made:\n%s", code, step, stderr.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("no %s of the run's within %v:\n%s", step, testkit.Patience, stderr.String())
				}
				time.Sleep(2 * time.Millisecond)
			}
			cancel()
			select {
			case code := <-done:
				if code != cli.ExitInterrupted {
					t.Errorf("exit %d, want %d\n%s\n%s", code, cli.ExitInterrupted, stdout.String(), stderr.String())
				}
			case <-time.After(testkit.Patience):
				t.Fatalf("chaos still runs %v after the interrupt:\n%s", testkit.Patience, stderr.String())
			}
			testkit.Eventually(t, "the engine to list what is left", func() bool {
				_, err := redisenvtest.Owned(api, os.Getpid())
				return err == nil
			})
			if left := runs(); len(left) > 0 {
				t.Errorf("left on the engine: %s\n%s", strings.Join(left, "; "), stderr.String())
			}
		})
	}
}
