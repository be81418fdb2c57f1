// Package harness runs what the programs run, below their flags: bench
// runs, capacity sweeps, chaos suites and the mitigation matrix.
//
// A bench run gets its guard store started here and its verdict from
// results; a sweep its environments, checkpoints and charts; a chaos suite
// its reports and JUnit.
//
// cmd/bench and cmd/chaos parse flags, call it and print; everything here
// can be driven from a test without a process.
package harness
