// Package resultstest holds result fixtures that the tests of results and
// of the packages reading its files share.
package resultstest

import (
	"time"

	"github.com/lockbench/lockbench/results"
)

// Run is a healthy finished rw90 run: 41,000 successful operations in
// 10 s, a few errors, every latency a comparison reads, fair and safe.
// Each call returns a fresh copy to change.
func Run() *results.Result {
	lat := func(p50, p99, p999 float64) results.Latency {
		return results.Latency{Count: 1000, P50: p50, P90: p99 * 0.9, P99: p99, P999: p999, Max: p999 * 2}
	}
	return &results.Result{
		Schema: results.Schema,
		Meta: results.Meta{Profile: "rw90", Workload: "rw 90% reads, 4 clients × 4 owners", Host: "ci-1",
			Start: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), Server: "redis 7.4.0", RedisVersion: "7.4.0", RedisBackend: "local"},
		Measured:   10,
		Throughput: results.Throughput{Attempts: 41003, Ops: 41000, Failed: 3, SuccessRatio: 0.999927, OpsPerSec: 4100},
		Errors:     map[string]int64{"timeout": 2, "ctx": 0, "conn": 1, "other": 0},
		Latency: map[string]results.Latency{
			results.AcquireAll: lat(200, 1000, 2000),
			"acquire_read":     lat(150, 900, 1800),
			"acquire_write":    lat(400, 1200, 2400),
			"acquire_nested":   lat(50, 100, 200),
			"hold":             lat(200, 400, 500),
		},
		Fairness: results.Fairness{Owners: 16, Jain: 0.99, Min: 2400, Max: 2700},
		Safety:   results.Safety{Sections: 41000},
	}
}
