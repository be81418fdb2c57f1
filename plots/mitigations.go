package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/results"
)

// OutcomeStyle is how a matrix cell's outcome is shown, in the chart and
// in the report's table alike: its colour and its words in a legend.
type OutcomeStyle struct {
	Outcome results.Outcome
	Color   color.NRGBA
	Words   string
}

// OutcomeStyles are the outcomes' styles, worst first.
var OutcomeStyles = []OutcomeStyle{
	{results.OutcomeLost, color.NRGBA{R: 0xef, G: 0x8f, B: 0x86, A: 0xff}, "updates lost"},
	{results.OutcomeOverlap, color.NRGBA{R: 0xfb, G: 0xd5, B: 0xd1, A: 0xff}, "holds overlapped, no update lost"},
	{results.OutcomeRefused, color.NRGBA{R: 0xff, G: 0xd0, B: 0x7a, A: 0xff}, "acquisitions refused, nothing lost"},
	{results.OutcomeNoWrites, color.NRGBA{R: 0xd9, G: 0xdd, B: 0xe4, A: 0xff}, "no write reached the counter"},
	{results.OutcomeClean, color.NRGBA{R: 0xbd, G: 0xe3, B: 0xc3, A: 0xff}, "nothing lost, no overlap"},
	{results.OutcomeSkipped, color.NRGBA{R: 0xf4, G: 0xf4, B: 0xf6, A: 0xff}, "skipped"},
}

// MissColor marks a cell whose outcome was not the one expected: a
// mark apart from the outcome's colour, so that "as expected" never
// recolours what happened.
var MissColor = color.NRGBA{R: 0xb3, G: 0x26, B: 0x1e, A: 0xff}

// StyleOf is outcome o's style.
func StyleOf(o results.Outcome) OutcomeStyle {
	for _, s := range OutcomeStyles {
		if s.Outcome == o {
			return s
		}
	}
	return OutcomeStyle{Outcome: o, Color: color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}, Words: string(o)}
}

// Mitigations draws the mitigation matrix as a grid, a scenario per row
// and a mitigation per column, each cell coloured by what happened and
// labelled with its lost updates (and refused acquisitions), a cell not
// as expected framed and crossed. A grid rather than bars: a bar per
// mitigation needs a colour per mitigation and a legend to decode them,
// and a 0 draws nothing, where a cell reads directly and shows a 0 as a 0.
func Mitigations(title string, m *results.MitigationMatrix) (*plot.Plot, error) {
	if len(m.Cells) == 0 || len(m.Scenarios) == 0 || len(m.Mitigations) == 0 {
		return nil, ErrNoData
	}
	p := plot.New()
	p.Title.Text = title
	cols, rows := len(m.Mitigations), len(m.Scenarios)
	p.X.Min, p.X.Max = -0.5, float64(cols)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(rows)-0.5
	var xt, yt plot.ConstantTicks
	for i, mi := range m.Mitigations {
		xt = append(xt, plot.Tick{Value: float64(i), Label: mi})
	}
	for j, s := range m.Scenarios {
		yt = append(yt, plot.Tick{Value: gridY(j, rows), Label: s})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = xt, yt
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.LineStyle.Width, ax.Tick.LineStyle.Width, ax.Tick.Length, ax.Padding = 0, 0, 0, 0
		ax.Tick.Label.Font.Size = vg.Points(9)
	}
	// Upright names would need a column twice as wide as a cell.
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	g := &cellGrid{m: m}
	p.Add(g)
	leg := &legendRow{}
	seen := map[results.Outcome]bool{}
	miss := false
	for _, c := range m.Cells {
		seen[c.Outcome()] = true
		miss = miss || c.Skipped == "" && !c.OK
	}
	for _, s := range OutcomeStyles {
		if seen[s.Outcome] {
			leg.add(s.Words, swatch{s.Color, false})
		}
	}
	if miss {
		leg.add("not as expected", swatch{color.NRGBA{R: 255, G: 255, B: 255, A: 255}, true})
	}
	leg.attach(p)
	return p, nil
}

// gridY is row j's y: the first scenario on top.
func gridY(j, rows int) float64 { return float64(rows - 1 - j) }

// cellGrid draws the matrix's cells.
type cellGrid struct{ m *results.MitigationMatrix }

func (g *cellGrid) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	rows := len(g.m.Scenarios)
	gap := vg.Points(1.5)
	main, caption := labelStyle(9, color.Black), labelStyle(7, color.Gray{Y: 40})
	main.XAlign, main.YAlign = draw.XCenter, draw.YCenter
	caption.XAlign, caption.YAlign = draw.XCenter, draw.YCenter
	for j, s := range g.m.Scenarios {
		y := gridY(j, rows)
		for i, mi := range g.m.Mitigations {
			x0, x1 := trX(float64(i)-0.5)+gap, trX(float64(i)+0.5)-gap
			y0, y1 := trY(y-0.5)+gap, trY(y+0.5)-gap
			cell, ok := g.m.Cell(s, mi)
			st := StyleOf(cell.Outcome())
			if !ok {
				st = OutcomeStyle{Color: color.NRGBA{R: 255, G: 255, B: 255, A: 255}}
			}
			c.FillPolygon(st.Color, rect(x0, y0, x1, y1))
			first, second := cellLabel(cell, ok)
			mid := vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}
			if second == "" {
				c.FillText(main, mid, first)
			} else {
				h := main.Height(first)
				c.FillText(main, vg.Point{X: mid.X, Y: mid.Y + h*0.45}, first)
				c.FillText(caption, vg.Point{X: mid.X, Y: mid.Y - h*0.55}, second)
			}
			if ok && cell.Skipped == "" && !cell.OK {
				missMark(c, x0, y0, x1, y1)
			}
		}
	}
}

// cellLabel is what a cell of the chart says: its lost updates, and
// under them its refused acquisitions or why it has no figure.
func cellLabel(c results.MitigationCell, ok bool) (string, string) {
	switch {
	case !ok:
		return "not run", ""
	case c.Skipped != "":
		return "skipped", ""
	}
	first := fmt.Sprintf("%d lost", c.Lost)
	switch {
	case c.Refused > 0:
		return first, fmt.Sprintf("%d refused", c.Refused)
	case c.Outcome() == results.OutcomeNoWrites:
		return first, "no writes"
	}
	return first, ""
}

// missMark frames a cell in MissColor and crosses its top right corner.
func missMark(c draw.Canvas, x0, y0, x1, y1 vg.Length) {
	w := vg.Points(2)
	ls := draw.LineStyle{Color: MissColor, Width: w}
	c.StrokeLines(ls, append(rect(x0+w/2, y0+w/2, x1-w/2, y1-w/2), vg.Point{X: x0 + w/2, Y: y0 + w/2}))
	r := vg.Points(3)
	cx, cy := x1-w-r-vg.Points(2), y1-w-r-vg.Points(2)
	ls.Width = vg.Points(1.4)
	c.StrokeLine2(ls, cx-r, cy-r, cx+r, cy+r)
	c.StrokeLine2(ls, cx-r, cy+r, cx+r, cy-r)
}

// swatch is a legend entry's cell: a fill, framed and crossed for a miss.
type swatch struct {
	fill color.Color
	miss bool
}

func (s swatch) Thumbnail(c *draw.Canvas) {
	x0, y0, x1, y1 := c.Min.X, c.Min.Y, c.Max.X, c.Max.Y
	c.FillPolygon(s.fill, rect(x0, y0, x1, y1))
	if s.miss {
		missMark(*c, x0, y0, x1, y1)
		return
	}
	c.StrokeLines(draw.LineStyle{Color: color.Gray{Y: 200}, Width: vg.Points(0.5)}, append(rect(x0, y0, x1, y1), vg.Point{X: x0, Y: y0}))
}
