package plots_test

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
)

func spectrumSeries() []plots.Series {
	h := results.NewHistogram()
	for i := int64(1); i <= 10000; i++ {
		_ = h.RecordValue(i * 1000) // 1 µs … 10 ms
	}
	zero := results.NewHistogram()
	_ = zero.RecordValue(0) // a zero latency must not reach the log axis as ≤ 0
	return []plots.Series{{Name: "acquire_write", Points: results.Spectrum(h)}, {Name: "zero", Points: results.Spectrum(zero)}}
}

// saveBoth saves p as name.png and name.svg in a new directory, which it
// returns.
func saveBoth(t *testing.T, p *plot.Plot, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, ext := range []string{".png", ".svg"} {
		if err := plots.Save(p, filepath.Join(dir, name+ext)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func checkFiles(t *testing.T, dir, name string, texts ...string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s.png: %v", name, err)
	}
	if r := img.Bounds(); r.Dx() < 600 || r.Dy() < 300 {
		t.Errorf("%s.png is %v: too small to read", name, r)
	}
	svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range texts {
		if !strings.Contains(string(svg), s) {
			t.Errorf("%s.svg lacks %q", name, s)
		}
	}
}

func TestSpectrum(t *testing.T) {
	p, err := plots.Spectrum("acquire latency", spectrumSeries())
	if err != nil {
		t.Fatal(err)
	}
	dir := saveBoth(t, p, "spectrum")
	checkFiles(t, dir, "spectrum", "acquire latency", "percentile", "latency (ms)", "99.9%", "acquire_write")
	if _, err := plots.Spectrum("empty", []plots.Series{{Name: "x"}}); !errors.Is(err, plots.ErrNoData) {
		t.Errorf("empty spectrum: %v, want ErrNoData", err)
	}
}

func TestThroughputWithFaults(t *testing.T) {
	var pts []results.Point
	for i := 1; i <= 20; i++ {
		ops := 1000.0
		if i > 5 && i <= 10 {
			ops = 40
		}
		pts = append(pts, results.Point{T: float64(i), OpsPerSec: ops})
	}
	evs := []results.Event{{Kind: "blackhole", Target: "clients", Start: 5, End: 10}, {Kind: "kill", Target: "redis:primary", Start: 15, End: 15}}
	p, err := plots.Throughput("partition-heal", pts, evs)
	if err != nil {
		t.Fatal(err)
	}
	dir := saveBoth(t, p, "tput")
	checkFiles(t, dir, "tput", "partition-heal", "operations per second", "blackhole clients", "kill redis:primary")
	if _, err := plots.Throughput("none", nil, nil); !errors.Is(err, plots.ErrNoData) {
		t.Errorf("no points: %v, want ErrNoData", err)
	}
}

func TestFairness(t *testing.T) {
	f := results.ComputeFairness([]int64{10, 40, 25, 0}, []string{"a", "b", "c", "d"})
	p, err := plots.Fairness("mutex", f)
	if err != nil {
		t.Fatal(err)
	}
	dir := saveBoth(t, p, "fair")
	checkFiles(t, dir, "fair", "Jain 0.6", "min/max 0.00", "4 owners", "acquisitions")
	if err := plots.Save(p, filepath.Join(dir, "fair.gif")); err == nil || !strings.Contains(err.Error(), ".png or .svg") {
		t.Errorf("Save .gif: %v; want an error naming the formats", err)
	}
}

// TestMitigationsGrid: the matrix is drawn as a grid, each cell filled
// with its outcome's colour (one swatch more per outcome, in the legend
// above the grid), labelled with its lost updates; a skipped cell, one
// that never ran and one whose counter saw no write say which rather than
// show a 0; a cell not as expected is framed in the miss colour.
func TestMitigationsGrid(t *testing.T) {
	m := &results.MitigationMatrix{
		Scenarios:   []string{"lease-expiry", "redis-restart", "failover"},
		Mitigations: []string{"none", "honour", "min-acks", "redisson"},
		Cells: []results.MitigationCell{
			{Scenario: "lease-expiry", Mitigation: "none", Lost: 10, Violations: 27, Written: 40, OK: true},
			{Scenario: "lease-expiry", Mitigation: "honour", Lost: 0, Written: 30, OK: true},
			{Scenario: "lease-expiry", Mitigation: "min-acks", Lost: 3, Written: 30, Problem: "3 lost updates"},
			{Scenario: "lease-expiry", Mitigation: "redisson", Lost: 0, Written: 0, Problem: "no write reached the guarded counter"},
			{Scenario: "redis-restart", Mitigation: "none", Lost: 2, Written: 80, OK: true},
			{Scenario: "redis-restart", Mitigation: "min-acks", Lost: 0, Violations: 40, Written: 80, OK: true},
			{Scenario: "redis-restart", Mitigation: "redisson", Skipped: "no Redisson variant of this scenario"},
			{Scenario: "failover", Mitigation: "none", Lost: 1, Written: 8, OK: true},
			{Scenario: "failover", Mitigation: "honour", Lost: 0, Written: 8, OK: true},
			{Scenario: "failover", Mitigation: "min-acks", Refused: 12, OK: true},
			{Scenario: "failover", Mitigation: "redisson", Lost: 1, Written: 8, OK: true},
			// redis-restart × honour: not run (interrupted)
		},
	}
	p, err := plots.Mitigations("what happened", m)
	if err != nil {
		t.Fatal(err)
	}
	dir := saveBoth(t, p, "mit")
	checkFiles(t, dir, "mit", "skipped", "not run", "no writes", "10 lost", "12 refused", "not as expected", "redisson", "failover")
	svg, err := os.ReadFile(filepath.Join(dir, "mit.svg"))
	if err != nil {
		t.Fatal(err)
	}
	fill := func(c color.NRGBA) int {
		return strings.Count(string(svg), fmt.Sprintf("fill:#%02X%02X%02X", c.R, c.G, c.B))
	}
	n := map[results.Outcome]int{}
	for _, c := range m.Cells {
		n[c.Outcome()]++
	}
	for _, st := range plots.OutcomeStyles {
		want := n[st.Outcome]
		if want > 0 {
			want++ // the legend's swatch
		}
		if got := fill(st.Color); got != want {
			t.Errorf("%s: %d shapes in its colour, want %d (its cells and a legend swatch)", st.Outcome, got, want)
		}
	}
	if got := strings.Count(string(svg), fmt.Sprintf("stroke:#%02X%02X%02X", plots.MissColor.R, plots.MissColor.G, plots.MissColor.B)); got == 0 {
		t.Error("the cell not as expected is not framed")
	}
	if os.Getenv("LOCKBENCH_KEEP_PLOT") != "" {
		b, _ := os.ReadFile(filepath.Join(dir, "mit.png"))
		_ = os.WriteFile(os.Getenv("LOCKBENCH_KEEP_PLOT"), b, 0o644)
	}
}
