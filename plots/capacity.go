package plots

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/results"
)

// Capacity chart colours: one per series (none red: red means the SLO and
// the points that break it), and the marks' own.
var (
	seriesColors = []color.Color{
		color.NRGBA{R: 45, G: 105, B: 185, A: 255},
		color.NRGBA{R: 0, G: 145, B: 120, A: 255},
		color.NRGBA{R: 140, G: 80, B: 170, A: 255},
		color.NRGBA{R: 170, G: 120, B: 30, A: 255},
		color.NRGBA{R: 90, G: 90, B: 90, A: 255},
	}
	sloColor  = color.NRGBA{R: 215, G: 20, B: 25, A: 255}
	bestColor = color.NRGBA{R: 0, G: 150, B: 60, A: 255}
	kneeColor = color.Black
	noteColor = color.NRGBA{R: 40, G: 40, B: 40, A: 255}
	// predictionColor shades where a fitted curve is a prediction: light
	// enough that the grid and the curves read through it.
	predictionColor = color.Gray{Y: 232}
)

// curve is one series of a sweep, its points in x order.
type curve struct {
	label string
	pts   []results.SweepPoint
	cap   results.Capacity
	color color.Color
}

// Capacity draws a sweep's capacity curves: throughput against the swept
// axis, and p99 acquire latency against the same axis with the SLO. Both
// carry one line per series, the saturation knee, the best point meeting
// the SLO, the points breaking it (red rings) and the current setting (a
// dashed vertical line). The throughput chart also draws each curve's
// scalability model (results.USL) dashed, past the measured range into a
// shaded prediction band, with its peak N* marked; a model that was
// refused is named in a note instead. A concurrency sweep that doubles is
// drawn on a log x with a tick at each swept value.
func Capacity(title string, s *results.Sweep) (throughput, latency *plot.Plot, err error) {
	if s == nil {
		return nil, nil, ErrNoData
	}
	curves := sweepCurves(s)
	if len(curves) == 0 {
		return nil, nil, ErrNoData
	}
	if s.Partial {
		title += " (partial sweep)"
	}
	verdict := ""
	// Say so when nothing met the SLO: the absence of a mark is easy to miss.
	if s.SLOP99Us > 0 && !slices.ContainsFunc(curves, func(c curve) bool { return c.cap.Best != nil }) {
		verdict = ": no point meets the SLO"
	}
	throughput, err = capacityPlot(title, verdict, s, curves, false)
	if err != nil {
		return nil, nil, err
	}
	latency, err = capacityPlot(title, verdict, s, curves, true)
	if err != nil {
		return nil, nil, err
	}
	return throughput, latency, nil
}

// sweepCurves groups the points by series, using the sweep's capacity
// analysis, or analysing a curve itself when the sweep was not analysed.
func sweepCurves(s *results.Sweep) []curve {
	var out []curve
	names := s.SeriesNames()
	for i, name := range names {
		c := curve{label: name, color: seriesColors[i%len(seriesColors)]}
		for _, p := range s.Points {
			if p.Series == name {
				c.pts = append(c.pts, p)
			}
		}
		slices.SortStableFunc(c.pts, func(a, b results.SweepPoint) int { return cmp.Compare(a.X, b.X) })
		if j := slices.IndexFunc(s.Capacity, func(c results.Capacity) bool { return c.Series == name }); j >= 0 {
			c.cap = s.Capacity[j]
		} else {
			c.cap = results.AnalyzeCurve(c.pts, s.CurrentX, s.Axis)
		}
		out = append(out, c)
	}
	return out
}

// capacityPlot draws throughput, or with latency set p99 latency, for
// every curve.
func capacityPlot(title, verdict string, s *results.Sweep, curves []curve, latency bool) (*plot.Plot, error) {
	y := func(p results.SweepPoint) float64 { return p.OpsPerSec }
	if latency {
		y = func(p results.SweepPoint) float64 { return p.P99Us / 1e3 }
	}
	p := plot.New()
	xname, xm := sweepXAxis(p, s, curves)
	var fits []modelCurve
	var refused []string
	if !latency {
		fits, refused = uslModels(curves, xm)
		extendX(p, xm, fits)
	}
	sloMs := s.SLOP99Us / 1e3
	var ym scale
	if latency {
		setTitle(p, fmt.Sprintf("%s — p99 acquire latency vs %s%s", title, xname, verdict))
		p.Y.Label.Text = "p99 acquire latency (ms)"
		ym = latencyYAxis(p, curves, sloMs)
	} else {
		setTitle(p, fmt.Sprintf("%s — throughput vs %s%s", title, xname, verdict))
		p.Y.Label.Text = "throughput (ops/s)"
		top := 0.0
		for _, c := range curves {
			for _, pt := range c.pts {
				top = max(top, pt.OpsPerSec)
			}
		}
		for _, f := range fits {
			for _, v := range f.xys {
				top = max(top, v.Y)
			}
		}
		p.Y.Min, p.Y.Max = 0, max(top*1.2, 1)
		p.Y.Tick.Marker = niceTicks{}
	}
	// On a log axis a point at ≤ 0 cannot be placed: leave it out rather
	// than invent a value.
	xy := func(pt results.SweepPoint) (plotter.XY, bool) {
		return plotter.XY{X: xm.at(pt.X), Y: ym.at(y(pt))}, xm.ok(pt.X) && ym.ok(y(pt))
	}

	band := predictionBand(fits)
	if band != nil {
		p.Add(band) // under the grid, which reads through it
	}
	p.Add(grid())
	leg := &legendRow{}
	for _, f := range fits {
		l, err := plotter.NewLine(f.xys)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		l.LineStyle = fitStyle(f.color)
		p.Add(l)
	}
	var fails, knees, bests plotter.XYs
	var kneeNotes, bestNotes []note
	var current *results.SweepPoint
	drawn := 0
	for _, c := range curves {
		var line, ok plotter.XYs
		for _, pt := range c.pts {
			v, in := xy(pt)
			if !in {
				continue
			}
			line = append(line, v)
			if pt.MeetsSLO {
				ok = append(ok, v)
			} else {
				fails = append(fails, v)
			}
		}
		if len(line) == 0 {
			continue
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		l.Color, l.Width = c.color, vg.Points(1.5)
		dots := scatter(ok, draw.GlyphStyle{Color: c.color, Radius: vg.Points(3), Shape: draw.CircleGlyph{}})
		p.Add(l, dots)
		drawn++
		leg.add(seriesLabel(c.label, latency), l, dots)

		knee, best := c.cap.Knee, c.cap.Best
		if knee != nil {
			if v, in := xy(*knee); in {
				knees = append(knees, v)
				text := "knee"
				if best != nil && best.X == knee.X {
					text = "knee = " + bestText(s)
				}
				kneeNotes = append(kneeNotes, note{at: v, text: fmt.Sprintf("%s (%s)", text, value(y(*knee), latency)), above: true, color: noteColor})
			}
		}
		if best != nil && (knee == nil || best.X != knee.X) {
			if v, in := xy(*best); in {
				bestNotes = append(bestNotes, note{at: v, text: fmt.Sprintf("%s (%s)", bestText(s), value(y(*best), latency)), color: bestColor})
			}
		}
		if best != nil {
			if v, in := xy(*best); in {
				bests = append(bests, v)
			}
		}
		if c.cap.Current != nil {
			current = c.cap.Current
		}
	}
	if drawn == 0 { // every point was off the axes
		return nil, ErrNoData
	}

	var peakNotes []note
	if len(fits) > 0 {
		leg.add("USL fit", &rule{style: fitStyle(noteColor)})
		for _, f := range fits {
			if f.peak == nil {
				continue
			}
			peak := &rule{vertical: true, at: f.peak.X, style: draw.LineStyle{Color: f.color, Width: vg.Points(1),
				Dashes: []vg.Length{vg.Points(1), vg.Points(2.5)}}}
			p.Add(peak)
			peakNotes = append(peakNotes, note{at: *f.peak, text: "N* ≈ " + thousands(f.m.PeakN), above: true, color: f.color})
		}
	}
	if band != nil {
		p.Add(bandLabels{band})
	}
	if latency && sloMs > 0 {
		slo := &rule{at: ym.at(sloMs), style: draw.LineStyle{Color: sloColor, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}},
			label: "SLO p99 ≤ " + strconv.FormatFloat(sloMs, 'g', 4, 64) + " ms", text: labelStyle(10, sloColor)}
		p.Add(slo)
		leg.add(slo.label, slo)
	}
	if current != nil && xm.ok(current.X) {
		cur := &rule{vertical: true, at: xm.at(current.X), style: draw.LineStyle{Color: noteColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}}
		p.Add(cur)
		leg.add("current setting ("+strconv.FormatFloat(current.X, 'f', -1, 64)+")", cur)
	}
	if len(fails) > 0 {
		// A white disc under the ring hides the line: a hollow point reads
		// as "failed" at a glance.
		hole := scatter(fails, draw.GlyphStyle{Color: color.White, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}})
		ring := scatter(fails, draw.GlyphStyle{Color: sloColor, Radius: vg.Points(3.5), Shape: ringGlyph{width: vg.Points(1.5)}})
		p.Add(hole, ring)
		if s.SLOP99Us > 0 {
			leg.add("fails SLO", hole, ring)
		} else {
			leg.add("errors or violations", hole, ring)
		}
	}
	if len(knees) > 0 {
		k := scatter(knees, draw.GlyphStyle{Color: kneeColor, Radius: vg.Points(6.5), Shape: squareGlyph{width: vg.Points(1.3)}})
		p.Add(k)
		what := fmt.Sprintf("knee (%.0f%% of peak)", results.KneeFraction*100)
		if s.Axis == results.AxisRate {
			what = "knee (last rate kept up)"
		}
		leg.add(what, small{k})
	}
	if len(bests) > 0 {
		b := scatter(bests, draw.GlyphStyle{Color: bestColor, Radius: vg.Points(8.5), Shape: ringGlyph{width: vg.Points(2)}})
		p.Add(b)
		leg.add(bestText(s), small{b})
	}
	p.Add(&notes{n: slices.Concat(kneeNotes, bestNotes, peakNotes)})
	if len(refused) > 0 {
		p.Add(cornerNote(refused))
	}
	leg.attach(p)
	return p, nil
}

// uslSamples is how many points a fitted curve is drawn through: enough
// that a log axis shows no corners.
const uslSamples = 200

// modelCurve is one curve's scalability model, sampled in axis units
// from the smallest measured N to the extent it is drawn to.
type modelCurve struct {
	m     *results.USL
	color color.Color
	to    float64
	// past is the largest measured N in axis units: the curve beyond it
	// is a prediction.
	past float64
	xys  plotter.XYs
	// peak is N* and its throughput in axis units, nil when the model
	// does not peak within what is drawn.
	peak *plotter.XY
}

// uslModels samples the curves' models that predict, and names the
// models that were refused, one note each.
func uslModels(curves []curve, xm scale) (fits []modelCurve, refused []string) {
	for _, c := range curves {
		m := c.cap.Model
		if m == nil {
			continue
		}
		if !m.OK() {
			text := "no model: " + m.Refused
			if c.label != "" {
				text = c.label + " — " + text
			}
			refused = append(refused, text)
			continue
		}
		from := math.Inf(1)
		for _, pt := range c.pts {
			if pt.X > 0 {
				from = min(from, pt.X)
			}
		}
		to := modelExtent(m)
		if !(from < to) {
			continue
		}
		f := modelCurve{m: m, color: c.color, to: to, past: xm.at(m.MaxN)}
		for i := range uslSamples {
			q := float64(i) / (uslSamples - 1)
			n := from + q*(to-from)
			if xm.log {
				n = from * math.Pow(to/from, q)
			}
			f.xys = append(f.xys, plotter.XY{X: xm.at(n), Y: m.X(n)})
		}
		// A peak whose interval has no top is not established: not marked.
		if m.PeakN >= from && m.PeakN <= to && !m.PeakNCI.Open {
			f.peak = &plotter.XY{X: xm.at(m.PeakN), Y: m.PeakX}
		}
		fits = append(fits, f)
	}
	return fits, refused
}

// modelExtent is how far past the measured range a model is drawn: a
// little beyond its peak, so the fall shows, but not so far that the
// prediction outweighs the measurements; twice the range when it does not
// peak.
func modelExtent(m *results.USL) float64 {
	if m.PeakN > 0 {
		return max(m.MaxN, min(m.PeakN*1.25, 4*m.MaxN))
	}
	return 2 * m.MaxN
}

func fitStyle(c color.Color) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(1.3), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
}

// extendX widens p's x axis to the farthest fitted curve, with the same
// margin as the measured range, and carries the ticks on: a log axis at
// the sweep's own step (usually doubling), a linear one at round values.
func extendX(p *plot.Plot, xm scale, fits []modelCurve) {
	to := 0.0
	for _, f := range fits {
		to = max(to, f.to)
	}
	top := xm.at(to * 1.25)
	if !xm.log {
		top = to + 0.06*(to-p.X.Min)
	}
	if to == 0 || top <= p.X.Max {
		return
	}
	p.X.Max = top
	ticks, ok := p.X.Tick.Marker.(plot.ConstantTicks)
	if n := len(ticks); !ok || n < 2 {
		return // niceTicks follow the range by themselves
	}
	last := ticks[len(ticks)-1].Value
	if !xm.log {
		nice := niceTicks{}.Ticks(p.X.Min, top)
		if len(nice) < 2 {
			return
		}
		gap := (nice[1].Value - nice[0].Value) / 2
		for _, t := range nice {
			if t.Value > last+gap {
				ticks = append(ticks, t)
			}
		}
		p.X.Tick.Marker = ticks
		return
	}
	step := last - ticks[len(ticks)-2].Value
	if step <= 0 {
		return
	}
	for (top-last)/step > 6 { // a handful of labels, not a comb
		step *= 2
	}
	for v := last + step; v <= top; v += step {
		x := math.Pow(10, v)
		if x >= 10 {
			x = math.Round(x)
		} else {
			x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 3, 64), 64)
		}
		ticks = append(ticks, plot.Tick{Value: xm.at(x), Label: tickLabel(x)})
	}
	p.X.Tick.Marker = ticks
}

// predictionBand shades the x range past each model's largest measured N
// to where its curve ends: the curve there is a prediction. Overlapping
// ranges merge into one band; nil when no curve goes past its
// measurements.
func predictionBand(fits []modelCurve) *bands {
	var ws []band
	for _, f := range fits {
		if f.to > f.m.MaxN {
			ws = append(ws, band{x0: f.past, x1: f.xys[len(f.xys)-1].X})
		}
	}
	if len(ws) == 0 {
		return nil
	}
	slices.SortFunc(ws, func(a, b band) int { return cmp.Compare(a.x0, b.x0) })
	merged := ws[:1]
	for _, w := range ws[1:] {
		if last := &merged[len(merged)-1]; w.x0 <= last.x1 {
			last.x1 = max(last.x1, w.x1)
		} else {
			merged = append(merged, w)
		}
	}
	for i := range merged {
		merged[i].label = "prediction"
	}
	return &bands{b: merged, fill: predictionColor, label: labelStyle(9, noteColor)}
}

// cornerNote writes lines at the bottom right of the data area, on a
// white backing: what the chart leaves out, and why. A throughput curve
// rarely reaches there: it has risen by then.
type cornerNote []string

func (n cornerNote) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := labelStyle(9, noteColor)
	pad := vg.Points(1.5)
	x, y := c.Max.X-vg.Points(6), c.Min.Y+vg.Points(6)
	for i := len(n) - 1; i >= 0; i-- {
		w, h := sty.Width(n[i]), sty.Height(n[i])
		c.FillPolygon(color.NRGBA{R: 255, G: 255, B: 255, A: 210}, rect(x-w-pad, y-pad, x+pad, y+h+pad))
		c.FillText(sty, vg.Point{X: x - w, Y: y}, n[i])
		y += h + 2*pad
	}
}

// bestText names the best point: under the SLO, or merely free of errors
// and violations when the sweep had no latency SLO.
func bestText(s *results.Sweep) string {
	if s.SLOP99Us > 0 {
		return "best under SLO"
	}
	return "best"
}

func seriesLabel(name string, latency bool) string {
	switch {
	case name != "":
		return name
	case latency:
		return "p99 acquire"
	default:
		return "throughput"
	}
}

// value formats a mark's y for its note.
func value(v float64, latency bool) string {
	if latency {
		return strconv.FormatFloat(v, 'g', 3, 64) + " ms"
	}
	return thousands(v) + " ops/s"
}

// thousands formats v rounded, with thin separators: 6,120 reads faster
// than 6120.
func thousands(v float64) string {
	s := strconv.FormatFloat(math.Round(math.Abs(v)), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if v < 0 {
		s = "-" + s
	}
	return s
}

// CapacityCPU draws where a sweep's CPU went at each point: the busiest
// Redis server's command thread and the load generator, in top's
// percentages (100% is one core busy), one solid (Redis) and one dashed
// (lockbench) line per series, with a rule at one core: the server's
// ceiling. It says at a glance which side ran out as the load grew.
func CapacityCPU(title string, s *results.Sweep) (*plot.Plot, error) {
	if s == nil {
		return nil, ErrNoData
	}
	curves := sweepCurves(s)
	var measured bool
	top := 100.0
	for _, c := range curves {
		for _, pt := range c.pts {
			if pt.RedisCPU > 0 || pt.LoadCPU > 0 {
				measured = true
				top = max(top, 100*pt.RedisCPU, 100*pt.LoadCPU)
			}
		}
	}
	if !measured {
		return nil, ErrNoData
	}
	if s.Partial {
		title += " (partial sweep)"
	}
	p := plot.New()
	xname, xm := sweepXAxis(p, s, curves)
	setTitle(p, fmt.Sprintf("%s — CPU vs %s", title, xname))
	p.Y.Label.Text = "CPU (% of one core)"
	p.Y.Min, p.Y.Max = 0, top*1.15
	p.Y.Tick.Marker = niceTicks{}
	p.Add(grid())
	leg := &legendRow{}
	drawn := 0
	for _, c := range curves {
		var redis, load plotter.XYs
		for _, pt := range c.pts {
			if !xm.ok(pt.X) || pt.RedisCPU == 0 && pt.LoadCPU == 0 {
				continue
			}
			redis = append(redis, plotter.XY{X: xm.at(pt.X), Y: 100 * pt.RedisCPU})
			load = append(load, plotter.XY{X: xm.at(pt.X), Y: 100 * pt.LoadCPU})
		}
		if len(redis) == 0 {
			continue
		}
		for i, xys := range []plotter.XYs{redis, load} {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("plots: %w", err)
			}
			l.Color, l.Width = c.color, vg.Points(1.5)
			name := "redis (command thread)"
			if i == 1 {
				l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				name = "lockbench"
			}
			dots := scatter(xys, draw.GlyphStyle{Color: c.color, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}})
			p.Add(l, dots)
			if c.label != "" {
				name = c.label + ": " + name
			}
			leg.add(name, l, dots)
		}
		drawn++
	}
	if drawn == 0 {
		return nil, ErrNoData
	}
	core := &rule{at: 100, style: draw.LineStyle{Color: sloColor, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}},
		label: "one core: the Redis ceiling", text: labelStyle(10, sloColor)}
	p.Add(core)
	leg.add(core.label, core)
	leg.attach(p)
	return p, nil
}
