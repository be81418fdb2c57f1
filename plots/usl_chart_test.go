package plots_test

import (
	"image/color"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
)

// uslSweep is one curve on axis measured at ns, its throughput drawn from
// a known USL: λ 2,000 ops/s, σ 0.08, κ 0.0005, so N* ≈ 43.
func uslSweep(axis string, ns ...float64) *results.Sweep {
	s := &results.Sweep{Schema: results.SweepSchema, Axis: axis}
	for _, n := range ns {
		x := 2000 * n / (1 + 0.08*(n-1) + 0.0005*n*(n-1))
		s.Points = append(s.Points, results.SweepPoint{X: n, Clients: int(n), Owners: 1,
			OpsPerSec: x, Ops: int64(x * 30), P99Us: 300 * n})
	}
	s.Analyze()
	return s
}

// drawing is what a chart draws, recorded: gonum keeps a plot's plotters
// to itself, so the test reads their strokes, fills and texts instead.
type drawing struct {
	strokes, fills []mark
	texts          []string
	// data is the data area, and x and y map axis units onto it.
	data draw.Canvas
	x, y func(float64) vg.Length
}

// mark is one stroke or fill with the colour and dashes it was drawn in.
type mark struct {
	color  color.Color
	dashes []vg.Length
	path   vg.Path
}

func record(p *plot.Plot) drawing {
	rec := &recorder.Canvas{}
	c := draw.NewCanvas(rec, plots.Width, plots.Height)
	p.Draw(c)
	d := drawing{data: p.DataCanvas(c)}
	d.x, d.y = p.Transforms(&d.data)
	type state struct {
		color  color.Color
		dashes []vg.Length
	}
	var st state
	var saved []state
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.Push:
			saved = append(saved, st)
		case *recorder.Pop:
			st, saved = saved[len(saved)-1], saved[:len(saved)-1]
		case *recorder.SetColor:
			st.color = a.Color
		case *recorder.SetLineDash:
			st.dashes = a.Dashes
		case *recorder.Stroke:
			d.strokes = append(d.strokes, mark{st.color, st.dashes, a.Path})
		case *recorder.Fill:
			d.fills = append(d.fills, mark{st.color, st.dashes, a.Path})
		case *recorder.FillString:
			d.texts = append(d.texts, a.String)
		}
	}
	return d
}

// bounds is the box a path's points span.
func (m mark) bounds() vg.Rectangle {
	inf := vg.Length(math.Inf(1))
	r := vg.Rectangle{Min: vg.Point{X: inf, Y: inf}, Max: vg.Point{X: -inf, Y: -inf}}
	for _, pc := range m.path {
		if pc.Type != vg.MoveComp && pc.Type != vg.LineComp {
			continue
		}
		r.Min.X, r.Min.Y = min(r.Min.X, pc.Pos.X), min(r.Min.Y, pc.Pos.Y)
		r.Max.X, r.Max.Y = max(r.Max.X, pc.Pos.X), max(r.Max.Y, pc.Pos.Y)
	}
	return r
}

// fitted returns the dashed strokes that follow m (within half a point at
// every vertex, over at least 50 of them), reading x back through the
// axis: log10 of N when log.
func (d drawing) fitted(p *plot.Plot, m *results.USL, log bool) []mark {
	var out []mark
	for _, s := range d.strokes {
		if len(s.dashes) == 0 || len(s.path) < 50 {
			continue
		}
		on := true
		for _, pc := range s.path {
			n := p.X.Min + float64((pc.Pos.X-d.data.Min.X)/(d.data.Max.X-d.data.Min.X))*(p.X.Max-p.X.Min)
			if log {
				n = math.Pow(10, n)
			}
			if math.Abs(float64(pc.Pos.Y-d.y(m.X(n)))) > 0.5 {
				on = false
				break
			}
		}
		if on {
			out = append(out, s)
		}
	}
	return out
}

func near(a, b vg.Length) bool { return math.Abs(float64(a-b)) < 0.5 }

// isGrey reports an opaque light grey: the band's shade, not the white
// backing of a note.
func isGrey(c color.Color) bool {
	r, g, b, a := c.RGBA()
	return a == 0xffff && r == g && g == b && r>>8 > 200 && r>>8 < 250
}

// TestCapacityUSL: a curve whose model predicts is drawn dashed from its
// smallest N past its largest into a shaded prediction band, to a little
// beyond its peak, which is marked; the x axis reaches that far.
func TestCapacityUSL(t *testing.T) {
	for _, tc := range []struct {
		name string
		axis string
		ns   []float64
		log  bool
	}{
		{"log x", results.AxisConcurrency, []float64{1, 2, 4, 8, 16, 32}, true},
		// Six shards span too little for a log axis, and N* lies past
		// four times the largest measured N, where drawing stops.
		{"linear x", results.AxisShards, []float64{1, 2, 3, 4, 5, 6}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := uslSweep(tc.axis, tc.ns...)
			m := s.Capacity[0].Model
			if !m.OK() || math.Abs(m.PeakN-42.9) > 1 {
				t.Fatalf("model %+v: want the fit to predict a peak near 43", m)
			}
			extent := max(m.MaxN, min(m.PeakN*1.25, 4*m.MaxN))
			at := func(n float64) float64 { return n }
			if tc.log {
				at = math.Log10
			}
			tp, lat, err := plots.Capacity("usl", s)
			if err != nil {
				t.Fatal(err)
			}
			if tp.X.Max < at(extent) {
				t.Errorf("x axis ends at %g, want past the drawn extent %g", tp.X.Max, at(extent))
			}
			if lat.X.Max >= at(extent) {
				t.Errorf("latency x axis ends at %g: it draws no model, so should stop near the measured %g", lat.X.Max, m.MaxN)
			}
			d := record(tp)

			fits := d.fitted(tp, m, tc.log)
			if len(fits) != 1 {
				t.Fatalf("%d dashed strokes follow the model, want 1", len(fits))
			}
			if b := fits[0].bounds(); !near(b.Min.X, d.x(at(tc.ns[0]))) || !near(b.Max.X, d.x(at(extent))) {
				t.Errorf("fitted curve spans x %v–%v, want %v (smallest N) – %v (extent %g)",
					b.Min.X, b.Max.X, d.x(at(tc.ns[0])), d.x(at(extent)), extent)
			}
			// The axis leaves a margin past the curve's end, as it does past
			// the measured points: a curve that runs into the frame reads as
			// cut off.
			if b := fits[0].bounds(); b.Max.X > d.data.Max.X-vg.Points(5) {
				t.Errorf("fitted curve ends at x %v, within 5 pt of the data area's edge %v", b.Max.X, d.data.Max.X)
			}
			if b := fits[0].bounds(); b.Max.Y > d.data.Max.Y || b.Min.Y < d.data.Min.Y {
				t.Errorf("fitted curve spans y %v–%v, outside the data area %v", b.Min.Y, b.Max.Y, d.data.Rectangle)
			}

			band := slices.IndexFunc(d.fills, func(f mark) bool {
				b := f.bounds()
				return isGrey(f.color) && near(b.Min.X, d.x(at(m.MaxN))) && near(b.Max.X, d.x(at(extent))) &&
					near(b.Min.Y, d.data.Min.Y) && near(b.Max.Y, d.data.Max.Y)
			})
			if band < 0 {
				t.Errorf("no grey band over the data area from N %g to %g", m.MaxN, extent)
			}

			peak := slices.IndexFunc(d.strokes, func(s mark) bool {
				b := s.bounds()
				return len(s.dashes) > 0 && near(b.Min.X, d.x(at(m.PeakN))) && near(b.Max.X, b.Min.X) &&
					near(b.Min.Y, d.data.Min.Y) && near(b.Max.Y, d.data.Max.Y)
			})
			// N* is marked only within what is drawn.
			if peaked := m.PeakN <= extent; peaked != (peak >= 0) {
				t.Errorf("dotted vertical line at N* %g drawn: %v, want %v (drawn to %g)", m.PeakN, peak >= 0, peaked, extent)
			} else if peaked != slices.Contains(d.texts, "N* ≈ 43") {
				t.Errorf("label \"N* ≈ 43\" shown: %v, want %v: texts %q", !peaked, peaked, d.texts)
			}
			for _, want := range []string{"prediction", "USL fit"} {
				if !slices.Contains(d.texts, want) {
					t.Errorf("chart lacks the text %q", want)
				}
			}
			if tc.log && !slices.Contains(d.texts, "64") {
				t.Errorf("no tick at 64 past the measured 32: texts %q", d.texts)
			}
			if slices.ContainsFunc(d.texts, func(s string) bool { return strings.Contains(s, "no model") }) {
				t.Error("a model that predicts is noted as missing")
			}
		})
	}
}

// TestCapacityUSLRefused: a model that predicts nothing draws no curve,
// band or peak, and the chart says why.
func TestCapacityUSLRefused(t *testing.T) {
	few := uslSweep(results.AxisConcurrency, 1, 2, 4)
	zigzag := uslSweep(results.AxisConcurrency, 1, 2, 4, 8, 16, 32)
	for i := range zigzag.Points {
		zigzag.Points[i].OpsPerSec = float64(1000 + 2000*(i%2))
	}
	zigzag.Analyze()
	for name, s := range map[string]*results.Sweep{"three points": few, "zigzag": zigzag} {
		t.Run(name, func(t *testing.T) {
			m := s.Capacity[0].Model
			if m == nil || m.OK() {
				t.Fatalf("model %+v: want one refused", m)
			}
			tp, _, err := plots.Capacity("usl", s)
			if err != nil {
				t.Fatal(err)
			}
			d := record(tp)
			if slices.ContainsFunc(d.strokes, func(s mark) bool { return len(s.dashes) > 0 && len(s.path) >= 50 }) {
				t.Error("a refused model is drawn")
			}
			if slices.ContainsFunc(d.fills, func(f mark) bool { return isGrey(f.color) }) {
				t.Error("a prediction band is drawn without a model")
			}
			for _, s := range d.texts {
				if s == "prediction" || s == "USL fit" || strings.HasPrefix(s, "N*") {
					t.Errorf("chart has %q, want no model drawn", s)
				}
			}
			if want := "no model: " + m.Refused; !slices.Contains(d.texts, want) {
				t.Errorf("chart lacks the note %q: texts %q", want, d.texts)
			}
		})
	}
}
