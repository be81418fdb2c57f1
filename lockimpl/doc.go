// Package lockimpl will be a Go implementation of Redisson's lock family,
// wire-compatible with Redisson (same keys, hash fields, Lua logic, pub/sub
// channels and messages): reentrant, fair and read-write locks, watchdog
// lease renewal, fixed leases, tryLock with a wait time, and pub/sub
// wake-up of waiters. It imports no other package of this module.
//
// Filled by issue 3; empty until then.
package lockimpl
