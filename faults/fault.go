package faults

import (
	"context"
)

// Fault is one misbehaviour that can be switched on and, through the
// returned revert, off again. Kind, Target and Detail describe it for the
// timeline and the plan.
type Fault interface {
	Kind() string   // latency, bandwidth, blackhole, reset_peer, down, slicer, slow_close, pause, kill, failover, clock_skew, clock_jump, freeze
	Target() string // e.g. client:0, clients, redis:primary
	Detail() string // parameters, human-readable
	// Inject starts the fault. On success it returns the function that
	// undoes it (never nil). On error it returns nil when nothing is left
	// injected, or the revert of what was (a partial injection).
	Inject(ctx context.Context) (revert func(context.Context) error, err error)
}
