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
	"gonum.org/v1/plot/text"
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
// dashed vertical line). A concurrency sweep that doubles is drawn on a
// log x with a tick at each swept value.
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
		p.Y.Min, p.Y.Max = 0, max(top*1.2, 1)
		p.Y.Tick.Marker = niceTicks{}
	}
	// On a log axis a point at ≤ 0 cannot be placed: leave it out rather
	// than invent a value.
	xy := func(pt results.SweepPoint) (plotter.XY, bool) {
		return plotter.XY{X: xm.at(pt.X), Y: ym.at(y(pt))}, xm.ok(pt.X) && ym.ok(y(pt))
	}

	p.Add(grid())
	leg := &legendRow{}
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
	p.Add(&notes{n: append(kneeNotes, bestNotes...)})
	leg.attach(p)
	return p, nil
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

func grid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	return g
}

func scatter(xys plotter.XYs, g draw.GlyphStyle) *plotter.Scatter {
	return &plotter.Scatter{XYs: xys, GlyphStyle: g}
}

// ringGlyph is a circle outline with a chosen stroke width (gonum's
// RingGlyph strokes at a hair's width, too faint for a mark that carries
// meaning).
type ringGlyph struct{ width vg.Length }

func (g ringGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	var p vg.Path
	r := sty.Radius
	p.Move(vg.Point{X: pt.X + r, Y: pt.Y})
	p.Arc(pt, r, 0, 2*math.Pi)
	p.Close()
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: g.width})
	c.Stroke(p)
}

// squareGlyph is a square outline with a chosen stroke width.
type squareGlyph struct{ width vg.Length }

func (g squareGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	c.StrokeLines(draw.LineStyle{Color: sty.Color, Width: g.width}, []vg.Point{
		{X: pt.X - r, Y: pt.Y - r}, {X: pt.X + r, Y: pt.Y - r}, {X: pt.X + r, Y: pt.Y + r}, {X: pt.X - r, Y: pt.Y + r}, {X: pt.X - r, Y: pt.Y - r},
	})
}

// rule is a line across the whole data area at x (vertical) or y, with
// an optional label at its right end.
type rule struct {
	vertical bool
	at       float64
	style    draw.LineStyle
	label    string
	text     text.Style
}

func (r *rule) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	if r.vertical {
		if x := trX(r.at); c.ContainsX(x) {
			c.StrokeLine2(r.style, x, c.Min.Y, x, c.Max.Y)
		}
		return
	}
	y := trY(r.at)
	if !c.ContainsY(y) {
		return
	}
	c.StrokeLine2(r.style, c.Min.X, y, c.Max.X, y)
	if r.label != "" {
		sty := r.text
		sty.XAlign = draw.XRight
		c.FillText(sty, vg.Point{X: c.Max.X - vg.Points(4), Y: y + vg.Points(3)}, r.label)
	}
}

// Thumbnail draws the rule's line for the legend.
func (r *rule) Thumbnail(c *draw.Canvas) {
	if r.vertical {
		x := c.Center().X
		c.StrokeLine2(r.style, x, c.Min.Y, x, c.Max.Y)
		return
	}
	y := c.Center().Y
	c.StrokeLine2(r.style, c.Min.X, y, c.Max.X, y)
}

// note is a text beside a marked point: knees' above and to the left,
// the others below and to the right, where a rising or saturating curve
// leaves room.
type note struct {
	at    plotter.XY
	text  string
	above bool
	color color.Color
}

// notes writes notes beside their points on a white backing (they may
// cross a line), each moved away from its point until it clears the notes
// already written: two series' knees often share an x.
type notes struct{ n []note }

func (n *notes) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	pad := vg.Points(1.5)
	var placed []vg.Rectangle
	for _, m := range n.n {
		sty := labelStyle(9, m.color)
		w, h := sty.Width(m.text), sty.Height(m.text)
		x, y := trX(m.at.X), trY(m.at.Y)
		// r is the text's box for a lower-left corner at (x0, y0).
		var x0, y0, dy vg.Length
		if m.above {
			x0, y0, dy = x-vg.Points(9)-w, y+vg.Points(9), h+2*pad
			if x0 < c.Min.X { // no room on the left: go right instead
				x0 = x + vg.Points(9)
			}
		} else {
			x0, y0, dy = x+vg.Points(11), y-vg.Points(11)-h, -(h + 2*pad)
			if x0+w > c.Max.X {
				x0 = x - vg.Points(11) - w
			}
		}
		r := vg.Rectangle{Min: vg.Point{X: x0 - pad, Y: y0 - pad}, Max: vg.Point{X: x0 + w + pad, Y: y0 + h + pad}}
		for range 6 {
			if !slices.ContainsFunc(placed, func(q vg.Rectangle) bool { return overlap(q, r) }) {
				break
			}
			r = r.Add(vg.Point{Y: dy})
		}
		placed = append(placed, r)
		c.FillPolygon(color.NRGBA{R: 255, G: 255, B: 255, A: 210}, rect(r.Min.X, r.Min.Y, r.Max.X, r.Max.Y))
		c.FillText(sty, vg.Point{X: r.Min.X + pad, Y: r.Min.Y + pad}, m.text)
	}
}

func overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// small draws a mark's glyph in the legend at most legend-sized: the
// rings around a point are bigger than a legend line is tall.
type small struct{ s *plotter.Scatter }

func (m small) Thumbnail(c *draw.Canvas) {
	g := m.s.GlyphStyle
	g.Radius = min(g.Radius, vg.Points(4.5))
	c.DrawGlyph(g, c.Center())
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
