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
