package plots_test

import (
	"errors"
	"math"
	"testing"

	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
)

// concurrencySweep doubles clients from 1 to 64 for two read ratios:
// throughput saturates near 6,000 ops/s and p99 climbs from 0.3 ms to
// 40 ms past a 10 ms SLO.
func concurrencySweep() *results.Sweep {
	s := &results.Sweep{Schema: results.SweepSchema, Axis: results.AxisConcurrency, SLOP99Us: 10000, CurrentX: 16}
	for _, c := range []struct {
		name       string
		peak, slow float64
	}{{"read_ratio 0.9", 6000, 1}, {"read_ratio 0.5", 4200, 1.6}} {
		for _, x := range []float64{1, 2, 4, 8, 16, 32, 64} {
			ops := c.peak * (1 - math.Exp(-x/6))
			p99 := 255 * c.slow * math.Pow(x, 1.2)
			s.Points = append(s.Points, results.SweepPoint{Series: c.name, X: x, Clients: int(x), Owners: 1,
				OpsPerSec: ops, Ops: int64(ops * 30), P50Us: p99 / 4, P99Us: p99})
		}
	}
	s.Analyze()
	return s
}

func TestCapacity(t *testing.T) {
	s := concurrencySweep()
	tp, lat, err := plots.Capacity("read-heavy", s)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	img, svg := render(t, tp, dir, "throughput")
	checkFiles(t, dir, "throughput")
	mustContain(t, "throughput", svg, "read-heavy — throughput vs concurrency", "concurrency (clients × owners)",
		"throughput (ops/s)", "read_ratio 0.9", "read_ratio 0.5", "knee (90% of peak)", ">best under SLO<",
		"fails SLO", "current setting (16)", "6,000",
		// A tick at each swept value: the log x of a doubling sweep.
		">1<", ">2<", ">4<", ">8<", ">16<", ">32<", ">64<")
	mustLack(t, "throughput", svg, "SLO p99", "no point meets")
	if n := count(img, red); n < 50 {
		t.Errorf("throughput: %d red pixels: the points failing the SLO should be red", n)
	}
	if n := count(img, green); n < 50 {
		t.Errorf("throughput: %d green pixels: the best point under the SLO should be marked", n)
	}

	img, svg = render(t, lat, dir, "latency")
	checkFiles(t, dir, "latency")
	mustContain(t, "latency", svg, "read-heavy — p99 acquire latency vs concurrency", "p99 acquire latency (ms)",
		"SLO p99 ≤ 10 ms", "knee (90% of peak)", "read_ratio 0.9",
		// p99 spans more than two decades: a log y labelled 1-2-5.
		">0.5<", ">2<", ">20<")
	if n := count(img, red); n < 300 {
		t.Errorf("latency: %d red pixels: the SLO line and failing points should be red", n)
	}
}

func TestCapacityRateAllFailing(t *testing.T) {
	// An open-loop sweep where nothing meets a tight SLO: no "best" mark,
	// and the title says so.
	s := &results.Sweep{Schema: results.SweepSchema, Axis: results.AxisRate, SLOP99Us: 500, CurrentX: 2500}
	for _, x := range []float64{1000, 2000, 3000, 4000, 5000} {
		s.Points = append(s.Points, results.SweepPoint{X: x, Rate: x, OpsPerSec: min(x, 3500), Ops: 1000, P99Us: 800 + x/5})
	}
	s.Analyze()
	tp, lat, err := plots.Capacity("open-loop", s)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	img, svg := render(t, tp, dir, "rate")
	mustContain(t, "rate", svg, "throughput vs offered rate: no point meets the SLO", "offered rate (ops/s)",
		">throughput<", "fails SLO", "knee (3,000 ops/s)", "current setting (2500)", ">1,000<", ">5,000<")
	mustLack(t, "rate", svg, "best under SLO")
	if n := count(img, green); n != 0 {
		t.Errorf("%d green pixels: no point meets the SLO, so none is marked best", n)
	}
	_, svg = render(t, lat, dir, "rate-latency")
	mustContain(t, "rate-latency", svg, "SLO p99 ≤ 0.5 ms", ">p99 acquire<")
	mustLack(t, "rate-latency", svg, "best under SLO")
}

func TestCapacityEdgeCases(t *testing.T) {
	one := &results.Sweep{Axis: results.AxisConcurrency, SLOP99Us: 1000, Points: []results.SweepPoint{{X: 8, OpsPerSec: 900, Ops: 100, P99Us: 400}}}
	one.Analyze()
	zero := &results.Sweep{Axis: results.AxisConcurrency, SLOP99Us: 1000}
	for _, x := range []float64{1, 4, 16, 64} {
		// No operation finished: p99 is 0, which a log axis cannot place.
		zero.Points = append(zero.Points, results.SweepPoint{X: x, P99Us: 0})
	}
	zero.Points[3].P99Us, zero.Points[3].Ops, zero.Points[3].OpsPerSec = 90000, 10, 1
	zero.Analyze()
	unanalysed := concurrencySweep()
	unanalysed.Capacity = nil
	unanalysed.SLOP99Us = 0 // no latency SLO: "best" is merely free of errors
	for name, s := range map[string]*results.Sweep{"single point": one, "zero p99": zero, "unanalysed": unanalysed} {
		t.Run(name, func(t *testing.T) {
			tp, lat, err := plots.Capacity(name, s)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			_, svg := render(t, tp, dir, "tp")
			checkFiles(t, dir, "tp")
			mustContain(t, "tp", svg, name)
			// A knee needs a curve that flattens: one point, or one still
			// rising steeply at its end, has none.
			if name == "unanalysed" || s.Capacity[0].Knee != nil {
				mustContain(t, "tp", svg, "knee")
			} else {
				mustLack(t, "tp", svg, "knee")
			}
			_, svg = render(t, lat, dir, "lat")
			checkFiles(t, dir, "lat")
			mustContain(t, "lat", svg, "p99 acquire latency (ms)")
			if s.SLOP99Us > 0 {
				mustContain(t, "lat", svg, "SLO p99 ≤ 1 ms")
			} else {
				mustLack(t, "lat", svg, "SLO p99")
			}
		})
	}
}

func TestCapacityNoData(t *testing.T) {
	for _, s := range []*results.Sweep{nil, {Axis: results.AxisConcurrency}} {
		if _, _, err := plots.Capacity("none", s); !errors.Is(err, plots.ErrNoData) {
			t.Errorf("Capacity(%v): %v, want ErrNoData", s, err)
		}
	}
}

// TestCapacityCPU: the CPU chart draws each series' Redis command thread
// and lockbench against the axis with the one-core rule, and a sweep that
// measured no CPU has no chart.
func TestCapacityCPU(t *testing.T) {
	s := concurrencySweep()
	if _, err := plots.CapacityCPU("read-heavy", s); !errors.Is(err, plots.ErrNoData) {
		t.Fatalf("CapacityCPU of a sweep without CPU figures: %v, want ErrNoData", err)
	}
	for i := range s.Points {
		x := s.Points[i].X
		s.Points[i].RedisCPU = min(0.97, 0.15*x)
		s.Points[i].LoadCPU = min(1.4, 0.2*x)
	}
	p, err := plots.CapacityCPU("read-heavy", s)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	img, svg := render(t, p, dir, "cpu")
	checkFiles(t, dir, "cpu")
	mustContain(t, "cpu", svg, "read-heavy — CPU vs concurrency", "CPU (% of one core)",
		"read_ratio 0.9: redis (command thread)", "read_ratio 0.5: lockbench", "one core: the Redis ceiling", ">100<")
	if n := count(img, red); n < 100 {
		t.Errorf("cpu: %d red pixels: the one-core rule should be drawn", n)
	}
}
