package results_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// uslCurve is a sweep's points along ns drawn from the USL with lambda,
// sigma and kappa, each throughput off by a relative noise of up to ±noise,
// and p99 = p99PerR × the closed loop's time per operation (no think).
func uslCurve(lambda, sigma, kappa, noise float64, ns []float64, seed uint64) []results.SweepPoint {
	rng := rand.New(rand.NewPCG(seed, 7))
	var pts []results.SweepPoint
	for _, n := range ns {
		x := lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1))
		x *= 1 + noise*(2*rng.Float64()-1)
		pts = append(pts, results.SweepPoint{X: n, Clients: int(n), Owners: 1, OpsPerSec: x, Ops: int64(x * 10), Attempts: int64(x * 10),
			P99Us: 3 * n / x * 1e6, Samples: 100})
	}
	return pts
}

var doubling = []float64{1, 2, 4, 8, 16, 32, 64}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestUSLRecovers: noisy curves drawn from known parameters give them back
// within the stated tolerances (λ 5%, σ ±0.02, κ 25%, N* 15%), with the
// truth inside the 95% intervals.
func TestUSLRecovers(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		lambda, sigma, kappa float64
	}{
		{"contention", 2000, 0.08, 0.0005},
		{"coherency", 5000, 0.01, 0.002},
		{"both", 1200, 0.2, 0.001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := results.FitUSL(uslCurve(tc.lambda, tc.sigma, tc.kappa, 0.02, doubling, 1), results.AxisConcurrency, 0, 0)
			if !m.OK() {
				t.Fatalf("refused: %s", m.Refused)
			}
			t.Logf("λ %.1f σ %.4f κ %.6f R² %.4f N* %.1f; %s", m.Lambda, m.Sigma, m.Kappa, m.R2, m.PeakN, m.Reading())
			if !near(m.Lambda, tc.lambda, 0.05*tc.lambda) || !near(m.Sigma, tc.sigma, 0.02) || !near(m.Kappa, tc.kappa, 0.25*tc.kappa) {
				t.Errorf("λ %.1f σ %.4f κ %.6f, want %g %g %g", m.Lambda, m.Sigma, m.Kappa, tc.lambda, tc.sigma, tc.kappa)
			}
			want := math.Sqrt((1 - tc.sigma) / tc.kappa)
			if !near(m.PeakN, want, 0.15*want) {
				t.Errorf("N* %.1f, want %.1f", m.PeakN, want)
			}
			for _, c := range []struct {
				name  string
				iv    results.Interval
				truth float64
			}{{"λ", m.LambdaCI, tc.lambda}, {"σ", m.SigmaCI, tc.sigma}, {"κ", m.KappaCI, tc.kappa}} {
				if c.truth < c.iv.Low || c.truth > c.iv.High {
					t.Errorf("%s's interval %+v misses the truth %g", c.name, c.iv, c.truth)
				}
			}
			if m.R2 < 0.95 {
				t.Errorf("R² %.3f for a curve within 2%% of the law", m.R2)
			}
		})
	}
}

// TestUSLAmdahlAndLinear: with κ = 0 the fit finds no coherency and no
// peak, the curve levelling off at λ/σ; with σ = κ = 0 it is linear.
func TestUSLAmdahlAndLinear(t *testing.T) {
	m := results.FitUSL(uslCurve(1000, 0.1, 0, 0, doubling, 1), results.AxisConcurrency, 0, 0)
	if !m.OK() || !near(m.Sigma, 0.1, 0.005) || m.Kappa > 1e-6 || m.PeakN != 0 || !near(m.Ceiling, 10000, 500) {
		t.Errorf("Amdahl: %+v; want σ 0.1, κ 0, no peak, ceiling 10,000", m)
	}
	if m.Limit() != "contention" || !strings.Contains(m.Reading(), "levels off") {
		t.Errorf("Amdahl: limit %s, reading %q", m.Limit(), m.Reading())
	}
	m = results.FitUSL(uslCurve(1000, 0, 0, 0, doubling, 1), results.AxisConcurrency, 0, 0)
	if !m.OK() || m.Sigma > 1e-6 || m.Kappa > 1e-6 || !near(m.Lambda, 1000, 1) || m.PeakN != 0 {
		t.Errorf("linear: %+v; want λ 1000, σ = κ = 0", m)
	}
	if m.Limit() != "none" || !strings.Contains(m.Reading(), "linearly") {
		t.Errorf("linear: limit %s, reading %q", m.Limit(), m.Reading())
	}
}

// TestUSLRefuses: too few points, a curve the law does not describe, and
// throughput that never grows predict nothing; failed points never enter
// the fit; the rate axis gets no model.
func TestUSLRefuses(t *testing.T) {
	if m := results.FitUSL(uslCurve(1000, 0.1, 0.001, 0, []float64{1, 2, 4, 8}, 1), results.AxisConcurrency, 0, 0); m.OK() || m.Lambda != 0 || !strings.Contains(m.Reading(), "No scalability model") {
		t.Errorf("4 points: %+v, reading %q; want refused, unfitted", m, m.Reading())
	}
	zigzag := uslCurve(1000, 0, 0, 0, doubling, 1)
	for i := range zigzag {
		if i%2 == 1 {
			zigzag[i].OpsPerSec *= 0.3
		}
	}
	m := results.FitUSL(zigzag, results.AxisConcurrency, 0, 10000)
	if m.OK() || !strings.Contains(m.Refused, "R²") || !strings.Contains(m.Refused, "RMS") || m.SLON != 0 || !strings.HasPrefix(m.Reading(), "No scalability prediction") {
		t.Errorf("zigzag: %+v; want refused as a poor fit, predicting nothing", m)
	}
	flat := uslCurve(1000, 1, 0, 0, doubling, 1)
	if m := results.FitUSL(flat, results.AxisConcurrency, 0, 0); m.OK() || !strings.Contains(m.Refused, "bound") {
		t.Errorf("flat: %+v; want refused at σ's bound", m)
	}
	good := uslCurve(2000, 0.08, 0.0005, 0, doubling, 1)
	want := results.FitUSL(good, results.AxisConcurrency, 0, 0)
	failed := append(good, results.SweepPoint{X: 128, Clients: 128, Owners: 1, OpsPerSec: 1e9, Ops: 1, Failure: "safety violation"},
		results.SweepPoint{X: 96, Clients: 96, Owners: 1, OpsPerSec: 1e9, Ops: 1, Partial: true})
	if got := results.FitUSL(failed, results.AxisConcurrency, 0, 0); got.Points != want.Points || got.Sigma != want.Sigma || got.Kappa != want.Kappa {
		t.Errorf("a failed and a partial point changed the fit: %+v, want %+v", got, want)
	}
	if m := results.FitUSL(good, results.AxisRate, 0, 0); m != nil {
		t.Errorf("rate axis: %+v, want no model", m)
	}
}

// TestUSLPredictsSLO: with p99 proportional to the time per operation,
// the largest N under the SLO is where the law puts it.
func TestUSLPredictsSLO(t *testing.T) {
	lambda, sigma, kappa := 2000.0, 0.08, 0.0005
	pts := uslCurve(lambda, sigma, kappa, 0, doubling, 1)
	p99 := func(n float64) float64 { return 3 * n / (lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1))) * 1e6 }
	slo := p99(40) + 1
	m := results.FitUSL(pts, results.AxisConcurrency, 0, slo)
	if m.SLON != 40 {
		t.Errorf("SLO N %g (%s), want 40", m.SLON, m.SLONote)
	}
	if m.P99Err > 1e-6 {
		t.Errorf("p99 model misses by %.3g on an exact curve", m.P99Err)
	}
	if m := results.FitUSL(pts, results.AxisConcurrency, 0, p99(1)/2); m.SLON != 0 || m.SLONote == "" {
		t.Errorf("SLO under every point: N %g, note %q; want none, said", m.SLON, m.SLONote)
	}
}

// TestUSLIntervalsCover: over curves drawn with fresh noise from one
// truth, the 95% intervals hold it in most (at least 9 of 12; an honest
// interval misses in about one curve of twenty).
func TestUSLIntervalsCover(t *testing.T) {
	const curves = 12
	lambda, sigma, kappa := 2000.0, 0.08, 0.0005
	var l, s, k int
	for seed := range uint64(curves) {
		m := results.FitUSL(uslCurve(lambda, sigma, kappa, 0.03, doubling, seed+100), results.AxisConcurrency, 0, 0)
		in := func(iv results.Interval, v float64) int {
			if iv.Low <= v && v <= iv.High {
				return 1
			}
			return 0
		}
		l, s, k = l+in(m.LambdaCI, lambda), s+in(m.SigmaCI, sigma), k+in(m.KappaCI, kappa)
	}
	t.Logf("covered: λ %d, σ %d, κ %d of %d", l, s, k, curves)
	if min(l, s, k) < 9 {
		t.Errorf("intervals covered the truth λ %d, σ %d, κ %d times of %d; want at least 9 each", l, s, k, curves)
	}
}

// uslSweep is a sweep of one curve drawn from the USL, analysed.
func uslSweep(lambda, sigma, kappa float64, seed uint64) *results.Sweep {
	s := &results.Sweep{Schema: results.SweepSchema, Axis: results.AxisConcurrency, Points: uslCurve(lambda, sigma, kappa, 0.02, doubling, seed)}
	s.Meta.Profile = "mutex"
	s.Analyze()
	return s
}

// TestCompareSweepsExplains: a regression from more contention is put on
// σ, one from more crosstalk on κ, one from slower operations on λ; an
// unchanged curve passes.
func TestCompareSweepsExplains(t *testing.T) {
	base := uslSweep(2000, 0.05, 0.0003, 1)
	for _, tc := range []struct {
		name  string
		cur   *results.Sweep
		param string
	}{
		{"contention", uslSweep(2000, 0.15, 0.0003, 2), "σ"},
		{"coherency", uslSweep(2000, 0.05, 0.002, 3), "κ"},
		{"slower", uslSweep(1200, 0.05, 0.0003, 4), "λ"},
	} {
		c := results.CompareSweeps(base, tc.cur, 10)
		if c.OK() || len(c.Curves) != 1 {
			t.Errorf("%s: %s; want a regression", tc.name, c.Verdict())
			continue
		}
		cc := c.Curves[0]
		if cc.Cause != tc.param {
			t.Errorf("%s: cause %q (%s), want %s (effects %+v)", tc.name, cc.Cause, cc.Explained, tc.param, cc.Effects)
		}
	}
	if c := results.CompareSweeps(base, uslSweep(2000, 0.05, 0.0003, 5), 10); !c.OK() {
		t.Errorf("the same law, fresh noise: %s", c.Verdict())
	}
	if c := results.CompareSweeps(uslSweep(2000, 0.15, 0.0003, 2), base, 10); !c.OK() || c.Curves[0].Cause != "" || c.Curves[0].Explained != "" {
		t.Errorf("an improvement: %s, cause %q %q; want OK with nothing to explain", c.Verdict(), c.Curves[0].Cause, c.Curves[0].Explained)
	}
	broken := uslSweep(2000, 0.05, 0.0003, 7)
	for i := range broken.Points {
		broken.Points[i].Failure = "safety violation"
	}
	broken.Analyze()
	if c := results.CompareSweeps(base, broken, 10); c.OK() || len(c.Regressions) < 2 {
		t.Errorf("NEW with every point failed: %s; want the failures and the missing curve as regressions", c.Verdict())
	}
	if c := results.CompareSweeps(broken, base, 10); c.Refused == "" {
		t.Errorf("BASE with no successful point: %s; want refused", c.Verdict())
	}
	other := uslSweep(2000, 0.05, 0.0003, 6)
	other.Axis = results.AxisShards
	if c := results.CompareSweeps(base, other, 10); c.Refused == "" {
		t.Error("sweeps on different axes compared")
	}
}

// TestUSLFlatCurve: a curve that levels off at once (a hot lock) has
// little variance for R² to explain; a fit within a few percent of every
// point still predicts.
func TestUSLFlatCurve(t *testing.T) {
	m := results.FitUSL(uslCurve(2000, 0.9, 0, 0.025, doubling, 5), results.AxisConcurrency, 0, 0)
	t.Logf("%s", m.Reading())
	if !m.OK() || !near(m.Sigma, 0.9, 0.1) || m.RMSPct > results.USLMaxRMSPct {
		t.Errorf("%+v; want σ near 0.9, predicting", m)
	}
	if m.R2 >= results.USLMinR2 {
		t.Errorf("R² %.3f: the curve does not show the case of a close fit with a low R²", m.R2)
	}
}

// TestUSLSteepFall: a curve that peaks early and falls steeply (a large
// κ) is found, not fitted with σ stuck at a bound.
func TestUSLSteepFall(t *testing.T) {
	for _, tc := range []struct{ sigma, kappa float64 }{{0.3, 0.1}, {0.6, 0.2}} {
		m := results.FitUSL(uslCurve(1000, tc.sigma, tc.kappa, 0, doubling, 1), results.AxisConcurrency, 0, 0)
		if !near(m.Sigma, tc.sigma, 0.01) || !near(m.Kappa, tc.kappa, 0.01*tc.kappa) || m.RMSPct > 0.1 {
			t.Errorf("σ %g κ %g: fitted σ %.4f κ %.5f, off by %.2f%% RMS", tc.sigma, tc.kappa, m.Sigma, m.Kappa, m.RMSPct)
		}
	}
}

// TestUSLNoNaN: a curve whose time per operation hardly moves while p99
// rises yields no p99 prediction and a model JSON can hold.
func TestUSLNoNaN(t *testing.T) {
	pts := uslCurve(1000, 0, 0, 0.001, doubling, 1)
	for i := range pts {
		pts[i].P99Us = 100 * float64(i+1)
	}
	m := results.FitUSL(pts, results.AxisConcurrency, 0, 350)
	if _, err := json.Marshal(m); err != nil {
		t.Fatalf("the model does not encode: %v (%+v)", err, m)
	}
	if m.SLON != 0 || m.SLONote == "" {
		t.Errorf("SLO N %g, note %q; want none, said why", m.SLON, m.SLONote)
	}
}
