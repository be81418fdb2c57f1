package perf

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// The side-by-side matrix (bench perf, make perf): the same workloads on
// each lock implementation and on redis-benchmark, on one server (or on
// several taking turns, MeasureLineups), in rounds whose order rotates, so
// that drift in the machine's load hits every implementation alike. Figures are medians over the rounds; ratios
// are medians of each round's ratio, whose two runs are seconds apart.

// LineupGroup is one workload the implementations take turns on.
type LineupGroup struct {
	Profile string // a built-in profile
	// Owners is the total owner count: min(4, Owners) clients with an
	// equal share each. 0 keeps the profile's clients and owners.
	Owners int
	// Impls are the implementations' names, in LineupSpec.Impls.
	Impls []string
}

// LineupSpec is what MeasureLineup runs.
type LineupSpec struct {
	// Impls maps names to implementations.
	Impls  map[string]workloads.Impl
	Groups []LineupGroup
	// Recordings, when set, is the directory where, after the rounds, each
	// Redisson row runs once more on one of its cells with a flight
	// recording of its JVM, whose top frames the first site's matrix keeps
	// (Lineup.JVMProfiles).
	Recordings string
	Rounds     int
	// Pairs is how many rounds in all compare lockimpl+ap with plain
	// lockimpl in each group that runs both: after the matrix's rounds,
	// Pairs−Rounds more run the two alone, back to back. Every round of
	// the two is a pair, each first in turn; their verdicts need more
	// pairs than the matrix has rounds (results.RatioSpread.Apart).
	Pairs            int
	Duration, Warmup time.Duration
}

// DefaultPairs is how many pairs of lockimpl and lockimpl+ap a matrix
// compares them on (LineupSpec.Pairs) unless told: of two that do not
// differ, all of 8 pairs fall on one side of 1 once in 256.
const DefaultPairs = 8

// PipelinedName is lockimpl with each client's lock commands on go-redis's
// autopipeliner (bench run --auto-pipeline true): a column of the matrix
// beside plain lockimpl wherever lockimpl runs.
const PipelinedName = "lockimpl+ap"

// Pipelined is lockimpl on go-redis's autopipeliner, named PipelinedName
// so that its cells stand beside plain lockimpl's.
type Pipelined struct{ workloads.Lockimpl }

// Name is PipelinedName.
func (Pipelined) Name() string { return PipelinedName }

// Check accepts what lockimpl accepts, and says how it runs.
func (Pipelined) Check(workloads.Profile) (string, error) {
	return "lockimpl with each client's lock commands on go-redis's autopipeliner (bench run --auto-pipeline true)", nil
}

// NewClient is lockimpl's client with the profile's auto_pipeline set.
func (p Pipelined) NewClient(ctx context.Context, rdb redis.UniversalClient, prof workloads.Profile, client int) (workloads.ImplClient, error) {
	prof.AutoPipeline = true
	return p.Lockimpl.NewClient(ctx, rdb, prof, client)
}

// WithPipelined is impls with PipelinedName placed right after lockimpl,
// when lockimpl is among them.
func WithPipelined(names []string) []string {
	i := slices.Index(names, impls.Default)
	if i < 0 || slices.Contains(names, PipelinedName) {
		return names
	}
	return slices.Insert(slices.Clone(names), i+1, PipelinedName)
}

// DefaultLineup is make perf's: uncontended and mutex at 1, 8, 32 and 64
// owners on every implementation; rw90 on lockimpl, raw and Redisson (the
// Go peers have no read-write lock); fair and reentrant-deep on lockimpl
// and Redisson, the two that have fair and reentrant locks. lockimpl runs
// plain and on the autopipeliner (PipelinedName) where it runs.
func DefaultLineup(all []string) []LineupGroup {
	var g []LineupGroup
	for _, p := range []string{"uncontended", "mutex"} {
		for _, n := range []int{1, 8, 32, 64} {
			g = append(g, LineupGroup{Profile: p, Owners: n, Impls: WithPipelined(all)})
		}
	}
	rs := impls.RedissonName
	rw := []string{impls.Default, impls.Raw{}.Name()}
	for _, n := range all {
		if impls.IsRedisson(n) {
			rw = append(rw, n)
		}
	}
	return append(g,
		LineupGroup{Profile: "rw90", Impls: WithPipelined(rw)},
		LineupGroup{Profile: "fair", Impls: []string{impls.Default, rs}},
		LineupGroup{Profile: "reentrant-deep", Impls: []string{impls.Default, rs}})
}

// OverheadGroups is bench perf --only overhead: lockimpl plain and on the
// autopipeliner, on uncontended and mutex at 32 owners (4 clients × 8),
// beside redis-benchmark (plain and -P 16) and bare go-redis loops (plain
// and autopipelined): the pipelining targets, in a few minutes.
func OverheadGroups() []LineupGroup {
	both := []string{impls.Default, PipelinedName}
	return []LineupGroup{{Profile: "uncontended", Owners: 32, Impls: both}, {Profile: "mutex", Owners: 32, Impls: both}}
}

// LineupHooks report progress and keep each run's result.
type LineupHooks struct {
	Progress func(msg string)
	// Save writes a run's result and returns where (or why not).
	Save func(*results.Result) string
}

// groupProfile is g's profile resized to its owners and the spec's times.
func groupProfile(g LineupGroup, spec LineupSpec) (workloads.Profile, error) {
	p, err := workloads.Builtin(g.Profile)
	if err != nil {
		return p, err
	}
	if g.Owners > 0 {
		p.Clients = min(4, g.Owners)
		p.Owners = g.Owners / p.Clients
		if p.Clients*p.Owners != g.Owners {
			return p, &workloads.FieldError{Field: "owners", Value: fmt.Sprint(g.Owners), Fix: "matrix owner counts must be 1, 2, 3 or a multiple of 4"}
		}
	}
	p.Duration, p.Warmup = workloads.Duration(spec.Duration), workloads.Duration(spec.Warmup)
	p.Ops = 0
	return p, nil
}

// MeasureLineup runs spec against the Redis of base (NewRedis, Meta) and,
// at each group's concurrency, redis-benchmark (bin, at srv) driving the
// acquire and unlock scripts. Every profile is checked against every
// implementation before anything runs. When ctx ends it returns what
// finished, marked partial, with ctx's error.
func MeasureLineup(ctx context.Context, base workloads.Config, spec LineupSpec, bin string, srv Server, hooks LineupHooks) (*results.Lineup, error) {
	ms, err := MeasureLineups(ctx, spec, []Site{{Base: base, Server: srv}}, bin, hooks)
	if len(ms) == 0 {
		return nil, err
	}
	return ms[0], err
}

// A Site is one server a matrix runs on: the wiring of its runs
// (NewRedis; Meta, whose Server names it), where redis-benchmark reaches
// it, and the groups it runs (nil: the spec's).
type Site struct {
	Base   workloads.Config
	Server Server
	Groups []LineupGroup
}

// MeasureLineups is MeasureLineup on several servers at once, one matrix
// each: within a round each site runs its groups in turn, in an order that
// rotates from round to round as the implementations' does, so that drift
// in the machine's load hits every server alike. Rounds, duration and
// warmup are the spec's for every site.
func MeasureLineups(ctx context.Context, spec LineupSpec, sites []Site, bin string, hooks LineupHooks) ([]*results.Lineup, error) {
	if spec.Rounds < 1 || spec.Duration <= 0 || spec.Warmup < 0 {
		return nil, errors.New("perf: matrix needs rounds >= 1, a positive duration and a warmup >= 0")
	}
	say := func(format string, a ...any) {
		if hooks.Progress != nil {
			hooks.Progress(fmt.Sprintf(format, a...))
		}
	}
	var all []*siteRun
	var runs, benches int
	for _, s := range sites {
		if s.Groups == nil {
			s.Groups = spec.Groups
		}
		r, err := newSiteRun(s, spec)
		if err != nil {
			return nil, err
		}
		all = append(all, r)
		runs += r.runs
		benches += len(r.baselines)
	}
	runs *= spec.Rounds
	if spec.Recordings != "" && len(all) > 0 {
		jvms, _ := all[0].jvmCells(spec)
		runs += len(jvms)
	}
	extra := max(0, spec.Pairs-spec.Rounds)
	pairNote := ""
	for _, s := range all {
		if n := 2 * len(s.pairGroups()) * extra; n > 0 {
			runs += n
			pairNote = fmt.Sprintf(" and %s of lockimpl and lockimpl+ap after them", results.Count(extra, "pair"))
		}
	}
	perRun := spec.Duration + spec.Warmup
	// Each baseline: redis-benchmark plain and -P 16 (about a duration
	// each) and the two bare go-redis loops (a duration each).
	servers := ""
	if len(all) > 1 {
		servers = " on " + results.Count(len(all), "server")
	}
	say("matrix%s: %s of %v + %v warmup in %s%s, plus redis-benchmark and bare go-redis at each concurrency: about %v",
		servers, results.Count(runs, "run"), spec.Duration, spec.Warmup, results.Count(spec.Rounds, "round"), pairNote, (time.Duration(runs)*perRun + 4*time.Duration(spec.Rounds*benches)*spec.Duration).Round(time.Minute))

	for _, s := range all {
		s.rdb = s.Base.NewRedis(2)
		defer s.rdb.Close()
	}
	start := time.Now()
	n := &progress{say: say, of: runs}
	var runErr error
	// The matrix's rounds, then the pairs of lockimpl and lockimpl+ap
	// alone, the sites taking turns in both.
rounds:
	for round := range spec.Rounds + extra {
		for i := range all {
			s := all[(round+i)%len(all)]
			if len(all) > 1 {
				n.server = s.Base.Meta.ServerName()
			}
			if round < spec.Rounds {
				runErr = s.round(ctx, spec, round, bin, n, hooks)
			} else {
				runErr = s.pairRound(ctx, spec, round, n, hooks)
			}
			if runErr != nil {
				break rounds
			}
		}
	}
	if runErr == nil && spec.Recordings != "" && len(all) > 0 {
		n.server = ""
		runErr = all[0].profileJVMs(ctx, spec, n)
	}
	elapsed := time.Since(start)
	if runErr != nil && ctx.Err() == nil {
		return nil, runErr
	}
	if runErr != nil {
		runErr = ctx.Err() // a run or redis-benchmark cut short by it
	}
	out := make([]*results.Lineup, len(all))
	for i, s := range all {
		out[i] = s.finish(elapsed, runErr != nil)
	}
	return out, runErr
}

// progress numbers the runs of a matrix across its sites as it tells them.
type progress struct {
	say      func(format string, a ...any)
	done, of int
	server   string // the site's, when there are several
}

// on is " · server" when the matrix has several servers, else "".
func (n *progress) on() string {
	if n.server == "" {
		return ""
	}
	return " · " + n.server
}

type cellKey struct {
	group int
	impl  string
}

// siteRun is one Site being measured: its matrix so far.
type siteRun struct {
	Site
	m         *results.Lineup
	cells     map[cellKey]*results.LineupCell
	baselines map[int]*results.LineupBaseline
	rdb       redis.UniversalClient
	runs      int // per round
}

// newSiteRun checks every profile of s against every implementation.
func newSiteRun(s Site, spec LineupSpec) (*siteRun, error) {
	r := &siteRun{Site: s, cells: map[cellKey]*results.LineupCell{}, baselines: map[int]*results.LineupBaseline{},
		m: &results.Lineup{Meta: s.Base.Meta, Rounds: spec.Rounds, Duration: spec.Duration, Warmup: spec.Warmup}}
	for gi, g := range s.Groups {
		p, err := groupProfile(g, spec)
		if err != nil {
			return nil, err
		}
		for _, name := range g.Impls {
			impl, ok := spec.Impls[name]
			if !ok {
				return nil, &workloads.FieldError{Field: "--impl", Value: name, Fix: "not an implementation of this matrix"}
			}
			note := ""
			if note, err = impl.Check(p); err != nil {
				return nil, err
			}
			r.cells[cellKey{gi, name}] = &results.LineupCell{Profile: p.Name, Description: p.Description, Clients: p.Clients, Owners: p.TotalOwners(), Impl: name, Note: note}
			r.runs++
		}
		if _, ok := r.baselines[p.TotalOwners()]; !ok {
			r.baselines[p.TotalOwners()] = &results.LineupBaseline{Clients: p.TotalOwners()}
		}
	}
	if len(r.pairGroups()) > 0 {
		r.m.Pairs = max(spec.Rounds, spec.Pairs)
	}
	return r, nil
}

// round runs round round of s's groups, each followed by the baselines
// at its concurrency the first time it comes up.
func (s *siteRun) round(ctx context.Context, spec LineupSpec, round int, bin string, n *progress, hooks LineupHooks) error {
	benched := map[int]bool{}
	for gi, g := range s.Groups {
		p, _ := groupProfile(g, spec)
		var fastest float64
		for _, name := range roundOrder(g.Impls, round, gi) {
			r, err := s.run(ctx, spec, runAt{group: gi, impl: name, round: round}, p, n, hooks)
			if r != nil {
				fastest = max(fastest, r.OpsPerSec)
			}
			if err != nil {
				return err
			}
		}
		c := p.TotalOwners()
		if benched[c] {
			continue
		}
		// Each cycle is two scripts, each about twice the cycle rate:
		// fastest × duration requests take about the duration for both.
		reqs := max(5000, int(fastest*spec.Duration.Seconds()))
		n.say("round %d/%d%s · redis-benchmark -c %d (and -P %d), %d requests per script; bare go-redis %d×%d, plain and autopipelined",
			round+1, spec.Rounds, n.on(), c, ceilingPipeline, reqs, p.Clients, p.Owners)
		b, err := RedisBenchmark(ctx, bin, s.Server, s.rdb, c, reqs)
		if err == nil {
			b.GoRedis, err = GoRedisCycles(ctx, s.Base.NewRedis, p.Clients, p.Owners, spec.Warmup, spec.Duration, false)
		}
		if err == nil {
			b.GoRedisPipelined, err = GoRedisCycles(ctx, s.Base.NewRedis, p.Clients, p.Owners, spec.Warmup, spec.Duration, true)
		}
		if err != nil {
			return err
		}
		benched[c] = true
		s.baselines[c].Rounds = append(s.baselines[c].Rounds, b)
	}
	return nil
}

// runAt is one run of a matrix: an implementation of a group in a round,
// or in a pair after the rounds.
type runAt struct {
	group int
	impl  string
	round int
	pair  bool
}

// run runs at on its group's profile p and keeps its figures in the
// cell (Rounds, or PairRounds for a pair): the figures unless the run was
// cut short, and the run's error.
func (s *siteRun) run(ctx context.Context, spec LineupSpec, at runAt, p workloads.Profile, n *progress, hooks LineupHooks) (*results.LineupRound, error) {
	what, of := "round", spec.Rounds
	if at.pair {
		what, of = "pair", spec.Pairs
	}
	n.done++
	n.say("%s %d/%d%s · %s at %s · %s (run %d of %d)", what, at.round+1, of, n.on(), p.Name, results.Count(p.TotalOwners(), "owner"), at.impl, n.done, n.of)
	cfg := s.Base
	cfg.Profile = p
	cfg.Impl = spec.Impls[at.impl]
	cfg.Meta.Start = time.Now()
	cfg.Progress = nil
	res, err := workloads.Run(ctx, cfg)
	if res == nil {
		return nil, err
	}
	r := roundOf(res, at.round)
	if hooks.Save != nil {
		r.File = hooks.Save(res)
	}
	if r.Partial {
		return nil, err
	}
	c := s.cells[cellKey{at.group, at.impl}]
	if at.pair {
		c.PairRounds = append(c.PairRounds, r)
	} else {
		c.Rounds = append(c.Rounds, r)
	}
	return &r, err
}

// pairGroups are the indexes of s's groups that run both lockimpl and
// lockimpl+ap.
func (s *siteRun) pairGroups() []int {
	var gs []int
	for gi, g := range s.Groups {
		if hasPair(g.Impls) {
			gs = append(gs, gi)
		}
	}
	return gs
}

// hasPair reports whether names has both lockimpl and lockimpl+ap.
func hasPair(names []string) bool {
	return slices.Contains(names, impls.Default) && slices.Contains(names, PipelinedName)
}

// pairRound runs round round of lockimpl and lockimpl+ap alone, back to
// back, in each group that runs both, first in turns as in the matrix's
// rounds.
func (s *siteRun) pairRound(ctx context.Context, spec LineupSpec, round int, n *progress, hooks LineupHooks) error {
	for _, gi := range s.pairGroups() {
		p, _ := groupProfile(s.Groups[gi], spec)
		for _, name := range roundOrder([]string{impls.Default, PipelinedName}, round, 0) {
			if _, err := s.run(ctx, spec, runAt{group: gi, impl: name, round: round, pair: true}, p, n, hooks); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish lays out s's matrix: cells in group order, then the baselines
// by concurrency, their medians, ratios and targets.
func (s *siteRun) finish(elapsed time.Duration, partial bool) *results.Lineup {
	m := s.m
	m.Elapsed, m.Partial = elapsed, partial
	for gi, g := range s.Groups {
		for _, name := range g.Impls {
			c := s.cells[cellKey{gi, name}]
			c.Median = medianRound(c.Rounds)
			m.Cells = append(m.Cells, *c)
		}
	}
	for _, b := range s.baselines {
		b.Median = medianBaseline(b.Clients, b.Rounds)
		m.Baselines = append(m.Baselines, *b)
	}
	slices.SortFunc(m.Baselines, func(a, b results.LineupBaseline) int { return a.Clients - b.Clients })
	Ratios(m)
	m.Targets = Targets(m)
	return m
}

// PlainRatios sets VsPlain on each lockimpl+ap cell whose workload plain
// lockimpl ran too: ops/s, acquire p99 and handoff p50 over plain's, pair
// by pair over the matrix's rounds and the pairs' own.
func PlainRatios(m *results.Lineup) {
	for i := range m.Cells {
		ap := &m.Cells[i]
		if ap.Impl != PipelinedName {
			continue
		}
		plain := m.Cell(ap.Profile, ap.Owners, impls.Default)
		if plain == nil {
			continue
		}
		a, b := pairsOf(ap), pairsOf(plain)
		v := results.VsPlain{
			Ops:        spreadOf(a, b, func(r results.LineupRound) float64 { return r.OpsPerSec }),
			AcquireP99: spreadOf(a, b, func(r results.LineupRound) float64 { return r.AcquireP99 }),
			HandoffP50: spreadOf(a, b, func(r results.LineupRound) float64 { return r.HandoffP50 }),
		}
		if v.Ops.Rounds > 0 || v.AcquireP99.Rounds > 0 {
			ap.VsPlain = &v
		}
	}
}

// pairsOf is c's rounds in the matrix and its pairs' own.
func pairsOf(c *results.LineupCell) []results.LineupRound {
	return append(slices.Clip(c.Rounds), c.PairRounds...)
}

// spreadOf is f of each of rs over f of the same round of ref: the
// median, least and greatest of those ratios, and whether every one is on
// the same side of 1.
func spreadOf(rs, ref []results.LineupRound, f func(results.LineupRound) float64) results.RatioSpread {
	var ratios []float64
	for _, r := range rs {
		if q, ok := roundNo(ref, r.Round); ok && f(r) > 0 && f(q) > 0 {
			ratios = append(ratios, f(r)/f(q))
		}
	}
	if len(ratios) == 0 {
		return results.RatioSpread{}
	}
	lo, hi := slices.Min(ratios), slices.Max(ratios)
	return results.RatioSpread{Median: median(ratios), Min: lo, Max: hi, Rounds: len(ratios), Apart: lo > 1 || hi < 1}
}

// roundOrder is the order in which group gi's implementations run in
// round round: rotated from round to round, so that drift hits all
// alike, with lockimpl and lockimpl+ap back to back as one, the first of
// the two in turns, so that each pair's runs are seconds apart and
// neither always runs after the other.
func roundOrder(names []string, round, gi int) []string {
	pair := hasPair(names)
	var units []string
	for _, n := range names {
		if !pair || n != PipelinedName {
			units = append(units, n)
		}
	}
	var out []string
	for _, n := range rotate(units, round+gi) {
		switch {
		case !pair || n != impls.Default:
			out = append(out, n)
		case round%2 == 0:
			out = append(out, impls.Default, PipelinedName)
		default:
			out = append(out, PipelinedName, impls.Default)
		}
	}
	return out
}

// rotate returns s starting at its i-th element (mod len).
func rotate(s []string, i int) []string {
	if len(s) == 0 {
		return nil
	}
	i %= len(s)
	return append(append([]string{}, s[i:]...), s[:i]...)
}

// roundOf reads the matrix's figures from one result.
func roundOf(res *results.Result, round int) results.LineupRound {
	acq := res.Latency["acquire"]
	h := res.Latency[results.Handoff.String()]
	w := res.Latency[results.Wait.String()]
	r := results.LineupRound{
		Round: round, OpsPerSec: res.Throughput.OpsPerSec,
		AcquireP50: acq.P50, AcquireP99: acq.P99,
		HandoffP50: h.P50, HandoffP99: h.P99, WaitP50: w.P50,
		Handoffs: h.Count, Waits: w.Count, Cut: res.Throughput.Cut, Ops: res.Throughput.Ops, Errors: res.ErrorCount(),
		Violations: res.Safety.Violations, Jain: res.Fairness.Jain, Partial: res.Partial,
	}
	if c := res.CPU; c != nil {
		r.RedisCPU, r.LoadCPU, r.CPULimit, r.WaitCPU = c.Redis, c.Load, c.Limit(), c.Waits
		r.HelperCPU, r.HelperSysCPU, r.HostCPU = c.Helper, c.HelperSys, c.Host
	}
	if w := res.Waits; w != nil {
		if h := w.Hold; h != nil && h.Count > 0 {
			r.Holds, r.HoldErrP50, r.HoldErrP99 = h.Count, h.P50, h.P99
		}
		r.HoldInImpl = w.HoldNote != ""
		r.SpinShare = w.SpinShare
	}
	return r
}

// medianOf is the median of f over xs, leaving out values that are
// missing (0 or less).
func medianOf[T any](xs []T, f func(T) float64) float64 {
	var vs []float64
	for _, x := range xs {
		if v := f(x); v > 0 {
			vs = append(vs, v)
		}
	}
	return median(vs)
}

// medianRound is the median of each figure, the sum of each count.
func medianRound(rs []results.LineupRound) results.LineupRound {
	type r = results.LineupRound
	out := r{
		OpsPerSec:    medianOf(rs, func(x r) float64 { return x.OpsPerSec }),
		AcquireP50:   medianOf(rs, func(x r) float64 { return x.AcquireP50 }),
		AcquireP99:   medianOf(rs, func(x r) float64 { return x.AcquireP99 }),
		HandoffP50:   medianOf(rs, func(x r) float64 { return x.HandoffP50 }),
		HandoffP99:   medianOf(rs, func(x r) float64 { return x.HandoffP99 }),
		WaitP50:      medianOf(rs, func(x r) float64 { return x.WaitP50 }),
		Jain:         medianOf(rs, func(x r) float64 { return x.Jain }),
		RedisCPU:     medianOf(rs, func(x r) float64 { return x.RedisCPU }),
		LoadCPU:      medianOf(rs, func(x r) float64 { return x.LoadCPU }),
		CPULimit:     mostCommon(rs, func(x r) string { return x.CPULimit }),
		HelperCPU:    medianOf(rs, func(x r) float64 { return x.HelperCPU }),
		HelperSysCPU: medianOf(rs, func(x r) float64 { return x.HelperSysCPU }),
		HostCPU:      medianOf(rs, func(x r) float64 { return x.HostCPU }),
		SpinShare:    medianOf(rs, func(x r) float64 { return x.SpinShare }),
		WaitCPU:      medianOf(rs, func(x r) float64 { return x.WaitCPU }),
	}
	// A hold error may be 0 (on time), so rounds without holds, not zero
	// values, are what is left out.
	var held []r
	for _, x := range rs {
		if x.Holds > 0 {
			held = append(held, x)
		}
		out.HoldInImpl = out.HoldInImpl || x.HoldInImpl
	}
	if len(held) > 0 {
		var p50, p99 []float64
		for _, x := range held {
			p50, p99 = append(p50, x.HoldErrP50), append(p99, x.HoldErrP99)
		}
		out.HoldErrP50, out.HoldErrP99 = median(p50), median(p99)
	}
	for _, x := range rs {
		out.Holds += x.Holds
		out.Handoffs += x.Handoffs
		out.Waits += x.Waits
		out.Cut += x.Cut
		out.Ops += x.Ops
		out.Errors += x.Errors
		out.Violations += x.Violations
	}
	return out
}

// mostCommon is the value of f seen in most of xs (the first of a tie).
func mostCommon[T any](xs []T, f func(T) string) string {
	n := map[string]int{}
	best := ""
	for _, x := range xs {
		v := f(x)
		if n[v]++; n[v] > n[best] {
			best = v
		}
	}
	return best
}

// medianDrive is the median of each figure of a baseline driver.
func medianDrive(bs []results.Baseline, d func(results.Baseline) results.Drive) results.Drive {
	type b = results.Baseline
	return results.Drive{
		CyclesPerSec: medianOf(bs, func(x b) float64 { return d(x).CyclesPerSec }),
		RedisCPU:     medianOf(bs, func(x b) float64 { return d(x).RedisCPU }),
		LoadCPU:      medianOf(bs, func(x b) float64 { return d(x).LoadCPU }),
	}
}

// medianBaseline is the median of each rate, latency and CPU, the sum of
// the requests.
func medianBaseline(clients int, bs []results.Baseline) results.Baseline {
	type b = results.Baseline
	out := b{
		Clients:          clients,
		Cycles:           medianOf(bs, func(x b) float64 { return x.CyclesPerSec() }),
		LockPerSec:       medianOf(bs, func(x b) float64 { return x.LockPerSec }),
		UnlockPerSec:     medianOf(bs, func(x b) float64 { return x.UnlockPerSec }),
		LockP50Us:        medianOf(bs, func(x b) float64 { return x.LockP50Us }),
		LockP99Us:        medianOf(bs, func(x b) float64 { return x.LockP99Us }),
		RedisCPU:         medianOf(bs, func(x b) float64 { return x.RedisCPU }),
		LoadCPU:          medianOf(bs, func(x b) float64 { return x.LoadCPU }),
		Ceiling:          medianDrive(bs, func(x b) results.Drive { return x.Ceiling }),
		GoRedis:          medianDrive(bs, func(x b) results.Drive { return x.GoRedis }),
		GoRedisPipelined: medianDrive(bs, func(x b) results.Drive { return x.GoRedisPipelined }),
	}
	for _, x := range bs {
		out.Requests += x.Requests
	}
	return out
}
