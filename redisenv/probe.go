package redisenv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Info is what a client can learn about the server it talks to.
type Info struct {
	// Name is the server's own name: server_name ("valkey"), or "redis"
	// for a server that gives none.
	Name string
	// Version is the server's own version: valkey_version for Valkey,
	// else redis_version.
	Version string
	// RedisVersion is redis_version, the Redis release the server
	// claims compatibility with: Valkey 9 says 7.2.4.
	RedisVersion string
	// Mode is standalone, cluster or sentinel: redis_mode, which
	// Valkey calls server_mode.
	Mode string
	Role string // master or slave
	OS   string // os, e.g. "Linux 6.1.0 x86_64"
}

// Server names the server as results record it: "valkey 9.1.2" or
// "redis 7.0.15"; "" when INFO gave no version.
func (i Info) Server() string {
	if i.Version == "" {
		return ""
	}
	return i.Name + " " + i.Version
}

// Probe reads INFO server and replication through rdb.
func Probe(ctx context.Context, rdb redis.UniversalClient) (Info, error) {
	s, err := rdb.Info(ctx, "server", "replication").Result()
	if err != nil {
		return Info{}, fmt.Errorf("redisenv: INFO: %w", err)
	}
	return parseInfo(s), nil
}

// parseInfo reads an INFO server (and replication) reply.
func parseInfo(s string) Info {
	i := Info{
		Name:         strings.ToLower(infoField(s, "server_name")),
		RedisVersion: infoField(s, "redis_version"),
		Mode:         infoField(s, "redis_mode"),
		Role:         infoField(s, "role"),
		OS:           infoField(s, "os"),
	}
	if i.Name == "" {
		i.Name = "redis"
	}
	if i.Mode == "" {
		i.Mode = infoField(s, "server_mode")
	}
	// A fork names its own version beside the redis_version it keeps for
	// clients' sake: valkey_version for Valkey.
	i.Version = infoField(s, i.Name+"_version")
	if i.Version == "" {
		i.Version = i.RedisVersion
	}
	return i
}

// RTT summarises round trips of PING from one connection: the floor under
// every lock operation's latency on this setup.
type RTT struct {
	Count    int
	Min      time.Duration
	P50      time.Duration
	P99      time.Duration
	Max      time.Duration
	Elapsed  time.Duration
	Partial  bool // the context ended before the planned duration
	PerSec   float64
	ErrCount int
}

// MeasureRTT sends PINGs back to back for d (or until ctx ends, which marks
// the result Partial, possibly with no round trip at all) and summarises
// their round-trip times.
func MeasureRTT(ctx context.Context, rdb redis.UniversalClient, d time.Duration) (RTT, error) {
	var lat []time.Duration
	var r RTT
	start := time.Now()
	deadline := start.Add(d)
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			r.Partial = true
			break
		}
		t0 := time.Now()
		if err := rdb.Ping(ctx).Err(); err != nil {
			if ctx.Err() != nil {
				r.Partial = true
				break
			}
			r.ErrCount++
			if r.ErrCount > 100 && len(lat) == 0 {
				return r, fmt.Errorf("redisenv: PING keeps failing: %w", err)
			}
			continue
		}
		lat = append(lat, time.Since(t0))
	}
	r.Elapsed = time.Since(start)
	r.Count = len(lat)
	if r.Count == 0 {
		if r.Partial {
			return r, nil // interrupted before the first answer: an empty, partial result
		}
		return r, errors.New("redisenv: no PING answered")
	}
	slices.Sort(lat)
	at := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	r.Min, r.P50, r.P99, r.Max = lat[0], at(0.50), at(0.99), lat[len(lat)-1]
	r.PerSec = float64(r.Count) / r.Elapsed.Seconds()
	return r, nil
}
