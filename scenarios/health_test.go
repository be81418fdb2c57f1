package scenarios_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
)

// TestExternalRedisKilledMidRun: an external Redis killed and restarted
// while partition-heal's load runs, before its partition: the connection
// errors come where no fault was injected, and the scenario fails instead
// of passing on a broken server's figures.
func TestExternalRedisKilledMidRun(t *testing.T) {
	env := redisenvtest.Start(t)
	node := env.Primary()
	o := options(t)
	o.Redis = redisenv.Config{Backend: redisenv.BackendExternal, URL: "redis://" + env.Addr()}
	rdb := env.NewClient()
	defer rdb.Close()
	var once sync.Once
	var wg sync.WaitGroup
	logf := o.Logf
	o.Logf = func(f string, a ...any) {
		logf(f, a...)
		if strings.Contains(f, "starting") {
			once.Do(func() {
				wg.Go(func() {
					// Once the load holds a lock, kill the server under it
					// and bring it back empty, a second before the partition.
					for {
						if n, _ := rdb.Keys(bg, "*lockbench:chaos:partition-heal*").Result(); len(n) > 0 {
							break
						}
					}
					if err := node.Kill(context.Background()); err != nil {
						t.Error(err)
					}
					if err := node.Restart(context.Background()); err != nil {
						t.Error(err)
					}
				})
			})
		}
	}
	rep := run(t, "partition-heal", o)
	wg.Wait()
	if rep.Verdict != results.Fail || !strings.Contains(rep.Reason, "no failures outside the fault windows") {
		t.Fatalf("verdict %s (%s), want FAIL naming the failures outside the faults", rep.Verdict, rep.Reason)
	}
}

// TestDeadRedisNeverPasses: against a Redis that does not answer at all,
// no scenario passes or is skipped: it fails, saying why.
func TestDeadRedisNeverPasses(t *testing.T) {
	o := options(t)
	o.Redis = redisenv.Config{Backend: redisenv.BackendExternal, URL: "redis://127.0.0.1:1"}
	for _, name := range []string{"partition-heal", "latency"} {
		rep := run(t, name, o)
		if rep.Verdict != results.Fail || !strings.Contains(rep.Reason, "connection refused") {
			t.Errorf("%s against a dead Redis: %s (%s), want FAIL", name, rep.Verdict, rep.Reason)
		}
	}
}
