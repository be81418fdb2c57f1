package results

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/infile"
)

// ReadIntervalLog reads an HdrHistogram interval log as written with a
// result and merges its intervals per tag (metric name).
func ReadIntervalLog(r io.Reader) (map[string]*hdr.Histogram, error) {
	rd := hdr.NewHistogramLogReader(&lineBound{r: r})
	out := map[string]*hdr.Histogram{}
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("results: interval log: %w", err)
		}
		if h == nil {
			return out, nil
		}
		tag := h.Tag()
		if out[tag] == nil {
			out[tag] = NewHistogram()
		}
		out[tag].Merge(h)
	}
}

// LoadHistograms reads the interval log named by r (a result read from
// path) and returns the whole run's histogram per metric.
func LoadHistograms(path string, r *Result) (map[string]*hdr.Histogram, error) {
	log, err := histogramLog(path, r)
	if err != nil {
		return nil, err
	}
	f, err := infile.Open(log, infile.HistLog)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	h, err := ReadIntervalLog(f)
	var refused *infile.Error
	if err != nil && !errors.As(err, &refused) {
		err = fmt.Errorf("%w (in %s)", err, log)
	}
	return h, err
}

// CheckHistogramLog refuses, without reading it, the interval log
// LoadHistograms would read for r (a result read from path): none named,
// missing, not a regular file, or over its limit.
func CheckHistogramLog(path string, r *Result) error {
	log, err := histogramLog(path, r)
	if err != nil {
		return err
	}
	if err := infile.Check(log, infile.HistLog); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// histogramLog is the path of the interval log r (read from path) names.
func histogramLog(path string, r *Result) (string, error) {
	if r.HistogramLog == "" {
		return "", fmt.Errorf("results: %s names no histogram log", path)
	}
	return filepath.Join(filepath.Dir(path), r.HistogramLog), nil
}

// maxLogLine bounds a line of an interval log, which the log reader
// holds whole. One interval's histogram takes a few KB (the longest line
// of a 1,008-owner run is under 6 KB), so a file without line ends (a
// sparse file of zeros, say) is refused instead of read into memory.
const maxLogLine = 16 << 20

// lineBound fails a read once a line runs past maxLogLine.
type lineBound struct {
	r   io.Reader
	run int // bytes since the last line end
}

func (l *lineBound) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if first := bytes.IndexByte(p[:n], '\n'); first < 0 {
		l.run += n
	} else if l.run+first <= maxLogLine {
		l.run = n - 1 - bytes.LastIndexByte(p[:n], '\n')
	} else {
		l.run += first
	}
	if l.run > maxLogLine {
		return n, fmt.Errorf("a line runs past %d MiB: not an interval log", maxLogLine>>20)
	}
	return n, err
}

// Quantile is one point of a latency spectrum: the fraction of values at
// or below ValueUs.
type Quantile struct {
	Q       float64 // 0 ≤ Q < 1
	ValueUs float64
}

// Spectrum is h's percentile spectrum in the HdrHistogram style: ticks
// per half-distance to 100% (50%, 75%, 87.5%, …), up to but excluding the
// last value (q = 1 has no place on a 1/(1−q) axis).
func Spectrum(h *hdr.Histogram) []Quantile {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	var out []Quantile
	for _, b := range h.CumulativeDistributionWithTicks(5) {
		q := b.Quantile / 100
		if q >= 1 {
			break
		}
		out = append(out, Quantile{Q: q, ValueUs: float64(b.ValueAt) / 1e3})
	}
	return out
}
