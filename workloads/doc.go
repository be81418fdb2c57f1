// Package workloads drives load: profiles, the driver that runs them
// through an implementation, and the points of a capacity sweep.
//
// Every operation the driver runs is recorded into package results.
//
// A [Profile] says which lock (one of the kinds lockimpl.Kind names), the
// read ratio and reentrancy depth, clients × owners (each client its own
// lock client and pool, like a JVM; each owner a goroutine with its own
// lock identity, like a thread), the names and their popularity, hold and
// think times, lease, wait, duration and pacing. Built-in profiles are
// YAML files embedded from builtin/; docs/profiles.md lists every field.
//
// Pacing is closed loop or open loop at a target rate, where latency is
// measured from the intended start, so a server that falls behind shows
// as latency instead of fewer samples (coordinated omission). [Run] drives
// a profile through an [Impl] ([Lockimpl] by default, the peers in package
// impls); on cancellation it releases every held lock and returns the
// partial result, and calls still waiting [DefaultStallBound] after the
// planned end are cut and counted, so a stalled Redis cannot stretch a
// run. Fair runs register their lock names so a later run can clear the
// queues of one that was killed.
package workloads
