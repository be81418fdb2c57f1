package scenarios

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestCombinedVerdicts: honour and fencing each only keep writes from
// landing, so honour+fencing is held to 0 lost updates in every row where
// either alone is (redis-restart: honour is, fencing is not), and shown,
// not gated, where neither is.
func TestCombinedVerdicts(t *testing.T) {
	both := Mitigations[slices.IndexFunc(Mitigations, func(m Mitigation) bool { return m.Honour && m.Fencing && !m.Redisson })]
	for _, row := range matrixRows() {
		h, f, got := row.expect.of(Mitigation{Honour: true}), row.expect.of(Mitigation{Fencing: true}), row.expect.of(both)
		want := expectAny
		if h.want == expectNone || f.want == expectNone {
			want = expectNone
		}
		if got.want != want {
			t.Errorf("%s × %s: want %q (honour %q, fencing %q), got %q: %s", row.s.Name, both.Name, want, h.want, f.want, got.want, got.why)
		}
		if got.why == "" {
			t.Errorf("%s × %s: no why", row.s.Name, both.Name)
		}
	}
	restart := matrixRows()[slices.IndexFunc(matrixRows(), func(r matrixRow) bool { return r.s == redisRestartScenario })]
	if v := restart.expect.of(both); v.want != expectNone || !strings.Contains(v.why, "honour: ") || !strings.Contains(v.why, "fencing only keeps writes from landing") {
		t.Errorf("redis-restart × honour+fencing: %+v; want 0 lost updates, for honour's reason, fencing adding no loss", v)
	}
}

// TestFencingGated: the planted broken fencing can fail only the rows in
// which some cell relies on fencing alone for its 0.
func TestFencingGated(t *testing.T) {
	if got, want := FencingGated(), []string{"watchdog-loss", "client-freeze", "lease-expiry", "node-clock-jump"}; !slices.Equal(got, want) {
		t.Errorf("FencingGated() = %v, want %v", got, want)
	}
}

// TestCellNeedsWrites: a cell whose guarded counter no write reached
// fails whatever it expected: its 0 lost updates measured nothing. The
// exceptions are a cell whose holders honour their loss signal and all
// stopped at it, and one whose setting refused acquisitions, which must
// then lose nothing and refuse some.
func TestCellNeedsWrites(t *testing.T) {
	for _, tc := range []struct {
		expect  string
		honour  bool
		lost    int64 // holds the holders were told were lost
		refused int64
		g       results.Guard
		ok      bool
		problem string
	}{
		{expectNone, false, 0, 0, results.Guard{Sections: 0}, false, "no write reached the guarded counter (0 critical sections"},
		{expectNone, false, 0, 0, results.Guard{Sections: 4, RejectedReads: 4}, false, "no write reached the guarded counter (4 critical sections"},
		{expectAny, false, 0, 0, results.Guard{}, false, "no write reached"},
		{expectNone, false, 0, 0, results.Guard{Sections: 4, Written: 3, Accepted: 3, Final: 3}, true, ""},
		{expectSome, false, 0, 0, results.Guard{Sections: 4, Written: 4, Accepted: 4, Final: 3, Lost: 1}, true, ""},
		{expectNone, true, 4, 0, results.Guard{Sections: 4}, true, ""},
		{expectNone, true, 3, 0, results.Guard{Sections: 4}, false, "no write reached the guarded counter (4 critical sections"},
		{expectNone, false, 4, 0, results.Guard{Sections: 4}, false, "no write reached the guarded counter (4 critical sections"},
		{expectNone, true, 0, 0, results.Guard{Sections: 0}, false, "no write reached the guarded counter (0 critical sections"},
		{expectRefused, false, 0, 3, results.Guard{Sections: 1}, true, ""},
		{expectRefused, false, 0, 0, results.Guard{Sections: 2}, false, "0 acquisitions refused"},
		{expectRefused, false, 0, 3, results.Guard{Sections: 4, Written: 4, Accepted: 4, Final: 3, Lost: 1}, false, "1 lost updates, 3 acquisitions refused"},
	} {
		c := results.MitigationCell{Expect: tc.expect, Refused: tc.refused}
		g := tc.g
		judgeCell(&c, &results.ChaosReport{Runs: []results.RunSummary{{Lost: tc.lost, Guard: &g}}}, nil, tc.honour)
		if c.OK != tc.ok || !strings.Contains(c.Problem, tc.problem) {
			t.Errorf("expect %s, honour %v, %d lost holds, guard %+v: ok %v, problem %q; want ok %v, problem with %q",
				tc.expect, tc.honour, tc.lost, tc.g, c.OK, c.Problem, tc.ok, tc.problem)
		}
	}
}

// TestDownCause: a cost figure far below its healthy run's gets its
// cause from the run's own figures, the first that explains it:
// refusals (and the mitigation's reason for them), failures (and their
// message), or slower acquisitions and releases (with redsync's reason on
// Redlock); figures that explain nothing are reported unexplained.
func TestDownCause(t *testing.T) {
	healthy := results.MitigationCost{OpsPerSec: 500, AcquireP50Us: 600, ReleaseP50Us: 700}
	mi := func(name string) Mitigation {
		return Mitigations[slices.IndexFunc(Mitigations, func(m Mitigation) bool { return m.Name == name })]
	}
	for _, tc := range []struct {
		name  string
		mi    Mitigation
		down  results.ReplicaDownCost
		msg   string
		want  []string
		known bool
	}{
		{"min-acks refused", mi("min-acks"), results.ReplicaDownCost{OpsPerSec: 0, Attempts: 3, Refused: 3},
			"", []string{"3 of 3 acquisitions refused", "min-acks 1"}, true},
		{"min-replicas refused", mi("min-replicas"), results.ReplicaDownCost{OpsPerSec: 1, Attempts: 100, Refused: 96, Failed: 4},
			"", []string{"96 of 100 acquisitions refused", "min-replicas-to-write 1"}, true},
		{"failed", mi("none"), results.ReplicaDownCost{OpsPerSec: 2, Attempts: 10, Failed: 9},
			"dial tcp: connection refused", []string{"9 of 10 acquisitions failed: dial tcp: connection refused"}, true},
		{"redlock waits for the dead node", mi("redlock"), results.ReplicaDownCost{OpsPerSec: 4.5, Attempts: 23, AcquireP50Us: 844_000, ReleaseP50Us: 105_000},
			"", []string{"acquisitions took 844.00ms and releases 105.00ms at the median (healthy: 600.0µs and 700.0µs)", "WithFailFast(true)"}, true},
		{"slower, no library to blame", mi("none"), results.ReplicaDownCost{OpsPerSec: 4.5, Attempts: 23, AcquireP50Us: 844_000, ReleaseP50Us: 700},
			"", []string{"acquisitions took 844.00ms"}, true},
		{"unexplained", mi("none"), results.ReplicaDownCost{OpsPerSec: 4.5, Attempts: 23, AcquireP50Us: 700, ReleaseP50Us: 800},
			"", []string{"4.5 ops/s against 500.0 healthy, and no refusal, failure or slower acquisition or release explains it"}, false},
	} {
		if !tc.down.FarBelow(healthy) {
			t.Fatalf("%s: %v ops/s is not far below %v", tc.name, tc.down.OpsPerSec, healthy.OpsPerSec)
		}
		res := &results.Result{}
		if tc.msg != "" {
			res.ErrorMessages = []results.ErrorMessage{{Class: "conn", Message: tc.msg, Count: tc.down.Failed}}
		}
		cause, known := downCause(tc.mi, healthy, tc.down, res)
		if known != tc.known {
			t.Errorf("%s: known %v, want %v (%q)", tc.name, known, tc.known, cause)
		}
		for _, w := range tc.want {
			if !strings.Contains(cause, w) {
				t.Errorf("%s: cause %q does not say %q", tc.name, cause, w)
			}
		}
		if tc.mi.Redlock != strings.Contains(cause, "redsync") {
			t.Errorf("%s: cause %q names redsync %v, want %v", tc.name, cause, !tc.mi.Redlock, tc.mi.Redlock)
		}
	}
	if (results.ReplicaDownCost{OpsPerSec: 200}).FarBelow(healthy) {
		t.Error("200 ops/s against 500 is far below")
	}
}
