package scenarios

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
)

// Scenario is one chaos experiment: faults on a schedule, a workload, and
// the checks that decide its verdict.
type Scenario struct {
	Name        string
	Summary     string // one line, for chaos list
	Description string // one paragraph: what happens and why it matters
	Invariant   string // what must hold (or what the checker must catch)
	// ExpectViolation: the scenario passes only when the safety checker
	// detects the violation it provokes.
	ExpectViolation bool
	// Process: it injects process faults (pause, kill, failover), which only
	// a Redis lockbench started itself allows.
	Process bool
	// FakeClock: it jumps a server's clock with libfaketime, which only
	// the local backend's servers run under.
	FakeClock bool
	// Topology it needs; empty means single.
	Topology redisenv.Topology
	// Variants run in order, each with its own plan and result file.
	Variants []Variant
}

// Variant is one run of a scenario: a fault plan and the code that drives
// clients through it and checks the outcome.
type Variant struct {
	Name string
	// Plan is the fault schedule for the timing and random source given:
	// the same seed gives the same plan.
	Plan func(t Timing, rng *rand.Rand) []Planned
	run  func(r *rig) error
	// timing, when set, adjusts the scenario's timing for this variant
	// (a longer lease where the fault itself takes seconds).
	timing func(Timing) Timing
}

// Planned is one step of a plan, described before any target exists;
// build makes the fault once the variant's clients and servers do.
type Planned struct {
	At, For              time.Duration
	Kind, Target, Detail string
	build                func(r *rig) faults.Fault
}

// String is the step as describe prints it.
func (p Planned) String() string {
	return fmt.Sprintf("at %v for %v: %s %s (%s)", p.At, p.For, p.Kind, p.Target, p.Detail)
}

// Expected is the expected verdict, in words.
func (s *Scenario) Expected() results.Verdict {
	if s.ExpectViolation {
		return results.ExpectedViolation
	}
	return results.Pass
}

// Timing scales a scenario: full timings use Redisson's defaults (30 s
// watchdog), quick ones shrink every duration so the suite takes minutes.
type Timing struct {
	Quick bool
	// Watchdog is lockimpl's watchdog timeout in every client.
	Watchdog time.Duration
}

// TimingFor returns the quick or the full timing.
func TimingFor(quick bool) Timing {
	if quick {
		return Timing{Quick: true, Watchdog: 3 * time.Second}
	}
	return Timing{Watchdog: 30 * time.Second}
}

// pick chooses the full or the quick value.
func (t Timing) pick(full, quick time.Duration) time.Duration {
	if t.Quick {
		return quick
	}
	return full
}

// Rand is the random source of scenario name under seed: each scenario
// draws from its own stream, so adding one never changes another's plan.
func Rand(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// Options configure a suite run.
type Options struct {
	Redis     redisenv.Config
	Toxiproxy *faults.Toxiproxy
	Quick     bool
	Seed      uint64
	// Logf gets progress lines (fault injections, phases); nil is silent.
	Logf func(format string, args ...any)
	// Out, when set, receives each variant's result files.
	Out string
	// Guard, with NewStore, makes every variant's critical sections update
	// a guarded counter (read, hold, write) in that mode, and its runs
	// report lost updates; fenced mode fences the locks too. StoreAt names
	// the store's Redis.
	Guard    guard.Mode
	NewStore func(key string, mode guard.Mode) *guard.Store
	StoreAt  string
}

// Run runs every variant of s and decides its verdict. It never returns
// with a fault still injected: each variant's schedule is stopped (and its
// servers closed) even when the variant panics, which Run reports as FAIL.
// When ctx ends first the report is marked partial with verdict
// INCOMPLETE.
func Run(ctx context.Context, s *Scenario, o Options) (rep *results.ChaosReport) {
	t := TimingFor(o.Quick)
	rep = &results.ChaosReport{
		Schema: results.ChaosSchema, Scenario: s.Name, Description: s.Description, Invariant: s.Invariant,
		Expected: s.Expected(), Quick: o.Quick, Seed: o.Seed, Start: time.Now(),
		Plan: PlanLines(s, t, o.Seed),
	}
	if o.Toxiproxy != nil {
		rep.Toxiproxy = o.Toxiproxy.String()
	}
	defer func() { rep.Seconds = time.Since(rep.Start).Seconds() }()
	if why := Unsupported(s, o.Redis); why != "" {
		rep.Verdict, rep.Reason = results.Skipped, why
		return rep
	}
	rng := Rand(o.Seed, s.Name)
	var kept []*results.Result
	for _, v := range s.Variants {
		if err := runVariant(ctx, s, v, t, rng, o, rep, &kept); err != nil {
			var skip *skipError
			switch {
			case errors.As(err, &skip) && skip.variant:
				rep.Skipped = append(rep.Skipped, v.Name+": "+skip.why)
				continue
			case errors.As(err, &skip):
				rep.Verdict, rep.Reason = results.Skipped, skip.why
				return rep
			case ctx.Err() != nil:
				rep.Verdict, rep.Partial = results.Incomplete, true
				rep.Reason = fmt.Sprintf("interrupted during %s", v.Name)
				return rep
			}
			rep.Verdict, rep.Reason = results.Fail, err.Error()
			return rep
		}
	}
	var failed []string
	for _, c := range rep.Checks {
		if !c.OK {
			failed = append(failed, fmt.Sprintf("%s: want %s, got %s", c.Name, c.Want, c.Got))
		}
	}
	switch {
	case len(failed) > 0:
		rep.Verdict, rep.Reason = results.Fail, strings.Join(failed, "; ")
	case s.ExpectViolation:
		rep.Verdict = results.ExpectedViolation
	default:
		rep.Verdict = results.Pass
	}
	return rep
}

type skipError struct {
	why     string
	variant bool // only this variant cannot run here; the others still do
}

func (e *skipError) Error() string { return e.why }

// Unsupported says why s cannot run against cfg's Redis ("" if it can):
// process faults and topologies need servers lockbench starts itself.
func Unsupported(s *Scenario, cfg redisenv.Config) string {
	if !external(cfg) {
		return ""
	}
	switch {
	case s.Process:
		return "needs process faults (pause, kill, failover) on a Redis lockbench starts; this one is external (use --redis local or container)"
	case s.Topology != "" && s.Topology != redisenv.TopologySingle:
		return fmt.Sprintf("needs the %s topology, which lockbench starts itself; this Redis is external", s.Topology)
	}
	return ""
}

func external(cfg redisenv.Config) bool { return ExternalRedis(cfg) != "" }

func runVariant(ctx context.Context, s *Scenario, v Variant, t Timing, rng *rand.Rand, o Options, rep *results.ChaosReport, kept *[]*results.Result, prep ...func(*rig)) (err error) {
	name := s.Name
	if v.Name != "" {
		name += "." + v.Name
	}
	if v.timing != nil {
		t = v.timing(t)
	}
	r := &rig{ctx: ctx, s: s, v: v, name: name, t: t, o: o, rep: rep, kept: kept, plan: v.Plan(t, rng)}
	if o.NewStore != nil && o.Guard != "" && o.Guard != guard.Off {
		r.store, r.storeAt = o.NewStore(fmt.Sprintf("lockbench:chaos:%s:%d", name, time.Now().UnixNano()), o.Guard), o.StoreAt
		if o.Guard == guard.Fenced {
			r.mit = &Mitigation{Name: "fencing", Fencing: true, Sync: true}
		}
	}
	for _, f := range prep {
		f(r)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in %s: %v\n%s", name, p, debug.Stack())
		}
		r.close() // stops the schedule (reverting every fault) and the servers
	}()
	r.logf("%s: starting", name)
	return v.run(r)
}

// PlanLines is every variant's plan, as describe and the report show it.
func PlanLines(s *Scenario, t Timing, seed uint64) []string {
	rng := Rand(seed, s.Name)
	var lines []string
	for _, v := range s.Variants {
		vt := t
		if v.timing != nil {
			vt = v.timing(t)
		}
		for _, p := range v.Plan(vt, rng) {
			lines = append(lines, fmt.Sprintf("%s: %s", v.Name, p))
		}
	}
	return lines
}

// Find returns the scenario called name.
func Find(name string) (*Scenario, bool) {
	i := slices.IndexFunc(All(), func(s *Scenario) bool { return s.Name == name })
	if i < 0 {
		return nil, false
	}
	return All()[i], true
}

// Names lists the scenarios in catalogue order.
func Names() []string {
	var ns []string
	for _, s := range All() {
		ns = append(ns, s.Name)
	}
	return ns
}
