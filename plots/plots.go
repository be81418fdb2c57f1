package plots

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/lockbench/lockbench/results"
)

// Size is the default chart size: readable on a screen and in a report.
const (
	Width  = 8 * vg.Inch
	Height = 4.5 * vg.Inch
)

// Save writes p to path; the extension picks the format (.png or .svg).
func Save(p *plot.Plot, path string) error {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png", ".svg":
	default:
		return fmt.Errorf("plots: %s: want a .png or .svg file, not %q", path, ext)
	}
	if err := p.Save(Width, Height, path); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	return nil
}

// Encode renders p at the default size as "png" or "svg", for reports
// that embed their charts.
func Encode(p *plot.Plot, format string) ([]byte, error) {
	wt, err := p.WriterTo(Width, Height, format)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	return b.Bytes(), nil
}

// Series is one named line of a latency spectrum.
type Series struct {
	Name   string
	Points []results.Quantile
}

// spectrumTicks label the 1/(1−q) axis with the percentiles people read.
var spectrumTicks = plot.ConstantTicks{
	{Value: 1, Label: "0%"}, {Value: 2, Label: "50%"}, {Value: 10, Label: "90%"},
	{Value: 100, Label: "99%"}, {Value: 1000, Label: "99.9%"}, {Value: 10000, Label: "99.99%"},
	{Value: 100000, Label: "99.999%"},
}

// ErrNoData is returned for a chart with nothing to draw.
var ErrNoData = errors.New("plots: nothing to draw")

// Spectrum is the latency percentile spectrum of each series, as
// HdrHistogram draws it: x is the percentile on a log scale of 1/(1−q), y
// the latency in milliseconds.
func Spectrum(title string, series []Series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (ms)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = spectrumTicks
	p.Legend.Top, p.Legend.Left = true, true
	xmax, ymax := 10.0, 0.0
	var args []any
	for _, s := range series {
		var xys plotter.XYs
		for _, q := range s.Points {
			// Log axes panic on values ≤ 0; 1/(1−q) ≥ 1 always, and
			// q = 1 never appears (results.Spectrum drops it).
			if q.Q < 0 || q.Q >= 1 {
				continue
			}
			x := 1 / (1 - q.Q)
			xys = append(xys, plotter.XY{X: x, Y: q.ValueUs / 1e3})
			xmax, ymax = max(xmax, x), max(ymax, q.ValueUs/1e3)
		}
		if len(xys) > 0 {
			args = append(args, s.Name, xys)
		}
	}
	if len(args) == 0 {
		return nil, ErrNoData
	}
	if err := plotutil.AddLines(p, args...); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	p.X.Min, p.X.Max = 1, math.Pow(10, math.Ceil(math.Log10(xmax)))
	p.Y.Min, p.Y.Max = 0, max(ymax*1.05, 0.001)
	p.Add(plotter.NewGrid())
	return p, nil
}

// faultColor shades fault windows.
var faultColor = color.NRGBA{R: 230, G: 80, B: 60, A: 50}

// Throughput is successful operations per second over the run, with
// failed ones per second beside them when there were any, and each fault's
// window shaded and labelled.
func Throughput(title string, points []results.Point, events []results.Event) (*plot.Plot, error) {
	if len(points) == 0 {
		return nil, ErrNoData
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time since start (s)"
	p.Y.Label.Text = "operations per second"
	var xys, failed plotter.XYs
	top, prev := 0.0, 0.0
	anyFailed := false
	for _, pt := range points {
		// The last point may close an interval of milliseconds (the run's
		// end): its rate says nothing, and drawn it looks like a collapse.
		if pt.T-prev < 0.5 && len(xys) > 0 {
			continue
		}
		secs := pt.T - prev
		prev = pt.T
		xys = append(xys, plotter.XY{X: pt.T, Y: pt.OpsPerSec})
		top = max(top, pt.OpsPerSec)
		f := 0.0
		if secs > 0 {
			f = float64(pt.Errors) / secs
		}
		anyFailed = anyFailed || pt.Errors > 0
		failed = append(failed, plotter.XY{X: pt.T, Y: f})
		top = max(top, f)
	}
	top = max(top*1.15, 1)
	p.Y.Min, p.Y.Max = 0, top
	p.X.Min = 0
	labelled := map[string]bool{} // one label per kind and target: a storm of bursts stays readable
	for _, e := range events {
		end := max(e.End, e.Start+0.05) // an instant fault (a kill) still shows
		poly, err := plotter.NewPolygon(plotter.XYs{{X: e.Start, Y: 0}, {X: end, Y: 0}, {X: end, Y: top}, {X: e.Start, Y: top}})
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		poly.Color = faultColor
		poly.LineStyle.Width = 0
		p.Add(poly)
		name := e.Kind + " " + e.Target
		if labelled[name] {
			continue
		}
		labelled[name] = true
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: e.Start, Y: top * (0.97 - 0.05*float64(len(labelled)-1))}}, Labels: []string{name}})
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		p.Add(labels)
	}
	line, err := plotter.NewLine(xys)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	line.Color = plotutil.Color(0)
	line.Width = vg.Points(1.5)
	p.Add(line, plotter.NewGrid())
	p.Legend.Add("successful ops/s", line)
	if anyFailed {
		fl, err := plotter.NewLine(failed)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		fl.Color = color.NRGBA{R: 200, G: 30, B: 30, A: 255}
		fl.Width = vg.Points(1.2)
		fl.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(fl)
		p.Legend.Add("failed ops/s", fl)
	}
	p.Legend.Top = true
	return p, nil
}

// Fairness is each owner's acquisitions, sorted, with Jain's index and
// min/max in the title: a flat bar chart is a fair lock.
func Fairness(title string, f results.Fairness) (*plot.Plot, error) {
	if len(f.PerOwner) == 0 {
		return nil, ErrNoData
	}
	counts := make([]int64, 0, len(f.PerOwner))
	for _, n := range f.PerOwner {
		counts = append(counts, n)
	}
	slices.SortFunc(counts, func(a, b int64) int { return cmp.Compare(b, a) })
	vals := make(plotter.Values, len(counts))
	for i, n := range counts {
		vals[i] = float64(n)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s — Jain %.4f, min/max %.2f, %s", title, f.Jain, f.MinMax, results.Count(len(counts), "owner"))
	p.X.Label.Text = "owners, most acquisitions first"
	p.Y.Label.Text = "acquisitions"
	w := max(vg.Points(1), (Width-vg.Inch)/vg.Length(len(vals))*0.8)
	bars, err := plotter.NewBarChart(vals, w)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	bars.Color = plotutil.Color(0)
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.Y.Min = 0
	return p, nil
}
