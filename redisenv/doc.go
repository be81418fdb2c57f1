// Package redisenv owns where Redis comes from: every test, benchmark and
// chaos run gets its Redis through Start.
//
// Backends:
//   - local (the embedded default): real redis-server child processes on
//     127.0.0.1, each on a free port in its own temp dir, persistence off
//     unless asked. Each runs in its own process group with a parent-death
//     signal, and Close (or cancelling Start's context) kills the group and
//     removes the dir, so no server outlives a panic, a failed test, a
//     cancelled context or Ctrl-C. A dir left by a process that died
//     without Close (SIGKILL, os.Exit) is removed by the next local start
//     in the same parent dir: each dir records its owner. A ServerArgs
//     requirepass is honoured: the servers' clients authenticate with it.
//   - container: testcontainers-go on the engine OpenEngine finds
//     (DOCKER_HOST's, Docker's socket, else a Podman API service of the
//     process's own, stopped by Close), without testcontainers' reaper: each
//     start first sweeps the containers, networks and images (OwnerLabel)
//     of lockbench processes that are gone, and Close (or cancelling
//     Start's context, mid-start included) removes the Env's.
//     No engine, or an image the engine lacks and cannot pull, is a
//     ConfigError; LocalImage makes one from the local redis-server.
//   - external: a redis://, rediss://, cluster-list or sentinel URL (see
//     ParseURL), turned into go-redis UniversalOptions. Passwords never
//     appear in logs or errors.
//   - auto: external when a URL is given (flag or $REDIS_URL), else
//     container when Docker answers, else local. Env.String says which, and why.
//
// Topologies: single, replica (a primary plus one replica; Env.Promote
// turns the replica into the primary for failover scenarios), and cluster
// (Config.Shards primaries with Config.Replicas replicas each). The
// container backend runs a cluster's nodes on a Docker network of their
// own, where they meet by their container IPs, and its clients reach them
// through the published ports by a Dialer that maps one to the other.
//
// Each started server is a Node with the handles fault injection needs:
// address, PID, Stop, Kill, Pause/Resume (SIGSTOP/SIGCONT, or docker
// pause), Restart on the same address and data dir, and its log.
//
// Tests take a fresh, isolated Redis from package redisenvtest.
package redisenv
