package report_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

// TestWriteScale: a row per point with its verdicts, and a cost table
// whose columns divide by each point's owners, then by the owners added
// between the two largest points.
func TestWriteScale(t *testing.T) {
	judged := results.Safety{Sections: 100}
	fair := results.Fairness{Owners: 1000, Max: 3, Jain: 0.9}
	rows := []results.ScaleRow{
		{Owners: 1_000, Clients: 10, Locks: 256, Rate: 10_000, OpsPerSec: 9_990, PeakRSSBytes: 64 << 20, Goroutines: 1_020,
			Safety: judged, Fairness: fair, Costs: []results.ScaleCost{{Component: "goroutine stacks", Bytes: 4_096_000, How: "x"}}},
		{Owners: 10_000, Clients: 10, Locks: 256, Rate: 10_000, OpsPerSec: 9_980, PeakRSSBytes: 300 << 20, TargetRSSBytes: 256 << 20, Goroutines: 10_020,
			Fairness: fair, Costs: []results.ScaleCost{{Component: "goroutine stacks", Bytes: 40_960_000, How: "stacks"}}},
	}
	var b strings.Builder
	if err := report.WriteScale(&b, rows); err != nil {
		t.Fatal(err)
	}
	line := func(prefix string) []string {
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return strings.Fields(l)
			}
		}
		t.Fatalf("no line starting %q in\n%s", prefix, b.String())
		return nil
	}
	// owners clients loop ops/s peak-RSS(2) target(…) RSS/owner(2) …
	if f := line("1,000 "); f[2] != "open" || f[4] != "64.0" || f[6] != "—" || f[7] != "65.5" || f[len(f)-1] != "yes" {
		t.Errorf("1,000 owners: %q; want open loop, peak 64.0 MiB, no target, 65.5 KiB per owner, judged", f)
	}
	if f := line("10,000 "); f[6] != "≤" || f[7] != "256.0" || f[9] != "MISS" || f[len(f)-1] != "no" {
		t.Errorf("10,000 owners: %q; want the 256 MiB target missed, and not judged (no section checked)", f)
	}
	if f := line("goroutine stacks"); len(f) < 8 || f[2] != "4.0" || f[4] != "4.0" || f[6] != "4.0" || f[8] != "stacks" {
		t.Errorf("stacks: %q; want 4.0 KiB at each point and between them, then how (at 10,000)", f)
	}
}

// TestWriteScaleClosed: a closed-loop point shows as such, with a cost
// column of its own, and the marginal cost still compares the two largest
// open-loop points.
func TestWriteScaleClosed(t *testing.T) {
	cost := func(b int64) []results.ScaleCost {
		return []results.ScaleCost{{Component: "goroutine stacks", Bytes: b, How: "stacks"}}
	}
	rows := []results.ScaleRow{
		{Owners: 1_000, Clients: 10, Loop: "open", Locks: 256, Rate: 10_000, Costs: cost(4_096_000)},
		{Owners: 10_000, Clients: 10, Loop: "open", Locks: 256, Rate: 10_000, Costs: cost(40_960_000)},
		{Owners: 10_000, Clients: 10, Loop: "closed", Locks: 10_000, Costs: cost(81_920_000)},
	}
	var b strings.Builder
	if err := report.WriteScale(&b, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"10,000 closed", "each owner more (1,000 → 10,000)", "in closed loop: every owner in a call at once"} {
		if !strings.Contains(out, want) {
			t.Errorf("scale table lacks %q:\n%s", want, out)
		}
	}
	found := false
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 8 && f[0] == "goroutine" {
			found = true
			if f[2] != "4.0" || f[4] != "4.0" || f[6] != "8.0" || f[8] != "4.0" {
				t.Errorf("stacks: %q; want 4.0 KiB open, 8.0 closed, 4.0 between the open points", f)
			}
		}
	}
	if !found {
		t.Errorf("no goroutine stacks row in:\n%s", out)
	}
}

// TestLineupDocScale: the perf document has the scale section when the
// matrix carries the scale part's rows, and none otherwise.
func TestLineupDocScale(t *testing.T) {
	for _, rows := range [][]results.ScaleRow{nil, {{Owners: 1_000, Clients: 10, Locks: 256, Rate: 10_000}}} {
		doc := lineupMarkdown(t, &results.Lineup{Rounds: 1, Scale: rows})
		if got := strings.Contains(doc, "\n## Scale: the harness with 1,000 owners\n"); got != (rows != nil) {
			t.Errorf("scale rows %v: section in the document %v", rows, got)
		}
	}
}
