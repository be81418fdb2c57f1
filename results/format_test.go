package results_test

import (
	"testing"

	"github.com/lockbench/lockbench/results"
)

func TestCPULimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		cpu   results.CPU
		limit string
	}{
		{"server", results.CPU{Redis: 0.97, RedisTotal: 1.0, Load: 1.2, LoadLimit: 2, HostCores: 4, SharedHost: true}, results.LimitRedis},
		{"load", results.CPU{Redis: 0.4, RedisTotal: 0.4, Load: 1.85, LoadLimit: 2, HostCores: 8, SharedHost: true}, results.LimitLoad},
		{"shared host", results.CPU{Redis: 0.8, RedisTotal: 0.85, Load: 1.0, LoadLimit: 2, HostCores: 2, SharedHost: true}, results.LimitHost},
		{"remote server", results.CPU{Redis: 0.8, RedisTotal: 0.85, Load: 1.0, LoadLimit: 2, HostCores: 2}, results.LimitNone},
		{"busy host", results.CPU{Redis: 0.43, RedisTotal: 0.45, Load: 0.78, LoadLimit: 2, HostCores: 2, SharedHost: true, Host: 1.98}, results.LimitHost},
		{"measured host, not busy", results.CPU{Redis: 0.7, RedisTotal: 0.72, Load: 0.98, LoadLimit: 2, HostCores: 2, SharedHost: true, Host: 1.72}, results.LimitNone},
		{"latency", results.CPU{Redis: 0.3, RedisTotal: 0.3, Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true}, results.LimitNone},
		{"unread, host read", results.CPU{Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true, Unread: "INFO cpu: NOPERM", Host: 1.3}, results.LimitNone},
		{"unread", results.CPU{Load: 0.5, LoadLimit: 2, HostCores: 2, SharedHost: true, Unread: "INFO cpu: NOPERM"}, results.LimitNone},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.cpu.Limit(); got != c.limit {
				t.Errorf("Limit() = %q, want %q", got, c.limit)
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
