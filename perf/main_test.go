package perf_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/lockbench/lockbench/redisenv/redisenvtest"
)

// go-redis probes a refused address once a second from a goroutine of its
// own, which exits at its next probe after the pool is closed: the
// library's, not ours, and bounded.
func TestMain(m *testing.M) {
	redisenvtest.Main(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}
