package plots

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/results"
)

// Timeline colours say what a hold meant. Red is kept for overlaps, the
// one thing a reader of a chaos chart must not miss.
var (
	heldColor        = color.NRGBA{R: 45, G: 105, B: 185, A: 255}
	lostIgnoredColor = color.NRGBA{R: 245, G: 145, B: 0, A: 255}
	lostColor        = color.NRGBA{R: 150, G: 150, B: 150, A: 255}
	violationColor   = color.NRGBA{R: 215, G: 20, B: 25, A: 255}
	violationShade   = color.NRGBA{R: 215, G: 20, B: 25, A: 40}
	violationHatch   = color.NRGBA{R: 215, G: 20, B: 25, A: 140}
	rowColor         = color.NRGBA{R: 120, G: 120, B: 120, A: 22}
)

// faultLanes bounds the lines fault labels are stacked on: labels cycle
// through them, so a storm of distinct faults does not eat the chart.
const faultLanes = 3

// dataHeight estimates the data area of a Width×Height chart (title,
// legend row and x axis taken off), for sizing rows and label lanes before
// gonum lays the chart out.
const dataHeight = Height - 100

// Timeline is the holder timeline of one lock in a chaos run: one row per
// owner (in order of first acquisition), each hold a bar from acquisition
// to release, coloured by what the holder knew; windows where incompatible
// holders overlapped are banded and marked in red, and fault windows
// shaded as in Throughput.
func Timeline(title string, t *results.Timeline, events []results.Event) (*plot.Plot, error) {
	if t == nil || len(t.Holds) == 0 {
		return nil, ErrNoData
	}
	owners := ownersByFirstHold(t.Holds)
	n := len(owners)
	row := make(map[string]float64, n)
	for i, o := range owners {
		row[o] = float64(n - 1 - i) // the first owner on top, as a Gantt chart reads
	}

	lo, hi := math.Inf(1), math.Inf(-1)
	// The rare holds that carry news are drawn wider: one among 600 must
	// not vanish.
	held := &spans{color: heldColor, min: minBar}
	ignored := &spans{color: lostIgnoredColor, min: 2 * minBar}
	lost := &spans{color: lostColor, min: 2 * minBar}
	for _, h := range t.Holds {
		end := max(h.Released, h.Acquired)
		lo, hi = min(lo, h.Acquired), max(hi, end)
		s := span{x0: h.Acquired, x1: end, y: row[h.Owner]}
		switch {
		case h.LostIgnored: // the dangerous case wins over a later noticed loss
			ignored.s = append(ignored.s, s)
		case h.Lost:
			lost.s = append(lost.s, s)
		default:
			held.s = append(held.s, s)
		}
	}
	var unsafe float64
	for _, w := range t.Overlaps {
		lo, hi = min(lo, w.Start), max(hi, w.End)
		unsafe += w.End - w.Start
	}
	if t.Omitted == 0 {
		// The whole run is drawn: start at its start, and show faults
		// outside the holds too (a fault with no holder is news).
		lo = min(lo, 0)
		for _, e := range events {
			hi = max(hi, e.Start, e.End)
		}
	}
	width := max(hi-lo, 1e-3)

	p := plot.New()
	setTitle(p, timelineTitle(title, t, unsafe))
	p.X.Label.Text = "time since start (s)"
	p.X.Tick.Marker = niceTicks{}
	p.Y.Label.Text = "owner (by first acquisition)"
	p.X.Min, p.X.Max = lo-0.01*width, hi+0.01*width
	if lo == 0 {
		p.X.Min = 0
	}

	// Fault labels sit on lanes above the top row: reserve them, in the
	// rows' units, from the estimated data height.
	faults := &bands{fill: faultColor, label: labelStyle(9, color.NRGBA{R: 120, G: 30, B: 20, A: 255})}
	labelled := map[string]bool{}
	for _, e := range events {
		if e.End < p.X.Min || e.Start > p.X.Max {
			continue
		}
		name := e.Kind + " " + e.Target
		if e.Err != "" {
			name += " (failed)"
		}
		b := band{x0: e.Start, x1: max(e.End, e.Start), lane: -1}
		if !labelled[name] {
			labelled[name] = true
			b.label, b.lane = name, (len(labelled)-1)%faultLanes
		}
		faults.b = append(faults.b, b)
	}
	lanes := min(len(labelled), faultLanes)
	headPt := vg.Length(lanes) * faults.laneHeight()
	if lanes > 0 {
		headPt += vg.Points(4)
	}
	head := float64(n) * float64(headPt) / float64(dataHeight-headPt)
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5+head
	p.Y.Tick.Marker, p.Y.Tick.Label.Font.Size = ownerTicks(owners, float64(dataHeight-headPt)/float64(n))

	var overlaps []band
	for _, w := range t.Overlaps {
		overlaps = append(overlaps, band{x0: w.Start, x1: w.End, lane: -1})
	}
	shade := &bands{b: overlaps, fill: violationShade, hatch: violationHatch}
	marks := &edges{b: overlaps, color: violationColor}
	g := grid()
	g.Horizontal.Color = nil // rows are shaded instead
	p.Add(faults, &rowShade{n: n, color: rowColor}, g, shade, held, lost, ignored, marks, bandLabels{faults})

	leg := &legendRow{}
	if len(held.s) > 0 {
		leg.add("held", held)
	}
	if len(ignored.s) > 0 {
		leg.add("held after told lost", ignored)
	}
	if len(lost.s) > 0 {
		leg.add("lost (stopped)", lost)
	}
	if len(overlaps) > 0 {
		leg.add("overlap (violation)", shade, marks)
	}
	if len(faults.b) > 0 {
		leg.add("fault", faults)
	}
	leg.attach(p)
	return p, nil
}

// timelineTitle puts the verdict in the title: the lock, how many overlap
// windows and how long it was unsafe, and whether holds were left out.
func timelineTitle(title string, t *results.Timeline, unsafe float64) string {
	var b strings.Builder
	b.WriteString(title)
	b.WriteString(" — ")
	if t.Lock != "" {
		lock := t.Lock
		// Run-scoped key prefixes make lock names long; the tail names it.
		if r := []rune(lock); len(r) > 32 {
			lock = "…" + string(r[len(r)-31:])
		}
		fmt.Fprintf(&b, "lock %s: ", lock)
	}
	if k := len(t.Overlaps); k == 0 {
		b.WriteString("no overlap")
	} else {
		fmt.Fprintf(&b, "%s, %s unsafe", results.Count(k, "overlap"), seconds(unsafe))
	}
	if t.Omitted > 0 {
		fmt.Fprintf(&b, " (%d of %s shown)", len(t.Holds), results.Count(len(t.Holds)+t.Omitted, "hold"))
	}
	return b.String()
}

// setTitle sets p's title, broken onto two lines at its first " — " when
// it is too wide for the chart: gonum clips a long title at the edges.
func setTitle(p *plot.Plot, title string) {
	if p.Title.TextStyle.Width(title) > Width-vg.Inch/2 {
		title = strings.Replace(title, " — ", "\n", 1)
	}
	p.Title.Text = title
}

// seconds formats a duration given in seconds at a scale that keeps a
// microsecond overlap from reading as "0.00 s".
func seconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.1f ms", s*1e3)
	default:
		return fmt.Sprintf("%.0f µs", s*1e6)
	}
}

// ownersByFirstHold lists the owners in order of their first acquisition
// (ties by name, so the chart is stable).
func ownersByFirstHold(holds []results.Holder) []string {
	first := map[string]float64{}
	for _, h := range holds {
		if f, ok := first[h.Owner]; !ok || h.Acquired < f {
			first[h.Owner] = h.Acquired
		}
	}
	owners := make([]string, 0, len(first))
	for o := range first {
		owners = append(owners, o)
	}
	slices.SortFunc(owners, func(a, b string) int {
		return cmp.Or(cmp.Compare(first[a], first[b]), strings.Compare(a, b))
	})
	return owners
}

// ownerTicks labels the rows with (shortened) owner names, with a font
// and a label stride that keep 40 rows legible: every row gets a tick,
// every stride-th a name. rowPt is the estimated row pitch in points.
func ownerTicks(owners []string, rowPt float64) (plot.ConstantTicks, vg.Length) {
	size := min(10, max(7, rowPt*0.85))
	stride := max(1, int(math.Ceil(size*1.15/rowPt)))
	names := shortNames(owners)
	n := len(owners)
	ticks := make(plot.ConstantTicks, n)
	for i := range owners {
		ticks[i].Value = float64(n - 1 - i)
		if i%stride == 0 {
			ticks[i].Label = names[i]
		}
	}
	return ticks, vg.Points(size)
}

// shortNames shortens long owner names for tick labels. lockimpl owners
// are "<client UUID>:<n>": the UUID's head and the owner number tell them
// apart, and the head grows until every name is distinct again.
func shortNames(names []string) []string {
	const keep = 20
	out := slices.Clone(names)
	long := false
	for _, s := range names {
		long = long || len([]rune(s)) > keep
	}
	if !long {
		return out
	}
	for head := 8; head < keep; head += 2 {
		seen := map[string]bool{}
		ok := true
		for i, s := range names {
			out[i] = shorten(s, head, keep)
			ok = ok && !seen[out[i]]
			seen[out[i]] = true
		}
		if ok {
			return out
		}
	}
	// Names alike at the head (not lockimpl's random UUIDs): their ends
	// differ.
	seen := map[string]bool{}
	for i, s := range names {
		r := []rune(s)
		out[i] = "…" + string(r[max(0, len(r)-keep+1):])
		if seen[out[i]] {
			return slices.Clone(names)
		}
		seen[out[i]] = true
	}
	return out
}

// shorten keeps a long name's first head runes and its last ":"-part.
func shorten(s string, head, keep int) string {
	r := []rune(s)
	if len(r) <= keep {
		return s
	}
	tail := ""
	if i := strings.LastIndexByte(s, ':'); i >= 0 && len(s)-i <= 8 {
		tail = s[i:]
	}
	return string(r[:head]) + "…" + tail
}

// labelStyle is a text style for annotations drawn by this package's own
// plotters.
func labelStyle(size float64, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(plot.DefaultFont, vg.Points(size)), Handler: plot.DefaultTextHandler}
}

// span is one bar: x0 to x1 (seconds) on row y.
type span struct{ x0, x1, y float64 }

// spans draws every bar of one colour as one filled path: 600 holds stay
// one plotter, not 600 polygons. Bars are a share of the row pitch (so 40
// rows stay apart), capped so one row is not a slab, and at least min
// wide so a zero-length hold still shows.
type spans struct {
	s     []span
	color color.Color
	min   vg.Length
}

// minBar is the narrowest a hold or window is drawn.
const minBar = vg.Length(1.5)

func (b *spans) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	half := min(max(vg.Length(math.Abs(float64(trY(1)-trY(0))))*0.6, 1), vg.Points(18)) / 2
	var path vg.Path
	for _, s := range b.s {
		x0, x1, y := trX(s.x0), trX(s.x1), trY(s.y)
		if x1-x0 < b.min {
			x1 = x0 + b.min
		}
		ring := c.ClipPolygonXY([]vg.Point{{X: x0, Y: y - half}, {X: x1, Y: y - half}, {X: x1, Y: y + half}, {X: x0, Y: y + half}})
		if len(ring) == 0 {
			continue
		}
		path.Move(ring[0])
		for _, pt := range ring[1:] {
			path.Line(pt)
		}
		path.Close()
	}
	if len(path) > 0 {
		c.SetColor(b.color)
		c.Fill(path)
	}
}

// Thumbnail draws a bar for the legend.
func (b *spans) Thumbnail(c *draw.Canvas) {
	h := (c.Max.Y - c.Min.Y) * 0.35
	y := c.Center().Y
	c.FillPolygon(b.color, []vg.Point{{X: c.Min.X, Y: y - h}, {X: c.Max.X, Y: y - h}, {X: c.Max.X, Y: y + h}, {X: c.Min.X, Y: y + h}})
}

// band is one window across the whole height, with an optional label on
// lane (≥ 0) at the top.
type band struct {
	x0, x1 float64
	label  string
	lane   int
}

// bands shades windows across the data area, under the bars, optionally
// hatched: the hatching tells an overlap from a fault's flat shade where
// the two coincide (a pause that causes the overlap).
type bands struct {
	b     []band
	fill  color.Color
	hatch color.Color
	label text.Style
}

func (b *bands) laneHeight() vg.Length { return b.label.Height("M") * 1.2 }

// xs is a window's extent on c, at least 2·minBar wide so an instant
// fault or a microsecond overlap shows; ok is false off the chart.
func (w band) xs(c draw.Canvas, trX func(float64) vg.Length) (x0, x1 vg.Length, ok bool) {
	x0, x1 = max(trX(w.x0), c.Min.X), min(trX(w.x1), c.Max.X)
	if x1-x0 < 2*minBar {
		x0, x1 = (x0+x1)/2-minBar, (x0+x1)/2+minBar
	}
	return x0, x1, x1 >= c.Min.X && x0 <= c.Max.X
}

func (b *bands) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, w := range b.b {
		x0, x1, ok := w.xs(c, trX)
		if !ok {
			continue
		}
		c.FillPolygon(b.fill, rect(x0, c.Min.Y, x1, c.Max.Y))
		if b.hatch != nil {
			hatch(&c, b.hatch, x0, c.Min.Y, x1, c.Max.Y)
		}
	}
}

// bandLabels draws a bands' labels: a plotter of its own so they go on
// top of the bars and overlap marks.
type bandLabels struct{ *bands }

func (l bandLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, w := range l.b {
		x0, _, ok := w.xs(c, trX)
		if !ok || w.label == "" || w.lane < 0 {
			continue
		}
		sty := l.label
		sty.YAlign = draw.YTop
		x := x0 + vg.Points(2)
		if x+sty.Width(w.label) > c.Max.X { // keep a late fault's label on the chart
			x, sty.XAlign = c.Max.X-vg.Points(2), draw.XRight
		}
		c.FillText(sty, vg.Point{X: x, Y: c.Max.Y - vg.Length(w.lane)*l.laneHeight() - vg.Points(2)}, w.label)
	}
}

// Thumbnail draws the band's shade for the legend.
func (b *bands) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.fill, rect(c.Min.X, c.Min.Y, c.Max.X, c.Max.Y))
	if b.hatch != nil {
		hatch(c, b.hatch, c.Min.X, c.Min.Y, c.Max.X, c.Max.Y)
	}
}

// hatch strokes 45° lines across a rectangle, on a grid fixed to the
// canvas so neighbouring windows line up.
func hatch(c *draw.Canvas, clr color.Color, x0, y0, x1, y1 vg.Length) {
	const step = vg.Length(6)
	sty := draw.LineStyle{Color: clr, Width: vg.Points(0.8)}
	// Lines x − y = k that cross the rectangle.
	for k := vg.Length(math.Floor(float64((x0-y1)/step))) * step; k <= x1-y0; k += step {
		ya, yb := max(y0, x0-k), min(y1, x1-k)
		if ya < yb {
			c.StrokeLine2(sty, ya+k, ya, yb+k, yb)
		}
	}
}

// edges marks windows over the bars: solid strips along the top and
// bottom of the data area and solid sides, so a violation shows even when
// it is microseconds long, without recolouring the holds inside it.
type edges struct {
	b     []band
	color color.Color
}

func (e *edges) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	strip := vg.Points(4)
	side := draw.LineStyle{Color: e.color, Width: vg.Points(0.75)}
	for _, w := range e.b {
		x0, x1, ok := w.xs(c, trX)
		if !ok {
			continue
		}
		c.FillPolygon(e.color, rect(x0, c.Max.Y-strip, x1, c.Max.Y))
		c.FillPolygon(e.color, rect(x0, c.Min.Y, x1, c.Min.Y+strip))
		c.StrokeLine2(side, x0, c.Min.Y, x0, c.Max.Y)
		c.StrokeLine2(side, x1, c.Min.Y, x1, c.Max.Y)
	}
}

// Thumbnail draws the strips for the legend.
func (e *edges) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(e.color, rect(c.Min.X, c.Max.Y-vg.Points(3), c.Max.X, c.Max.Y))
	c.FillPolygon(e.color, rect(c.Min.X, c.Min.Y, c.Max.X, c.Min.Y+vg.Points(3)))
}

// rowShade shades every other row faintly, so a bar far right on row 30 is
// still read against the right name.
type rowShade struct {
	n     int
	color color.Color
}

func (l *rowShade) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	for y := 1; y < l.n; y += 2 {
		c.FillPolygon(l.color, c.ClipPolygonY(rect(c.Min.X, trY(float64(y)-0.5), c.Max.X, trY(float64(y)+0.5))))
	}
}

func rect(x0, y0, x1, y1 vg.Length) []vg.Point {
	return []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

// legendRow is a legend laid out in rows above the data area, in space
// reserved under the title, so it never covers data (gonum's Legend is a
// column drawn inside the data area).
type legendRow struct {
	names  []string
	thumbs [][]plot.Thumbnailer
	style  text.Style
}

const (
	legendThumb = vg.Length(18) // thumbnail width
	legendGap   = vg.Length(14) // between entries
	// legendWidth is the widest a legend line is laid out: about the data
	// area's width at the package's Width.
	legendWidth = Width - vg.Inch
)

// add adds an entry whose thumbnail is the thumbnails drawn in turn.
func (l *legendRow) add(name string, th ...plot.Thumbnailer) {
	l.names = append(l.names, name)
	l.thumbs = append(l.thumbs, th)
}

// attach reserves the legend's lines under p's title, for the width the
// package draws at, and adds the legend to p.
func (l *legendRow) attach(p *plot.Plot) {
	if len(l.names) == 0 {
		return
	}
	l.style = labelStyle(10, color.Black)
	lines := len(l.lines(legendWidth))
	p.Title.Padding = vg.Length(lines)*l.lineHeight() + vg.Points(6)
	p.Add(l)
}

func (l *legendRow) lineHeight() vg.Length { return l.style.Height("M") * 1.35 }

func (l *legendRow) entryWidth(i int) vg.Length {
	return legendThumb + vg.Points(4) + l.style.Width(l.names[i])
}

// lines breaks the entries into lines no wider than w.
func (l *legendRow) lines(w vg.Length) [][]int {
	var out [][]int
	var cur []int
	var x vg.Length
	for i := range l.names {
		ew := l.entryWidth(i)
		if len(cur) > 0 && x+legendGap+ew > w {
			out, cur, x = append(out, cur), nil, 0
		}
		if len(cur) > 0 {
			x += legendGap
		}
		cur, x = append(cur, i), x+ew
	}
	return append(out, cur)
}

func (l *legendRow) Plot(c draw.Canvas, _ *plot.Plot) {
	lh := l.lineHeight()
	// Lay out as reserved; narrower only on a smaller chart than Save's.
	lines := l.lines(min(c.Max.X-c.Min.X, legendWidth))
	sty := l.style
	sty.YAlign = draw.YCenter
	for k, line := range lines {
		y := c.Max.Y + vg.Points(4) + vg.Length(len(lines)-1-k)*lh + lh/2
		x := c.Min.X
		for _, i := range line {
			th := &draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y - lh/2 + 1}, Max: vg.Point{X: x + legendThumb, Y: y + lh/2 - 1},
			}}
			for _, t := range l.thumbs[i] {
				t.Thumbnail(th)
			}
			c.FillText(sty, vg.Point{X: x + legendThumb + vg.Points(4), Y: y}, l.names[i])
			x += l.entryWidth(i) + legendGap
		}
	}
}
