package perf_test

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// TestServerGroups: the servers compare on uncontended and mutex at 32
// owners, rw90 and fair, each with the implementations the matrix runs
// there; a matrix of other shapes compares whole.
func TestServerGroups(t *testing.T) {
	var got []string
	for _, g := range perf.ServerGroups(perf.DefaultLineup(impls.Names())) {
		got = append(got, g.Profile)
		if (g.Profile == "uncontended" || g.Profile == "mutex") && g.Owners != perf.PipelineOwners {
			t.Errorf("%s at %d owners compares servers", g.Profile, g.Owners)
		}
		if g.Profile == "uncontended" && !slices.Contains(g.Impls, impls.RedissonName) {
			t.Errorf("uncontended compares %v; want every implementation", g.Impls)
		}
	}
	if want := []string{"uncontended", "mutex", "rw90", "fair"}; !slices.Equal(got, want) {
		t.Errorf("server groups %v; want %v", got, want)
	}
	small := []perf.LineupGroup{{Profile: "uncontended", Owners: 2, Impls: []string{"raw"}}}
	if g := perf.ServerGroups(small); !slices.Equal(g[0].Impls, small[0].Impls) || len(g) != 1 {
		t.Errorf("a matrix of other shapes: %+v; want it whole", g)
	}
}

// TestServerTable lays made-up matrices side by side: a row per
// implementation the other server ran, its ratio the median of the
// rounds' ratios, the limit as the cells judged it; then redis-benchmark
// and its ceiling, their limit judged from their CPU.
func TestServerTable(t *testing.T) {
	round := func(n int, ops float64) results.LineupRound { return results.LineupRound{Round: n, OpsPerSec: ops} }
	base := func(lock, redisCPU, ceiling float64) results.Baseline {
		return results.Baseline{LockPerSec: lock, UnlockPerSec: lock, LockP99Us: 300, RedisCPU: redisCPU, LoadCPU: 0.5,
			Ceiling: results.Drive{CyclesPerSec: ceiling, RedisCPU: 0.99, LoadCPU: 0.2}}
	}
	baselines := func(bs ...results.Baseline) []results.LineupBaseline {
		return []results.LineupBaseline{{Clients: 32, Rounds: bs, Median: perf.MedianBaseline(32, bs)}}
	}
	first := &results.Lineup{Meta: results.Meta{Server: "redis 7.0.15"},
		Cells: []results.LineupCell{
			{Profile: "uncontended", Owners: 32, Impl: "lockimpl", Rounds: []results.LineupRound{round(0, 100), round(1, 200)},
				Median: results.LineupRound{OpsPerSec: 150, AcquireP99: 900, CPULimit: results.LimitRedis}},
			{Profile: "uncontended", Owners: 8, Impl: "lockimpl", Rounds: []results.LineupRound{round(0, 50)}}, // not compared
		},
		Baselines: baselines(base(1000, 0.95, 5000), base(2000, 0.5, 6000)),
	}
	first.Servers = []results.Lineup{{Meta: results.Meta{Server: "valkey 9.1.2"},
		Cells: []results.LineupCell{
			{Profile: "uncontended", Owners: 32, Impl: "lockimpl", Rounds: []results.LineupRound{round(0, 150), round(1, 200)},
				Median: results.LineupRound{OpsPerSec: 175, AcquireP99: 800}},
		},
		Baselines: baselines(base(1500, 0.95, 10000), base(2000, 0.95, 6000)),
	}}
	rows := perf.ServerTable(first)
	if len(rows) != 3 {
		t.Fatalf("rows %+v; want lockimpl, redis-benchmark and its ceiling", rows)
	}
	li := rows[0]
	if li.Profile != "uncontended" || li.Owners != 32 || li.Impl != "lockimpl" || len(li.On) != 2 {
		t.Fatalf("first row %+v", li)
	}
	if on := li.On[0]; on.Server != "redis 7.0.15" || on.OpsPerSec != 150 || on.AcquireP99 != 900 || on.Limit != results.LimitRedis || on.VsFirst != 0 {
		t.Errorf("lockimpl on Redis: %+v", on)
	}
	// Rounds' ratios 1.5 and 1: their median, not the medians' 175/150.
	if on := li.On[1]; on.Server != "valkey 9.1.2" || on.OpsPerSec != 175 || on.VsFirst != 1.25 || on.Limit != results.LimitNone {
		t.Errorf("lockimpl on Valkey: %+v; want ratio 1.25", on)
	}
	rb, ceiling := rows[1], rows[2]
	if rb.Profile != "" || rb.Owners != 32 || rb.Impl != results.RowRedisBenchmark || ceiling.Impl != results.RowCeiling {
		t.Fatalf("baseline rows %+v, %+v", rb, ceiling)
	}
	// Redis's command thread saturated in one round of two (the first
	// seen wins the tie); Valkey's in both.
	if rb.On[0].Limit != results.LimitRedis || rb.On[1].Limit != results.LimitRedis || rb.On[0].AcquireP99 != 300 {
		t.Errorf("redis-benchmark row %+v", rb.On)
	}
	// Cycles: 500 and 1000/s on Redis, 750 and 1000/s on Valkey.
	if v := rb.On[1].VsFirst; v != 1.25 {
		t.Errorf("redis-benchmark on Valkey: ratio %v; want the rounds' 1.5 and 1, median 1.25", v)
	}
	if c := ceiling.On[1]; c.OpsPerSec != 8000 || c.VsFirst != 1.5 || c.AcquireP99 != 0 || c.Limit != results.LimitRedis {
		t.Errorf("ceiling on Valkey: %+v; want 8,000 cycles/s, ratio 1.5 (2 and 1), no p99, the server the limit", c)
	}
	if perf.ServerTable(&first.Servers[0]) != nil {
		t.Error("a matrix on one server has a server table")
	}
}

// TestRunServers runs a small matrix on Redis and Valkey through Run:
// the servers take turns within each round, in an order that rotates;
// each has its own baselines; the matrix file holds Valkey's matrix and
// the server table.
func TestRunServers(t *testing.T) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark not on PATH")
	}
	if _, err := redisenv.FindServer(redisenv.ServerValkey); err != nil {
		t.Skipf("no valkey-server: %s", redisenv.ValkeyInstallHint)
	}
	site := func(server string) perf.Site {
		env := redisenvtest.Start(t, redisenv.Config{Server: server})
		return perf.Site{Base: workloads.Config{NewRedis: env.NewPool, Meta: results.Meta{Server: env.Server()}}, Server: benchServer(t, env)}
	}
	rs, vk := site(redisenv.ServerRedis), site(redisenv.ServerValkey)
	spec, err := perf.LineupSpecOf([]string{"raw"})
	if err != nil {
		t.Fatal(err)
	}
	spec.Groups = []perf.LineupGroup{{Profile: "uncontended", Owners: 2, Impls: []string{"raw"}}, {Profile: "mutex", Owners: 2, Impls: []string{"raw"}}}
	spec.Rounds, spec.Duration = 2, 300*time.Millisecond
	var order []string
	var saved string
	// A hang guard for a whole matrix on two servers, which a loaded host
	// may take well over one event's patience to run.
	ctx, cancel := context.WithTimeout(context.Background(), 4*testkit.Patience)
	defer cancel()
	err = perf.Run(ctx, perf.Options{
		Parts: []string{perf.PartMatrix}, Base: rs.Base, Server: rs.Server, Servers: []perf.Site{vk},
		Matrix: spec, RedisBenchmark: bin, Out: t.TempDir(),
		Progress: func(_, msg string) {
			if i := strings.Index(msg, " · "); i > 0 && strings.HasPrefix(msg, "round") && !strings.Contains(msg, "redis-benchmark -c") {
				name, _, _ := strings.Cut(msg[i+len(" · "):], " ")
				if len(order) == 0 || order[len(order)-1] != name {
					order = append(order, name)
				}
			}
		},
		Finished: func(p perf.Part) error { saved = p.Saved; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"redis", "valkey", "redis"}; !slices.Equal(order, want) {
		t.Errorf("servers in turn %v; want %v (round 2 starts with Valkey, which ran last in round 1)", order, want)
	}
	m, err := results.ReadLineup(saved)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Servers) != 1 || !strings.HasPrefix(m.Meta.Server, "redis ") || !strings.HasPrefix(m.Servers[0].Meta.Server, "valkey ") {
		t.Fatalf("matrix on %q with servers %d; want Redis's, holding Valkey's", m.Meta.Server, len(m.Servers))
	}
	for _, l := range []*results.Lineup{m, &m.Servers[0]} {
		if len(l.Cells) != 2 || len(l.Baselines) != 1 || len(l.Baselines[0].Rounds) != 2 {
			t.Errorf("%s: %d cells, baselines %+v; want both groups, redis-benchmark at 2 in both rounds", l.Meta.Server, len(l.Cells), l.Baselines)
		}
		for _, c := range l.Cells {
			if len(c.Rounds) != 2 || c.Median.OpsPerSec <= 0 {
				t.Errorf("%s: %s on %s: rounds %d, median %+v", l.Meta.Server, c.Impl, c.Profile, len(c.Rounds), c.Median)
			}
		}
	}
	if len(m.ServerTable) != 4 || m.ServerTable[0].On[1].VsFirst <= 0 {
		t.Errorf("server table %+v; want raw on both workloads, redis-benchmark and its ceiling, with Valkey's ratios", m.ServerTable)
	}
}
