// Package faults injects the faults chaos scenarios run under, each with a
// start, a duration and a guaranteed revert.
//
// One file per kind. Network faults (network.go) act on toxiproxy proxies,
// one per client, so a fault can hit the holder alone; toxiproxy runs
// in-process (NewEmbedded) or as a server (Connect). Process faults
// (process.go) act on redisenv's Node handles: Pause, Kill (restarted on
// revert) and Failover. Cluster faults (cluster.go) act on the shard
// serving a key: ReplicationCut, ClusterFailover and SlotMigration. Client
// faults (client.go) are ClockSkew, through lockimpl's Options.Clock, and
// Freeze, a long GC pause.
//
// A Schedule runs a plan of Steps from one start time, records each
// injection as a results.Event, and reverts every injected fault at its
// planned end, on Stop, or when its context ends.
package faults
