package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	md := lineupMarkdown(t, m)
	_, section, ok := strings.Cut(md, "## Redisson's configurations")
	if !ok {
		t.Fatalf("no Redisson's configurations section:\n%s", md)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, want := range []string{
		"redisson: Redisson 4.7.0 in one JVM; a RedissonClient per client with the default pool and settings",
		"- transportMode EPOLL (default NIO): why one\n",
		"- nettyThreads 4 (default 32): why two\n",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("section lacks %q:\n%s", want, section)
		}
	}
	if strings.Contains(section, "lockimpl") {
		t.Errorf("section lists lockimpl:\n%s", section)
	}
}

// lineupMarkdown is the perf document bench report writes for m.
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
