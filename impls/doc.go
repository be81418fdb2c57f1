// Package impls puts the lock implementations bench can drive behind
// workloads.Impl, so that one workload runs unchanged against each.
// Lookup finds one by its --impl name:
//
//   - lockimpl: this module's Redisson-compatible locks, the default.
//   - raw: lockimpl's own Lua scripts sent by EVALSHA with no client logic
//     (no watchdog, no pub/sub, a refused acquire retried after the TTL the
//     script replied): the floor of what the protocol costs and, under
//     contention, what pub/sub wake-up buys.
//   - redsync and redislock: the peer libraries on one node, with their
//     own expiry and retry delays.
//   - redisson: real Redisson in a JVM (package redisson), with its
//     default configuration; redisson-tuned with the settings its docs
//     advise for throughput (RedissonTuning); redisson-jvm running the
//     load in the JVM's own threads, which shows what the pipe costs.
//
// An implementation that lacks a feature a profile needs (a read-write or
// fair lock, reentrancy, a watchdog lease the holds depend on, a loss
// signal) refuses the profile with an error naming the feature; nothing is
// emulated.
package impls
