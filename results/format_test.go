package results_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

func TestCPULimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		cpu   results.CPU
		limit string
		says  string
	}{
		{"server", results.CPU{Redis: 0.97, RedisTotal: 1.0, Load: 1.2, LoadLimit: 2, HostCores: 4, SharedHost: true},
			results.LimitRedis, "redis 97% of a core · lockbench 120% (of 200%) · host 220% (of 400%): the server is the limit"},
		{"load", results.CPU{Redis: 0.4, RedisTotal: 0.4, Load: 1.85, LoadLimit: 2, HostCores: 8, SharedHost: true},
			results.LimitLoad, "lockbench is the limit (the load generator's CPUs)"},
		{"shared host", results.CPU{Redis: 0.8, RedisTotal: 0.85, Load: 1.0, LoadLimit: 2, HostCores: 2, SharedHost: true},
			results.LimitHost, "host 185% (of 200%): the host's CPUs are the limit (Redis and lockbench share them)"},
		{"remote server", results.CPU{Redis: 0.8, RedisTotal: 0.85, Load: 1.0, LoadLimit: 2, HostCores: 2},
			results.LimitNone, "redis 80% of a core · lockbench 100% (of 200%): neither is saturated: latency is the limit"},
		{"busy host", results.CPU{Redis: 0.43, RedisTotal: 0.45, Load: 0.78, LoadLimit: 2, HostCores: 2, SharedHost: true, Host: 1.98},
			results.LimitHost, "host 198% (of 200%; 75% neither Redis's nor lockbench's): the host's CPUs are the limit, and other work took 75% of them"},
		{"measured host, not busy", results.CPU{Redis: 0.7, RedisTotal: 0.72, Load: 0.98, LoadLimit: 2, HostCores: 2, SharedHost: true, Host: 1.72},
			results.LimitNone, "host 172% (of 200%): neither is saturated"},
		{"latency", results.CPU{Redis: 0.3, RedisTotal: 0.3, Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true},
			results.LimitNone, "neither is saturated"},
		{"unread, host read", results.CPU{Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true, Unread: "INFO cpu: NOPERM", Host: 1.3},
			results.LimitNone, "lockbench 50% (of 200%) · host 130% (of 200%): lockbench is not saturated"},
		{"unread", results.CPU{Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true, Unread: "INFO cpu: NOPERM"},
			results.LimitNone, "redis unread (INFO cpu: NOPERM) · lockbench 50% (of 200%): lockbench is not saturated; the server's share is unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.cpu.Limit(); got != c.limit {
				t.Errorf("Limit() = %q, want %q", got, c.limit)
			}
			if got := c.cpu.Line(); !strings.Contains(got, c.says) {
				t.Errorf("Line() = %q, want it to say %q", got, c.says)
			}
		})
	}
}

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{results.Count(1, "run"), "1 run"},
		{results.Count(0, "run"), "0 runs"},
		{results.Count(int64(1), "critical section"), "1 critical section"},
		{results.Count(int64(3500), "critical section"), "3,500 critical sections"},
		{results.Count(int32(2), "match"), "2 matches"},
		{results.Noun(1, "point"), "point"},
		{results.Noun(1008, "owner"), "owners"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
