// Package workloads will own the load generators: profiles (read/write
// ratio, reentrancy depth, hold and think time, key count and skew, clients
// x owners, lease mode, open or closed loop) and the driver that runs them
// against lockimpl, recording every operation for package results.
//
// Filled by issue 4; empty until then.
package workloads
