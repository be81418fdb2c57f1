package harness

import (
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/results"
)

// Meta describes a run on env for its result file: this program's version,
// the machine, the Redis, the command line (passwords hidden) and the
// implementation. Every command that writes results builds it here, so
// that their files say the same things.
func Meta(env *redisenv.Env, version string, args []string, impl string) results.Meta {
	host, _ := os.Hostname()
	return results.Meta{
		Lockbench: version, Go: runtime.Version(), Host: host, GOMAXPROCS: runtime.GOMAXPROCS(0),
		Start: time.Now(), Server: env.Server(), RedisVersion: env.Version(), RedisBackend: string(env.Backend()),
		RedisTopology: env.Shape(), RedisAddr: env.Addr(), Args: RedactArgs(args), Impl: impl,
	}
}

// RedactArgs hides passwords in URL arguments before they are written
// anywhere (result files keep the command line).
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.Contains(a, "@") {
			if flag, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "-") {
				a = flag + "=" + redisenv.Redact(val)
			} else {
				a = redisenv.Redact(a)
			}
		}
		out[i] = a
	}
	return out
}
