// Package faults will own fault injection: toxiproxy (embedded in-process
// by default) for latency, partitions, resets and bandwidth; process faults
// on Redis through redisenv's Node handles (pause, kill, restart,
// failover); client clock skew and client freeze; and the chaos scenarios.
//
// Filled by issue 5; empty until then.
package faults
