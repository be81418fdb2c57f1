package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// SweepOptions is a capacity sweep: the plan, what runs it, and where its
// files go.
type SweepOptions struct {
	Plan  workloads.SweepPlan
	Impl  workloads.Impl
	Redis redisenv.Config
	// Out is the sweep's directory: points/, sweep.json, charts, report.html.
	Out    string
	MaxOps int
	// SpinWaits spins every wait to its deadline (workloads.Config).
	SpinWaits bool
	// Version and Args describe the run in every file (see Meta).
	Version string
	Args    []string
	// StartEnv starts a point's Redis; the programs print where it is.
	StartEnv func(ctx context.Context, cfg redisenv.Config) (*redisenv.Env, error)
	// Logf is told what the sweep does, a line at a time.
	Logf func(format string, args ...any)
	// LoadEnded, when set, is called once the last point's load is over
	// and only the writing of files is left.
	LoadEnded func()
}

// SweepOutput is what a sweep wrote.
type SweepOutput struct {
	Sweep  *results.Sweep
	Path   string   // sweep.json
	Charts []string // capacity charts
	Report string   // report.html; "" when it could not be written
}

// Sweep runs o.Plan point after point and writes each point's result, the
// sweep (checkpointed after every point, so a killed sweep keeps what it
// finished), the capacity charts and the HTML report. It returns what it
// wrote together with every failure: an interrupted or failed point, a
// safety violation, a chart or report that could not be written. Output
// is nil only when no point could start.
func Sweep(ctx context.Context, o SweepOptions) (*SweepOutput, error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	pts, err := o.Plan.Points()
	if err != nil {
		return nil, err
	}
	pointsDir := filepath.Join(o.Out, "points")
	if err := os.MkdirAll(pointsDir, 0o755); err != nil {
		return nil, err
	}
	envs := &pointEnvs{cfg: o.Redis, start: o.StartEnv}
	defer envs.close()
	env, err := envs.get(ctx, pts[0].Shards)
	if err != nil {
		return nil, err
	}
	meta := Meta(env, o.Version, o.Args, o.Impl.Name())
	cfg := workloads.SweepConfig{
		Plan: o.Plan,
		Run: func(ctx context.Context, pt workloads.PlannedPoint) (*results.Result, error) {
			env, err := envs.get(ctx, pt.Shards)
			if err != nil {
				return nil, err
			}
			m := meta
			m.Start = time.Now()
			m.RedisTopology, m.RedisAddr = env.Shape(), env.Addr()
			return Run(ctx, env, RunOptions{Profile: pt.Profile, Impl: o.Impl, MaxOps: o.MaxOps, MaxErrorRate: o.Plan.MaxErrorRate, SpinWaits: o.SpinWaits, Meta: m,
				Logf: func(format string, a ...any) { logf("  "+format, a...) }})
		},
		Record: func(r *results.Result, pt results.SweepPoint) (string, error) {
			path, err := results.WriteFiles(pointsDir, r)
			if err != nil {
				return "", err
			}
			logf("  %s", report.SweepPointLine(pt))
			return filepath.Rel(o.Out, path)
		},
		Checkpoint: func(sw *results.Sweep) error {
			_, err := results.WriteSweep(o.Out, sw)
			return err
		},
		Progress: func(sp workloads.SweepProgress) {
			logf("point %d of %d: %s — about %v left", sp.Index, sp.Total, sp.Point.Describe(), sp.ETA.Round(time.Second))
		},
		Skipped: func(pt workloads.PlannedPoint, why string) {
			logf("skipping %s: its curve stopped (%s)", pt.Describe(), why)
		},
	}
	sw, runErr := workloads.Sweep(ctx, cfg, meta)
	if o.LoadEnded != nil {
		o.LoadEnded()
	}
	if sw == nil {
		return nil, runErr
	}
	out := &SweepOutput{Sweep: sw}
	if out.Path, err = results.WriteSweep(o.Out, sw); err != nil {
		return nil, errors.Join(runErr, err)
	}
	charts, cerr := report.WriteCapacityCharts(o.Out, sw)
	out.Charts = charts
	if errors.Is(cerr, plots.ErrNoData) {
		cerr = nil // no finished point: nothing to draw, and the sweep says why
	}
	in, lerr := report.Load(out.Path)
	if lerr == nil {
		html := filepath.Join(o.Out, "report.html")
		if lerr = report.Write(html, in, report.Options{Generator: o.Version}); lerr == nil {
			out.Report = html
		}
	}
	if cerr != nil {
		cerr = fmt.Errorf("charts: %v", cerr) // not bad input, whatever the cause
	}
	if lerr != nil {
		lerr = fmt.Errorf("report: %v", lerr)
	}
	// A point with a safety violation or a lost update is a failed point
	// (Result.Failures), named with the rest.
	var failed error
	var bad []string
	for _, p := range sw.Points {
		if p.Failure != "" {
			bad = append(bad, p.Label())
		}
	}
	if len(bad) > 0 {
		failed = fmt.Errorf("sweep failed: the runs at %s failed (see FAILED above and points/)", strings.Join(bad, ", "))
	}
	return out, errors.Join(runErr, failed, cerr, lerr)
}

// pointEnvs keeps the Redis of the sweep's current shard count: points on
// the same count share it, a new count replaces it with a fresh cluster.
type pointEnvs struct {
	cfg    redisenv.Config
	start  func(context.Context, redisenv.Config) (*redisenv.Env, error)
	env    *redisenv.Env
	shards int
}

// get returns the Redis for a point asking for shards primaries; 0 keeps
// the configured Redis.
func (p *pointEnvs) get(ctx context.Context, shards int) (*redisenv.Env, error) {
	if p.env != nil && (shards == 0 || shards == p.shards) {
		return p.env, nil
	}
	p.close()
	cfg := p.cfg
	if shards > 0 {
		cfg.Shards = shards
	}
	env, err := p.start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p.env, p.shards = env, shards
	return env, nil
}

func (p *pointEnvs) close() {
	if p.env != nil {
		_ = p.env.Close()
		p.env = nil
	}
}
