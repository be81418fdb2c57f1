package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// isRedisson reports whether impl is one of the Redisson rows (redisson,
// redisson-tuned, redisson-jvm).
func isRedisson(impl string) bool { return strings.HasPrefix(impl, "redisson") }

// redissonConfigs is the section on the Redisson rows: each one's
// configuration, from its note (each setting the note joins with " · " on
// a line of its own), then where the JVM's time went: its CPU beside
// Redis's, lockbench's and the host's in every Redisson cell, and the top
// frames of each row's flight recording.
func redissonConfigs(m *results.Lineup) []block {
	var bl []block
	seen := map[string]bool{}
	for _, c := range m.Cells {
		if !isRedisson(c.Impl) || seen[c.Impl] || c.Note == "" {
			continue
		}
		seen[c.Impl] = true
		head, rest, _ := strings.Cut(c.Note, ": ")
		items := strings.Split(rest, " · ")
		if len(items) < 2 {
			bl = append(bl, para{text: c.Impl + ": " + c.Note})
			continue
		}
		bl = append(bl, para{text: c.Impl + ": " + head + ":"}, bullets{items: items})
	}
	bl = append(bl, jvmTime(m)...)
	if len(bl) == 0 {
		return nil
	}
	return append([]block{heading{level: 2, text: "Redisson's configurations"},
		para{text: "Setting, value (Redisson's default) and why, from Redisson's documentation (its configuration and FAQ pages, of the release the driver runs)."}}, bl...)
}

// jvmTime is where the Redisson rows' JVMs spent their time: a table of
// every Redisson cell's CPU, then each flight recording's top frames,
// named by the cell it was made on.
func jvmTime(m *results.Lineup) []block {
	t := table{head: []string{"workload", "owners", "impl", "ops/s", "redis", "lockbench", "JVM", "of it kernel", "host", "limit"}, right: true}
	for _, c := range m.Cells {
		x := c.Median
		if !isRedisson(c.Impl) || x.LoadCPU <= 0 && x.RedisCPU <= 0 {
			continue
		}
		t.rows = append(t.rows, []cell{plain(c.Profile), plain(fmt.Sprint(c.Owners)), plain(c.Impl), plain(rateOrDash(x.OpsPerSec)),
			plain(pct(x.RedisCPU)), plain(pct(x.LoadCPU - x.HelperCPU)), plain(pct(x.HelperCPU)), plain(pct(x.HelperSysCPU)), plain(pct(x.HostCPU)), plain(limitName(x.CPULimit))})
	}
	if len(t.rows) == 0 && len(m.JVMProfiles) == 0 {
		return nil
	}
	bl := []block{heading{level: 3, text: "Where the JVM's time goes"}}
	if len(t.rows) > 0 {
		bl = append(bl, para{text: "CPU in each Redisson cell, medians over the rounds, in top's percentages (100% is one core): redis is the " +
			"busiest server's command thread, lockbench the harness's own process (its driver and recorder), JVM Redisson's (of it kernel: the " +
			"kernel's work for the JVM, its sockets' reads and writes, futexes and epoll, which no Java profile sees), host " +
			"the busy time of every CPU of the host, the kernel's included; limit is what ran out of CPU (server: Redis's command " +
			"thread, load: lockbench and the JVM, host: the cores they share)."}, t)
	}
	if len(m.JVMProfiles) > 0 {
		bl = append(bl, para{text: "Top frames: after the rounds, each Redisson row ran once more on one cell with a Java Flight Recording " +
			"of its JVM (the JDK's profile settings: every 10 ms, the stacks of some of the threads running Java code). That run is not " +
			"among the figures above; its ops/s stand beside the cell's median, which recording lowers and its longer run (10 s at " +
			"least, for enough samples) raises, the JIT having longer. A method's share is the share " +
			"of the execution samples in which it was on top (its self time), of the JVM's time in Java code: time in native code " +
			"(the sockets' reads and writes), the kernel or garbage collection is not in these samples. The .jfr is beside the " +
			"run's results (jfr print, or JDK Mission Control, reads it), with a .top.txt of its top frames and packages."})
	}
	for _, p := range m.JVMProfiles {
		title := fmt.Sprintf("%s on %s at %s (%s)", p.Impl, p.Profile, results.Count(p.Owners, "owner"), results.Count(p.Clients, "client"))
		if p.Error != "" {
			bl = append(bl, para{text: fmt.Sprintf("%s: no frames from %s: %s.", title, filepath.Base(p.Recording), p.Error), class: "warn"})
			continue
		}
		run := "the recorded run"
		if p.Duration > 0 {
			run += fmt.Sprintf(" (%v)", p.Duration)
		}
		run += fmt.Sprintf(" made %s ops/s", rateOrDash(p.OpsPerSec))
		if c := m.Cell(p.Profile, p.Owners, p.Impl); c != nil && c.Median.OpsPerSec > 0 {
			run += fmt.Sprintf(", the cell's median %s", results.CommasFloat(c.Median.OpsPerSec))
		}
		text := fmt.Sprintf("%s: %s; %s in %s.", title, run, results.Count(int64(p.Samples), "execution sample"), filepath.Base(p.Recording))
		if len(p.Packages) > 0 {
			var pk []string
			for _, f := range p.Packages {
				pk = append(pk, fmt.Sprintf("%s %s", f.Method, results.Percent(float64(f.Samples)/float64(max(p.Samples, 1)))))
			}
			text += " By package: " + strings.Join(pk, " · ") + "."
		}
		ft := table{head: []string{"method (top frame)", "self samples"}, right: true}
		for _, f := range p.Top {
			ft.rows = append(ft.rows, []cell{plain(f.Method), plain(share(int64(f.Samples), int64(p.Samples)))})
		}
		bl = append(bl, para{text: text}, ft)
	}
	return bl
}

// pct is cores in top's percentages, "—" for none.
func pct(cores float64) string {
	if cores <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100*cores)
}
