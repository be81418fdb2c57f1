package report

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestCPULine: the CPU reading says who was the limit, in top's percentages.
func TestCPULine(t *testing.T) {
	for _, c := range []struct {
		name string
		cpu  results.CPU
		says string
	}{
		{"server", results.CPU{Redis: 0.97, RedisTotal: 1.0, Load: 1.2, LoadLimit: 2, HostCores: 4, SharedHost: true}, "redis 97% of a core · lockbench 120% (of 200%) · host 220% (of 400%): the server is the limit"},
		{"load", results.CPU{Redis: 0.4, RedisTotal: 0.4, Load: 1.85, LoadLimit: 2, HostCores: 8, SharedHost: true}, "lockbench is the limit (the load generator's CPUs)"},
		{"shared host", results.CPU{Redis: 0.8, RedisTotal: 0.85, Load: 1.0, LoadLimit: 2, HostCores: 2, SharedHost: true}, "host 185% (of 200%): the host's CPUs are the limit (Redis and lockbench share them)"},
		{"remote server", results.CPU{Redis: 0.8, RedisTotal: 0.85, Load: 1.0, LoadLimit: 2, HostCores: 2}, "redis 80% of a core · lockbench 100% (of 200%): neither is saturated: latency is the limit"},
		{"busy host", results.CPU{Redis: 0.43, RedisTotal: 0.45, Load: 0.78, LoadLimit: 2, HostCores: 2, SharedHost: true, Host: 1.98}, "host 198% (of 200%; 75% neither Redis's nor lockbench's): the host's CPUs are the limit, and other work took 75% of them"},
		{"measured host, not busy", results.CPU{Redis: 0.7, RedisTotal: 0.72, Load: 0.98, LoadLimit: 2, HostCores: 2, SharedHost: true, Host: 1.72}, "host 172% (of 200%): neither is saturated"},
		{"latency", results.CPU{Redis: 0.3, RedisTotal: 0.3, Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true}, "neither is saturated"},
		{"unread, host read", results.CPU{Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true, Unread: "INFO cpu: NOPERM", Host: 1.3}, "lockbench 50% (of 200%) · host 130% (of 200%): lockbench is not saturated"},
		{"unread", results.CPU{Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true, Unread: "INFO cpu: NOPERM"}, "redis unread (INFO cpu: NOPERM) · lockbench 50% (of 200%): lockbench is not saturated; the server's share is unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := cpuLine(&c.cpu); !strings.Contains(got, c.says) {
				t.Errorf("cpuLine = %q, want it to say %q", got, c.says)
			}
		})
	}
}

func sweepPoint(x, ops, p99 float64) results.SweepPoint {
	return results.SweepPoint{X: x, Clients: int(x), Owners: 1, OpsPerSec: ops, Ops: int64(ops * 20), P99Us: p99}
}

// TestCapacityStatement: each shape of curve is read out in its own words.
func TestCapacityStatement(t *testing.T) {
	failed := sweepPoint(4, 0, 0)
	failed.Ops, failed.Failure = 0, "no operation succeeded: all 46,000 attempts failed (conn 46,000)"
	for _, c := range []struct {
		name     string
		currentX float64
		points   []results.SweepPoint
		want     []string
		not      []string
	}{
		{"saturates", 4, []results.SweepPoint{sweepPoint(1, 1000, 300), sweepPoint(2, 1900, 500), sweepPoint(4, 3500, 900),
			sweepPoint(8, 5000, 3000), sweepPoint(16, 5600, 8000), sweepPoint(32, 5900, 20_000), sweepPoint(64, 6000, 45_000)},
			[]string{"5,600.0 ops/s at concurrency 16", "knee", "headroom +60%"}, nil},
		{"current over the SLO", 64, []results.SweepPoint{sweepPoint(8, 4000, 2000), sweepPoint(16, 6000, 8000),
			sweepPoint(32, 5500, 30_000), sweepPoint(64, 5000, 80_000)},
			[]string{"it breaks the SLO", "6,000.0 ops/s at concurrency 16 (16×1): go back to it"}, []string{"headroom"}},
		{"still rising", 0, []results.SweepPoint{sweepPoint(1, 1000, 100), sweepPoint(2, 2000, 100), sweepPoint(4, 4000, 100), sweepPoint(8, 8000, 100)},
			[]string{"No saturation within the swept range"}, nil},
		{"none meets", 0, []results.SweepPoint{sweepPoint(1, 1000, 20_000), sweepPoint(2, 2000, 30_000)},
			[]string{"No point met the SLO"}, nil},
		{"a failed point", 0, []results.SweepPoint{sweepPoint(2, 2000, 500), failed, sweepPoint(8, 5000, 900)},
			[]string{"failed (no operation succeeded"}, []string{"saturates", "still rose"}},
		{"one point", 8, []results.SweepPoint{sweepPoint(8, 5000, 900)},
			[]string{"One point measured", "(8, swept)"}, []string{"still rose"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &results.Sweep{Schema: results.SweepSchema, Axis: results.AxisConcurrency, SLOP99Us: 10_000,
				MaxErrorRate: results.DefaultMaxErrorRate, CurrentX: c.currentX, Points: c.points}
			s.Analyze()
			text := strings.Join(capacityStatement(s.Capacity[0], s.Axis, s.SLOP99Us), " ")
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("statement %q lacks %q", text, w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(text, w) {
					t.Errorf("statement %q says %q", text, w)
				}
			}
		})
	}
}

// TestGuardLine: the guard's line counts lost updates, and names what a
// fencing store refused only where refusing is its job or it happened.
func TestGuardLine(t *testing.T) {
	for _, c := range []struct {
		name string
		g    results.Guard
		want []string
		not  []string
	}{
		{"plain, one lost", results.Guard{Mode: "plain", Store: "redis 127.0.0.1:6380", Sections: 10, Written: 10, Accepted: 10, Final: 9, Lost: 1},
			[]string{"plain redis 127.0.0.1:6380: 1 lost update", "10 of 10 sections written", "counter 9 of 10 accepted"}, []string{"stale refused"}},
		{"fenced", results.Guard{Mode: "fenced", Store: "s", Sections: 5, Written: 4, Accepted: 4, Final: 4, RejectedWrites: 1, Rejected: 1, StaleAccepted: 2},
			[]string{"0 lost updates", "stale refused: 0 reads, 1 write", "stale writes accepted: 2"}, []string{"rightful"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := guardLine(&c.g)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("guardLine = %q, lacks %q", got, w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(got, w) {
					t.Errorf("guardLine = %q, says %q", got, w)
				}
			}
		})
	}
}
