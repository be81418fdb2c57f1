package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// Mitigation is what a matrix cell turns on against holds that are lost.
type Mitigation struct {
	Name string
	// Honour: holders stop at Lost (and then do not write).
	Honour bool
	// Sync: replica sync (Redisson's checkLockSyncedSlaves, WAIT) on every
	// acquisition; off, nothing is sent.
	Sync bool
	// Fencing: fenced locks, and a store that refuses stale tokens.
	Fencing bool
	// MinAcks: lockimpl's Options.MinReplicaAcks at 1: every acquisition
	// waits for one replica's acknowledgement whatever INFO counts, and one
	// without it is given back and fails.
	MinAcks bool
	// MinReplicas: the servers refuse writes unless a replica acknowledged
	// within the lag (min-replicas-to-write 1, min-replicas-max-lag).
	MinReplicas bool
	// Redlock: the holders are redsync mutexes on five independent
	// primaries (quorum 3), extended while held, and they stop when the
	// validity redsync gives them ends, as the algorithm tells clients to.
	Redlock bool
	// Redisson: the holder is a real Redisson thread (no loss signal), in
	// the scenarios that have a Redisson variant.
	Redisson bool
	// RedissonNoSync turns Redisson's checkLockSyncedSlaves off (on by
	// default). Redisson still sends WAIT after its lock scripts, in every
	// mode but single-server; off, it keeps a lock no replica acknowledged
	// instead of giving it back and failing.
	RedissonNoSync bool
}

// Mitigations are the matrix's columns.
var Mitigations = []Mitigation{
	{Name: "none"},
	{Name: "honour", Honour: true},
	{Name: "wait", Sync: true},
	{Name: "min-acks", MinAcks: true},
	{Name: "min-replicas", MinReplicas: true},
	{Name: "fencing", Fencing: true},
	{Name: "honour+fencing", Honour: true, Fencing: true},
	{Name: "redlock", Redlock: true},
	{Name: "redisson", Redisson: true},
	{Name: "redisson-nocheck", Redisson: true, RedissonNoSync: true},
	{Name: "redisson+fencing", Redisson: true, Fencing: true},
}

// The cells' expectations of lost updates.
const (
	expectNone = "0 lost updates"
	expectSome = "lost updates > 0"
	expectAny  = "any (shown, not gated)"
	// expectRefused: the setting refuses acquisitions it cannot make
	// safe, so nothing is lost and some acquisitions fail: the cell
	// needs both, since a cell where nobody wrote shows nothing else.
	expectRefused = "0 lost updates, acquisitions refused"
)

// matrixRow is a scenario of the matrix: how to run it with or without
// holders honouring Lost, and what each mitigation should give.
type matrixRow struct {
	s    *Scenario
	plan func(Timing, *rand.Rand) []Planned
	run  func(r *rig, honour bool) error
	// timing, when set, adjusts the timing for every cell of the row.
	timing func(Timing) Timing
	expect expectations
	// redisson runs the scenario with a Redisson holder on redissonPlan;
	// nil where the scenario has none.
	redisson     func(r *rig) error
	redissonPlan func(Timing, *rand.Rand) []Planned
	// redlock runs the scenario with redsync holders on five nodes on
	// redlockPlan; nil where it means nothing, and noRedlock says why.
	redlock     func(r *rig) error
	redlockPlan func(Timing, *rand.Rand) []Planned
	noRedlock   string
	// onlyRedlock, when set, is why the row's other columns are skipped.
	onlyRedlock string
}

// verdict is a cell's expected lost updates and why.
type verdict struct{ want, why string }

// expectations are a row's verdicts by mitigation alone; of derives a
// combination's.
type expectations struct {
	redissonFencing, redisson, redissonNoSync, redlock, fencing, honour, sync, minAcks, minReplicas, none verdict
}

// of is the verdict of mitigation m. Honour and fencing each only take
// writes away (the stale holder does not write, or the store refuses it),
// never add one, so together they lose no more than either alone: the
// combination is held to the stricter of their verdicts (see
// takingWritesAway). Replica sync moves the acquisitions instead, so a
// combination with it keeps no part's verdict.
func (e expectations) of(m Mitigation) verdict {
	switch {
	case m.Redisson && m.Fencing:
		return e.redissonFencing
	case m.Redisson && m.RedissonNoSync:
		return e.redissonNoSync
	case m.Redisson:
		return e.redisson
	case m.Redlock:
		return e.redlock
	case m.MinAcks:
		return e.minAcks
	case m.MinReplicas:
		return e.minReplicas
	case m.Sync && (m.Honour || m.Fencing):
		return verdict{expectAny, "replica sync moves the acquisitions that honour and fencing alone were judged on"}
	case m.Sync:
		return e.sync
	case m.Honour && m.Fencing:
		return takingWritesAway(part{"honour", e.honour}, part{"fencing", e.fencing})
	case m.Honour:
		return e.honour
	case m.Fencing:
		return e.fencing
	}
	return e.none
}

// part is one mitigation of a combination, with its verdict alone.
type part struct {
	name string
	v    verdict
}

// takingWritesAway is the verdict of parts combined, each of which only
// keeps writes from landing: 0 lost updates as soon as one part expects
// 0, since adding the others cannot add a loss. Parts that expect losses
// say nothing of the combination (another part may stop them), so
// without a part expecting 0 it is shown, not gated.
func takingWritesAway(parts ...part) verdict {
	var zero, others, names []string
	for _, p := range parts {
		names = append(names, p.name)
		if p.v.want == expectNone {
			zero = append(zero, p.name+": "+p.v.why)
		} else {
			others = append(others, p.name)
		}
	}
	if len(zero) == 0 {
		return verdict{expectAny, "no part alone (" + strings.Join(names, ", ") + ") is held to 0 lost updates here, so neither is the combination"}
	}
	why := strings.Join(zero, "; ")
	if len(others) > 0 {
		why += " (" + strings.Join(others, " and ") + " only keeps writes from landing: it cannot add a loss)"
	}
	return verdict{expectNone, why}
}

// clientSide is where the fault is the holder's own (a partition, a
// pause, a lease too short): the token counter survives.
var clientSide = expectations{
	redissonFencing: verdict{expectNone, "the store refuses the Redisson holder's stale token (its fenced lock shares lockimpl's counter)"},
	redisson:        verdict{expectSome, "Redisson tells the holder nothing: it writes over the new holder's update"},
	fencing:         verdict{expectNone, "the store refuses the stale holder's token"},
	honour:          verdict{expectNone, "the holder stops at Lost, before the lock can have expired, and does not write"},
	redissonNoSync:  verdict{expectSome, "Redisson tells the holder nothing: it writes over the new holder's update"},
	redlock:         verdict{expectNone, "the holder stops when its validity ends (an extension short of a quorum, or the lease run out), before any node's key expires"},
	sync:            verdict{expectSome, "WAIT replicates the acquisition; the holder still writes after losing the lock"},
	minAcks:         verdict{expectSome, "the replica acknowledges every acquisition; the holder still writes after losing the lock"},
	minReplicas:     verdict{expectSome, "the replica is up and current, so the server takes every write; the holder still writes after losing the lock"},
	none:            verdict{expectSome, "the stale holder writes over the new holder's update"},
}

// restart is a restart without persistence: the locks and the token
// counters are gone.
var restart = expectations{
	redissonFencing: verdict{expectAny, "the restart without persistence loses the token counter too: tokens start again and can repeat"},
	redisson:        verdict{expectSome, "Redisson's WAIT (master-slave mode) reached the replica, which resyncs from the empty primary; the holder, told nothing, writes on"},
	redissonNoSync:  verdict{expectSome, "the restart forgets the lock and Redisson tells the holder nothing: it writes on"},
	fencing:         verdict{expectAny, "the restart without persistence loses the token counter too: tokens start again and can repeat"},
	honour:          verdict{expectNone, "the holders learn of the loss at their next renewal, before their write at the end of the hold"},
	sync:            verdict{expectSome, "the restarted primary is empty and its replica resyncs from it: what WAIT replicated is gone too"},
	minAcks:         verdict{expectSome, "the replica acknowledged the lock, then resyncs from the empty primary and acknowledges the contender's too"},
	minReplicas:     verdict{expectSome, "the restarted primary refuses writes only until its replica is back; then the contender takes the forgotten lock"},
	none:            verdict{expectSome, "the restart forgets the locks: contenders take them while the holders work on and write"},
}

// serverFailover is where the lock's primary dies before the lock
// replicated and its replica is promoted.
var serverFailover = expectations{
	redissonFencing: verdict{expectAny, "Redisson refuses a lock no replica it counts acknowledged (NoSyncedSlavesException) and keeps one when it counts none; which it does after the cut depends on when its view of the replicas changes, and a kept lock's token INCR may not have replicated"},
	redisson:        verdict{expectAny, "Redisson's lock() retries a lock no replica it counts acknowledged until one does (so it may hold out past the failover and take the lock on the promoted primary) and keeps one when it counts none, its holder then writing beside the contender; which it does after the cut depends on whether its view still counts the cut replica"},
	redissonNoSync:  verdict{expectSome, "without checkLockSyncedSlaves Redisson keeps a lock no replica has; the promoted replica never had it, and the holder, told nothing, writes on"},
	fencing:         verdict{expectAny, "the fencing counter's INCR may not have replicated: the new primary can hand out a token already used"},
	honour:          verdict{expectAny, "the holder learns of the loss at its next renewal; whether it wrote before depends on timing"},
	sync:            verdict{expectAny, "replication is cut, so the replica is not counted and WAIT is not sent: it narrows only what it can see"},
	minAcks:         verdict{expectRefused, "with replication cut no replica acknowledges, so every acquisition is given back: on the old primary and on the promoted one, which has no replica"},
	minReplicas:     verdict{expectRefused, "with replication cut the primary has no good replica and refuses the lock's write; the promoted replica has none either"},
	none:            verdict{expectSome, "the promoted replica never had the lock: the contender takes it and both write"},
}

// clockJump is where the lock's primary's wall clock jumps past the
// lease just after a renewal: the key expires at once, the holder writes
// before its next renewal could tell it, and the token counter, which has
// no TTL, survives.
var clockJump = expectations{
	redissonFencing: verdict{expectNone, "the token counter has no TTL, so the jump leaves it: the store refuses the Redisson holder's older token"},
	redisson:        verdict{expectSome, "the jump expires the lock on the primary and replica alike (the replica follows the primary's expiry), and Redisson tells the holder nothing: it writes over the contender's update"},
	redissonNoSync:  verdict{expectSome, "the jump expires the lock and Redisson tells the holder nothing: it writes over the contender's update"},
	redlock:         verdict{expectSome, "the holder reached a bare majority; the jump expires its key on one of its three nodes, the contender takes that one and the two the holder never reached, and the holder, told nothing until its next extension, writes before it"},
	fencing:         verdict{expectNone, "the token counter has no TTL, so the jump leaves it: the store refuses the holder's older token"},
	honour:          verdict{expectSome, "nothing tells the holder before its next renewal, and its write comes first: honouring Lost has nothing to honour yet"},
	sync:            verdict{expectSome, "WAIT replicated the lock, but the replica drops it when the primary expires it: the contender takes it"},
	minAcks:         verdict{expectSome, "the replica acknowledged the lock, then drops it with the primary's expiry, and acknowledges the contender's"},
	minReplicas:     verdict{expectSome, "the replica stays up and current: after the jump the primary refuses writes for a second at most (the replica's last acknowledgement looks a jump old), then the contender takes the expired lock"},
	none:            verdict{expectSome, "the jump expires the lock at once: the contender takes it and the holder writes over its update"},
}

// Redlock's nodes are independent primaries: the rows that fail a
// single primary over or restart it have a Redlock counterpart of their
// own.
const (
	redlockNoFailover = "Redlock runs on five independent primaries without replicas: nothing fails over; its hazards are node-restart and node-clock-jump"
	redlockNoRestart  = "on Redlock this is the node-restart row (one of five nodes restarted empty)"
)

// matrixRows are the matrix's scenarios.
func matrixRows() []matrixRow {
	return []matrixRow{
		{s: watchdogLossScenario, plan: partitionHolder, run: func(r *rig, h bool) error { return watchdogLossBy(r, h, false) }, expect: clientSide,
			redisson: watchdogLossRedisson, redissonPlan: partitionHolder,
			redlock: watchdogLossRedlock, redlockPlan: redlockPartitionHolder},
		{s: clientFreezeScenario, plan: freezePlan, run: func(r *rig, h bool) error { return clientFreezeBy(r, h, false) }, expect: clientSide,
			redisson: func(r *rig) error { return clientFreezeBy(r, false, true) }, redissonPlan: freezeJVMPlan,
			redlock: clientFreezeRedlock, redlockPlan: redlockFreezePlan},
		{s: leaseExpiryScenario, plan: noFaults, run: func(r *rig, h bool) error { return leaseExpiryOn(r, h, nil) }, expect: clientSide,
			redisson: leaseExpiryRedisson, redissonPlan: noFaults,
			redlock: leaseExpiryRedlock, redlockPlan: noFaults},
		{s: redisRestartScenario, plan: killPlan, run: func(r *rig, h bool) error { return redisRestartBy(r, false, h) }, timing: restartTiming, expect: restart,
			redisson: redisRestartRedisson, redissonPlan: killPlan,
			noRedlock: redlockNoRestart},
		{s: failoverScenario, plan: sentinelFailoverPlan, run: sentinelFailoverBy, timing: sentinelTiming, expect: serverFailover,
			redisson: sentinelFailoverRedisson, redissonPlan: sentinelFailoverPlan,
			noRedlock: redlockNoFailover},
		{s: clusterFailoverScenario, plan: clusterFailoverPlan, run: clusterFailover, expect: serverFailover,
			redisson: clusterFailoverRedisson, redissonPlan: clusterFailoverPlan,
			noRedlock: redlockNoFailover},
		nodeRestartRow(),
		{s: nodeClockJumpScenario, plan: clockJumpPlan, run: nodeClockJumpBy, timing: clockJumpTiming, expect: clockJump,
			redisson: nodeClockJumpRedisson, redissonPlan: clockJumpPlan,
			redlock: nodeClockJumpRedlock, redlockPlan: redlockClockJumpPlan(true)},
	}
}

// skip is why mitigation mi cannot run in the row, "" when it can.
func (row matrixRow) skip(mi Mitigation) string {
	switch {
	case row.onlyRedlock != "" && !mi.Redlock:
		return row.onlyRedlock
	case mi.Redlock && row.redlock == nil:
		return cmp.Or(row.noRedlock, "no Redlock variant of this scenario")
	case mi.Redisson && row.redisson == nil:
		return "no Redisson variant of this scenario"
	}
	return ""
}

// MitigationOptions is what RunMitigation needs beyond the scenarios' Options.
type MitigationOptions struct {
	// NewStore returns the guarded counter at key in mode (a second Redis
	// the caller started); StoreAt names that Redis.
	NewStore func(key string, mode guard.Mode) *guard.Store
	StoreAt  string
	// Planted, when set, says what bug NewStore plants (the report says so).
	Planted string
	// Only, when set, limits the scenarios (by name).
	Only []string
	// NoCosts skips the healthy runs.
	NoCosts bool
	// Progress, when set, is told when each cell starts.
	Progress func(msg string)
}

// MitigationScenarios are the matrix's rows, by name.
func MitigationScenarios() []string {
	var n []string
	for _, row := range matrixRows() {
		n = append(n, row.s.Name)
	}
	return n
}

// FencingGated are the matrix scenarios in which a fenced store that does
// not fence (MitigationOptions.Planted) changes a verdict: some fencing cell
// expects 0 lost updates where the same holders without fencing are not
// held to 0. In the others the planted bug cannot fail the matrix.
func FencingGated() []string {
	var names []string
	for _, row := range matrixRows() {
		for _, mi := range Mitigations {
			if !mi.Fencing || row.skip(mi) != "" {
				continue
			}
			without := mi
			without.Fencing = false
			if row.expect.of(mi).want == expectNone && row.expect.of(without).want != expectNone {
				names = append(names, row.s.Name)
				break
			}
		}
	}
	return names
}

// ExternalRedis says how the user named a lock Redis that lockbench did
// not start: "--redis-url" (or --redis with a URL), "$REDIS_URL", or
// "--redis external"; "" when lockbench starts its own. $REDIS_URL counts
// only where redisenv reads it: with --redis auto or external.
func ExternalRedis(cfg redisenv.Config) string {
	switch cfg.Backend {
	case "", redisenv.BackendAuto, redisenv.BackendExternal:
	default:
		return ""
	}
	switch {
	case cfg.URL != "":
		return "--redis-url"
	case strings.TrimSpace(os.Getenv(redisenv.EnvURL)) != "":
		return "$" + redisenv.EnvURL
	case cfg.Backend == redisenv.BackendExternal:
		return "--redis external"
	}
	return ""
}

// RunMitigation runs every scenario of the matrix under every mitigation, each
// cell a variant of its own (its own Redis, proxies and key), with
// critical sections updating the guarded counter; then each mitigation
// once on a healthy run, for its cost. Where a scenario has no topology of
// its own the cells run on a primary and a replica, so that replica sync
// has something to wait for. The matrix kills, restarts and fails over
// the lock's servers and picks their topology, so against an external
// Redis every cell is skipped (and the matrix fails: nothing ran). When ctx
// ends first the matrix is marked partial.
func RunMitigation(ctx context.Context, o Options, mo MitigationOptions) *results.MitigationMatrix {
	t := TimingFor(o.Quick)
	m := &results.MitigationMatrix{Schema: results.MitigationSchema, Start: time.Now(), Quick: o.Quick, Seed: o.Seed,
		Store: mo.StoreAt, Planted: mo.Planted}
	for _, mi := range Mitigations {
		m.Mitigations = append(m.Mitigations, mi.Name)
	}
	say := func(format string, a ...any) {
		if mo.Progress != nil {
			mo.Progress(fmt.Sprintf(format, a...))
		}
	}
	defer func() {
		m.Seconds = time.Since(m.Start).Seconds()
		// Whichever loop was running, and even after its last item, a
		// cell or healthy run cut short by ctx measured less than asked.
		m.Partial = m.Partial || ctx.Err() != nil
	}()
	external := ""
	if by := ExternalRedis(o.Redis); by != "" {
		external = "the matrix starts the lock's Redis itself (it kills, restarts and fails it over), and this one is external (" + by + ")"
	}
	for _, row := range matrixRows() {
		if len(mo.Only) > 0 && !slices.Contains(mo.Only, row.s.Name) {
			continue
		}
		m.Scenarios = append(m.Scenarios, row.s.Name)
		for _, mi := range Mitigations {
			if ctx.Err() != nil {
				m.Partial = true
				return m
			}
			say("%s × %s", row.s.Name, mi.Name)
			if external != "" {
				want := row.expect.of(mi)
				m.Cells = append(m.Cells, results.MitigationCell{Scenario: row.s.Name, Mitigation: mi.Name, Expect: want.want, Why: want.why, Skipped: external})
				continue
			}
			c, server := runCell(ctx, o, mo, t, row, mi)
			m.Cells = append(m.Cells, c)
			if m.Server == "" {
				m.Server = server
			}
		}
	}
	for _, mi := range Mitigations {
		if mo.NoCosts || external != "" {
			break
		}
		if mi.Redisson {
			continue // Redisson's costs are bench perf's (docs/perf.md)
		}
		if ctx.Err() != nil {
			m.Partial = true
			return m
		}
		say("healthy run × %s", mi.Name)
		m.Costs = append(m.Costs, runCost(ctx, o, mo, t, mi))
	}
	return m
}

// cellOptions are o for one cell: a replica topology where the scenario
// has none, so that replica sync has a replica.
func cellOptions(o Options, s *Scenario) Options {
	if s.Topology == "" && o.Redis.Topology == "" {
		o.Redis.Topology = redisenv.TopologyReplica
	}
	return o
}

// cellStore is the guarded counter of one cell.
func cellStore(mo MitigationOptions, name string, mi Mitigation) *guard.Store {
	mode := guard.Plain
	if mi.Fencing {
		mode = guard.Fenced
	}
	return mo.NewStore(fmt.Sprintf("lockbench:matrix:%s:%s:%d", name, mi.Name, time.Now().UnixNano()), mode)
}

// runCell runs one scenario under one mitigation and judges it; server
// names the lock's server it ran on (empty when it started none).
func runCell(ctx context.Context, o Options, mo MitigationOptions, t Timing, row matrixRow, mi Mitigation) (c results.MitigationCell, server string) {
	c = results.MitigationCell{Scenario: row.s.Name, Mitigation: mi.Name}
	want := row.expect.of(mi)
	c.Expect, c.Why = want.want, want.why
	o = cellOptions(o, row.s)
	if why := Unsupported(row.s, o.Redis); why != "" {
		c.Skipped = why
		return c, ""
	}
	rep := &results.ChaosReport{Schema: results.ChaosSchema, Scenario: row.s.Name, Start: time.Now()}
	var kept []*results.Result
	if c.Skipped = row.skip(mi); c.Skipped != "" {
		return c, ""
	}
	v := Variant{Name: "matrix-" + mi.Name, Plan: row.plan, run: func(r *rig) error { return row.run(r, mi.Honour) }}
	switch {
	case mi.Redisson:
		v.Plan, v.run = row.redissonPlan, row.redisson
	case mi.Redlock:
		v.Plan, v.run = row.redlockPlan, row.redlock
	}
	v.timing = row.timing
	mit := mi
	err := runVariant(ctx, row.s, v, t, Rand(o.Seed, row.s.Name), o, rep, &kept, func(r *rig) {
		r.mit, r.store, r.storeAt = &mit, cellStore(mo, row.s.Name, mi), mo.StoreAt
		c.Fenced = r.store.Fences()
	})
	var skip *skipError
	if errors.As(err, &skip) {
		c.Skipped = skip.why
		return c, ""
	}
	if n := len(kept); n > 0 {
		c.Refused = kept[n-1].Errors[results.ErrRefused.String()]
		server = kept[n-1].Meta.Server
	}
	judgeCell(&c, rep, err, mi.Honour || mi.Redlock) // Redlock's holders stop when their validity ends
	return c, server
}

// judgeCell fills c from the cell's report (and the error its variant
// returned) and judges it against c.Expect; honour says the cell's
// holders stop at their loss signal.
func judgeCell(c *results.MitigationCell, rep *results.ChaosReport, err error, honour bool) {
	var problems []string
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, ch := range rep.Checks {
		if !ch.OK {
			problems = append(problems, fmt.Sprintf("%s: want %s, got %s", ch.Name, ch.Want, ch.Got))
		}
	}
	if n := len(rep.Runs); n > 0 {
		run := rep.Runs[n-1]
		c.File = run.File
		c.Violations, c.UnsafeMs = run.Safety.Violations, run.Safety.UnsafeUs/1e3
		if g := run.Guard; g != nil {
			c.Lost, c.Rejected, c.Written, c.Accepted = g.Lost, g.RejectedReads+g.RejectedWrites, g.Written, g.Accepted
			c.StaleAccepted, c.RightfulRefused = g.StaleAccepted, g.RightfulRefused
			if g.Failed > 0 {
				problems = append(problems, fmt.Sprintf("%s of the guarded counter failed", results.Count(g.Failed, "read or write")))
			}
			// Lost updates are counted from the store's writes: where
			// no critical section wrote the counter, 0 lost says nothing,
			// unless every section read it and then stopped at its loss
			// signal, which is what honouring it means.
			stoppedAll := honour && g.Sections > 0 && run.Lost >= g.Sections
			if results.NoWrites(g.Written, g.Accepted) && !stoppedAll && c.Refused == 0 {
				problems = append(problems, fmt.Sprintf("no write reached the guarded counter (%s read it): its lost updates measure nothing", results.Count(g.Sections, "critical section")))
			}
		} else {
			problems = append(problems, "no guarded-counter figures")
		}
	} else {
		problems = append(problems, "no run recorded")
	}
	switch {
	case c.Expect == expectNone && c.Lost != 0:
		problems = append(problems, fmt.Sprintf("%d lost updates", c.Lost))
	case c.Expect == expectSome && c.Lost == 0:
		problems = append(problems, "no lost update")
	case c.Expect == expectRefused && (c.Lost != 0 || c.Refused == 0):
		problems = append(problems, fmt.Sprintf("%d lost updates, %s", c.Lost, results.Count(c.Refused, "acquisition")+" refused"))
	}
	c.OK = len(problems) == 0
	c.Problem = strings.Join(problems, "; ")
}

// runCost runs mitigation mi on a healthy run (the mutex workload,
// guarded counter on, no fault), then again with the replica killed for
// the whole run: what the mitigation costs when all is well, and the
// availability it gives up when a replica is gone.
func runCost(ctx context.Context, o Options, mo MitigationOptions, t Timing, mi Mitigation) results.MitigationCost {
	c := results.MitigationCost{Mitigation: mi.Name}
	res, problems := costRun(ctx, o, mo, t, mi, false)
	if res != nil {
		c.OpsPerSec = res.Throughput.OpsPerSec
		if l, ok := res.Latency[results.AcquireAll]; ok {
			c.AcquireP50Us, c.AcquireP99Us = l.P50, l.P99
		}
		c.ReleaseP50Us = res.Latency[latencyRelease].P50
		c.Violations = res.Safety.Violations
		if g := res.Guard; g == nil || results.NoWrites(g.Written, g.Accepted) {
			problems = append(problems, "no write reached the guarded counter: its 0 lost updates measure nothing")
		} else {
			c.Lost = g.Lost
		}
		if c.Violations != 0 || c.Lost != 0 {
			problems = append(problems, fmt.Sprintf("%s, %s on a healthy run", results.Count(c.Violations, "violation"), results.Count(c.Lost, "lost update")))
		}
	}
	if ctx.Err() == nil {
		down, downProblems := costRun(ctx, o, mo, t, mi, true)
		for _, p := range downProblems {
			problems = append(problems, "replica down: "+p)
		}
		if down != nil {
			refused := down.Errors[results.ErrRefused.String()]
			d := &results.ReplicaDownCost{Seconds: down.Measured, OpsPerSec: down.Throughput.OpsPerSec,
				Attempts: down.Throughput.Attempts, Refused: refused,
				Failed:       down.ErrorCount() - refused - down.Errors[results.ErrTimeout.String()],
				AcquireP50Us: down.Latency[results.AcquireAll].P50, ReleaseP50Us: down.Latency[latencyRelease].P50}
			c.ReplicaDown = d
			if down.Safety.Violations != 0 {
				problems = append(problems, "replica down: "+results.Count(down.Safety.Violations, "violation"))
			}
			if res != nil && d.FarBelow(c) {
				var known bool
				if d.Cause, known = downCause(mi, c, *d, down); !known {
					problems = append(problems, "replica down: "+d.Cause)
				}
			}
		}
	}
	c.Problem = strings.Join(problems, "; ")
	return c
}

// latencyRelease is the result's latency of releases.
const latencyRelease = "release"

// downCause says why mitigation mi's run with the replica (Redlock: one
// node) down ran far below its healthy run c, read from the run's own
// figures: refused acquisitions, failed ones, or slower acquisitions and
// releases, with why where the mitigation's library explains them. known
// is false when nothing in the figures does: an unexplained cost.
func downCause(mi Mitigation, c results.MitigationCost, d results.ReplicaDownCost, down *results.Result) (cause string, known bool) {
	half := func(n int64) bool { return d.Attempts > 0 && 2*n >= d.Attempts }
	slower := func(down, healthy float64) bool { return healthy > 0 && down >= results.CostFarBelow*healthy }
	switch {
	case half(d.Refused):
		why := "refused by the mitigation"
		switch {
		case mi.MinAcks:
			why = "no replica is up to acknowledge the WAIT each acquisition needs (min-acks 1), so each is given back"
		case mi.MinReplicas:
			why = "the primary refuses writes while no replica is connected (min-replicas-to-write 1)"
		}
		return fmt.Sprintf("%s of %s refused: %s", results.Commas(d.Refused), results.Count(d.Attempts, "acquisition"), why), true
	case half(d.Failed):
		why := ""
		if len(down.ErrorMessages) > 0 {
			why = ": " + down.ErrorMessages[0].Message
		}
		return fmt.Sprintf("%s of %s failed%s", results.Commas(d.Failed), results.Count(d.Attempts, "acquisition"), why), true
	case slower(d.AcquireP50Us, c.AcquireP50Us) || slower(d.ReleaseP50Us, c.ReleaseP50Us):
		cause = fmt.Sprintf("acquisitions took %s and releases %s at the median (healthy: %s and %s)",
			results.FormatUs(d.AcquireP50Us), results.FormatUs(d.ReleaseP50Us), results.FormatUs(c.AcquireP50Us), results.FormatUs(c.ReleaseP50Us))
		if mi.Redlock {
			cause += ": " + impls.RedsyncDeadNode
		}
		return cause, true
	}
	return fmt.Sprintf("%s ops/s against %s healthy, and no refusal, failure or slower acquisition or release explains it",
		results.CommasFloat(d.OpsPerSec), results.CommasFloat(c.OpsPerSec)), false
}

// costRun is one healthy run of mitigation mi; replicaDown kills the
// replica (Redlock: one of its five nodes) for the whole run, a planned
// fault restarted at its end. Its problems are the run's failed checks,
// except, for a mitigation that refuses acquisitions no replica backs,
// with the replica down, those about operations failing: refusing them
// is what is measured.
func costRun(ctx context.Context, o Options, mo MitigationOptions, t Timing, mi Mitigation, replicaDown bool) (*results.Result, []string) {
	s := &Scenario{Name: "healthy", Description: "no fault", Topology: redisenv.TopologyReplica}
	dur := t.pick(20*time.Second, 4*time.Second)
	plan, name := noFaults, mi.Name
	if replicaDown {
		dur = t.pick(10*time.Second, 5*time.Second)
		name += "-replica-down"
		plan = func(Timing, *rand.Rand) []Planned {
			if mi.Redlock {
				// Its clients' links to it refuse too, as a dead
				// server's port does: up, a proxy would accept each
				// dial and drop it, and go-redis would retry the
				// command on a fresh one (about half a second) where a
				// refused dial fails in one dial retry.
				return []Planned{{At: 0, For: dur + 5*time.Second, Kind: "kill", Target: "redlock:node-1", Detail: "SIGKILL one of the five nodes for the whole run, restart after",
					build: func(r *rig) faults.Fault { return faults.Kill(r.redlock.nodes[0].Primary()) }},
					{At: 0, For: dur + 5*time.Second, Kind: "down", Target: "redlock:node-1 links", Detail: "every client's link to the killed node refuses, as its port would",
						build: func(r *rig) faults.Fault { return faults.Down("redlock:node-1 links", r.redlock.linksTo(0)) }}}
			}
			return []Planned{{At: 0, For: dur + 5*time.Second, Kind: "kill", Target: "redis:replica", Detail: "SIGKILL the replica for the whole run, restart after",
				build: func(r *rig) faults.Fault { return faults.Kill(r.env.Replica()) }}}
		}
	}
	rep := &results.ChaosReport{Schema: results.ChaosSchema, Scenario: s.Name, Start: time.Now()}
	var kept []*results.Result
	var res *results.Result
	v := Variant{Name: name, Plan: plan, run: func(r *rig) error {
		var impl workloads.Impl = workloads.Lockimpl{OptionsFor: r.lockOptions}
		if mi.Redlock {
			if err := r.startRedlock(2, nil); err != nil {
				return err
			}
			impl = impls.Redsync{Nodes: r.redlock.clientPools}
		} else if err := r.start(2, nil); err != nil {
			return err
		}
		p := profile("mutex", "clients", "2", "owners", "4", "warmup", "1s", "duration", dur.String())
		var err error
		res, err = r.workloadOn(p, !mi.Honour, impl)
		return err
	}}
	mit := mi
	err := runVariant(ctx, s, v, t, Rand(o.Seed, s.Name), o, rep, &kept, func(r *rig) {
		r.mit, r.store, r.storeAt = &mit, cellStore(mo, s.Name, mi), mo.StoreAt
	})
	var problems []string
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, ch := range rep.Checks {
		if !ch.OK && !(replicaDown && refuses(&mi) && refusalCheck(ch.Name)) {
			problems = append(problems, fmt.Sprintf("%s: want %s, got %s", ch.Name, ch.Want, ch.Got))
		}
	}
	return res, problems
}

// refusalCheck reports whether a health check is about operations that
// failed, which a mitigation refusing acquisitions fails on purpose.
func refusalCheck(name string) bool {
	return strings.HasSuffix(name, ": "+checkSomeSucceeded) || strings.HasSuffix(name, ": "+checkNoFailures)
}

// Expected is one cell's expected verdict, as the matrix would judge it,
// or why the cell is skipped wherever it runs.
type Expected struct {
	Scenario, Mitigation string
	Expect, Why          string
	Skipped              string
}

// Expectations are every cell's expected verdicts, rows then columns,
// without running anything: what the README's table of expectations is
// made from.
func Expectations() []Expected {
	var out []Expected
	for _, row := range matrixRows() {
		for _, mi := range Mitigations {
			v := row.expect.of(mi)
			e := Expected{Scenario: row.s.Name, Mitigation: mi.Name, Expect: v.want, Why: v.why}
			e.Skipped = row.skip(mi)
			out = append(out, e)
		}
	}
	return out
}

// expectShort is an expectation as a table cell.
var expectShort = map[string]string{
	expectNone:    "0",
	expectSome:    "> 0",
	expectAny:     "any",
	expectRefused: "0, refused",
}

// ExpectationsMarkdown is the matrix's expected lost updates as a
// Markdown table (0, > 0, any: shown, not gated; 0, refused: nothing
// lost and some acquisitions refused), skipped cells numbered against
// their reasons under it, and, with whys, each cell's reason after.
func ExpectationsMarkdown(whys bool) string {
	var b strings.Builder
	b.WriteString("| scenario | " + strings.Join(names(Mitigations), " | ") + " |\n|---|")
	b.WriteString(strings.Repeat("---|", len(Mitigations)) + "\n")
	var reasons []string
	var row string
	for _, e := range Expectations() {
		if e.Scenario != row {
			if row != "" {
				b.WriteString("\n")
			}
			row = e.Scenario
			b.WriteString("| " + row + " |")
		}
		cell := expectShort[e.Expect]
		if e.Skipped != "" {
			i := slices.Index(reasons, e.Skipped)
			if i < 0 {
				reasons = append(reasons, e.Skipped)
				i = len(reasons) - 1
			}
			cell = fmt.Sprintf("skipped (%d)", i+1)
		}
		b.WriteString(" " + cell + " |")
	}
	b.WriteString("\n\n")
	for i, r := range reasons {
		fmt.Fprintf(&b, "(%d) %s.\n", i+1, r)
	}
	if whys {
		row = ""
		for _, e := range Expectations() {
			if e.Skipped != "" {
				continue
			}
			if e.Scenario != row {
				row = e.Scenario
				fmt.Fprintf(&b, "\n%s:\n", row)
			}
			fmt.Fprintf(&b, "- %s: %s: %s\n", e.Mitigation, expectShort[e.Expect], e.Why)
		}
	}
	return b.String()
}

func names(ms []Mitigation) []string {
	var n []string
	for _, m := range ms {
		n = append(n, m.Name)
	}
	return n
}
