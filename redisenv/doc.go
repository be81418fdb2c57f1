// Package redisenv owns where Redis comes from: every test, benchmark and
// chaos run gets its Redis through Start.
//
// Backends: local (redis-server child processes on 127.0.0.1, each in its
// own temp dir and process group with a parent-death signal, so none
// outlives a panic, a failed test or Ctrl-C, and a dir left by a killed
// owner is removed by the next local start; a ServerArgs requirepass is
// honoured by their clients); container (testcontainers-go on the engine
// OpenEngine finds, without testcontainers' reaper: labels name each
// container's owner, and the next start sweeps those whose owner is gone; a
// cluster's nodes meet on a network of their own and clients reach them
// through a Dialer); external (a URL, see ParseURL; passwords never appear
// in logs or errors); and auto, which picks one and says why (Env.String).
//
// Topologies: single, replica (Env.Promote turns the replica into the
// primary), sentinel (local: a primary and a replica that three Sentinels
// watch and fail over; clients follow them) and cluster (Config.Shards
// primaries with Config.Replicas replicas each). Each started server is a Node with the handles fault
// injection needs: Stop, Kill, Pause/Resume, Restart on the same address
// and data dir, and its log. With Config.FakeClock each local server runs
// under libfaketime, and Env.JumpClock moves one server's wall clock while
// it runs. docs/topologies.md is the guide.
//
// Tests take a fresh, isolated Redis from package redisenvtest.
package redisenv
