// Package perf measures the implementations and the harness itself,
// beside the driver rather than in it.
//
// Run runs the parts bench perf asks for and judges their targets: the
// implementations side by side (each on the same profiles, in rounds of
// rotating order, beside redis-benchmark and bare go-redis loops driving
// the same Lua at each concurrency, and, with other servers, the same
// workloads on each: ServerTable), the overhead targets (lockimpl plain
// and auto-pipelined against those baselines), the scale run (RSS and
// goroutines with a thousand owners) and handoff latency against PING.
// Package report writes what they measured; make perf renders the side by
// side as docs/perf.md.
package perf
