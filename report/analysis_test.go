package report

import (
	"fmt"
	"slices"
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
			requireWords(t, "statement", strings.Join(capacityStatement(s.Capacity[0], s.Axis, s.SLOP99Us), " "), c.want, c.not)
		})
	}
}

// requireWords fails t unless text (what) holds every phrase of want and
// none of not.
func requireWords(t *testing.T, what, text string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s %q lacks %q", what, text, w)
		}
	}
	for _, w := range not {
		if strings.Contains(text, w) {
			t.Errorf("%s %q says %q", what, text, w)
		}
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
			requireWords(t, "guardLine", guardLine(&c.g), c.want, c.not)
		})
	}
}

// TestExclusionText: the store's own line says what it saw where it is
// not the verdict (a worker's reading, overlaps within one process the
// clock checker did not count), and nothing where the safety line
// carries its verdict or it counted no occupancy.
func TestExclusionText(t *testing.T) {
	for _, c := range []struct {
		name   string
		g      *results.Guard
		safety results.Safety
		worker bool
		prefix string
	}{
		{"no guard", nil, results.Safety{}, false, ""},
		{"older file", &results.Guard{Mode: "plain", Sections: 10, Overlaps: 0}, results.Safety{}, false, ""},
		{"one process, clean", &results.Guard{Mode: "plain", Sections: 12345, Occupancy: true}, results.Safety{}, false, ""},
		{"one process, overlaps", &results.Guard{Mode: "plain", Sections: 10, Occupancy: true, Overlaps: 3}, results.Safety{}, false, "the guarded store saw 3 overlaps where the clock checker saw none"},
		{"one process, both saw", &results.Guard{Mode: "plain", Sections: 10, Occupancy: true, Overlaps: 3}, results.Safety{Violations: 2}, false, "the guarded store saw 3 overlaps too"},
		{"the witness", &results.Guard{Mode: "plain", Sections: 10, Occupancy: true, Overlaps: 3}, results.Safety{Witness: results.WitnessStore, StoreOverlaps: 3}, false, ""},
		{"a worker's reading", &results.Guard{Mode: "plain", Sections: 10, Occupancy: true, Overlaps: 3}, results.Safety{}, true, "3 overlaps witnessed so far"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &results.Result{Guard: c.g, Safety: c.safety}
			if c.worker {
				r.Worker = &results.Worker{Index: 1, Workers: 2}
			}
			text := exclusionText(r)
			if !strings.HasPrefix(text, c.prefix) || (c.prefix == "") != (text == "") {
				t.Errorf("exclusionText = %q; want %q…", text, c.prefix)
			}
		})
	}
}

// labelled is the text of the summary line labelled label and the
// unlabelled lines after it.
func labelled(bl []block, label string) []string {
	var out []string
	for i, b := range bl {
		p, ok := b.(para)
		if !ok || !strings.HasPrefix(p.text, fmt.Sprintf("%-12s", label)) {
			continue
		}
		out = append(out, strings.TrimSpace(p.text[12:]))
		for _, b := range bl[i+1:] {
			p, ok := b.(para)
			if !ok || !strings.HasPrefix(p.text, strings.Repeat(" ", 12)) {
				break
			}
			out = append(out, strings.TrimSpace(p.text))
		}
	}
	return out
}

// TestExclusionBlocks: a merged run whose guarded store witnessed every
// process has one verdict, the safety line's, naming the store, with the
// store's overlap examples below it, in the summary and the report; a
// single run with store overlaps and none by the clock says the clock
// checker is its verdict.
func TestExclusionBlocks(t *testing.T) {
	examples := []results.Overlap{
		{Name: "lb:0", Inside: []string{"a/o1", "a/o2"}, Entered: "b/o3"},
		{Name: "lb:1", Inside: []string{"a/o4"}, Entered: "b/o5", EnteredRead: true},
	}
	merged := &results.Result{
		Throughput: results.Throughput{Attempts: 10, Ops: 10},
		Safety:     results.Safety{Sections: 10, Witness: results.WitnessStore, StoreOverlaps: 2},
		Guard:      &results.Guard{Mode: "plain", Store: "s", Sections: 10, Occupancy: true, Overlaps: 2, OverlapExamples: examples},
	}
	got := labelled(summaryBlocks(merged), "safety")
	want := []string{
		"VIOLATED: 2 overlaps in 10 critical sections, witnessed by the guarded store across every process: a holder entered a lock's section while one it excludes was inside",
		"lock lb:0: a/o1, a/o2 inside when b/o3 entered",
		"lock lb:1: a/o4 (write) inside when b/o5 (read) entered",
	}
	if !slices.Equal(got, want) {
		t.Errorf("summary's safety lines %q; want %q", got, want)
	}
	if got := labelled(summaryBlocks(merged), "exclusion"); len(got) != 0 {
		t.Errorf("a second verdict: exclusion lines %q", got)
	}

	var verdict *para
	var tab *table
	for _, b := range safetyBlocks(merged) {
		switch x := b.(type) {
		case para:
			if strings.HasPrefix(x.text, "Safety ") {
				verdict = &x
			}
		case table:
			if slices.Equal(x.head, []string{"lock", "inside", "entered"}) {
				tab = &x
			}
		}
	}
	if verdict == nil || verdict.class != "bad" || !strings.Contains(verdict.text, "witnessed by the guarded store") {
		t.Fatalf("report: safety verdict %+v; want a bad one by the store", verdict)
	}
	if tab == nil || len(tab.rows) != 2 || tab.rows[0][0].text != "lb:0" || tab.rows[1][2].text != "b/o5 (read)" {
		t.Errorf("report: overlap table %+v; want the examples' rows", tab)
	}

	clean := *merged
	clean.Safety.StoreOverlaps, clean.Guard = 0, &results.Guard{Mode: "plain", Store: "s", Sections: 10, Occupancy: true}
	if got := labelled(summaryBlocks(&clean), "safety"); len(got) != 1 || got[0] != "OK: no mutual-exclusion violation in 10 critical sections, witnessed by the guarded store across every process" {
		t.Errorf("clean merged run's safety lines %q; want OK by the store alone", got)
	}

	single := *merged
	single.Safety = results.Safety{Sections: 10}
	if got := labelled(summaryBlocks(&single), "exclusion"); len(got) != 3 || !strings.Contains(got[0], "clock checker is the verdict") {
		t.Errorf("single run's exclusion lines %q; want the clock checker named the verdict, then the examples", got)
	}
	old := single
	old.Guard = &results.Guard{Mode: "plain", Store: "s", Sections: 10}
	if got := labelled(summaryBlocks(&old), "exclusion"); len(got) != 0 {
		t.Errorf("a file without occupancy: exclusion lines %q", got)
	}
}
