package perf

import (
	"slices"

	"github.com/lockbench/lockbench/results"
)

// The server comparison (bench perf --servers): the matrix's first
// server runs every group, each other server the ones that tell servers
// apart, in the same rounds; ServerTable lays them side by side.

// ServerProfiles are the workloads bench perf --servers runs on every
// server: the uncontended cost, handoff under contention, the read-write
// lock and the fair queue.
var ServerProfiles = []string{"uncontended", "mutex", "rw90", "fair"}

// ServerGroups are the groups of a matrix that every server of bench
// perf --servers runs: those on ServerProfiles, uncontended and mutex at
// PipelineOwners owners only (where the server's command thread nears
// its limit), each with the implementations it has. A matrix with none
// of them (cut down to other shapes) compares whole.
func ServerGroups(groups []LineupGroup) []LineupGroup {
	var out []LineupGroup
	for _, g := range groups {
		switch {
		case !slices.Contains(ServerProfiles, g.Profile):
		case g.Profile == "uncontended" || g.Profile == "mutex":
			if g.Owners == PipelineOwners {
				out = append(out, g)
			}
		default:
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return groups
	}
	return out
}

// ServerTable lays m and m.Servers side by side: for each workload the
// other servers ran, a row per implementation; then, at each of their
// concurrencies, redis-benchmark and its -P 16 ceiling (rows without a
// profile); each with every server's ops/s, acquire p99, limit and ratio
// to the first server. Nil when m has no other server.
func ServerTable(m *results.Lineup) []results.ServerRow {
	if len(m.Servers) == 0 {
		return nil
	}
	all := []*results.Lineup{m}
	for i := range m.Servers {
		all = append(all, &m.Servers[i])
	}
	type group struct {
		profile string
		owners  int
	}
	var groups []group
	impls := map[group][]string{}
	for _, l := range all[1:] {
		for _, c := range l.Cells {
			g := group{c.Profile, c.Owners}
			if _, ok := impls[g]; !ok {
				groups = append(groups, g)
			}
			if !slices.Contains(impls[g], c.Impl) {
				impls[g] = append(impls[g], c.Impl)
			}
		}
	}
	var rows []results.ServerRow
	var concurrencies []int
	for _, g := range groups {
		if !slices.Contains(concurrencies, g.owners) {
			concurrencies = append(concurrencies, g.owners)
		}
		for _, impl := range impls[g] {
			row := results.ServerRow{Profile: g.profile, Owners: g.owners, Impl: impl}
			first := m.Cell(g.profile, g.owners, impl)
			for i, l := range all {
				sc := results.ServerCell{Server: l.Meta.ServerName()}
				if c := l.Cell(g.profile, g.owners, impl); c != nil {
					sc.OpsPerSec, sc.AcquireP99, sc.Limit = c.Median.OpsPerSec, c.Median.AcquireP99, c.Median.CPULimit
					if i > 0 && first != nil {
						var rs []float64
						for _, r := range c.Rounds {
							if f, ok := roundNo(first.Rounds, r.Round); ok {
								if v := ratio(r.OpsPerSec, f.OpsPerSec); v > 0 {
									rs = append(rs, v)
								}
							}
						}
						sc.VsFirst = median(rs)
					}
				}
				row.On = append(row.On, sc)
			}
			rows = append(rows, row)
		}
	}
	slices.Sort(concurrencies)
	for _, n := range concurrencies {
		rows = append(rows, baselineRow(all, n, results.RowRedisBenchmark, func(b results.Baseline) (float64, *results.CPU) {
			return b.CyclesPerSec(), &results.CPU{Redis: b.RedisCPU, Load: b.LoadCPU, LoadLimit: 1}
		}), baselineRow(all, n, results.RowCeiling, func(b results.Baseline) (float64, *results.CPU) {
			return b.Ceiling.CyclesPerSec, &results.CPU{Redis: b.Ceiling.RedisCPU, Load: b.Ceiling.LoadCPU, LoadLimit: 1}
		}))
	}
	return rows
}

// baselineRow is the row named impl for the baselines at concurrency n
// on each of all: f reads one round's rate and CPU (redis-benchmark is one thread,
// so one core is all the load it can use); the limit is the one most
// rounds hit, as a cell's is.
func baselineRow(all []*results.Lineup, n int, impl string, f func(results.Baseline) (float64, *results.CPU)) results.ServerRow {
	row := results.ServerRow{Owners: n, Impl: impl}
	var first []results.Baseline
	for i, l := range all {
		sc := results.ServerCell{Server: l.Meta.ServerName()}
		var rounds []results.Baseline
		for _, b := range l.Baselines {
			if b.Clients == n {
				rounds = b.Rounds
				sc.OpsPerSec, _ = f(b.Median)
				if impl == results.RowRedisBenchmark {
					sc.AcquireP99 = b.Median.LockP99Us
				}
			}
		}
		sc.Limit = mostCommon(rounds, func(b results.Baseline) string { _, cpu := f(b); return cpu.Limit() })
		if i == 0 {
			first = rounds
		} else {
			var rs []float64
			for r := range min(len(rounds), len(first)) {
				a, _ := f(rounds[r])
				b, _ := f(first[r])
				if v := ratio(a, b); v > 0 {
					rs = append(rs, v)
				}
			}
			sc.VsFirst = median(rs)
		}
		row.On = append(row.On, sc)
	}
	return row
}
