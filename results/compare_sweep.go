package results

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// SweepComparison is what changed from a base sweep to a new one: per
// curve, the measured peak and the fitted scalability parameters, and
// which parameter's change explains a throughput regression.
type SweepComparison struct {
	MaxRegressionPct float64 `json:"max_regression_pct"`
	Base             RunInfo `json:"base"`
	New              RunInfo `json:"new"`
	Axis             string  `json:"axis"`
	// Curves are the series both sweeps have.
	Curves      []CurveComparison `json:"curves"`
	Regressions []string          `json:"regressions"`
	Notes       []string          `json:"notes"`
	Refused     string            `json:"refused,omitempty"`
}

// CurveComparison is one curve's change.
type CurveComparison struct {
	Series string `json:"series,omitempty"`
	// PeakBase and PeakNew are the highest measured throughputs (ops/s)
	// of the successful points; ChangePct is the new one's change.
	PeakBase  float64 `json:"peak_base"`
	PeakNew   float64 `json:"peak_new"`
	ChangePct float64 `json:"change_pct"`
	Regressed bool    `json:"regressed"`
	Base      *USL    `json:"base_model,omitempty"`
	New       *USL    `json:"new_model,omitempty"`
	// At is the N the parameters' effects are weighed at: the largest N
	// both sweeps measured.
	At float64 `json:"at,omitempty"`
	// Effects are each parameter's change alone, as the change in percent
	// it makes to the base model's throughput at At, and whether the two
	// sweeps' intervals for it are apart (the change is beyond the fits'
	// uncertainty).
	Effects []ParamEffect `json:"effects,omitempty"`
	// ModelPct is the change all three parameters make together to the
	// base model's throughput at At.
	ModelPct float64 `json:"model_pct,omitempty"`
	// Cause names the parameter ("λ", "σ", "κ") that explains a fall, ""
	// when none does alone; Explained says it in words.
	Cause     string `json:"cause,omitempty"`
	Explained string `json:"explained,omitempty"`
}

// ParamEffect is one parameter's change from base to new.
type ParamEffect struct {
	Name      string  `json:"name"`
	Base      float64 `json:"base"`
	New       float64 `json:"new"`
	EffectPct float64 `json:"effect_pct"`
	Apart     bool    `json:"apart"`
}

// OK reports that the sweeps could be compared and no curve regressed.
func (c SweepComparison) OK() bool { return len(c.Regressions) == 0 && c.Refused == "" }

// Verdict is the comparison's one-line conclusion.
func (c SweepComparison) Verdict() string {
	switch {
	case c.Refused != "":
		return "REFUSED: " + c.Refused
	case c.OK():
		return "OK: no curve's peak throughput fell past " + pct(c.MaxRegressionPct)
	}
	return "REGRESSED: " + strings.Join(c.Regressions, "; ")
}

func sweepInfo(s *Sweep) RunInfo {
	return RunInfo{Profile: s.Meta.Profile, Workload: s.Meta.Workload, Impl: s.Meta.ImplName(), Host: s.Meta.Host, Start: s.Start, Partial: s.Partial}
}

// CompareSweeps compares two sweeps curve by curve. Gated is each common
// curve's measured peak throughput (successful points only): a fall of
// more than maxRegressionPct is a regression. The fitted λ, σ and κ say
// why: each parameter's change is weighed alone by what it does to the
// base model's throughput at the largest N both measured, and the one that
// costs most (with intervals apart) explains the change.
func CompareSweeps(base, cur *Sweep, maxRegressionPct float64) SweepComparison {
	if !(maxRegressionPct > 0) {
		maxRegressionPct = 0
	}
	c := SweepComparison{MaxRegressionPct: maxRegressionPct, Base: sweepInfo(base), New: sweepInfo(cur), Axis: base.Axis,
		Regressions: []string{}, Notes: []string{}}
	if base.Axis != cur.Axis {
		c.Refused = fmt.Sprintf("BASE sweeps %s and NEW %s: their curves are not on one axis", base.Axis, cur.Axis)
		return c
	}
	if base.Meta.Profile != cur.Meta.Profile {
		c.Notes = append(c.Notes, fmt.Sprintf("profiles differ: %s against %s", base.Meta.Profile, cur.Meta.Profile))
	}
	for _, s := range []*Sweep{base, cur} {
		if s.Partial {
			c.Notes = append(c.Notes, "a partial sweep: "+s.PartialReason)
		}
	}
	caps := map[string]Capacity{}
	for _, cp := range cur.Capacity {
		caps[cp.Series] = cp
	}
	if bf, nf := failedPoints(base), failedPoints(cur); nf > 0 && bf == 0 {
		c.Regressions = append(c.Regressions, fmt.Sprintf("NEW has %s that failed (a safety violation, a stall, too many errors), BASE none", Count(nf, "point")))
	} else if nf > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("both sweeps have failed points (BASE %d, NEW %d)", bf, nf))
	}
	if lo, hi := xRange(base); lo != 0 {
		if nlo, nhi := xRange(cur); nlo != lo || nhi != hi {
			c.Notes = append(c.Notes, fmt.Sprintf("the swept ranges differ: BASE %g–%g, NEW %g–%g (a curve stopped early after breaking the SLO?)", lo, hi, nlo, nhi))
		}
	}
	for _, bc := range base.Capacity {
		nc, ok := caps[bc.Series]
		if !ok {
			c.Notes = append(c.Notes, fmt.Sprintf("curve %q is only in BASE", bc.Series))
			continue
		}
		delete(caps, bc.Series)
		cc := CurveComparison{Series: bc.Series, Base: bc.Model, New: nc.Model}
		switch {
		case bc.Peak == nil:
			c.Notes = append(c.Notes, fmt.Sprintf("curve %q: BASE has no successful point to compare against", bc.Series))
			c.Curves = append(c.Curves, cc)
			continue
		case nc.Peak == nil:
			cc.PeakBase, cc.Regressed = bc.Peak.OpsPerSec, true
			c.Regressions = append(c.Regressions, fmt.Sprintf("curve %q: NEW has no successful point", bc.Series))
			c.Curves = append(c.Curves, cc)
			continue
		}
		cc.PeakBase, cc.PeakNew = bc.Peak.OpsPerSec, nc.Peak.OpsPerSec
		cc.ChangePct = (cc.PeakNew/cc.PeakBase - 1) * 100
		cc.Regressed = beyond(-cc.ChangePct, maxRegressionPct)
		cc.explain()
		if cc.Regressed {
			name := "peak throughput"
			if bc.Series != "" {
				name = bc.Series + ": " + name
			}
			r := fmt.Sprintf("%s %+.1f%% (over %s)", name, cc.ChangePct, pct(maxRegressionPct))
			if cc.Explained != "" {
				r += ": " + cc.Explained
			}
			c.Regressions = append(c.Regressions, r)
		}
		c.Curves = append(c.Curves, cc)
	}
	for _, nc := range cur.Capacity {
		if _, only := caps[nc.Series]; only {
			c.Notes = append(c.Notes, fmt.Sprintf("curve %q is only in NEW", nc.Series))
		}
	}
	switch {
	case len(c.Curves) == 0:
		c.Refused = "the sweeps have no curve in common"
	case !slices.ContainsFunc(c.Curves, func(cc CurveComparison) bool { return cc.PeakBase > 0 }):
		c.Refused = "BASE has no successful point: nothing to compare against"
	}
	return c
}

// failedPoints counts the sweep's points whose run failed.
func failedPoints(s *Sweep) int {
	n := 0
	for _, p := range s.Points {
		if p.Failure != "" {
			n++
		}
	}
	return n
}

// xRange is the smallest and largest x the sweep ran (0, 0: none).
func xRange(s *Sweep) (lo, hi float64) {
	for i, p := range s.Points {
		if i == 0 || p.X < lo {
			lo = p.X
		}
		hi = max(hi, p.X)
	}
	return lo, hi
}

// explain weighs each parameter's change alone at the largest N both
// models were measured at, and names the one that moved throughput most.
func (cc *CurveComparison) explain() {
	b, n := cc.Base, cc.New
	if b == nil || n == nil || b.Lambda == 0 || n.Lambda == 0 {
		cc.Explained = "no model on both sides to say why"
		return
	}
	if !b.OK() || !n.OK() {
		cc.Explained = "a side's model is refused, so no parameter can be trusted to say why"
		return
	}
	cc.At = math.Min(b.MaxN, n.MaxN)
	x0 := b.X(cc.At)
	effect := func(l, s, k float64) float64 { return (uslX(l, s, k, cc.At)/x0 - 1) * 100 }
	apart := func(x, y Interval) bool { return x.Low > y.High || y.Low > x.High }
	cc.Effects = []ParamEffect{
		{Name: "λ", Base: b.Lambda, New: n.Lambda, EffectPct: effect(n.Lambda, b.Sigma, b.Kappa), Apart: apart(b.LambdaCI, n.LambdaCI)},
		{Name: "σ", Base: b.Sigma, New: n.Sigma, EffectPct: effect(b.Lambda, n.Sigma, b.Kappa), Apart: apart(b.SigmaCI, n.SigmaCI)},
		{Name: "κ", Base: b.Kappa, New: n.Kappa, EffectPct: effect(b.Lambda, b.Sigma, n.Kappa), Apart: apart(b.KappaCI, n.KappaCI)},
	}
	cc.ModelPct = effect(n.Lambda, n.Sigma, n.Kappa)
	if cc.ChangePct >= 0 {
		return // nothing fell, nothing to explain
	}
	worst := -1
	for i, e := range cc.Effects {
		if e.Apart && (worst < 0 || e.EffectPct < cc.Effects[worst].EffectPct) {
			worst = i
		}
	}
	switch {
	case worst < 0 || cc.Effects[worst].EffectPct >= 0:
		cc.Explained = "no parameter fell or rose beyond its interval: the change is within the fits' uncertainty"
		return
	case cc.Effects[worst].EffectPct < 2*cc.ModelPct:
		// Alone it would cost more than twice what all do together: others
		// made up for it.
		cc.Explained = fmt.Sprintf("the parameters offset each other (%s alone %+.1f%%, all together %+.1f%% at N = %g): no one change explains it",
			cc.Effects[worst].Name, cc.Effects[worst].EffectPct, cc.ModelPct, cc.At)
		return
	}
	e := cc.Effects[worst]
	cc.Cause = e.Name
	what := map[string]string{
		"λ": "one participant's throughput fell (each operation costs more)",
		"σ": "contention rose (more of the work is serialised on the lock)",
		"κ": "coherency rose (crosstalk grows faster with every participant)",
	}[e.Name]
	cc.Explained = fmt.Sprintf("%s: %s %s → %s, alone %+.1f%% (all together %+.1f%%) at N = %g", what, e.Name, sig(e.Base), sig(e.New), e.EffectPct, cc.ModelPct, cc.At)
}
