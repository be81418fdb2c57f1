package plots_test

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	dir := t.TempDir()
	for _, ext := range []string{".png", ".svg"} {
		if err := plots.Save(p, filepath.Join(dir, "spectrum"+ext)); err != nil {
			t.Fatal(err)
		}
	}
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
	dir := t.TempDir()
	for _, ext := range []string{".png", ".svg"} {
		if err := plots.Save(p, filepath.Join(dir, "tput"+ext)); err != nil {
			t.Fatal(err)
		}
	}
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
	dir := t.TempDir()
	for _, ext := range []string{".png", ".svg"} {
		if err := plots.Save(p, filepath.Join(dir, "fair"+ext)); err != nil {
			t.Fatal(err)
		}
	}
	checkFiles(t, dir, "fair", "Jain 0.6", "min/max 0.00", "4 owners", "acquisitions")
	if err := plots.Save(p, filepath.Join(dir, "fair.gif")); err == nil || !strings.Contains(err.Error(), ".png or .svg") {
		t.Errorf("Save .gif: %v; want an error naming the formats", err)
	}
}
