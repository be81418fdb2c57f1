package scenarios_test

import (
	"testing"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
)

// TestRedissonHoldersAsACLUser: a scenario's Redisson holders on an
// external Redis authenticate as the URL's ACL user, as its Go clients
// do (the server's default user is disabled).
func TestRedissonHoldersAsACLUser(t *testing.T) {
	redisenvtest.Long(t, "a chaos scenario")
	env := redisenvtest.Start(t)
	redisenvtest.ACLUser(t, env, "alice", "alicePW")
	o := options(t)
	o.Redis = redisenv.Config{Backend: redisenv.BackendExternal, URL: "redis://alice:alicePW@" + env.Addr()}
	rep := run(t, "client-freeze", o)
	if rep.Verdict != results.ExpectedViolation {
		t.Fatalf("verdict %s (%s), want %s", rep.Verdict, rep.Reason, results.ExpectedViolation)
	}
	if rs, ok := redissonRun(t, rep); ok && rs.Safety.Violations < 1 {
		t.Errorf("redisson: %+v; want the violation of its frozen holder", rs.Safety)
	}
}
