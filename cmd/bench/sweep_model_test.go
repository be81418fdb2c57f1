package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/results"
)

// TestSweepModel sweeps mutex (one name: contention) and uncontended (a
// name per owner) over the same owners against a real redis-server: each
// sweep prints, files and draws its scalability model, mutex's σ is the
// larger, and bench compare of the two sweeps puts the difference on σ.
func TestSweepModel(t *testing.T) {
	if testing.Short() {
		t.Skip("two real sweeps")
	}
	// Both profiles hold 40 ms and think 10 ms, so an owner asks for about
	// 20 operations a second and the host is not the limit even when busy
	// (a CPU-bound curve flattens whatever the lock): uncontended, a name
	// per owner, then grows with every owner, while mutex's owners queue
	// for one name, 25 holds a second at most, from two owners on.
	sweep := func(profile string) (string, *results.USL, string) {
		dir := t.TempDir()
		args := []string{"sweep", "--redis", "local", "--profile", profile, "--clients", "1", "--owners", "1,2,4,8,12",
			"--hold", "40ms", "--think", "10ms", "--duration", "2s", "--warmup", "300ms", "--slo-p99", "1s", "--stop-after", "0", "--out", dir}
		out, _ := runBenchOK(t, args...)
		sw, err := results.ReadSweep(filepath.Join(dir, "sweep.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(sw.Capacity) != 1 || sw.Capacity[0].Model == nil {
			t.Fatalf("%s: capacity %+v; want one curve with a model", profile, sw.Capacity)
		}
		m := sw.Capacity[0].Model
		t.Logf("%s: %s", profile, m.Reading())
		if m.Points != 5 || m.Lambda <= 0 {
			t.Errorf("%s: model %+v; want fitted to the 5 points", profile, m)
		}
		if !strings.Contains(out, "Model (Universal Scalability Law):") {
			t.Errorf("%s: the summary does not read the model:\n%s", profile, out)
		}
		html, err := os.ReadFile(filepath.Join(dir, "report.html"))
		if err != nil || !strings.Contains(string(html), "Scalability model") {
			t.Errorf("%s: report.html lacks the model (%v)", profile, err)
		}
		return dir, m, out
	}
	uncDir, unc, _ := sweep("uncontended")
	mutDir, mut, _ := sweep("mutex")
	if mut.Sigma <= unc.Sigma {
		t.Errorf("σ(mutex) %.3g ≤ σ(uncontended) %.3g: contention on one lock does not show", mut.Sigma, unc.Sigma)
	}
	code, out, errOut := runBench(t, "compare", uncDir, mutDir)
	if code != cli.ExitFailure || !strings.Contains(out, "REGRESSED") || !strings.Contains(out, "σ contention") || !strings.Contains(out, "why: ") {
		t.Fatalf("compare uncontended → mutex: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("compare:\n%s", out)
	_, js, _ := runBench(t, "compare", "--json", uncDir, mutDir)
	var c results.SweepComparison
	if err := json.Unmarshal([]byte(js), &c); err != nil || len(c.Curves) != 1 {
		t.Fatalf("compare --json: %v\n%s", err, js)
	}
	cc := c.Curves[0]
	if !unc.OK() || !mut.OK() {
		// A host that cannot keep 40 ms holds and prompt handoffs (a
		// runner whose cores are taken) bends the curves off the law's
		// shape: the model refuses, and the comparison must then name no
		// cause. The attribution itself is tested on synthetic sweeps in
		// results.
		t.Logf("a model was refused on this host (uncontended %q, mutex %q): the attribution is not checked here", unc.Refused, mut.Refused)
		if cc.Cause != "" || len(cc.Effects) != 0 || !strings.Contains(cc.Explained, "refused") {
			t.Errorf("a refused model, yet cause %q, effects %+v (%s)", cc.Cause, cc.Effects, cc.Explained)
		}
	} else {
		// mutex serialises on one name (σ rises, costing throughput); the
		// explanation must name the costliest change whose intervals
		// are apart.
		if len(cc.Effects) != 3 {
			t.Fatalf("compare --json: effects %+v; want λ, σ and κ\n%s", cc.Effects, js)
		}
		effects := cc.Effects
		if s := effects[1]; s.Name != "σ" || s.New <= s.Base || s.EffectPct >= 0 {
			t.Errorf("σ's effect %+v; want a rise that costs throughput", s)
		}
		costliest := effects[0]
		for _, e := range effects {
			if e.Apart && (!costliest.Apart || e.EffectPct < costliest.EffectPct) {
				costliest = e
			}
		}
		if cc.Cause != costliest.Name && !strings.Contains(cc.Explained, "offset") {
			t.Errorf("cause %q (%s); want %s, the costliest change with intervals apart, or the changes said to offset (%+v)", cc.Cause, cc.Explained, costliest.Name, effects)
		}
	}
	if code, _, errOut := runBench(t, "compare", uncDir, filepath.Join(uncDir, "points")); code != cli.ExitUsage || !strings.Contains(errOut, "not a sweep") {
		t.Errorf("a sweep against a non-sweep: exit %d\n%s", code, errOut)
	}
}
