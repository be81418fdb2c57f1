// Package scenarios is the chaos catalogue and the mitigation matrix:
// each scenario's faults, actors, invariant and expected verdict.
//
// A scenario's plan of faults.Steps is built from a seed, so the same seed
// gives the same schedule; each lives in a file of its own with its
// description, plan and body, and catalog.go lists them in the order chaos
// list shows and --all runs. Every critical section is judged by
// results.CheckSafety: a scenario that exists to show a violation passes
// only when the checker detects it, one that must stay safe only with zero
// violations and its liveness checks met, and one the chosen Redis cannot
// host is SKIPPED, never passed. The mitigation matrix (RunMitigation) runs the
// scenarios that lose holds once per mitigation, each critical section
// updating a guard store, and counts the updates lost.
//
// Run never leaves a fault behind: each variant's schedule is stopped and
// its servers closed on every path out, panics included.
package scenarios
