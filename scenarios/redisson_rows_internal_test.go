package scenarios

import (
	"cmp"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/redisson"
)

// TestRedissonRows runs the Redisson column (its default settings) of
// the server-side rows (restart, Sentinel failover, cluster failover) at
// the quick timing and holds each cell to its verdict; make chaos runs
// the other Redisson columns. $LOCKBENCH_REDISSON_ROWS limits the rows
// (comma-separated names).
func TestRedissonRows(t *testing.T) {
	redisenvtest.Long(t, "the mitigation matrix's Redisson cells")
	if _, err := redisson.FindJar(); err != nil {
		t.Skip(err)
	}
	tp := faults.NewEmbedded()
	defer tp.Close()
	store := redisenvtest.Start(t)
	o := Options{Redis: redisenv.Config{Backend: redisenv.BackendLocal, Server: redisenvtest.Server(), Dir: t.TempDir()}, Toxiproxy: tp, Quick: true, Seed: 1, Logf: t.Logf, Out: t.TempDir()}
	mo := MitigationOptions{StoreAt: store.Addr(), NewStore: func(key string, mode guard.Mode) *guard.Store {
		return guard.New(store.NewClient(), key, mode)
	}}
	only := os.Getenv("LOCKBENCH_REDISSON_ROWS")
	for _, row := range matrixRows() {
		if row.s != redisRestartScenario && row.s != failoverScenario && row.s != clusterFailoverScenario ||
			only != "" && !strings.Contains(only, row.s.Name) {
			continue
		}
		for _, mi := range Mitigations {
			if mi.Name != "redisson" {
				continue
			}
			t.Run(row.s.Name+"/"+mi.Name, func(t *testing.T) {
				c, server := runCell(context.Background(), o, mo, TimingFor(true), row, mi)
				t.Logf("cell: lost %d, violations %d, unsafe %.0f ms, refused %d, written %d, stale refused %d; expect %s; skipped %q; problem %q",
					c.Lost, c.Violations, c.UnsafeMs, c.Refused, c.Written, c.Rejected, c.Expect, c.Skipped, c.Problem)
				if c.Skipped != "" {
					t.Skip(c.Skipped)
				}
				if want := cmp.Or(redisenvtest.Server(), redisenv.ServerRedis); !strings.HasPrefix(server, want+" ") {
					t.Errorf("cell ran on %q; want %s", server, want)
				}
				if !c.OK {
					t.Errorf("want %s: %s", c.Expect, c.Problem)
				}
			})
		}
	}
}
