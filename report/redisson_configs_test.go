package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

// TestMatrixListsRedissonConfigurations: a matrix with Redisson rows has a
// section with each row's configuration, the tuned row's settings one per
// line, as its note gives them.
func TestMatrixListsRedissonConfigurations(t *testing.T) {
	m := &results.Lineup{Rounds: 1, Cells: []results.LineupCell{
		{Profile: "uncontended", Owners: 32, Impl: "redisson", Note: "Redisson 4.7.0 in one JVM; a RedissonClient per client with the default pool and settings"},
		{Profile: "uncontended", Owners: 32, Impl: "redisson-tuned", Note: "Redisson 4.7.0 in one JVM; the tuned settings: transportMode EPOLL (default NIO): why one · nettyThreads 4 (default 32): why two"},
		{Profile: "uncontended", Owners: 32, Impl: "lockimpl", Note: "x: a · b"},
	}}
	_, section := lineupSection(t, m, "## Redisson's configurations")
	wantIn(t, section,
		"redisson: Redisson 4.7.0 in one JVM; a RedissonClient per client with the default pool and settings",
		"- transportMode EPOLL (default NIO): why one\n",
		"- nettyThreads 4 (default 32): why two\n",
	)
	if strings.Contains(section, "lockimpl") {
		t.Errorf("section lists lockimpl:\n%s", section)
	}
}

// TestMatrixShowsJVMTime: a Redisson row's cpu splits the load into
// lockbench's own and the JVM's; the JVM section lists each Redisson
// cell's CPU and each recording's top frames with their share of the
// samples, and a recording that failed says why.
func TestMatrixShowsJVMTime(t *testing.T) {
	cpu := results.LineupRound{OpsPerSec: 4000, RedisCPU: 0.4, LoadCPU: 1.5, HelperCPU: 1.2, HelperSysCPU: 0.5, HostCPU: 1.95, CPULimit: results.LimitHost}
	m := &results.Lineup{Rounds: 1, Cells: []results.LineupCell{
		{Profile: "uncontended", Owners: 32, Clients: 4, Impl: "redisson", Median: cpu},
		{Profile: "uncontended", Owners: 32, Clients: 4, Impl: "redisson-tuned", Median: cpu},
		{Profile: "uncontended", Owners: 32, Clients: 4, Impl: "lockimpl", Median: results.LineupRound{OpsPerSec: 20000, RedisCPU: 0.8, LoadCPU: 1.1}},
	}, JVMProfiles: []results.JVMProfile{
		{Impl: "redisson", Profile: "uncontended", Owners: 32, Clients: 4, Recording: "/out/jvm-redisson.jfr", Duration: 10 * time.Second, OpsPerSec: 3500, Samples: 200,
			Top:      []results.Frame{{Method: "org.redisson.A.b()", Samples: 50}, {Method: "io.netty.C.d(int)", Samples: 20}},
			Packages: []results.Frame{{Method: "io.netty", Samples: 120}, {Method: "org.redisson", Samples: 80}}},
		{Impl: "redisson-tuned", Profile: "uncontended", Owners: 32, Clients: 4, Recording: "/out/jvm-tuned.jfr", Error: "jfr print: exit status 1"},
	}}
	md, section := lineupSection(t, m, "### Where the JVM's time goes")
	wantIn(t, section,
		"| uncontended | 32 | redisson | 4,000.0 | 40% | 30% | 120% | 50% | 195% | host |",
		"redisson on uncontended at 32 owners (4 clients): the recorded run (10s) made 3,500.0 ops/s, the cell's median 4,000.0; 200 execution samples in jvm-redisson.jfr. By package: io.netty 60% · org.redisson 40%.",
		"| org.redisson.A.b() | 50 (25%) |",
		"redisson-tuned on uncontended at 32 owners (4 clients): no frames from jvm-tuned.jfr: jfr print: exit status 1.",
	)
	if strings.Contains(section, "lockimpl") {
		t.Errorf("JVM section lists lockimpl:\n%s", section)
	}
	if !strings.Contains(md, "| 40% · 30% + JVM 120% (host) |") || !strings.Contains(md, "| 80% · 110% |") {
		t.Errorf("matrix cpu figures: want the JVM apart on Redisson's rows only:\n%s", md)
	}
}

// lineupMarkdown is the perf document bench report writes for m.
// lineupSection renders m and returns the document and the part of it
// under heading, up to the next level-2 heading.
func lineupSection(t *testing.T, m *results.Lineup, heading string) (md, section string) {
	t.Helper()
	md = lineupMarkdown(t, m)
	_, section, ok := strings.Cut(md, heading)
	if !ok {
		t.Fatalf("no %q in:\n%s", heading, md)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return md, section
}

// wantIn fails for each of wants that section lacks.
func wantIn(t *testing.T, section string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(section, want) {
			t.Errorf("section lacks %q:\n%s", want, section)
		}
	}
}

func lineupMarkdown(t *testing.T, m *results.Lineup) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "perf.md")
	if err := report.Write(out, &report.Input{Lineups: []*results.Lineup{m}}, report.Options{Format: report.Markdown}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
