// Command chaos runs fault scenarios (network toxics, Redis process faults,
// clock skew) against Redisson-style Redis locks and checks each scenario's
// safety verdict against the expected one.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/internal/cli"
)

func main() {
	ctx, stop := cli.NotifyContext(context.Background(), os.Stderr)
	code := program().Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func program() cli.Program {
	return cli.Program{
		Name: "chaos",
		Synopsis: `chaos injects faults (latency, partitions, resets, Redis pause/kill/restart,
failover, clock skew) while Redisson-style locks are under load, and checks
that each scenario's observed safety verdict matches its expected one.`,
		Examples: `  chaos list                                    # the scenarios
  chaos env --topology replica                  # the primary+replica setup failover uses
`,
		Commands: map[string]cli.Command{
			"list": {Summary: "list the scenarios with their invariants", Run: listCmd},
			"env":  cli.EnvCommand("chaos"),
		},
	}
}

const listUsage = `
Lists the chaos scenarios, each with its invariant and expected verdict.
The scenarios arrive with issue 5; until then the list is empty.`

func listCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.FlagSet("chaos", "list", listUsage, stderr)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "no scenarios yet: they arrive with issue 5 (faults and scenarios)")
	return nil
}
