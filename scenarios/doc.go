// Package scenarios is the chaos catalogue: each Scenario names its faults
// (a plan of faults.Steps built from a seed, so the same seed gives the
// same schedule), the workload or scripted actors that run through them,
// the invariant, and the expected verdict. Each scenario lives in a file of
// its own (watchdog_loss.go, redis_restart.go, ...) with its description,
// plan and body together; catalog.go lists them in the order chaos list
// shows and --all runs.
//
// Every critical section, scripted or generated, is recorded as the holder
// lived it and judged by results.CheckSafety: a scenario that exists to
// show a violation passes only when the checker detects it
// (EXPECTED VIOLATION DETECTED), and one that must stay safe passes only
// with zero violations and its liveness checks met (PASS). A scenario the
// chosen Redis cannot host (process faults on an external server) is
// SKIPPED, never passed.
//
// Run never leaves a fault behind: each variant's schedule is stopped and
// its servers closed on every path out, panics included.
package scenarios
