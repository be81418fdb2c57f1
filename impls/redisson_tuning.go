package impls

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/workloads"
)

// RedissonSetting is one setting of Redisson's Config that
// RedissonTunedName changes or keeps on purpose, with the reason
// Redisson's documentation gives (its configuration and FAQ pages, of the
// Redisson release the driver pins).
type RedissonSetting struct {
	Name, Default, Tuned, Reason string
}

// RedissonTuning is the tuned configuration for profile p, setting by
// setting: what an application tuning Redisson for lock throughput on a
// Linux host changes, as Redisson's documentation advises.
func RedissonTuning(p workloads.Profile) []RedissonSetting {
	t := RedissonTuned(p)
	cores := runtime.NumCPU()
	pool := "owners per client"
	if p.Owners > 0 {
		pool += fmt.Sprintf(" (%d)", t.ConnectionPoolSize)
	}
	return []RedissonSetting{
		{"transportMode", "NIO", "EPOLL",
			"docs: EPOLL \"requires netty-transport-native-epoll lib in the classpath\" (the driver bundles it): Netty's native Linux transport instead of Java NIO"},
		{"eventLoopGroup, executor", "one of each per RedissonClient", "one of each for the JVM's clients",
			"docs (eventLoopGroup): \"each Redisson client creates its own EventLoopGroup. So, if there are multiple Redisson instances in the same JVM, it would be useful to share one EventLoopGroup among them\"; the executor likewise (executor: \"use the external ExecutorService\")"},
		{"nettyThreads", "32", fmt.Sprint(t.NettyThreads),
			fmt.Sprintf("docs: \"0 = cores_amount * 2\" (%d cores here); the threads that send commands and decode replies, shared now by every client: more than the cores only adds context switches where the host's CPU is the limit (the FAQ's advice to raise it is for RedisTimeoutException when they are all busy)", cores)},
		{"threads", "16", fmt.Sprint(t.Threads),
			"docs: the executor for RTopic listeners and the like; locks use it for pub/sub wake-ups only: cores × 2 as for nettyThreads"},
		{"connectionPoolSize", "64", pool,
			"docs: the connection pool's maximum; a RedissonClient's owner threads each have one command in flight at most, so its owners are enough (the FAQ: raise it when commands wait for a free connection)"},
		{"connectionMinimumIdleSize", "24", pool,
			"docs: the connections kept open; equal to the pool's size, so that no connection is opened or closed (idleConnectionTimeout) while the load runs"},
		{"subscriptionConnectionPoolSize", "50", "50 (kept)", "docs: pub/sub connections for RLock's wake-ups; only waiters subscribe, and 50 is more than these profiles' waiters need"},
		{"pingConnectionInterval", "30000 ms", "30000 ms (kept)", "docs: a PING per connection every interval; one per 30 s per connection costs nothing measurable"},
		{"codec", "Kryo5Codec", "Kryo5Codec (kept)", "lock commands do not go through it: RLock's scripts use LongCodec"},
		{"useScriptCache", "true", "true (kept)", "docs: \"Most Redisson methods are Lua-script-based, and turning this setting on could increase the speed\": already the default (EVALSHA)"},
	}
}

// RedissonTuningNote is the tuned settings for a note: each setting
// changed, its default and the documentation's reason, joined by " · "
// (report lists them one per line).
func RedissonTuningNote(p workloads.Profile) string {
	var s []string
	for _, t := range RedissonTuning(p) {
		s = append(s, t.Name+" "+t.Tuned+" (default "+t.Default+"): "+t.Reason)
	}
	return strings.Join(s, " · ")
}

// RedissonTuned is the driver's tuning for profile p (RedissonTuning
// says why).
func RedissonTuned(p workloads.Profile) redisson.Tuning {
	owners := max(p.Owners, 1)
	return redisson.Tuning{
		NettyThreads: 2 * runtime.NumCPU(), Threads: 2 * runtime.NumCPU(), Transport: "epoll", ShareThreads: true,
		ConnectionPoolSize: owners, ConnectionMinimumIdleSize: owners,
	}
}

// RedissonJFREnv names the environment variable that, set to a directory,
// has each Redisson JVM record a Java Flight Recording of its run there,
// and write the recording's top frames beside it (JFRTop). Off by
// default: the sampling costs the JVM some throughput.
const RedissonJFREnv = "LOCKBENCH_REDISSON_JFR"

var jfrSeq atomic.Int64

// jfrFile is where the next JVM's recording goes, "" when none is asked.
func jfrFile() string {
	dir := os.Getenv(RedissonJFREnv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, fmt.Sprintf("redisson-%d-%d.jfr", os.Getpid(), jfrSeq.Add(1)))
}

// writeTopFrames writes, beside a recording the JVM left at path, its
// top frames by self samples (path with .top.txt for .jfr).
func writeTopFrames(path string) {
	if path == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fs, total, err := redisson.TopFrames(ctx, path, 0)
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	pct := func(n int) float64 { return 100 * float64(n) / float64(max(total, 1)) }
	fmt.Fprintf(&b, "%d execution samples; top frames by self samples:\n", total)
	for _, f := range fs[:min(15, len(fs))] {
		fmt.Fprintf(&b, "%6d %5.1f%%  %s\n", f.Samples, pct(f.Samples), f.Method)
	}
	pkgs := redisson.ByPackage(fs)
	fmt.Fprintf(&b, "by package:\n")
	for _, p := range pkgs[:min(10, len(pkgs))] {
		fmt.Fprintf(&b, "%6d %5.1f%%  %s\n", p.Samples, pct(p.Samples), p.Method)
	}
	_ = os.WriteFile(strings.TrimSuffix(path, ".jfr")+".top.txt", []byte(b.String()), 0o644)
}
