// Package faults injects the faults chaos scenarios run under, each with a
// start, a duration and a guaranteed revert. One file per kind: network.go
// (toxiproxy), process.go, client.go and cluster.go.
//
// Network faults act on toxiproxy proxies, one per client, so a fault can
// hit one client (the lock holder) or all: latency with jitter, bandwidth,
// blackhole (timeout), reset_peer, down (partition), slicer and slow_close,
// per direction. Toxiproxy runs in-process by default (NewEmbedded) or as
// an external server (Connect).
//
// Process faults act on redisenv's Node handles: Pause (SIGSTOP), Kill
// (SIGKILL, restarted on revert, reloading whatever its persistence kept)
// and Failover (kill the primary, promote the replica, repoint proxies).
// Cluster faults act on the shard serving a key: ReplicationCut (the
// primary refuses its replicas' resync), ClusterFailover (kill the
// primary, CLUSTER FAILOVER FORCE on its replica) and SlotMigration (the
// slot moved to another primary with SETSLOT and MIGRATE, and back).
// Client faults are ClockSkew, which shifts a Clock used as lockimpl's
// Options.Clock, and Freeze, which stops a client's application at a Gate
// and drops its traffic, as a long GC pause does.
//
// A Schedule runs a plan of Steps against one start time, records each
// injection as a results.Event, and reverts every injected fault at its
// planned end, on Stop, or when its context ends.
package faults
