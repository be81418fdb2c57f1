// Package perf measures implementations and the harness itself, beside
// the driver rather than in it: the side-by-side matrix (each
// implementation on the same profiles, rounds in rotating order, with
// redis-benchmark driving the same Lua at each concurrency), the harness's
// overhead against redis-benchmark and bare go-redis, its scale (RSS and
// goroutines with a thousand owners) and handoff latency against PING.
// bench perf runs it; make perf writes the matrix to docs/perf.md.
package perf
