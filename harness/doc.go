// Package harness is what the programs do below their flags: it describes
// a run for its result file, runs capacity sweeps point after point with
// their environments, checkpoints, charts and report, and runs chaos
// suites with their reports, JUnit and HTML. cmd/bench and cmd/chaos parse
// flags, call it and print; everything here can be driven from a test
// without a process.
package harness
