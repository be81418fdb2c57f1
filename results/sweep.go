package results

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// SweepSchema names the sweep file format: a capacity-planning sweep's
// points and the capacity drawn from them. In v2 a point's throughput
// counts successful operations only; ReadSweep upgrades v1 files.
const SweepSchema = "lockbench.sweep/v2"

const sweepSchemaV1 = "lockbench.sweep/v1"

// Sweep axes: what a capacity curve's x is.
const (
	AxisConcurrency = "concurrency" // clients × owners, closed or open loop
	AxisRate        = "rate"        // offered ops/s, open loop
	AxisShards      = "shards"      // Redis Cluster primaries, at one concurrency
)

// KneeFraction places the saturation knee: the lowest point of a curve
// whose throughput reaches this share of the curve's peak. Past it, more
// concurrency buys at most the last 10%, mostly as latency.
const KneeFraction = 0.9

// SweepPoint is one run of a sweep.
type SweepPoint struct {
	// Series names the curve the point belongs to (the swept values other
	// than the axis, e.g. "read_ratio 0.9"); empty when there is one.
	Series    string  `json:"series,omitempty"`
	X         float64 `json:"x"`       // concurrency or offered rate
	Clients   int     `json:"clients"` // lockimpl clients
	Owners    int     `json:"owners"`  // per client
	ReadRatio float64 `json:"read_ratio"`
	Rate      float64 `json:"rate,omitempty"`
	// Shards is the Redis Cluster primaries the point ran on, when the
	// sweep varied them (0: the Redis the sweep was given).
	Shards int `json:"shards,omitempty"`
	// OpsPerSec and Ops count successful operations; Attempts every
	// measured one, Errors the failed ones.
	OpsPerSec float64 `json:"ops_per_s"`
	Ops       int64   `json:"ops"`
	Attempts  int64   `json:"attempts"`
	Errors    int64   `json:"errors"`
	// P50Us and P99Us are of every measured outermost acquisition;
	// Samples is how many there were (none: no percentile to print).
	P50Us      float64 `json:"p50_us"`
	P99Us      float64 `json:"p99_us"`
	Samples    int64   `json:"samples"`
	Violations int64   `json:"violations"`
	MeetsSLO   bool    `json:"meets_slo"`
	// Partial marks a point cut short by an interrupt: it is left off the
	// curves.
	Partial bool `json:"partial,omitempty"`
	// Failure says why the point's run failed (Result.Failures: a safety
	// violation or lost update, Redis stalled, no success, too many failed
	// operations). A failed point
	// breaks the SLO, and no knee is named on a curve that has one.
	Failure string `json:"failure,omitempty"`
	// RedisCPU and LoadCPU are the busiest server's command thread and the
	// load generator, in cores (Result.CPU); CPULimit names the side that
	// saturated ("" none; see CPU.Limit).
	RedisCPU float64 `json:"redis_cpu,omitempty"`
	LoadCPU  float64 `json:"load_cpu,omitempty"`
	CPULimit string  `json:"cpu_limit,omitempty"`
	// Interpolated marks a point drawn between two swept ones.
	Interpolated bool `json:"interpolated,omitempty"`
	// File is the point's result file, relative to the sweep file.
	File string `json:"file,omitempty"`
}

// Label is the point's setting in words, e.g. "4×8" or "4×8 @2000/s".
func (p SweepPoint) Label() string {
	s := fmt.Sprintf("%d×%d", p.Clients, p.Owners)
	if p.Rate > 0 {
		s += fmt.Sprintf(" @%g/s", p.Rate)
	}
	if p.Shards > 0 {
		s += " on " + Count(p.Shards, "shard")
	}
	return s
}

// Judge sets MeetsSLO: the run did not fail (Failure empty), some
// operation succeeded, p99 at or under slo (µs; 0 means no SLO), at most
// maxErrorRate of operations failed, and no safety violation.
func (p *SweepPoint) Judge(sloUs, maxErrorRate float64) {
	errRate := 0.0
	if n := p.Ops + p.Errors; n > 0 {
		errRate = float64(p.Errors) / float64(n)
	}
	p.MeetsSLO = p.Failure == "" && p.Ops > 0 && (sloUs <= 0 || p.P99Us <= sloUs) &&
		errRate <= maxErrorRate+1e-12 && p.Violations == 0
}

// PointFrom reads a point's measurements from its run's result.
func PointFrom(r *Result) SweepPoint {
	t := r.Throughput
	p := SweepPoint{OpsPerSec: t.OpsPerSec, Ops: t.Ops, Attempts: t.Attempts, Errors: r.ErrorCount(), Violations: r.Safety.Violations,
		Partial: r.Partial && r.Stall == nil, Failure: joinFailures(r.Failures())}
	l := r.Latency[AcquireAll]
	p.P50Us, p.P99Us, p.Samples = l.P50, l.P99, l.Count
	if c := r.CPU; c != nil {
		p.RedisCPU, p.LoadCPU, p.CPULimit = c.Redis, c.Load, c.Limit()
	}
	return p
}

// Percentile prints a point's latency percentile, or "-" when it has no
// acquisition to read one from.
func (p SweepPoint) Percentile(us float64) string {
	if p.Samples == 0 && p.Ops == 0 {
		return "-"
	}
	return dur(us)
}

// Capacity is what one curve of a sweep says.
type Capacity struct {
	Series string `json:"series,omitempty"`
	// Best is the highest-throughput point that meets the SLO.
	Best *SweepPoint `json:"best,omitempty"`
	// Knee is where throughput saturates (see KneeFraction).
	Knee *SweepPoint `json:"knee,omitempty"`
	// Peak is the highest-throughput point, SLO or not.
	Peak *SweepPoint `json:"peak,omitempty"`
	// Current is the throughput at the profile's own setting (CurrentX),
	// interpolated between the neighbouring points when not swept.
	Current *SweepPoint `json:"current,omitempty"`
	// HeadroomPct is how much more throughput Best gives than Current:
	// (Best/Current − 1) × 100. Negative when the current setting does
	// more than the best SLO-meeting point (it then breaks the SLO).
	HeadroomPct float64 `json:"headroom_pct"`
	// Stopped says why the curve ended before its last planned point.
	Stopped string `json:"stopped,omitempty"`
	// Failed is the curve's first failed point (see SweepPoint.Failure):
	// past it the curve says nothing of saturation, so no knee is named.
	Failed *SweepPoint `json:"failed,omitempty"`
	// CurrentX is the setting Current was looked for at (0: none).
	CurrentX float64 `json:"current_x,omitempty"`
	// Points is how many complete (not partial) points the curve has.
	Points int `json:"points"`
	// Model is the scalability law fitted to the curve's successful points
	// (nil on the rate axis).
	Model *USL `json:"model,omitempty"`
}

// Sweep is a capacity-planning sweep: the points run, the curves'
// capacity, and what was asked.
type Sweep struct {
	Schema        string    `json:"schema"`
	Partial       bool      `json:"partial"`
	PartialReason string    `json:"partial_reason,omitempty"`
	Start         time.Time `json:"start"`
	Seconds       float64   `json:"seconds"`
	Meta          Meta      `json:"meta"`
	Profile       any       `json:"profile"` // the base profile
	Axis          string    `json:"axis"`
	SLOP99Us      float64   `json:"slo_p99_us"`
	// MaxErrorRate is the share of failed operations a point may have and
	// still meet the SLO.
	MaxErrorRate float64 `json:"max_error_rate"`
	// StopAfter: a curve stops after this many points in a row break the
	// SLO (0: never).
	StopAfter int     `json:"stop_after"`
	CurrentX  float64 `json:"current_x"`
	// ThinkUs is the profile's mean think time per operation, which a
	// closed loop's time per operation leaves out (Little's law).
	ThinkUs float64 `json:"think_us,omitempty"`
	// Planned is the number of points asked for.
	Planned  int          `json:"planned"`
	Points   []SweepPoint `json:"points"`
	Capacity []Capacity   `json:"capacity"`
}

// SeriesNames lists the sweep's curves in the order their first point ran.
func (s *Sweep) SeriesNames() []string {
	var out []string
	for _, p := range s.Points {
		if !slices.Contains(out, p.Series) {
			out = append(out, p.Series)
		}
	}
	return out
}

// Analyze judges every point against the SLO and fills Capacity, one per
// series.
func (s *Sweep) Analyze() {
	for i := range s.Points {
		s.Points[i].Judge(s.SLOP99Us, s.MaxErrorRate)
	}
	stopped := map[string]string{}
	for _, c := range s.Capacity {
		stopped[c.Series] = c.Stopped
	}
	s.Capacity = nil
	for _, name := range s.SeriesNames() {
		var pts []SweepPoint
		for _, p := range s.Points {
			if p.Series == name {
				pts = append(pts, p)
			}
		}
		c := AnalyzeCurve(pts, s.CurrentX, s.Axis)
		c.Series, c.Stopped = name, stopped[name]
		c.Model = FitUSL(pts, s.Axis, s.ThinkUs, s.SLOP99Us)
		s.Capacity = append(s.Capacity, c)
	}
}

// AnalyzeCurve reads one curve's points (already judged) on axis: the
// best point meeting the SLO, the saturation knee, the peak, and the
// headroom at currentX (0: none). Partial points are left out.
func AnalyzeCurve(pts []SweepPoint, currentX float64, axis string) Capacity {
	c := Capacity{CurrentX: currentX}
	pts = slices.DeleteFunc(slices.Clone(pts), func(p SweepPoint) bool { return p.Partial })
	if len(pts) == 0 {
		return c
	}
	c.Points = len(pts)
	slices.SortStableFunc(pts, func(a, b SweepPoint) int { return cmp.Compare(a.X, b.X) })
	for i := range pts {
		p := &pts[i]
		if p.Failure != "" {
			if c.Failed == nil {
				c.Failed = p
			}
			continue
		}
		if c.Peak == nil || p.OpsPerSec > c.Peak.OpsPerSec {
			c.Peak = p
		}
		if p.MeetsSLO && (c.Best == nil || p.OpsPerSec > c.Best.OpsPerSec) {
			c.Best = p
		}
	}
	if c.Failed == nil && c.Peak != nil {
		c.Knee = knee(pts, c.Peak, axis)
	}
	c.Current = interpolate(pts, currentX)
	if c.Best != nil && c.Current != nil && c.Current.OpsPerSec > 0 {
		c.HeadroomPct = (c.Best.OpsPerSec/c.Current.OpsPerSec - 1) * 100
	}
	return c
}

// knee is where throughput saturates, nil when it does not within the
// swept range. On the concurrency axis it is the first point within
// KneeFraction of the peak, unless throughput still rose by more than
// that margin at the last point. On the rate axis it is the last offered
// rate achieved within KneeFraction before the first one that was not.
func knee(pts []SweepPoint, peak *SweepPoint, axis string) *SweepPoint {
	n := len(pts)
	if n < 2 {
		return nil
	}
	if axis == AxisRate {
		for i := range pts {
			if pts[i].OpsPerSec < KneeFraction*pts[i].X {
				if i == 0 {
					return nil // saturated below the swept range
				}
				return &pts[i-1]
			}
		}
		return nil
	}
	if peak == &pts[n-1] && pts[n-1].OpsPerSec*KneeFraction > pts[n-2].OpsPerSec {
		return nil // still rising steeply
	}
	for i := range pts {
		if pts[i].OpsPerSec >= KneeFraction*peak.OpsPerSec {
			return &pts[i]
		}
	}
	return nil
}

// interpolate is the curve's point at x: a swept point, or one drawn
// linearly between its neighbours (File empty); nil outside the curve.
func interpolate(pts []SweepPoint, x float64) *SweepPoint {
	if x <= 0 {
		return nil
	}
	for i := range pts {
		if pts[i].X == x {
			p := pts[i]
			return &p
		}
		if i > 0 && pts[i-1].X < x && x < pts[i].X {
			a, b := pts[i-1], pts[i]
			f := (x - a.X) / (b.X - a.X)
			return &SweepPoint{
				Series: a.Series, X: x, Interpolated: true, Samples: min(a.Samples, b.Samples),
				OpsPerSec: a.OpsPerSec + f*(b.OpsPerSec-a.OpsPerSec),
				P50Us:     a.P50Us + f*(b.P50Us-a.P50Us),
				P99Us:     a.P99Us + f*(b.P99Us-a.P99Us),
				MeetsSLO:  a.MeetsSLO && b.MeetsSLO,
			}
		}
	}
	return nil
}

// WriteSweep writes s as <dir>/sweep.json, atomically, and returns the path.
func WriteSweep(dir string, s *Sweep) (string, error) {
	return writeJSON(dir, "sweep.json", s)
}

// ReadSweep loads a sweep file, refusing other schemas. A v1 file (whose
// points counted failed operations as throughput) is upgraded and judged
// again.
func ReadSweep(path string) (*Sweep, error) {
	return readVersioned(path, func(s *Sweep) string { return s.Schema }, SweepSchema,
		map[string]func(*Sweep){sweepSchemaV1: (*Sweep).upgradeV1})
}

// upgradeV1 recomputes a v1 sweep's figures from successes only, as v1
// results are.
func (s *Sweep) upgradeV1() {
	s.Schema = SweepSchema
	s.MaxErrorRate = DefaultMaxErrorRate
	for i := range s.Points {
		p := &s.Points[i]
		p.Attempts = p.Ops
		p.Ops = max(p.Attempts-p.Errors, 0)
		if p.Attempts > 0 {
			p.OpsPerSec *= float64(p.Ops) / float64(p.Attempts)
		}
		if p.P99Us > 0 || p.P50Us > 0 {
			p.Samples = max(p.Ops, 1)
		}
	}
	s.Analyze()
}
