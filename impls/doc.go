// Package impls puts the lock implementations bench can drive behind
// workloads.Impl, so that one workload runs unchanged against each:
//
//   - lockimpl: this module's Redisson-compatible locks, the default
//     (workloads drives it itself; Lookup returns nil for it).
//   - raw: lockimpl's own Lua scripts sent by EVALSHA with no client logic:
//     no watchdog, no pub/sub, a refused acquire retried after the TTL the
//     script replied. The floor of what the protocol costs, and, under
//     contention, what pub/sub wake-up buys.
//   - redsync: github.com/go-redsync/redsync/v4 on one node with its
//     defaults (8 s expiry, retries every 50–250 ms).
//   - redislock: github.com/bsm/redislock with a retry strategy like
//     redsync's (every 50–250 ms, at random).
//
// An implementation that lacks a feature a profile needs (a read-write or
// fair lock, reentrancy, a watchdog lease the holds depend on) refuses the
// profile with an error naming the feature; nothing is emulated.
package impls
