package plots

import (
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// grid is the light grid drawn under every chart's data.
func grid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	return g
}

// scatter draws xys as glyphs of style g.
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
