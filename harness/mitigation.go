package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/scenarios"
)

// MitigationOptions is a mitigation matrix run.
type MitigationOptions struct {
	Run scenarios.Options
	// GuardURL is the guarded counter's Redis; empty starts a redis-server
	// of its own.
	GuardURL string
	// PlantBrokenFencing makes the fenced store accept lower tokens: the
	// fencing cells must then fail, which shows the gate works.
	PlantBrokenFencing bool
	Only               []string
	NoCosts            bool
	Progress           func(string)
	// Out, when set, gets the matrix file (and the cells' results).
	Out string
	// Version names the program in the HTML report.
	Version string
}

// Mitigation starts the guarded store and runs the mitigation matrix; it
// returns the matrix and where it was written ("" without Out), with its
// HTML report beside it (table and chart).
func Mitigation(ctx context.Context, o MitigationOptions) (*results.MitigationMatrix, string, error) {
	gs, err := StartGuard(ctx, guard.Plain, o.GuardURL, "", o.Run.Redis.Server)
	if err != nil {
		return nil, "", err
	}
	defer gs.Close()
	rdb := gs.rdb
	mo := scenarios.MitigationOptions{StoreAt: gs.Where, Only: o.Only, NoCosts: o.NoCosts, Progress: o.Progress,
		NewStore: func(key string, mode guard.Mode) *guard.Store {
			if o.PlantBrokenFencing && mode == guard.Fenced {
				return guard.NewBroken(rdb, key)
			}
			return guard.New(rdb, key, mode)
		}}
	if o.PlantBrokenFencing {
		mo.Planted = "a fenced store that accepts tokens lower than the highest it saw"
	}
	m := scenarios.RunMitigation(ctx, o.Run, mo)
	path := ""
	if o.Out != "" {
		if path, err = results.WriteMitigationMatrix(o.Out, m); err != nil {
			return m, "", fmt.Errorf("matrix: %w", err)
		}
		html := strings.TrimSuffix(path, ".json") + ".html"
		in, err := report.Load(path)
		if err == nil {
			err = report.Write(html, in, report.Options{Title: "lockbench mitigation matrix", Generator: o.Version})
		}
		if err != nil {
			return m, path, fmt.Errorf("matrix report: %w", err)
		}
	}
	return m, path, nil
}

// MitigationVerdict is the matrix's outcome as an exit status: nil when
// every cell met its expectation; else interrupted, nothing ran (every
// cell skipped), or some cell missed.
func MitigationVerdict(ctx context.Context, m *results.MitigationMatrix) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("matrix interrupted: %w", context.Cause(ctx))
	case m.Ran() == 0:
		var why []string
		for _, c := range m.Cells {
			if !slices.Contains(why, c.Skipped) {
				why = append(why, c.Skipped)
			}
		}
		return fmt.Errorf("mitigation matrix: nothing ran: every cell was skipped (%s)", strings.Join(why, "; "))
	case !m.OK():
		return errors.New("mitigation matrix: some cell missed its expected verdict")
	}
	return nil
}
