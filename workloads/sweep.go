package workloads

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
)

// SweepPlan is a capacity-planning sweep: the base profile run at every
// combination of the listed values (an empty list keeps the profile's
// own value). The axis is the offered rate when several rates are listed,
// else concurrency (clients × owners); the other listed values make
// separate curves.
type SweepPlan struct {
	Base       Profile
	Clients    []int
	Owners     []int
	ReadRatios []float64
	Rates      []float64
	// Shards are Redis Cluster primary counts, each point run on a cluster
	// of its own (empty: the Redis the sweep is given). With several
	// counts and one concurrency they are the axis, else separate curves.
	Shards []int
	// SLO is the acquire p99 a point must meet (0: none).
	SLO time.Duration
	// StopAfter ends a curve once this many points in a row break the SLO
	// (0: run every point).
	StopAfter int
	// MaxErrorRate is the share of failed operations a point may have and
	// still meet the SLO (0: results.DefaultMaxErrorRate; negative: none).
	MaxErrorRate float64
}

// PlannedPoint is one point of a sweep plan: its profile and where it sits.
type PlannedPoint struct {
	Series  string
	X       float64
	Profile Profile
	// Shards is the cluster primaries to run on (0: the sweep's Redis).
	Shards int
}

// Axis is what the sweep's curves are drawn against.
func (sp SweepPlan) Axis() string {
	switch {
	case len(sp.Rates) > 1:
		return results.AxisRate
	case len(sp.Shards) > 1 && len(sp.Clients) <= 1 && len(sp.Owners) <= 1:
		return results.AxisShards
	}
	return results.AxisConcurrency
}

// CurrentX is the base profile's own place on the axis: the setting the
// headroom is measured from (none on the shard axis).
func (sp SweepPlan) CurrentX() float64 {
	switch sp.Axis() {
	case results.AxisRate:
		return sp.Base.Rate
	case results.AxisShards:
		return 0
	}
	return float64(sp.Base.Clients * sp.Base.Owners)
}

// Points lists every point, curve by curve, each curve in increasing x,
// with its profile validated: bad values are refused before anything
// runs, naming the flag.
func (sp SweepPlan) Points() ([]PlannedPoint, error) {
	clients := orDefault(sp.Clients, sp.Base.Clients)
	owners := orDefault(sp.Owners, sp.Base.Owners)
	ratios := orDefault(sp.ReadRatios, sp.Base.ReadRatio)
	rates := orDefault(sp.Rates, sp.Base.Rate)
	if sp.StopAfter < 0 {
		return nil, &FieldError{Field: "--stop-after", Value: strconv.Itoa(sp.StopAfter), Fix: "must be 0 (never stop) or more, e.g. 2"}
	}
	if sp.SLO < 0 {
		return nil, &FieldError{Field: "--slo-p99", Value: sp.SLO.String(), Fix: "must be positive, e.g. 10ms (0: no SLO)"}
	}
	axis := sp.Axis()
	if slices.ContainsFunc(sp.Rates, func(r float64) bool { return r > 0 }) && sp.Base.Think.Mean() > 0 {
		return nil, &FieldError{Field: "--rate", Value: fmt.Sprint(sp.Rates), Fix: fmt.Sprintf("profile %s is closed loop (think %s); add --think 0 to sweep offered rates", sp.Base.Name, sp.Base.Think)}
	}
	for _, r := range sp.Rates {
		if axis == results.AxisRate && r <= 0 {
			return nil, &FieldError{Field: "--rate", Value: fmt.Sprint(r), Fix: "every offered rate on the rate axis must be positive, e.g. 1000,2000,4000"}
		}
	}
	for _, l := range []struct {
		flag string
		vals []float64
	}{{"--clients", floats(sp.Clients)}, {"--owners", floats(sp.Owners)}, {"--read-ratio", sp.ReadRatios}, {"--rate", sp.Rates}, {"--shards", floats(sp.Shards)}} {
		if err := listedOnce(l.flag, l.vals); err != nil {
			return nil, err
		}
	}
	shards := orDefault(sp.Shards, 0)
	for _, n := range sp.Shards {
		if n < 1 || n > 16 {
			return nil, &FieldError{Field: "--shards", Value: strconv.Itoa(n), Fix: "each count of cluster primaries must be 1 to 16, e.g. 1,3,6"}
		}
	}
	var out []PlannedPoint
	for _, n := range shards {
		for _, rr := range ratios {
			for _, rate := range rates {
				for _, o := range owners {
					for _, c := range clients {
						p := sp.Base
						p.Clients, p.Owners, p.ReadRatio, p.Rate = c, o, rr, rate
						if err := p.Validate(); err != nil {
							return nil, sweepFieldError(err)
						}
						pt := PlannedPoint{Profile: p, X: float64(c * o), Shards: n}
						var series []string
						switch {
						case axis == results.AxisShards:
							pt.X = float64(n)
						case len(shards) > 1:
							series = append(series, fmt.Sprintf("shards %d", n))
						}
						if len(ratios) > 1 {
							series = append(series, fmt.Sprintf("read_ratio %g", rr))
						}
						if axis == results.AxisRate {
							pt.X = rate
							if len(clients) > 1 || len(owners) > 1 {
								series = append(series, fmt.Sprintf("%d×%d", c, o))
							}
						} else {
							if len(owners) > 1 && len(clients) > 1 {
								series = append(series, fmt.Sprintf("owners %d", o))
							}
							if len(rates) == 1 && rate > 0 {
								series = append(series, fmt.Sprintf("rate %g", rate))
							}
						}
						pt.Series = strings.Join(series, ", ")
						out = append(out, pt)
					}
				}
			}
		}
	}
	// Each curve in increasing x, curves in the order they first appear.
	order := map[string]int{}
	for _, p := range out {
		if _, ok := order[p.Series]; !ok {
			order[p.Series] = len(order)
		}
	}
	slices.SortStableFunc(out, func(a, b PlannedPoint) int {
		if d := order[a.Series] - order[b.Series]; d != 0 {
			return d
		}
		switch {
		case a.X < b.X:
			return -1
		case a.X > b.X:
			return 1
		}
		return 0
	})
	return out, nil
}

// listedOnce refuses a value given twice in one list: the point would
// run twice, and two points at one x make a curve that flattens out
// there, so a knee would be named where nothing saturated.
func listedOnce(flag string, vals []float64) error {
	for i, v := range vals {
		if j := slices.Index(vals, v); j < i {
			return &FieldError{Field: flag, Value: strings.Trim(strings.Join(strings.Fields(fmt.Sprint(vals)), ","), "[]"),
				Fix: fmt.Sprintf("%g is listed twice (at positions %d and %d of the list); list each value once", v, j+1, i+1)}
		}
	}
	return nil
}

func floats(vals []int) []float64 {
	out := make([]float64, len(vals))
	for i, v := range vals {
		out[i] = float64(v)
	}
	return out
}

// sweepFieldError names the sweep flag behind a bad profile field.
func sweepFieldError(err error) error {
	fe, ok := err.(*FieldError)
	if !ok {
		return err
	}
	flags := map[string]string{"clients": "--clients", "owners": "--owners", "read_ratio": "--read-ratio", "rate": "--rate"}
	if f, ok := flags[fe.Field]; ok {
		return &FieldError{Field: f, Value: fe.Value, Fix: fe.Fix}
	}
	return err
}

func orDefault[T any](vals []T, def T) []T {
	if len(vals) == 0 {
		return []T{def}
	}
	return vals
}

// SweepProgress is reported before each point starts.
type SweepProgress struct {
	Index, Total int // point Index (from 1) of Total planned
	Point        PlannedPoint
	// ETA is the planned time left, this point included (skipped points
	// shorten it).
	ETA time.Duration
}

// SweepConfig runs a plan.
type SweepConfig struct {
	Plan SweepPlan
	// Run runs one point (its profile, on its shard count when the plan
	// varies it) and returns its result (partial, with ctx's error, when
	// interrupted), as Run does with a Config.
	Run func(ctx context.Context, pt PlannedPoint) (*results.Result, error)
	// Record files a point's result (the interrupted one's too, partial)
	// and returns its file name for the sweep file ("" when not written);
	// p is the point as judged against the SLO.
	Record func(r *results.Result, p results.SweepPoint) (string, error)
	// Progress, when set, is told before each point runs.
	Progress func(SweepProgress)
	// Skipped, when set, is told of a point not run because its curve
	// stopped early.
	Skipped func(PlannedPoint, string)
	// Checkpoint, when set, is given the sweep so far after each point,
	// so a crash or a second Ctrl-C loses at most the running point.
	Checkpoint func(*results.Sweep) error
}

// Sweep runs every point of the plan in order and returns the sweep with
// its capacity analysed. A curve stops once StopAfter points in a row
// break the SLO. When ctx ends, the finished points are kept and analysed,
// the sweep is marked partial, and ctx's error is returned with it; the
// interrupted point's partial result is still recorded but left out of
// the curves.
func Sweep(ctx context.Context, cfg SweepConfig, meta results.Meta) (*results.Sweep, error) {
	pts, err := cfg.Plan.Points()
	if err != nil {
		return nil, err
	}
	sw := &results.Sweep{
		Schema: results.SweepSchema, Start: time.Now(), Meta: meta, Profile: cfg.Plan.Base,
		Axis: cfg.Plan.Axis(), SLOP99Us: float64(cfg.Plan.SLO) / 1e3, StopAfter: cfg.Plan.StopAfter,
		CurrentX: cfg.Plan.CurrentX(), Planned: len(pts), MaxErrorRate: errorLimit(cfg.Plan.MaxErrorRate),
		ThinkUs: float64(cfg.Plan.Base.Think.Mean()) / 1e3,
	}
	sw.Meta.Profile = cfg.Plan.Base.Name
	sw.Meta.Workload = cfg.Plan.Base.Summary()                                           // the base the axis varies: auto-pipelining, replica sync and the like
	perPoint := time.Duration(cfg.Plan.Base.Warmup+cfg.Plan.Base.Duration) + time.Second // setup and teardown
	broken := map[string]int{}
	stopped := map[string]string{}
	left := len(pts)
	var runErr error
	for i, pt := range pts {
		if ctx.Err() != nil {
			sw.Partial = true
			sw.PartialReason = fmt.Sprintf("interrupted before point %d of %d", i+1, len(pts))
			runErr = ctx.Err()
			break
		}
		if why, ok := stopped[pt.Series]; ok {
			left--
			if cfg.Skipped != nil {
				cfg.Skipped(pt, why)
			}
			continue
		}
		if cfg.Progress != nil {
			cfg.Progress(SweepProgress{Index: i + 1, Total: len(pts), Point: pt, ETA: time.Duration(left) * perPoint})
		}
		left--
		res, err := cfg.Run(ctx, pt)
		if res == nil {
			runErr = fmt.Errorf("point %d (%s): %w", i+1, pt.Describe(), err)
			break
		}
		sp := results.PointFrom(res)
		sp.Series, sp.X = pt.Series, pt.X
		sp.Clients, sp.Owners, sp.ReadRatio, sp.Rate = pt.Profile.Clients, pt.Profile.Owners, pt.Profile.ReadRatio, pt.Profile.Rate
		sp.Shards = pt.Shards
		sp.Judge(sw.SLOP99Us, sw.MaxErrorRate)
		if cfg.Record != nil {
			file, rerr := cfg.Record(res, sp)
			if rerr != nil {
				runErr = rerr
				break
			}
			sp.File = file
		}
		// A point whose Redis stalled is a failed point, not an
		// interrupted one: it stays on its curve, breaking the SLO.
		if err != nil || res.Partial && res.Stall == nil {
			sw.Partial = true
			sw.PartialReason = fmt.Sprintf("interrupted during point %d of %d (%s); its partial result (%s) is not on the curves", i+1, len(pts), pt.Describe(), sp.File)
			runErr = err
			break
		}
		sw.Points = append(sw.Points, sp)
		if sp.MeetsSLO {
			broken[pt.Series] = 0
		} else if broken[pt.Series]++; cfg.Plan.StopAfter > 0 && broken[pt.Series] >= cfg.Plan.StopAfter {
			why := "p99 " + sp.Percentile(sp.P99Us)
			if sp.Failure != "" {
				why = "its run failed: " + sp.Failure
			}
			stopped[pt.Series] = fmt.Sprintf("%s in a row broke the SLO, the last at x=%g (%s)", results.Count(broken[pt.Series], "point"), sp.X, why)
		}
		if cfg.Checkpoint != nil {
			snap := *sw
			snap.Partial, snap.PartialReason = true, fmt.Sprintf("in progress: %d of %s done", i+1, results.Count(len(pts), "point"))
			snap.Points = slices.Clone(sw.Points)
			snap.Analyze()
			if err := cfg.Checkpoint(&snap); err != nil {
				runErr = err
				break
			}
		}
	}
	if runErr != nil && !sw.Partial {
		sw.Partial = true
		sw.PartialReason = runErr.Error()
	}
	for _, name := range sw.SeriesNames() {
		if why, ok := stopped[name]; ok {
			sw.Capacity = append(sw.Capacity, results.Capacity{Series: name, Stopped: why})
		}
	}
	sw.Analyze()
	sw.Seconds = time.Since(sw.Start).Seconds()
	return sw, runErr
}

// Describe is the point's setting in words, for progress and errors:
// "clients 4 × owners 8 on 3 shards at 2000 ops/s (read_ratio=0.9)".
func (pt PlannedPoint) Describe() string {
	s := fmt.Sprintf("clients %d × owners %d", pt.Profile.Clients, pt.Profile.Owners)
	if pt.Shards > 0 {
		s += " on " + results.Count(pt.Shards, "shard")
	}
	if pt.Profile.Rate > 0 {
		s += fmt.Sprintf(" at %g ops/s", pt.Profile.Rate)
	}
	if pt.Series != "" {
		s += " (" + pt.Series + ")"
	}
	return s
}
