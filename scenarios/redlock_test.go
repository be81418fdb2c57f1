package scenarios_test

import (
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestNodeRestart: a Redlock holder on a bare majority overlaps the
// contender once one of its three nodes restarts empty, and is told
// nothing before its write; on all five nodes the restart costs it
// nothing.
func TestNodeRestart(t *testing.T) {
	rep := run(t, "node-restart", options(t))
	if rep.Verdict != results.ExpectedViolation {
		t.Fatalf("verdict %s (%s), want %s", rep.Verdict, rep.Reason, results.ExpectedViolation)
	}
	bare, all := variant(t, rep, "bare-majority"), variant(t, rep, "all-five")
	if bare.Safety.Violations < 1 || bare.Safety.UnsafeUs <= 0 {
		t.Errorf("bare-majority: %+v; want a violation with an unsafe window", bare.Safety)
	}
	if all.Safety.Violations != 0 || all.Lost != 0 {
		t.Errorf("all-five: %d violations, %d lost; want none", all.Safety.Violations, all.Lost)
	}
	for _, r := range rep.Runs {
		kills := 0
		for _, e := range r.Events {
			if e.Kind == "kill" && e.Err == "" {
				kills++
			}
		}
		if kills != 1 {
			t.Errorf("%s: events %+v; want one clean kill", r.Variant, r.Events)
		}
	}
}
