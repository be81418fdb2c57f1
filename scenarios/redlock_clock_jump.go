package scenarios

import (
	"fmt"
	"math/rand/v2"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/redisenv"
)

// redlockClockJumpPlan jumps node 1's wall clock past the expiry once the
// holder's first extension is answered: the key it holds there expires at
// once. With cut the holder holds a bare majority, and the contender
// makes a quorum of node 1 and the two nodes the holder never reached.
func redlockClockJumpPlan(cut bool) func(Timing, *rand.Rand) []Planned {
	return redlockNodePlan(cut, "clock_jump", func(t Timing) string { return fmt.Sprintf("wall clock forward %v, left there", clockJumpBy(t)) },
		func(r *rig, t Timing) faults.Fault {
			return faults.ClockJump(r.redlock.nodes[0], r.redlock.nodes[0].Primary(), clockJumpBy(t))
		})
}

// nodeClockJumpRedlock is node-clock-jump's Redlock cell: the bare
// majority, its five servers under libfaketime.
func nodeClockJumpRedlock(r *rig) error {
	if r.o.Redis.Backend == redisenv.BackendContainer {
		return &skipError{why: fakeClockLocalOnly}
	}
	return redlockNodeFault(r, true, func(c *redisenv.Config) { c.FakeClock = true })
}

// redlockClockJumpAllFive is the jump under a holder on all five nodes:
// it keeps four, and the contender never makes a quorum while it holds.
func redlockClockJumpAllFive(r *rig) error {
	if r.o.Redis.Backend == redisenv.BackendContainer {
		return &skipError{why: fakeClockLocalOnly}
	}
	return redlockNodeFault(r, false, func(c *redisenv.Config) { c.FakeClock = true })
}
