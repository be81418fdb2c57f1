package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
)

// lineupBlocks lays out a side-by-side matrix: how it was measured, the
// targets, the implementations, the redis-benchmark baseline, and one
// table per workload and concurrency with every implementation's figures
// and their ratios to raw and to redis-benchmark.
func lineupBlocks(m *results.Lineup) []block {
	md := m.Meta
	servers := md.ServerName()
	for _, s := range m.Servers {
		servers += " beside " + s.Meta.ServerName()
	}
	intro := fmt.Sprintf("Measured by %q on %s: %s (%s), %s, GOMAXPROCS %d, host %s, %s. %s; each run %v measured after %v warmup; %v in all.",
		strings.TrimSpace("bench "+strings.Join(md.Args, " ")), md.Start.UTC().Format("2006-01-02"), servers, md.RedisBackend,
		md.Go, md.GOMAXPROCS, md.Host, md.Lockbench, m.Schedule(), m.Duration, m.Warmup, m.Elapsed.Round(time.Second))
	bl := []block{para{text: intro}}
	if m.Partial {
		bl = append(bl, para{text: "Partial: interrupted before every round ran; the figures cover the rounds that finished.", class: "warn"})
	}
	server := md.ServerName()
	if server == "" {
		server = "redis-server"
	}
	bl = append(bl, para{text: "Every implementation runs the same workload through the same driver, recorder and safety " +
		"checker, against one local " + server + ". Within a round the implementations take turns, in an order that rotates " +
		"from round to round, so that drift in the machine's load hits all alike. Figures are medians over the rounds; a " +
		"ratio is the median of the rounds' ratios (each round's two runs are seconds apart). \"× raw\" compares with raw " +
		"on the same workload. \"× rb\" compares with redis-benchmark at the same concurrency in the same round, driving the " +
		"reentrant acquire script on fresh names and the unlock script (ops/s against its lock+unlock cycles/s, acquire " +
		"latency against its acquire script's): the floor of one uncontended lock cycle at that concurrency, which contended " +
		"workloads (mutex, rw90) stay far from by design. \"× go-redis\" compares with bare go-redis loops running the same two " +
		"scripts at the same concurrency in the same round (a goroutine per owner, the profile's clients, nothing else), on " +
		"go-redis's autopipeliner for lockimpl+ap: the Go client's own ceiling, so what is left is lockimpl's and the " +
		"recorder's cost. \"× ceiling\" compares with redis-benchmark -P 16 at the same concurrency: the server's own " +
		"ceiling on these scripts, where its command thread is the limit. Latency ratios above 1 are slower. " +
		"cpu is the busiest Redis server's command thread and the load generator (lockbench, or Redisson's JVM with it), " +
		"in top's percentages (100% is one core), median over the rounds, and which side ran out of CPU (redis, load, " +
		"host: both share its cores), if any."})
	notes := []string{
		"acquire is the call to the library's lock (all modes), waits included.",
		"handoff: each time the lock falls free while owners wait for it, the time until the first of them acquires it. " +
			"A waiter woken by pub/sub acquires a few round trips after the release; a polling waiter at its next poll that " +
			"finds the lock free, however many times owners that never waited (barging) took it and gave it back in between: " +
			"each of those releases counts.",
		"wait is called → acquired for acquisitions that waited for a holder's release; \"waited\" is their share of all acquisitions.",
		"errors are acquisitions that failed or timed out (the profile's 10 s wait, longer than these runs); cut are " +
			"acquisitions still waiting when the run ended, all counted over the rounds.",
		"raw retries a refused acquire after the TTL the script returns, up to the 30 s lease under a watchdog profile " +
			"(capped by the 10 s wait): where owners contend, its waiters sleep while the holder takes the lock again and " +
			"again (Jain near 1/owners), so raw is the protocol's floor only where nobody waits. Under contention it shows " +
			"what pub/sub wake-up buys.",
		"Redis, the load and the recorder share this machine's cores: absolute figures are this machine's; the ratios are the point.",
		"lockimpl+ap is lockimpl with auto-pipelining (bench run --auto-pipeline true; lockimpl.Options.AutoPipeline): " +
			"while more than 3 other lock commands of a client are in flight and its owners send again at once after a reply, " +
			"a command rides go-redis's autopipeliner, one write and one read per batch; every other command goes as on a plain client.",
	}
	if slices.ContainsFunc(m.Cells, func(c results.LineupCell) bool { return c.Median.Holds > 0 }) {
		notes = append(notes, "hold − asked is how much longer than the profile asked the holds lasted (p50 · p99, medians over the rounds): "+
			"holds sleep on Go timers that a high-resolution timer kicks awake while the process idles and, only while the host has an idle core, spin their last tens of µs. "+
			"waits' cpu is what lockbench's waits took of the host (the kicks and the spin), beside the cell's cpu: the harness's own "+
			"cost, taken from Redis where they share cores. (JVM): Redisson's holds, run and timed in its JVM.")
	}
	if slices.ContainsFunc(m.Cells, func(c results.LineupCell) bool { return c.Impl == "redisson" }) {
		notes = append(notes, "redisson is real Redisson: one JVM per run with a RedissonClient per client (as lockimpl's "+
			"clients share one Go process), its JIT warmed by 6,000 lock cycles before the run, the JVM started with no flags "+
			"(java -jar), so with the collector, heap and stacks its defaults give an application. An operation without nested "+
			"acquisitions runs whole in its owner's thread, the hold parked there (LockSupport.parkNanos), and every call is "+
			"timed inside the JVM, so the pipe to the harness adds to no latency or hold. The JVM shares the two cores too: "+
			"its CPU shows apart in the cpu column (lockbench + JVM).")
	}
	bl = append(bl, bullets{items: notes})

	if len(m.Targets) > 0 {
		t := table{head: []string{"target", "measured", ""}}
		for _, c := range m.Targets {
			v := styled("met", "ok")
			if !c.Met {
				v = styled("missed", "bad")
			}
			t.rows = append(t.rows, []cell{plain(c.Target), plain(c.Value), v})
		}
		bl = append(bl, heading{level: 2, text: "Targets"}, t)
	}
	if len(m.ServerTable) > 0 {
		bl = append(bl, heading{level: 2, text: "Servers side by side"}, serversIntro(m))
		bl = append(bl, serverBlocks(m, "")...)
	}

	var impls []string
	seen := map[string]bool{}
	for _, c := range m.Cells {
		if !seen[c.Impl] {
			seen[c.Impl] = true
			note := c.Note
			if note == "" {
				note = "the profile as written"
			}
			impls = append(impls, fmt.Sprintf("%s on %s: %s", c.Impl, c.Profile, note))
		}
	}
	bl = append(bl, heading{level: 2, text: "Implementations"},
		para{text: "How each met the first workload it ran (the result files hold each run's note)."}, bullets{items: impls})
	bl = append(bl, redissonConfigs(m)...)

	if len(m.Baselines) > 0 {
		t := table{head: []string{"concurrency", "acquire calls/s", "acquire p50", "acquire p99", "unlock calls/s", "lock+unlock cycles/s", "cpu",
			"-P 16 cycles/s", "cpu", "go-redis cycles/s", "cpu", "go-redis ap cycles/s", "cpu"}, right: true}
		for _, b := range m.Baselines {
			x := b.Median
			t.rows = append(t.rows, []cell{plain(fmt.Sprint(b.Clients)), plain(results.CommasFloat(x.LockPerSec)), plain(results.UsOrDash(x.LockP50Us)),
				plain(results.UsOrDash(x.LockP99Us)), plain(results.CommasFloat(x.UnlockPerSec)), plain(results.CommasFloat(x.CyclesPerSec())), plain(cpuPair(x.RedisCPU, x.LoadCPU, "")),
				plain(rateOrDash(x.Ceiling.CyclesPerSec)), plain(cpuPair(x.Ceiling.RedisCPU, x.Ceiling.LoadCPU, "")),
				plain(rateOrDash(x.GoRedis.CyclesPerSec)), plain(cpuPair(x.GoRedis.RedisCPU, x.GoRedis.LoadCPU, "")),
				plain(rateOrDash(x.GoRedisPipelined.CyclesPerSec)), plain(cpuPair(x.GoRedisPipelined.RedisCPU, x.GoRedisPipelined.LoadCPU, ""))})
		}
		bl = append(bl, heading{level: 2, text: "Baselines: redis-benchmark and bare go-redis"},
			para{text: "redis-benchmark ... EVALSHA: the acquire script on a fresh name per call (uncontended), then the unlock script; " +
				"plain, then with -P 16 (16 calls in flight per connection: the server's ceiling). Bare go-redis: a goroutine per owner " +
				"alternating the two scripts on go-redis, plain and on its autopipeliner. cpu is the server's command thread · the " +
				"driver's (redis-benchmark's process, or this one's), in top's percentages."}, t)
	}

	bl = append(bl, vsPlainBlocks(m.Cells)...)

	head := []string{"impl", "ops/s", "× raw", "× rb", "× go-redis", "× ceiling", "acquire p50", "× raw", "× rb", "acquire p99", "× raw", "× rb",
		"handoff p50", "× raw", "handoff p99", "wait p50", "waited", "hold − asked", "waits' cpu", "errors", "cut", "violations", "Jain", "cpu redis · lockbench"}
	var t *table
	for i, c := range m.Cells {
		newProfile := i == 0 || m.Cells[i-1].Profile != c.Profile
		if newProfile || m.Cells[i-1].Owners != c.Owners {
			if t != nil { // the last group's table goes before the next heading
				bl = append(bl, *t)
			}
			if newProfile {
				title := c.Profile
				if c.Description != "" {
					title += ": " + c.Description
				}
				bl = append(bl, heading{level: 2, text: title})
			}
			bl = append(bl, heading{level: 3, text: fmt.Sprintf("%s (%s)", results.Count(c.Owners, "owner"), results.Count(c.Clients, "client"))})
			t = &table{head: head, right: true}
		}
		x := c.Median
		waited := "—"
		if x.Ops > 0 && x.Waits > 0 {
			waited = fmt.Sprintf("%.0f%%", 100*float64(x.Waits)/float64(x.Ops))
		}
		viol := plain(results.Commas(x.Violations))
		if x.Violations > 0 {
			viol = styled(viol.text, "bad")
		}
		t.rows = append(t.rows, []cell{plain(c.Impl), plain(results.CommasFloat(x.OpsPerSec)), plain(results.Times(c.VsRaw.Ops)), plain(results.Times(c.VsRedisBenchmark.Ops)),
			plain(results.Times(c.VsGoRedis)), plain(results.Times(c.VsCeiling)),
			plain(results.UsOrDash(x.AcquireP50)), plain(results.Times(c.VsRaw.AcquireP50)), plain(results.Times(c.VsRedisBenchmark.AcquireP50)),
			plain(results.UsOrDash(x.AcquireP99)), plain(results.Times(c.VsRaw.AcquireP99)), plain(results.Times(c.VsRedisBenchmark.AcquireP99)),
			plain(results.UsOrDash(x.HandoffP50)), plain(results.Times(c.VsRaw.HandoffP50)), plain(results.UsOrDash(x.HandoffP99)), plain(results.UsOrDash(x.WaitP50)),
			plain(waited), plain(holdError(x)), plain(waitsCPU(x)), plain(results.Commas(x.Errors)), plain(results.Commas(x.Cut)), viol, plain(jain(x.Jain)), plain(cellCPU(x))})
	}
	if t != nil {
		bl = append(bl, *t)
	}
	bl = append(bl, scaleBlocks(m.Scale)...)
	bl = append(bl, para{text: "Each run's result (.json and .hlog) is in the directory bench perf --out named; bench report DIR draws them, and bench compare compares any two.", class: "note"})
	return bl
}

// vsPlainBlocks lays out lockimpl+ap against plain lockimpl, a row per
// cell both ran: each figure's ratio (the median of the pairs' ratios),
// the pairs' range, and whether auto-pipelining lost beyond the pairs'
// spread.
func vsPlainBlocks(cells []results.LineupCell) []block {
	t := table{head: []string{"workload", "owners", "pairs", "ops/s × plain", "range", "acquire p99 × plain", "range", "verdict"}, right: true}
	for _, c := range cells {
		v := c.VsPlain
		if v == nil {
			continue
		}
		lost := v.Lost()
		verdict := styled("no loss", "ok")
		switch {
		case len(lost) > 0:
			verdict = styled("loses: "+strings.Join(lost, ", "), "bad")
		case !v.Judged():
			verdict = styled(fmt.Sprintf("too few pairs to tell (%d needed)", results.MinPairs), "warn")
		case v.Ops.Median > 0 && v.Ops.Median < 1 || v.AcquireP99.Median > 1:
			verdict = styled("behind, within spread", "warn")
		}
		t.rows = append(t.rows, []cell{plain(c.Profile), plain(fmt.Sprint(c.Owners)), plain(fmt.Sprint(v.Pairs())), plain(results.Times(v.Ops.Median)), plain(ratioRange(v.Ops)),
			plain(results.Times(v.AcquireP99.Median)), plain(ratioRange(v.AcquireP99)), verdict})
	}
	if len(t.rows) == 0 {
		return nil
	}
	return []block{heading{level: 2, text: "lockimpl+ap against plain lockimpl"},
		para{text: "Each cell that both ran: lockimpl+ap's ops/s and acquire p99 over plain lockimpl's, pair by pair, the median " +
			"of the pairs' ratios and their least and greatest. A pair is the two run back to back, each first in turn: one in each " +
			"of the matrix's rounds, then the two alone until the cell has its pairs. Above 1 is more ops/s, and a slower p99. " +
			fmt.Sprintf("A cell loses where it is worse in every pair, of at least %d: the machine drifts from pair to pair, ", results.MinPairs) +
			"alike for both runs of a pair, and a difference that holds through that drift is beyond it (two that do not differ " +
			"fall all on one side of n pairs with a chance of 1 in 2^n: of 8, once in 256 for each figure, so about once in " +
			"10 matrices for one of the some 25 figures of make perf); behind within spread where its median is worse but some pair is not."}, t}
}

// ratioRange is the pairs' least and greatest of a ratio, "0.98–1.07×",
// or "—" with one pair or none.
func ratioRange(r results.RatioSpread) string {
	if r.Rounds < 2 {
		return "—"
	}
	return fmt.Sprintf("%.2f–%.2f×", r.Min, r.Max)
}

// holdError is a cell's holds' achieved − asked, "+0.4µs · +21.0µs".
func holdError(x results.LineupRound) string {
	if x.Holds == 0 {
		return "—"
	}
	s := "+" + results.FormatUs(x.HoldErrP50) + " · +" + results.FormatUs(x.HoldErrP99)
	if x.HoldInImpl {
		s += " (JVM)"
	}
	return s
}

// waitsCPU is what lockbench's waits took of the host, in top's
// percentages, and the spin's share of lockbench's own CPU where it spun:
// "3% (spin 1%)".
func waitsCPU(x results.LineupRound) string {
	if x.WaitCPU <= 0 && x.SpinShare <= 0 {
		return "—"
	}
	s := fmt.Sprintf("%.0f%%", 100*x.WaitCPU)
	if x.SpinShare > 0 {
		s += fmt.Sprintf(" (spin %.0f%% of lockbench's)", 100*x.SpinShare)
	}
	return s
}

// cellCPU is a cell's cpu figure: cpuPair's, the load split into
// lockbench's own and its helper JVM's where one ran,
// "91% · 30% + JVM 124% (host)".
func cellCPU(x results.LineupRound) string {
	if x.HelperCPU <= 0 {
		return cpuPair(x.RedisCPU, x.LoadCPU, x.CPULimit)
	}
	s := fmt.Sprintf("%.0f%% · %.0f%% + JVM %.0f%%", 100*x.RedisCPU, 100*max(0, x.LoadCPU-x.HelperCPU), 100*x.HelperCPU)
	if x.CPULimit != results.LimitNone {
		s += " (" + x.CPULimit + ")"
	}
	return s
}

// cpuPair is a server's and a driver's CPU in cores, in top's
// percentages, and the side that saturated: "91% · 120% (redis)".
func cpuPair(redis, load float64, limit string) string {
	if redis <= 0 && load <= 0 {
		return "—"
	}
	s := fmt.Sprintf("%.0f%% · %.0f%%", 100*redis, 100*load)
	if limit != results.LimitNone {
		s += " (" + limit + ")"
	}
	return s
}

func rateOrDash(v float64) string {
	if v <= 0 {
		return "—"
	}
	return results.CommasFloat(v)
}

func jain(j float64) string {
	if j <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f", j)
}

// serverBlocks lays out the server comparison (bench perf --servers): a
// table per workload, a row per implementation and the servers'
// redis-benchmark baselines, each server's ops/s, acquire p99 and limit
// side by side. Each workload's title is a level-3 heading or, with an
// indent (a terminal's margin), an indented line.
func serverBlocks(m *results.Lineup, indent string) []block {
	if len(m.ServerTable) == 0 {
		return nil
	}
	servers := m.ServerTable[0].On
	head := []string{"impl"}
	for i, s := range servers {
		head = append(head, s.Server+" ops/s")
		if i > 0 {
			head = append(head, "× "+servers[0].Server)
		}
		head = append(head, "acquire p99", "limit")
	}
	var bl []block
	var t *table
	for i, r := range m.ServerTable {
		label := r.Impl
		if r.Profile == "" {
			// redis-benchmark's rows, named by their command line
			label = strings.Replace(r.Impl, "redis-benchmark", fmt.Sprintf("redis-benchmark -c %d", r.Owners), 1)
		}
		if i == 0 || m.ServerTable[i-1].Profile != r.Profile || (r.Profile != "" && m.ServerTable[i-1].Owners != r.Owners) {
			if t != nil {
				bl = append(bl, *t)
			}
			title := fmt.Sprintf("%s, %s", r.Profile, results.Count(r.Owners, "owner"))
			if r.Profile == "" {
				title = "redis-benchmark: each server's baseline and ceiling"
			}
			if indent != "" {
				bl = append(bl, para{text: indent + title})
			} else {
				bl = append(bl, heading{level: 3, text: title})
			}
			t = &table{head: head, right: true, indent: indent}
		}
		row := []cell{plain(label)}
		for i, s := range r.On {
			row = append(row, plain(rateOrDash(s.OpsPerSec)))
			if i > 0 {
				row = append(row, plain(results.Times(s.VsFirst)))
			}
			row = append(row, plain(results.UsOrDash(s.AcquireP99)), plain(limitName(s.Limit)))
		}
		t.rows = append(t.rows, row)
	}
	return append(bl, *t)
}

// limitName names a side that ran out of CPU for a table of several
// servers, where "redis" would misname Valkey's command thread.
func limitName(limit string) string {
	switch limit {
	case results.LimitRedis:
		return "server"
	case results.LimitNone:
		return "—"
	}
	return limit
}

// serversIntro says how the servers were compared.
func serversIntro(m *results.Lineup) para {
	var names []string
	for _, s := range m.ServerTable[0].On {
		names = append(names, s.Server)
	}
	profiles := map[string]bool{}
	var shapes []string
	for _, r := range m.ServerTable {
		if r.Profile != "" && !profiles[r.Profile] {
			profiles[r.Profile] = true
			shapes = append(shapes, fmt.Sprintf("%s at %s", r.Profile, results.Count(r.Owners, "owner")))
		}
	}
	return para{text: fmt.Sprintf("bench perf --servers ran %s on %s, each server started by lockbench on this machine, with its own "+
		"redis-benchmark baseline. The servers take turns within each round, in an order that rotates from round to round, "+
		"as the implementations do. The first runs the whole matrix above, the others only the workloads named here: the "+
		"whole matrix on each would double the time, and these (the uncontended cost, handoff under contention, the "+
		"read-write lock, the fair queue) are what tell servers apart. ops/s and acquire p99 are medians over the rounds; \"× %s\" is the median of "+
		"the rounds' ratios to the first server's ops/s. The last table is each server's redis-benchmark baseline at "+
		"each of these concurrencies: its lock+unlock cycles/s and its acquire script's p99, then with -P 16 (16 calls in "+
		"flight per connection) the server's ceiling on these scripts. limit is what ran out of CPU in most rounds: server (its command thread), load "+
		"(lockbench, Redisson's JVM or redis-benchmark), host (the cores both share), or — for neither (round trips and "+
		"waits set the pace).", strings.Join(shapes, ", "), strings.Join(names, " and "), names[0])}
}

// WriteServerSummary prints the server comparison of m for a terminal;
// nothing when m compares no servers.
func WriteServerSummary(w io.Writer, m *results.Lineup) error {
	if len(m.ServerTable) == 0 {
		return nil
	}
	return writeText(w, append([]block{blank, para{text: "servers   side by side, medians over the rounds; limit: server, load, host or — for neither"}},
		serverBlocks(m, margin)...))
}
