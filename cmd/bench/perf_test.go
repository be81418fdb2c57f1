package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
)

// TestPerfServersBadInput: --servers that cannot run is one line naming
// the flag and the fix, exit 2, before any server starts; a valkey that
// is not installed is left out with the command that installs it.
func TestPerfServersBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--servers", "redis,keydb-nope"}, `--servers "redis,keydb-nope": redisenv: --server "keydb-nope": no such binary`},
		{[]string{"--servers", "redis,redis"}, `--servers "redis,redis": redis is listed twice`},
		{[]string{"--servers", "redis,"}, `--servers "redis,": an empty name`},
		{[]string{"--servers", "valkey,redis", "--server", "valkey"}, `--server "valkey" and --servers "valkey,redis" both name the server; drop --server`},
		{[]string{"--servers", "redis,valkey", "--redis-url", "redis://127.0.0.1:1"}, "--servers \"redis,valkey\": compares servers that lockbench starts"},
		{[]string{"--servers", "redis,valkey", "--redis", "external", "--redis-url", "redis://127.0.0.1:1"}, "drop --servers, or add --redis local"},
		{[]string{"--servers", "redis,valkey", "--redis", "container", "--image", "redis:7.4"}, "drop --image"},
		{[]string{"--servers", "redis,valkey", "--only", "scale"}, "--servers applies to the matrix part; add matrix to --only"},
		{[]string{"--servers", "redis,valkey", "--only", "matrix,handoff"}, "--servers applies to the matrix part (and scale beside it, on the first server)"},
	} {
		args := append([]string{"perf", "--out", dir}, tc.args...)
		code, _, errOut := runBench(t, args...)
		if code != cli.ExitUsage {
			t.Errorf("bench %v: exit %d, want %d\n%s", args, code, cli.ExitUsage, errOut)
		}
		if !strings.Contains(errOut, tc.want) {
			t.Errorf("bench %v: stderr does not say %q:\n%s", args, tc.want, errOut)
		}
		if strings.Contains(errOut, "local backend") {
			t.Errorf("bench %v: started a server before refusing:\n%s", args, errOut)
		}
	}
	if p, err := redisenv.FindServer(redisenv.ServerRedis); err == nil {
		// The same binary by name and by path is one server.
		code, _, errOut := runBench(t, "perf", "--servers", "redis,"+p, "--out", dir)
		if code != cli.ExitUsage || !strings.Contains(errOut, "is listed twice (as "+p+")") {
			t.Errorf("--servers redis,%s: exit %d\n%s", p, code, errOut)
		}
	}

	// Without valkey-server, valkey is left out with the install command
	// (the run then stops at the missing redis-benchmark, before any
	// load); alone, it is bad input.
	t.Setenv(redisenv.EnvValkey, filepath.Join(dir, "no-valkey-server"))
	code, _, errOut := runBench(t, "perf", "--servers", "redis,valkey", "--redis-benchmark", filepath.Join(dir, "no-redis-benchmark"), "--out", dir)
	if code != cli.ExitUsage || !strings.Contains(errOut, "matrix runs without Valkey beside it; "+redisenv.ValkeyInstallHint) || !strings.Contains(errOut, "--redis-benchmark") {
		t.Errorf("--servers redis,valkey without valkey-server: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runBench(t, "perf", "--servers", "valkey", "--out", dir)
	if code != cli.ExitUsage || !strings.Contains(errOut, redisenv.ValkeyInstallHint) {
		t.Errorf("--servers valkey without valkey-server: exit %d\n%s", code, errOut)
	}
}

// TestPerfServers runs the matrix cut down (lockimpl and raw, one short
// round) on Redis and Valkey: Redis runs the whole matrix, Valkey the
// server groups, and the matrix file and the Markdown lay them side by
// side, each server named as its INFO names it.
func TestPerfServers(t *testing.T) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Skip("redis-benchmark not on PATH: the matrix needs it")
	}
	if _, err := redisenv.FindServer(redisenv.ServerValkey); err != nil {
		t.Skipf("no valkey-server: %s", redisenv.ValkeyInstallHint)
	}
	out := t.TempDir()
	doc := filepath.Join(t.TempDir(), "perf.md")
	code, stdout, errOut := runBench(t, "perf", "--redis", "local", "--servers", "redis,valkey", "--matrix-impls", "lockimpl,raw", "--matrix-rounds", "1", "--matrix-pairs", "1",
		"--matrix-duration", "200ms", "--matrix-warmup", "0s", "--doc", doc, "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(out, "matrix-*.json"))
	if len(files) != 1 {
		t.Fatalf("matrix files %v; want one", files)
	}
	m, err := results.ReadLineup(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Servers) != 1 {
		t.Fatalf("%d other servers in the matrix; want Valkey's", len(m.Servers))
	}
	redisName, valkeyName := m.Meta.ServerName(), m.Servers[0].Meta.ServerName()
	if !strings.HasPrefix(redisName, "redis ") || !strings.HasPrefix(valkeyName, "valkey ") {
		t.Fatalf("servers %q and %q; want redis, then valkey", redisName, valkeyName)
	}
	if c := m.Cell("mutex", 8, impls.Default); c == nil {
		t.Error("Redis's matrix lacks mutex at 8 owners: the first server runs the whole matrix")
	}
	v := &m.Servers[0]
	for _, c := range v.Cells {
		if !slices.Contains(perf.ServerProfiles, c.Profile) || (c.Profile == "uncontended" || c.Profile == "mutex") && c.Owners != perf.PipelineOwners {
			t.Errorf("Valkey ran %s at %d owners; want only the server groups", c.Profile, c.Owners)
		}
	}
	for _, w := range []struct {
		profile string
		owners  int
		impl    string
	}{{"uncontended", 32, impls.Default}, {"uncontended", 32, perf.PipelinedName}, {"uncontended", 32, "raw"}, {"mutex", 32, impls.Default}, {"rw90", 32, "raw"}, {"fair", 16, impls.Default}} {
		if c := v.Cell(w.profile, w.owners, w.impl); c == nil || c.Median.OpsPerSec <= 0 {
			t.Errorf("Valkey's %s on %s at %d owners: %+v; want a cell with throughput", w.impl, w.profile, w.owners, c)
		}
	}
	if len(v.Baselines) == 0 || v.Baselines[0].Median.Ceiling.CyclesPerSec <= 0 {
		t.Errorf("Valkey's baselines %+v; want its own redis-benchmark and ceiling", v.Baselines)
	}
	var baselines int
	for _, r := range m.ServerTable {
		if len(r.On) != 2 || r.On[0].Server != redisName || r.On[1].Server != valkeyName {
			t.Errorf("server row %+v; want Redis's figures, then Valkey's", r)
			continue
		}
		if r.On[0].OpsPerSec <= 0 || r.On[1].OpsPerSec <= 0 || r.On[1].VsFirst <= 0 {
			t.Errorf("server row %s on %q at %d: %+v; want both measured, and Valkey's ratio", r.Impl, r.Profile, r.Owners, r.On)
		}
		if r.Profile == "" {
			baselines++
		}
	}
	if baselines != 4 {
		t.Errorf("%d baseline rows; want redis-benchmark and its ceiling at 16 and 32", baselines)
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, w := range []string{"## Servers side by side", "### uncontended, 32 owners", "### fair, 16 owners", "| " + redisName + " ops/s |", "| " + valkeyName + " ops/s | × " + redisName + " |",
		"| redis-benchmark -c 32 -P 16 |", redisName + " beside " + valkeyName} {
		if !strings.Contains(md, w) {
			t.Errorf("perf.md lacks %q", w)
		}
	}
	if !strings.Contains(stdout, "on "+valkeyName+":") || !strings.Contains(stdout, "servers   side by side") {
		t.Errorf("stdout lacks Valkey's summary or the server table:\n%s", stdout)
	}
}
