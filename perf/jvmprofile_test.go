package perf_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// mdEscape matches a Markdown backslash escape.
var mdEscape = regexp.MustCompile("\\\\([\\\\`*_\\[\\]<>#|])")

// TestMatrixProfilesRedisson: a matrix with a Redisson row and a
// recordings directory runs that row once more after the rounds on
// uncontended at 32 owners, where it runs, with a flight recording there;
// the matrix keeps the recording's top frames as the JDK's jfr tool reads
// them, the rows' JVM CPU apart from lockbench's, and the perf document
// shows both, naming the cell the recording was made on.
func TestMatrixProfilesRedisson(t *testing.T) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark not on PATH")
	}
	if _, err := redisson.FindJar(); errors.Is(err, redisson.ErrUnavailable) {
		t.Skip(err)
	}
	if _, err := exec.LookPath("jfr"); err != nil {
		t.Skip("the JDK's jfr tool is not on PATH")
	}
	env := redisenvtest.Start(t)
	rs, _ := impls.Lookup(impls.RedissonName)
	dir := t.TempDir()
	spec := perf.LineupSpec{
		Impls: map[string]workloads.Impl{impls.RedissonName: rs},
		Groups: []perf.LineupGroup{
			{Profile: "mutex", Owners: 4, Impls: []string{impls.RedissonName}},
			{Profile: "uncontended", Owners: 32, Impls: []string{impls.RedissonName}},
		},
		Rounds: 1, Duration: 1500 * time.Millisecond, Recordings: dir,
	}
	base := workloads.Config{NewRedis: env.NewPool, Meta: results.Meta{Args: []string{"perf", "--test"}}}
	m, err := perf.MeasureLineup(context.Background(), base, spec, bin, benchServer(t, env), perf.LineupHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.JVMProfiles) != 1 {
		t.Fatalf("profiles %+v, want one", m.JVMProfiles)
	}
	p := m.JVMProfiles[0]
	if p.Impl != impls.RedissonName || p.Profile != "uncontended" || p.Owners != 32 || p.Clients != 4 || p.Error != "" || p.OpsPerSec <= 0 {
		t.Fatalf("profile %+v: want redisson on uncontended at 32 owners over 4 clients, with ops/s and no error", p)
	}
	if filepath.Dir(p.Recording) != dir {
		t.Errorf("recording %s, want it in %s", p.Recording, dir)
	}
	fs, total, err := redisson.TopFrames(context.Background(), p.Recording, 8)
	if err != nil || total == 0 || len(fs) == 0 {
		t.Fatalf("top frames of %s: %v of %d samples, %v", p.Recording, fs, total, err)
	}
	var want []results.Frame
	for _, f := range fs {
		want = append(want, results.Frame{Method: f.Method, Samples: f.Samples})
	}
	if p.Duration != 10*time.Second || len(p.Packages) == 0 || p.Packages[0].Samples < p.Top[0].Samples {
		t.Errorf("profile of %v, packages %v: want a 10 s run, and packages that sum their frames", p.Duration, p.Packages)
	}
	if p.Samples != total || !slices.Equal(p.Top, want) {
		t.Errorf("kept %d samples, top %v; the recording has %d, top %v", p.Samples, p.Top, total, want)
	}
	for _, c := range m.Cells {
		if x := c.Median; x.HelperCPU <= 0 || x.HelperCPU > x.LoadCPU || x.HelperSysCPU <= 0 || x.HelperSysCPU > x.HelperCPU || x.HostCPU <= 0 {
			t.Errorf("cell %s at %d: cpu load %v, JVM %v, host %v: want the JVM's part of the load, and the host's", c.Profile, c.Owners, x.LoadCPU, x.HelperCPU, x.HostCPU)
		}
	}
	md := markdown(t, m)
	_, section, ok := strings.Cut(md, "### Where the JVM's time goes")
	if !ok {
		t.Fatalf("no JVM section:\n%s", md)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	// Method names such as StringBuilder.<init>() are escaped in the
	// document; the check reads them as a reader of the page does.
	plain := mdEscape.ReplaceAllString(section, "$1")
	for _, s := range []string{"redisson on uncontended at 32 owners (4 clients)", "| " + p.Top[0].Method + " |", filepath.Base(p.Recording)} {
		if !strings.Contains(plain, s) {
			t.Errorf("JVM section lacks %q:\n%s", s, section)
		}
	}
	if _, err := os.Stat(p.Recording); err != nil {
		t.Error(err)
	}
	t.Logf("section:\n%s", section)
}
