package report

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"

	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
)

// charts draws a document's charts, naming each uniquely.
type charts struct{ n int }

// add renders p (or says why it could not) as a chart block.
func (ch *charts) add(name, alt string, p *plot.Plot, err error) []block {
	if errors.Is(err, plots.ErrNoData) {
		return nil
	}
	if err == nil {
		var png []byte
		png, err = plots.Encode(p, "png")
		if err == nil {
			ch.n++
			return []block{chart{name: fmt.Sprintf("%02d-%s", ch.n, name), alt: alt, png: png}}
		}
	}
	return []block{para{class: "note", text: fmt.Sprintf("Chart %q could not be drawn: %v.", alt, err)}}
}

type spectrumLine struct {
	name string
	h    *hdr.Histogram
}

func (ch *charts) spectrum(name, title string, lines []spectrumLine) []block {
	var series []plots.Series
	for _, l := range lines {
		if pts := results.Spectrum(l.h); len(pts) > 0 {
			series = append(series, plots.Series{Name: l.name, Points: pts})
		}
	}
	if len(series) == 0 {
		return nil
	}
	p, err := plots.Spectrum(title, series)
	return ch.add(name, title, p, err)
}

// runCharts are one run's charts: the latency spectrum, throughput over
// time (faults shaded), the holder timeline and fairness.
func (ch *charts) runCharts(r *Run) []block {
	res := r.Result
	name := r.Name()
	var bl []block
	var lines []spectrumLine
	for _, m := range []string{"acquire_exclusive", "acquire_read", "acquire_write", "acquire_nested", "release", "handoff", "ping"} {
		if h := r.Hists[m]; h != nil && h.TotalCount() > 0 {
			lines = append(lines, spectrumLine{m, h})
		}
	}
	bl = append(bl, ch.spectrum("spectrum", "Latency by percentile — "+name, lines)...)
	if r.HistErr != nil {
		bl = append(bl, para{class: "note", text: fmt.Sprintf("Latency spectrum omitted: %v.", r.HistErr)})
	}
	p, err := plots.Throughput("Throughput — "+name, res.Series, res.Events)
	bl = append(bl, ch.add("throughput", "Throughput over time — "+name, p, err)...)
	if res.Timeline != nil {
		p, err := plots.Timeline("Holders", res.Timeline, res.Events)
		bl = append(bl, ch.add("timeline", "Holder timeline — "+name, p, err)...)
	}
	if len(res.Fairness.PerOwner) > 1 {
		p, err := plots.Fairness("Acquisitions per owner", res.Fairness)
		bl = append(bl, ch.add("fairness", "Fairness — "+name, p, err)...)
	}
	return bl
}

// capacity is a sweep's two curves: throughput and p99 against the axis.
func (ch *charts) capacity(s *Sweep) []block {
	tp, lat, err := plots.Capacity(s.Sweep.Meta.Profile, s.Sweep)
	if err != nil {
		return ch.add("capacity", "Capacity curves", nil, err)
	}
	bl := append(ch.add("capacity-throughput", "Throughput vs "+s.Sweep.Axis, tp, nil),
		ch.add("capacity-p99", "p99 acquire latency vs "+s.Sweep.Axis, lat, nil)...)
	if cpu, err := plots.CapacityCPU(s.Sweep.Meta.Profile, s.Sweep); !errors.Is(err, plots.ErrNoData) {
		bl = append(bl, ch.add("capacity-cpu", "CPU vs "+s.Sweep.Axis+": which side ran out", cpu, err)...)
	}
	return bl
}

// WriteCapacityCharts writes a sweep's curves into dir as
// capacity-throughput.png, capacity-p99.png and, when its points measured
// CPU, capacity-cpu.png, returning their paths.
func WriteCapacityCharts(dir string, s *results.Sweep) ([]string, error) {
	tp, lat, err := plots.Capacity(s.Meta.Profile, s)
	if err != nil {
		return nil, err
	}
	charts := map[string]*plot.Plot{"capacity-throughput.png": tp, "capacity-p99.png": lat}
	if cpu, err := plots.CapacityCPU(s.Meta.Profile, s); err == nil {
		charts["capacity-cpu.png"] = cpu
	}
	var paths []string
	for name, p := range charts {
		path := filepath.Join(dir, name)
		if err := plots.Save(p, path); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	slices.Sort(paths)
	return paths, nil
}
