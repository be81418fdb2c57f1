package results

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// ReadIntervalLog reads an HdrHistogram interval log as written with a
// result and merges its intervals per tag (metric name).
func ReadIntervalLog(r io.Reader) (map[string]*hdr.Histogram, error) {
	rd := hdr.NewHistogramLogReader(r)
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
	if r.HistogramLog == "" {
		return nil, fmt.Errorf("results: %s names no histogram log", path)
	}
	f, err := os.Open(filepath.Join(filepath.Dir(path), r.HistogramLog))
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	return ReadIntervalLog(f)
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
