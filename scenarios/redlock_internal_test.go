package scenarios

import (
	"testing"

	"github.com/lockbench/lockbench/guard"
)

// TestNodeRestartRowSkipsSinglePrimary: node-restart's cells other than
// Redlock's are skipped, each saying the single-primary restart is the
// redis-restart row, and none starts a Redis.
func TestNodeRestartRowSkipsSinglePrimary(t *testing.T) {
	t.Setenv("REDIS_URL", "")
	mo := MitigationOptions{NewStore: func(key string, mode guard.Mode) *guard.Store { return guard.New(nil, key, mode) }}
	row := nodeRestartRow()
	for _, mi := range Mitigations {
		if mi.Redlock {
			if row.redlock == nil || row.expect.of(mi).want != expectSome {
				t.Errorf("redlock: want a Redlock variant held to lost updates, got %+v", row.expect.of(mi))
			}
			continue
		}
		c := runCell(t.Context(), Options{}, mo, TimingFor(true), row, mi)
		if c.Skipped != singlePrimaryRestart || c.Expect != expectAny {
			t.Errorf("%s: skipped %q, expect %q; want skipped %q, shown, not gated", mi.Name, c.Skipped, c.Expect, singlePrimaryRestart)
		}
	}
}
