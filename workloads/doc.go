// Package workloads drives load: workload profiles, the driver that runs
// them against an implementation ([Impl]: [Lockimpl] by default, the peers
// in package impls), capacity sweeps over a profile's settings, and the
// fair-lock bookkeeping that lets a run clean up after a killed one. Every
// operation is recorded into package results.
//
// A [Profile] says which lock (reentrant, fair, read-write), the read
// ratio, the reentrancy depth (fixed or weighted, with reads nested inside
// writes where Redisson allows it), clients × owners (each client its own
// lock client and connection pool, like a separate JVM; each owner a
// goroutine with its own lock identity, like a thread), the lock names and
// their popularity (uniform, zipf, or one per owner), hold and think times
// (fixed, uniform, exponential), the lease (watchdog or fixed), the wait
// timeout, duration or operation count, warmup, and pacing. Built-in
// profiles are YAML files embedded from builtin/; files use the same format.
//
// Pacing is closed loop (each owner: operate, think, repeat) or open loop at
// a target rate, where each owner follows its share of a fixed schedule
// and latency is measured from the intended start, so a server that falls
// behind shows up as latency instead of fewer samples (coordinated
// omission, as wrk2 avoids it).
//
// [Run] drives a profile; on cancellation it stops the load, releases every
// held lock, and returns the partial result. A stalled Redis cannot
// stretch a run: calls still waiting [DefaultStallBound] after the planned
// end ([InterruptBound] after a cancellation) are cut and recorded as
// failed with the time they waited, and the result is marked partial.
// Fair runs register their lock names in Redis so that a later run can
// clear the queues of one that was killed (stale.go).
package workloads
