package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// TestCheckEnvPIDs: bench env shows a pid for each server lockbench
// started, and none (never "pid 0") for one it only connects to.
func TestCheckEnvPIDs(t *testing.T) {
	ctx := context.Background()
	server := redisenvtest.Start(t)

	var out, errOut bytes.Buffer
	cfg := redisenv.Config{Backend: redisenv.BackendExternal, URL: "redis://" + server.Addr()}
	if err := CheckEnv(ctx, cfg, 20*time.Millisecond, &out, &errOut); err != nil {
		t.Fatalf("env on an external Redis: %v\n%s", err, errOut.String())
	}
	node := regexp.MustCompile(`(?m)^node: +external +` + regexp.QuoteMeta(server.Addr()) + `$`)
	if !node.MatchString(out.String()) || strings.Contains(out.String(), "pid") {
		t.Errorf("env on an external Redis printed\n%s\nwant its node line without a pid", out.String())
	}

	out.Reset()
	errOut.Reset()
	cfg = redisenv.Config{Backend: redisenv.BackendLocal, Topology: redisenv.TopologyReplica, Dir: t.TempDir()}
	if err := CheckEnv(ctx, cfg, 20*time.Millisecond, &out, &errOut); err != nil {
		t.Fatalf("env on a local Redis: %v\n%s", err, errOut.String())
	}
	pids := regexp.MustCompile(`(?m)^node: +(primary|replica) +127\.0\.0\.1:\d+ pid [1-9]\d*$`).FindAllString(out.String(), -1)
	if len(pids) != 2 {
		t.Errorf("env on a local primary and replica printed\n%s\nwant both node lines with their pids", out.String())
	}
}
