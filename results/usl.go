package results

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/optimize"
)

// The Universal Scalability Law (Gunther) models throughput at N
// participants as X(N) = λN / (1 + σ(N−1) + κN(N−1)): λ is one
// participant's throughput, σ contention (the share that is serialised:
// the hot lock) and κ coherency (crosstalk that grows with every pair:
// pub/sub fan-out, retries, queue upkeep). With κ > 0 throughput peaks at
// N* = √((1−σ)/κ) and falls after; with κ = 0 (Amdahl) it levels off at
// λ/σ; with σ = κ = 0 it is linear.

// The bounds a fit must meet to predict anything.
const (
	// USLMinPoints is the fewest successful points, at distinct N, a fit
	// needs: two more than its three parameters, so that R² means
	// something.
	USLMinPoints = 5
	// USLMinR2 is the lowest R² (of throughput, on its own scale) of a fit
	// that predicts, unless it is off by at most USLMaxRMSPct: a flat
	// curve has little variance to explain, so a close fit of it can still
	// score a low R².
	USLMinR2     = 0.9
	USLMaxRMSPct = 5.0
	// uslPoorRMSPct refuses a fit off by this much whatever its R².
	uslPoorRMSPct = 15.0
	// uslSigmaMax is σ's upper bound: at it throughput does not grow with
	// N at all, and the fit has nothing to tell apart.
	uslSigmaMax = 1
	// uslBootstrap is how many resampled curves the intervals come from.
	uslBootstrap = 400
	// uslP99MaxErr is how far (relative) the p99 model may miss a measured
	// p99 and still predict where the SLO breaks.
	uslP99MaxErr = 0.5
	// uslSearch is how far past the largest measured N the SLO's limit is
	// looked for.
	uslSearch = 100
)

// Interval is a 95% confidence interval. Open marks an interval with no
// upper end: some resampled curves did not peak at all.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	Open bool    `json:"open,omitempty"`
}

// USL is the scalability model fitted to one curve's successful points.
type USL struct {
	// Unit names N: "owners" (clients × owners) or "shards".
	Unit string `json:"unit"`
	// Points is how many successful points the fit used; MaxN the largest
	// N among them (0 when too few to fit), past which the curve is a
	// prediction.
	Points int     `json:"points"`
	MaxN   float64 `json:"max_n"`
	// Refused says why the model predicts nothing ("": it does). The
	// parameters are still shown when there were enough points to fit.
	Refused string `json:"refused,omitempty"`

	Lambda   float64  `json:"lambda"` // ops/s of one participant
	Sigma    float64  `json:"sigma"`
	Kappa    float64  `json:"kappa"`
	LambdaCI Interval `json:"lambda_ci"`
	SigmaCI  Interval `json:"sigma_ci"`
	KappaCI  Interval `json:"kappa_ci"`
	// R2 is the fit's coefficient of determination on throughput, RMSPct
	// the root mean square of its relative residuals, in percent.
	R2     float64 `json:"r2"`
	RMSPct float64 `json:"rms_pct"`
	// HostLimited counts the points whose load generator or host ran out
	// of CPU: σ and κ then describe the host as much as the lock.
	HostLimited int `json:"host_limited,omitempty"`

	// PeakN is N* and PeakX the predicted throughput there; both 0 when
	// κ = 0 (no peak: Ceiling is then the throughput approached, λ/σ, or 0
	// when linear).
	PeakN   float64  `json:"peak_n,omitempty"`
	PeakX   float64  `json:"peak_x,omitempty"`
	PeakNCI Interval `json:"peak_n_ci"`
	PeakXCI Interval `json:"peak_x_ci"`
	Ceiling float64  `json:"ceiling,omitempty"`

	// SLON is the largest N whose predicted p99 stays under the sweep's
	// SLO (0: none predicted; SLONote says why). The p99 is predicted from
	// Little's law: a closed loop's time per operation is R = N/X(N) −
	// think, and p99 = P99A·R^P99B fits the measured p99s against R (a
	// queue's tail grows faster than its mean), missing them by at most
	// P99Err (relative).
	SLON    float64 `json:"slo_n,omitempty"`
	SLONote string  `json:"slo_note,omitempty"`
	P99A    float64 `json:"p99_a,omitempty"`
	P99B    float64 `json:"p99_b,omitempty"`
	P99Err  float64 `json:"p99_err,omitempty"`
}

// X is the model's throughput at n.
func (m *USL) X(n float64) float64 { return uslX(m.Lambda, m.Sigma, m.Kappa, n) }

func uslX(lambda, sigma, kappa, n float64) float64 {
	return lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1))
}

// OK reports whether the model predicts.
func (m *USL) OK() bool { return m != nil && m.Refused == "" }

// Limit names what bounds throughput at the larger of the peak and the
// largest measured N: "contention" when σ(N−1) outweighs κN(N−1) by more
// than uslTie, "coherency" when the other way, "both" when neither does,
// "none" when both are zero (linear).
func (m *USL) Limit() string {
	n := max(m.MaxN, m.PeakN)
	c, k := m.Sigma*(n-1), m.Kappa*n*(n-1)
	switch {
	case c == 0 && k == 0:
		return "none"
	case c > uslTie*k:
		return "contention"
	case k > uslTie*c:
		return "coherency"
	}
	return "both"
}

// uslTie is how much one term must outweigh the other to be named alone.
const uslTie = 1.5

// uslZero is where σ and κ·Nmax count as zero: their terms are then a
// billionth of one participant's work at the largest N.
const uslZero = 1e-9

// Reading is the model in plain words, one or two sentences.
func (m *USL) Reading() string {
	if m == nil {
		return ""
	}
	if m.Lambda == 0 {
		return "No scalability model: " + m.Refused + "."
	}
	host := ""
	if m.HostLimited > 0 && 2*m.HostLimited <= m.Points {
		host = fmt.Sprintf(" %d of the %d points ran out of the load generator's or the host's CPU: σ and κ describe this host as much as the lock.", m.HostLimited, m.Points)
	}
	params := fmt.Sprintf("λ = %s ops/s, σ = %s [%s], κ = %s [%s], R² = %.3f, off by %.1f%% RMS over %d points",
		CommasFloat(m.Lambda), sig(m.Sigma), m.SigmaCI.Format(sig), sig(m.Kappa), m.KappaCI.Format(sig), m.R2, m.RMSPct, m.Points)
	if !m.OK() {
		return fmt.Sprintf("No scalability prediction: %s (%s).%s", m.Refused, params, host)
	}
	var s string
	switch {
	case m.PeakN > 0 && !m.PeakNCI.Open:
		where := "within the measured range"
		if m.PeakN > m.MaxN {
			where = fmt.Sprintf("beyond the largest measured, %g: a prediction", m.MaxN)
		}
		s = fmt.Sprintf("Throughput peaks near %s %s (predicted %s ops/s, 95%% CI %s; N* 95%% CI %s), %s.",
			nText(m.PeakN), m.unitInAll(), CommasFloat(m.PeakX), m.PeakXCI.Format(CommasFloat), m.PeakNCI.Format(nText), where)
	case m.PeakN > 0:
		s = fmt.Sprintf("Throughput levels off near %s ops/s; the fit puts a peak near %s %s, but a peak is not established (in its 95%% CI some resampled curves have none).",
			CommasFloat(m.PeakX), nText(m.PeakN), m.unitInAll())
	case m.Ceiling > 0:
		s = fmt.Sprintf("Throughput levels off towards %s ops/s (λ/σ) and does not peak (κ = 0).", CommasFloat(m.Ceiling))
	default:
		s = "Throughput grows linearly over the range: neither contention nor coherency shows."
	}
	s += m.limitText()
	switch {
	case m.SLON > 0 && m.SLON >= uslSearch*m.MaxN:
		s += fmt.Sprintf(" p99 is predicted to stay under the SLO as far as the model looks, %s %s (%g× the largest measured).", nText(m.SLON), m.unitInAll(), float64(uslSearch))
	case m.SLON > 0:
		s += fmt.Sprintf(" p99 is predicted to stay under the SLO up to %s %s", nText(m.SLON), m.unitInAll())
		if m.SLON > m.MaxN {
			s += " (beyond the measured range: a prediction)"
		}
		s += "."
	case m.SLONote != "":
		s += " " + m.SLONote + "."
	}
	return s + " (" + params + ".)" + host
}

// limitText says which term dominates and what that means on this axis;
// when most points ran out of CPU, the host, not the lock, is named.
func (m *USL) limitText() string {
	hostBound := 2*m.HostLimited > m.Points
	shards := m.Unit == "shards"
	switch m.Limit() {
	case "contention":
		s := fmt.Sprintf(" Contention σ = %s dominates: ", sig(m.Sigma))
		switch {
		case hostBound:
			return s + "the work is serialised, and with most points out of CPU it is this host that serialises it, not the lock."
		case shards:
			return s + "something every shard shares (the clients, one hot shard) serialises the work: more shards do not spread it."
		}
		return s + "work serialised on the lock, not a lack of Redis, is the limit."
	case "coherency":
		s := fmt.Sprintf(" Coherency κ = %s dominates: ", sig(m.Kappa))
		switch {
		case hostBound:
			return s + "a cost grows with every pair of " + m.Unit + ", and with most points out of CPU it is this host's work that grows."
		case shards:
			return s + "crosstalk grows with every shard (redirections, cluster upkeep, clients spread thinner)."
		}
		return s + fmt.Sprintf("crosstalk that grows with every %s (pub/sub fan-out, retries, queue upkeep) is the limit; fewer %s per lock, not a faster lock, helps.",
			singular(m.Unit), m.Unit)
	case "both":
		return fmt.Sprintf(" Contention σ = %s and coherency κ = %s weigh about alike at this scale: both the serialised work and the crosstalk between %s limit it.",
			sig(m.Sigma), sig(m.Kappa), m.Unit)
	}
	return ""
}

// unitInAll names N where a reader might take it for a flag's value:
// owners are counted over every client.
func (m *USL) unitInAll() string {
	if m.Unit == "owners" {
		return "owners in all (clients × owners)"
	}
	return m.Unit
}

func singular(unit string) string {
	if len(unit) > 1 && unit[len(unit)-1] == 's' {
		return unit[:len(unit)-1]
	}
	return unit
}

// nText prints a number of participants, whole.
func nText(n float64) string { return Commas(int64(math.Round(n))) }

// sig prints a parameter to three significant digits.
func sig(v float64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%.3g", v)
}

// Format prints the interval with f, "low – high", or "low – no top"
// when open.
func (iv Interval) Format(f func(float64) string) string {
	if iv.Open {
		return f(iv.Low) + " – no top"
	}
	return f(iv.Low) + " – " + f(iv.High)
}

// uslPoint is one point a fit sees.
type uslPoint struct {
	n, x, p99 float64
	hostBound bool // the load generator or the host ran out of CPU
}

// FitUSL fits the USL to a curve's points on axis: only successful ones
// (not partial, not failed, some operation done) count. thinkUs is the
// mean think time per operation and sloUs the p99 SLO (0: none), for the
// SLO's prediction. It returns nil on the rate axis, which is not a
// scalability curve.
func FitUSL(pts []SweepPoint, axis string, thinkUs, sloUs float64) *USL {
	if axis == AxisRate {
		return nil
	}
	m := &USL{Unit: "owners"}
	if axis == AxisShards {
		m.Unit = "shards"
	}
	var ps []uslPoint
	for _, p := range pts {
		if p.Partial || p.Failure != "" || p.Ops == 0 || p.OpsPerSec <= 0 || p.Interpolated {
			continue
		}
		if p.Rate > 0 {
			m.Refused = "an open-loop curve's throughput follows its offered rate, not its concurrency"
			return m
		}
		ps = append(ps, uslPoint{n: p.X, x: p.OpsPerSec, p99: p.P99Us, hostBound: p.CPULimit == LimitLoad || p.CPULimit == LimitHost})
	}
	slices.SortFunc(ps, func(a, b uslPoint) int { return cmp.Compare(a.n, b.n) })
	ps = slices.CompactFunc(ps, func(a, b uslPoint) bool { return a.n == b.n })
	m.Points = len(ps)
	for _, p := range ps {
		if p.hostBound {
			m.HostLimited++
		}
	}
	if len(ps) < USLMinPoints {
		m.Refused = fmt.Sprintf("%d successful points at distinct N; a fit needs %d", len(ps), USLMinPoints)
		return m
	}
	if ps[0].n < 1 {
		m.Refused = fmt.Sprintf("a point at N = %g; N counts participants, from 1", ps[0].n)
		return m
	}
	m.MaxN = ps[len(ps)-1].n
	fit := fitUSL(ps, nil, nil)
	m.Lambda, m.Sigma, m.Kappa = fit.lambda, fit.sigma, fit.kappa
	m.R2 = r2(ps, fit)
	m.RMSPct = 100 * math.Sqrt(fit.loss/float64(len(ps)))
	m.bootstrap(ps, fit)
	switch {
	case m.Sigma >= uslSigmaMax:
		m.Refused = "σ reached its bound, 1: throughput does not grow with N at all"
	case m.R2 < USLMinR2 && m.RMSPct > USLMaxRMSPct, m.RMSPct > uslPoorRMSPct:
		m.Refused = fmt.Sprintf("the fit is poor, R² %.3f and off by %.1f%% RMS", m.R2, m.RMSPct)
	}
	if m.Sigma >= uslSigmaMax {
		return m
	}
	if n, x := fit.peak(); !math.IsInf(n, 1) {
		m.PeakN, m.PeakX = n, x
	} else if m.Sigma > 0 {
		m.Ceiling = m.Lambda / m.Sigma
	}
	if m.OK() {
		m.predictSLO(ps, axis, thinkUs, sloUs)
	}
	m.finite()
	return m
}

// finite zeroes any figure that is not a finite number, which JSON
// cannot hold; the refusal or the note says why when it matters.
func (m *USL) finite() {
	for _, v := range []*float64{&m.Lambda, &m.Sigma, &m.Kappa, &m.R2, &m.RMSPct, &m.PeakN, &m.PeakX, &m.Ceiling, &m.SLON, &m.P99A, &m.P99B, &m.P99Err,
		&m.LambdaCI.Low, &m.LambdaCI.High, &m.SigmaCI.Low, &m.SigmaCI.High, &m.KappaCI.Low, &m.KappaCI.High,
		&m.PeakNCI.Low, &m.PeakNCI.High, &m.PeakXCI.Low, &m.PeakXCI.High} {
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			*v = 0
		}
	}
}

// uslGrid is where the search for σ and κ·Nmax starts: 0, 10⁻⁵ to 10⁴ by
// quarter decades (σ stops at 1, κ·Nmax at Nmax), and steps of 0.05
// between 0.1 and 1, where the decades are too coarse to find a hot
// lock's σ.
var uslGrid = func() []float64 {
	g := []float64{0}
	for e := -5.0; e <= 4; e += 0.25 {
		g = append(g, math.Pow(10, e))
	}
	for v := 0.15; v < 1; v += 0.05 {
		g = append(g, v)
	}
	slices.Sort(g)
	return g
}()

// uslFit is one fit's parameters and its loss.
type uslFit struct{ lambda, sigma, kappa, loss float64 }

// peak is N* and X(N*); without coherency there is none (+Inf), and X
// tends to λ/σ (+Inf when linear).
func (f uslFit) peak() (n, x float64) {
	if f.kappa > 0 {
		n = math.Sqrt((1 - f.sigma) / f.kappa)
		return n, uslX(f.lambda, f.sigma, f.kappa, n)
	}
	if f.sigma > 0 {
		return math.Inf(1), f.lambda / f.sigma
	}
	return math.Inf(1), math.Inf(1)
}

// fitUSL fits λ, σ, κ to ps, or to ys in their place when given, by least
// squares of the relative residuals (a curve's low points count as much
// as its high ones). For given σ and κ the best λ has a closed form, so
// the search is over σ and κ only: a grid finds the basin, gonum's
// Nelder–Mead refines it.
func fitUSL(ps []uslPoint, ys []float64, from *uslFit) uslFit {
	y := func(i int) float64 {
		if ys != nil {
			return ys[i]
		}
		return ps[i].x
	}
	nmax := ps[len(ps)-1].n
	// kappa is searched as κ·Nmax, on σ's scale.
	eval := func(sigma, kscaled float64) uslFit {
		// What the search leaves at a hair above zero is zero: a κ of
		// 1e-20 would put a peak at N = 1e10 that no curve has.
		if sigma < uslZero {
			sigma = 0
		}
		if kscaled < uslZero {
			kscaled = 0
		}
		sigma = min(sigma, uslSigmaMax)
		kappa := kscaled / nmax
		var sgy, sgy2 float64
		for i, p := range ps {
			r := uslX(1, sigma, kappa, p.n) / y(i)
			sgy += r
			sgy2 += r * r
		}
		lambda := sgy / sgy2
		loss := 0.0
		for i, p := range ps {
			d := lambda*uslX(1, sigma, kappa, p.n)/y(i) - 1
			loss += d * d
		}
		return uslFit{lambda: lambda, sigma: sigma, kappa: kappa, loss: loss}
	}
	best := eval(0, 0)
	if from != nil {
		// A resampled curve is near the fit it was drawn from.
		if f := eval(from.sigma, from.kappa*nmax); f.loss < best.loss {
			best = f
		}
	} else {
		for _, s := range uslGrid {
			if s > uslSigmaMax {
				break
			}
			for _, k := range uslGrid {
				if k > nmax {
					break // κ > 1
				}
				if f := eval(s, k); f.loss < best.loss {
					best = f
				}
			}
		}
	}
	// Nelder–Mead searches u and v with σ = sin²u and κ·Nmax = v²: the
	// bounds hold everywhere, so the simplex never sits where the loss is
	// flat because a parameter was clamped.
	prob := optimize.Problem{Func: func(v []float64) float64 {
		sn := math.Sin(v[0])
		return eval(sn*sn, v[1]*v[1]).loss
	}}
	start := []float64{math.Asin(math.Sqrt(best.sigma)), math.Sqrt(best.kappa * nmax)}
	res, err := optimize.Minimize(prob, start, &optimize.Settings{MajorIterations: 1000,
		Converger: &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-9, Iterations: 30}},
		&optimize.NelderMead{SimplexSize: 0.05})
	if err == nil && res != nil {
		sn := math.Sin(res.X[0])
		if f := eval(sn*sn, res.X[1]*res.X[1]); f.loss < best.loss {
			best = f
		}
	}
	return best
}

// r2 is the fit's coefficient of determination on throughput.
func r2(ps []uslPoint, f uslFit) float64 {
	mean := 0.0
	for _, p := range ps {
		mean += p.x
	}
	mean /= float64(len(ps))
	var res, tot float64
	for _, p := range ps {
		d := p.x - uslX(f.lambda, f.sigma, f.kappa, p.n)
		res += d * d
		tot += (p.x - mean) * (p.x - mean)
	}
	if tiny := 1e-12 * mean * mean * float64(len(ps)); tot <= tiny {
		// A flat curve: any fit through it explains all there is.
		if res <= tiny {
			return 1
		}
		return 0
	}
	return 1 - res/tot
}

// bootstrap sets the 95% intervals from curves made of the fit with its
// relative residuals resampled, each fitted again. The source is seeded
// from the points, so the same sweep gives the same intervals.
func (m *USL) bootstrap(ps []uslPoint, f uslFit) {
	// Residuals are scaled up by √(n/(n−3)): fitted residuals are smaller
	// than the noise, by the three parameters the fit spent on them.
	resid := make([]float64, len(ps))
	inflate := math.Sqrt(float64(len(ps)) / float64(len(ps)-3))
	var seed uint64
	for i, p := range ps {
		resid[i] = (p.x/uslX(f.lambda, f.sigma, f.kappa, p.n) - 1) * inflate
		seed = seed*31 + math.Float64bits(p.x)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(ps))))
	var ls, ss, ks, pn, px []float64
	ys := make([]float64, len(ps))
	for range uslBootstrap {
		for i, p := range ps {
			ys[i] = max(uslX(f.lambda, f.sigma, f.kappa, p.n)*(1+resid[rng.IntN(len(resid))]), 1e-9)
		}
		b := fitUSL(ps, ys, &f)
		ls, ss, ks = append(ls, b.lambda), append(ss, b.sigma), append(ks, b.kappa)
		n, x := b.peak()
		pn, px = append(pn, n), append(px, x)
	}
	m.LambdaCI, m.SigmaCI, m.KappaCI = ci95(ls), ci95(ss), ci95(ks)
	m.PeakNCI, m.PeakXCI = ci95(pn), ci95(px)
}

// ci95 is vs's central 95%; a top at +Inf (resampled curves without a
// peak) leaves it open.
func ci95(vs []float64) Interval {
	slices.Sort(vs)
	at := func(q float64) float64 { return vs[min(int(q*float64(len(vs))), len(vs)-1)] }
	iv := Interval{Low: at(0.025), High: at(0.975)}
	if math.IsInf(iv.High, 1) {
		iv.High, iv.Open = 0, true
	}
	if math.IsInf(iv.Low, 1) {
		iv.Low = 0
	}
	return iv
}

// predictSLO sets SLON: the largest N (on the concurrency axis) whose p99,
// predicted from the model's time per operation, stays under sloUs.
func (m *USL) predictSLO(ps []uslPoint, axis string, thinkUs, sloUs float64) {
	switch {
	case sloUs <= 0:
		return
	case axis == AxisShards:
		m.SLONote = "On the shards axis the concurrency is fixed: the measured points say where the SLO holds"
		return
	}
	// Little's law, closed loop: N = X·(R + think).
	rt := func(n, x float64) float64 { return n/x*1e6 - thinkUs }
	var lr, lp []float64
	for _, p := range ps {
		if r := rt(p.n, p.x); p.p99 > 0 && r > 0 {
			lr, lp = append(lr, math.Log(r)), append(lp, math.Log(p.p99))
		}
	}
	if len(lr) < 3 {
		m.SLONote = "Too few points with a p99 to predict where the SLO breaks"
		return
	}
	if slices.Max(lr)-slices.Min(lr) < math.Log(1.2) {
		m.SLONote = "The time per operation barely changes over the points: p99 cannot be read against it"
		return
	}
	la, b := lineFit(lr, lp)
	// In logs: a = e^la may underflow when b is large.
	p99At := func(r float64) float64 { return math.Exp(la + b*math.Log(max(r, 1e-9))) }
	worst := 0.0
	for i := range lr {
		p99 := math.Exp(lp[i])
		worst = max(worst, math.Abs(p99At(math.Exp(lr[i]))-p99)/p99)
	}
	if math.IsNaN(worst) || math.IsInf(worst, 0) || math.IsInf(b, 0) {
		m.SLONote = "p99 cannot be read against the time per operation"
		return
	}
	m.P99A, m.P99B, m.P99Err = math.Exp(la), b, worst
	switch {
	case b <= 0:
		m.SLONote = "The measured p99s do not rise with the time per operation: no limit to predict"
		return
	case worst > uslP99MaxErr:
		m.SLONote = fmt.Sprintf("p99 does not follow the time per operation closely enough to predict (it misses a measured p99 by %.0f%%)", 100*worst)
		return
	}
	under := func(n float64) bool { return p99At(rt(n, m.X(n))) <= sloUs }
	if !under(1) {
		m.SLONote = "p99 is predicted over the SLO at every N"
		return
	}
	// N/X(N) rises with N, so the predicted p99 does too: bisect.
	lo, hi := 1.0, uslSearch*m.MaxN
	if under(hi) {
		m.SLON = hi // as far as the prediction looks; Reading says so
		return
	}
	for hi-lo > 1 {
		mid := math.Floor((lo + hi) / 2)
		if under(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	m.SLON = lo
}

// lineFit is the least-squares line y = a + b·x.
func lineFit(xs, ys []float64) (a, b float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return sy / n, 0
	}
	b = (n*sxy - sx*sy) / d
	return (sy - b*sx) / n, b
}
