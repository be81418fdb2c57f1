package plots

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"

	"github.com/lockbench/lockbench/results"
)

// scale maps data to an axis. A log axis is drawn as a linear axis of
// log10 values, with ticks labelled in the data's units: gonum places an
// axis label's glyph box at the arithmetic middle of the range, which on
// its own LogScale lies near the end and shrinks the data area for
// nothing.
type scale struct{ log bool }

func (s scale) at(v float64) float64 {
	if s.log {
		return math.Log10(v)
	}
	return v
}

// ok says whether v can be placed: a log axis has no place for v ≤ 0.
func (s scale) ok(v float64) bool { return !s.log || v > 0 }

// sweepXAxis sets p's x axis for the sweep and returns its name for the
// title and its scale. Concurrency usually doubles (1, 2, 4, … 64): a log
// scale with a tick at each swept value spaces that evenly; it is used
// when every x is positive and the span is at least 8×.
func sweepXAxis(p *plot.Plot, s *results.Sweep, curves []curve) (string, scale) {
	name := s.Axis
	switch s.Axis {
	case results.AxisConcurrency:
		p.X.Label.Text = "concurrency (clients × owners)"
	case results.AxisRate:
		p.X.Label.Text = "offered rate (ops/s)"
		name = "offered rate"
	case results.AxisShards:
		p.X.Label.Text = "Redis Cluster primaries (shards)"
		name = "shard count"
	default:
		p.X.Label.Text = s.Axis
	}
	var xs []float64
	for _, c := range curves {
		for _, pt := range c.pts {
			xs = append(xs, pt.X)
		}
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	lo, hi := xs[0], xs[len(xs)-1]
	if lo > 0 && hi >= 8*lo {
		m := scale{log: true}
		p.X.Min, p.X.Max = m.at(lo/1.25), m.at(hi*1.25)
		p.X.Tick.Marker = valueTicks(xs, m)
		return name, m
	}
	p.X.Min = min(0, lo)
	p.X.Max = hi + 0.06*(hi-p.X.Min)
	if len(xs) == 1 { // one setting: centre it rather than pin it to the edge
		p.X.Max = 2*hi - p.X.Min
	}
	if p.X.Max <= p.X.Min {
		p.X.Max = p.X.Min + 1
	}
	if len(xs) <= 12 {
		p.X.Tick.Marker = valueTicks(xs, scale{})
	} else {
		p.X.Tick.Marker = niceTicks{}
	}
	return name, scale{}
}

// valueTicks labels the swept values, thinned to at most a dozen labels
// so that a long rate sweep's labels do not run together.
func valueTicks(xs []float64, m scale) plot.ConstantTicks {
	stride := (len(xs) + 11) / 12
	ts := make(plot.ConstantTicks, len(xs))
	for i, x := range xs {
		ts[i].Value = m.at(x)
		if i%stride == 0 {
			ts[i].Label = tickLabel(x)
		}
	}
	return ts
}

func tickLabel(x float64) string {
	if math.Abs(x) >= 1000 && x == math.Round(x) {
		return thousands(x)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// latencyYAxis sets p's y axis for p99 latencies in ms and returns its
// scale: logarithmic only when every value (and the SLO) is positive and
// they span more than two decades, where a linear axis flattens the
// healthy points into the floor.
func latencyYAxis(p *plot.Plot, curves []curve, sloMs float64) scale {
	lo, hi := math.Inf(1), 0.0
	for _, c := range curves {
		for _, pt := range c.pts {
			v := pt.P99Us / 1e3
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if sloMs > 0 {
		lo, hi = min(lo, sloMs), max(hi, sloMs)
	}
	if lo > 0 && hi > 100*lo {
		m := scale{log: true}
		lo, hi = lo/1.6, hi*2.2
		p.Y.Min, p.Y.Max = m.at(lo), m.at(hi)
		p.Y.Tick.Marker = logTicks(lo, hi)
		return m
	}
	p.Y.Min, p.Y.Max = 0, max(hi*1.2, 0.001)
	p.Y.Tick.Marker = niceTicks{}
	return scale{}
}

// logTicks labels 1, 2 and 5 of each decade (only 1 past four decades,
// where the labels would crowd), with minor ticks between, at log10 of
// the values between lo and hi.
func logTicks(lo, hi float64) plot.ConstantTicks {
	labelled := []int{1, 2, 5}
	if hi > 1e4*lo {
		labelled = []int{1}
	}
	var ts plot.ConstantTicks
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for m := 1; m < 10; m++ {
			v := float64(m) * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: math.Log10(v)}
			if slices.Contains(labelled, m) {
				t.Label = strconv.FormatFloat(v, 'g', 6, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// niceTicks is a linear ticker with five to ten labels on 1-2-5 steps and
// thousands separators: gonum's default gives three, and "6000".
type niceTicks struct{}

// Ticks returns the ticks between lo and hi.
func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(m*step) <= 10 {
			step *= m
			break
		}
	}
	dec := max(0, int(-math.Floor(math.Log10(step))))
	var ts []plot.Tick
	for i := math.Ceil(lo / step); i*step <= hi*(1+1e-9); i++ {
		v := i * step
		label := strconv.FormatFloat(v, 'f', dec, 64)
		if math.Abs(v) >= 1000 && dec == 0 {
			label = thousands(v)
		}
		ts = append(ts, plot.Tick{Value: v, Label: label})
	}
	return ts
}
