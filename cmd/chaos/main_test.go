package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/lockbench/lockbench/internal/cli"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func runChaos(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("REDIS_URL", "")
	var out, errb bytes.Buffer
	code = program().Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpVersionList(t *testing.T) {
	code, out, _ := runChaos(t, "--help")
	if code != cli.ExitOK || !strings.Contains(out, "chaos list") || !strings.Contains(out, "Commands:") {
		t.Errorf("chaos --help: code %d:\n%s", code, out)
	}
	code, out, _ = runChaos(t, "version")
	if code != cli.ExitOK || !strings.HasPrefix(out, "lockbench ") {
		t.Errorf("chaos version: code %d, %q", code, out)
	}
	code, out, _ = runChaos(t, "list")
	if code != cli.ExitOK || !strings.Contains(out, "issue 5") {
		t.Errorf("chaos list: code %d, %q", code, out)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explode"}, `unknown command "explode"`},
		{[]string{"list", "--bogus"}, "-bogus"},
		{[]string{"env", "--topology", "mesh"}, `--topology "mesh"`},
		{[]string{"env", "--duration", "0s"}, "--duration"},
	} {
		code, _, errOut := runChaos(t, tc.args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("chaos %v: code %d, stderr:\n%s", tc.args, code, errOut)
		}
	}
}

// TestEnvReplica brings up the primary+replica setup the failover
// scenarios will use, as `make chaos` does.
func TestEnvReplica(t *testing.T) {
	code, out, errOut := runChaos(t, "env", "--redis", "local", "--topology", "replica", "--duration", "200ms")
	if code != cli.ExitOK {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "node:     primary") || !strings.Contains(out, "node:     replica") {
		t.Errorf("output lacks the two nodes:\n%s", out)
	}
	if !strings.Contains(errOut, "replica at 127.0.0.1:") {
		t.Errorf("backend line lacks the replica:\n%s", errOut)
	}
}
