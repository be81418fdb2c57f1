package workloads

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/results"
)

// Processes is implemented by an Impl whose clients run in helper
// processes (Redisson's JVM): their CPU is the load generator's too.
type Processes interface {
	// PIDs are the helper processes running now.
	PIDs() []int
}

// cpuMeter samples the CPU time of the Redis servers (INFO cpu) and of the
// load generator (this process and the implementation's helpers), so that a
// run can say which side ran out of CPU.
type cpuMeter struct {
	rdb  redis.UniversalClient // nil: Redis's CPU is not read
	pids func() []int
	base time.Time

	mu      sync.Mutex
	samples []cpuSample
	unread  string // why the last reading of Redis failed

	// onHost, when set, is told after each sample how many of the host's
	// cores were idle since the one before, and when.
	onHost func(idle float64, at time.Time)
}

type cpuSample struct {
	at        time.Time
	load      float64              // seconds of CPU, since the process started, helpers' included
	helper    float64              // the helper processes' part of load
	helperSys float64              // the kernel's part of helper (system time)
	host      float64              // seconds every CPU of the host was busy, since boot
	hostCPUs  int                  // the CPUs host sums
	hostOK    bool                 // host was read
	redis     map[string]serverCPU // by server address; nil when unread
	// redisAt is when the servers' counters were read: the middle of the
	// INFO round trip, which may take far longer than reading this host's.
	redisAt time.Time
}

// serverCPU is one server's CPU seconds since it started.
type serverCPU struct {
	main  float64 // the command thread (the process where INFO has no per-thread figures)
	total float64 // the process
}

// cpuReadTimeout bounds each INFO: a paused server must not hold up the
// sampling.
const cpuReadTimeout = 500 * time.Millisecond

func newCPUMeter(rdb redis.UniversalClient, impl Impl, base time.Time) *cpuMeter {
	m := &cpuMeter{rdb: rdb, base: base, pids: func() []int { return nil }}
	if p, ok := impl.(Processes); ok {
		m.pids = p.PIDs
	}
	if rdb == nil {
		m.unread = "no Redis client"
	}
	return m
}

// sample reads both sides now.
func (m *cpuMeter) sample(ctx context.Context) {
	s := cpuSample{at: time.Now(), load: processCPU()}
	s.host, s.hostCPUs, s.hostOK = hostCPU()
	for _, pid := range m.pids() {
		u, sys := pidCPU(pid)
		s.helper += u + sys
		s.helperSys += sys
	}
	s.load += s.helper
	var unread string
	if m.rdb != nil {
		ctx, cancel := context.WithTimeout(ctx, cpuReadTimeout)
		var err error
		sent := time.Now()
		s.redis, err = readServerCPU(ctx, m.rdb)
		s.redisAt = sent.Add(time.Since(sent) / 2)
		cancel()
		if err != nil {
			unread = "INFO cpu: " + err.Error()
		}
	}
	m.mu.Lock()
	var prev cpuSample
	if n := len(m.samples); n > 0 {
		prev = m.samples[n-1]
	}
	m.samples = append(m.samples, s)
	if m.rdb != nil {
		m.unread = unread
	}
	m.mu.Unlock()
	if dt := s.at.Sub(prev.at).Seconds(); m.onHost != nil && prev.hostOK && s.hostOK && dt > 0 && s.hostCPUs > 0 {
		m.onHost(float64(s.hostCPUs)-(s.host-prev.host)/dt, s.at)
	}
}

// run samples at the start, when the warmup ends and every second, until
// ctx ends; the caller takes the last sample after the load stopped.
func (m *cpuMeter) run(ctx context.Context, warmEnd time.Time) {
	m.sample(ctx)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var warm <-chan time.Time
	if d := time.Until(warmEnd); d > 0 {
		wt := time.NewTimer(d)
		defer wt.Stop()
		warm = wt.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-warm:
			m.sample(ctx)
		case <-t.C:
			m.sample(ctx)
		}
	}
}

// result is the CPU over the measured time (from measureFrom, or the whole
// run when no sample falls after it) and per interval.
func (m *cpuMeter) result(measureFrom time.Time, loadLimit float64, sharedHost bool) *results.CPU {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &results.CPU{LoadLimit: loadLimit, HostCores: runtime.NumCPU(), SharedHost: sharedHost}
	ss := m.samples
	if len(ss) > 0 && ss[0].hostCPUs > 0 {
		c.HostCores = ss[0].hostCPUs // what the host's busy time is a share of
	}
	if len(ss) < 2 {
		c.Unread = "too short to sample"
		return c
	}
	for i := 1; i < len(ss); i++ {
		if dt := ss[i].at.Sub(ss[i-1].at).Seconds(); dt > 0 {
			redis, _ := busiest(ss[i-1], ss[i])
			c.Series = append(c.Series, results.CPUPoint{T: ss[i].at.Sub(m.base).Seconds(), Redis: redis, Load: (ss[i].load - ss[i-1].load) / dt})
		}
	}
	first := 0
	for i, s := range ss {
		if !s.at.Before(measureFrom) {
			first = i
			break
		}
	}
	if first == len(ss)-1 {
		first = 0 // the measured time holds one sample: take the whole run
	}
	window := ss[first:]
	last := window[len(window)-1]
	if dt := last.at.Sub(window[0].at).Seconds(); dt > 0 {
		c.Load = (last.load - window[0].load) / dt
		c.Helper = max(0, (last.helper-window[0].helper)/dt)
		c.HelperSys = min(c.Helper, max(0, (last.helperSys-window[0].helperSys)/dt))
		if last.hostOK && window[0].hostOK && last.host >= window[0].host {
			c.Host = (last.host - window[0].host) / dt
		}
	}
	// Per server: the intervals in which it answered both readings and its
	// counters did not restart.
	type acc struct{ main, total, secs float64 }
	per := map[string]*acc{}
	for i := 1; i < len(window); i++ {
		a, b := window[i-1], window[i]
		dt := b.redisAt.Sub(a.redisAt).Seconds()
		for addr, cb := range b.redis {
			ca, ok := a.redis[addr]
			if !ok || cb.total < ca.total || cb.main < ca.main || dt <= 0 {
				continue
			}
			x := per[addr]
			if x == nil {
				x = &acc{}
				per[addr] = x
			}
			x.main += cb.main - ca.main
			x.total += cb.total - ca.total
			x.secs += dt
		}
	}
	if len(per) == 0 {
		c.Unread = m.unread
		if c.Unread == "" {
			c.Unread = "no server answered twice"
		}
		return c
	}
	for addr, x := range per {
		if x.secs <= 0 {
			continue
		}
		if r := x.main / x.secs; r > c.Redis || c.RedisNode == "" {
			c.Redis, c.RedisNode = r, addr
		}
		c.RedisTotal += x.total / x.secs
	}
	return c
}

// busiest is the highest command-thread rate of any server between two
// samples, and its address.
func busiest(a, b cpuSample) (float64, string) {
	dt := b.redisAt.Sub(a.redisAt).Seconds()
	var top float64
	var node string
	for addr, cb := range b.redis {
		if ca, ok := a.redis[addr]; ok && cb.main >= ca.main && dt > 0 {
			if r := (cb.main - ca.main) / dt; r > top {
				top, node = r, addr
			}
		}
	}
	return top, node
}

// readServerCPU reads INFO cpu from every server rdb reaches: a cluster's
// nodes, or the one server.
func readServerCPU(ctx context.Context, rdb redis.UniversalClient) (map[string]serverCPU, error) {
	out := map[string]serverCPU{}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err := cc.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error {
			info, err := n.Info(ctx, "cpu").Result()
			if err != nil {
				return err
			}
			mu.Lock()
			out[n.Options().Addr] = parseServerCPU(info)
			mu.Unlock()
			return nil
		})
		if len(out) > 0 {
			err = nil // the servers that answered are still figures
		}
		return out, err
	}
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return nil, err
	}
	addr := "redis"
	if c, ok := rdb.(*redis.Client); ok {
		addr = c.Options().Addr
	}
	s := parseServerCPU(info)
	if s.total == 0 && s.main == 0 {
		return nil, errors.New("no used_cpu_* fields in the reply")
	}
	out[addr] = s
	return out, nil
}

// parseServerCPU reads used_cpu_{sys,user}[_main_thread] from INFO cpu.
func parseServerCPU(info string) serverCPU {
	var s serverCPU
	var main float64
	var hasMain bool
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		switch k {
		case "used_cpu_sys", "used_cpu_user":
			s.total += f
		case "used_cpu_sys_main_thread", "used_cpu_user_main_thread":
			main += f
			hasMain = true
		}
	}
	s.main = s.total
	if hasMain {
		s.main = main
	}
	return s
}

// loadCores is how many cores the load generator can use: GOMAXPROCS, or
// every core where the implementation runs helper processes beside it.
func loadCores(impl Impl) float64 {
	if _, ok := impl.(Processes); ok {
		return float64(runtime.NumCPU())
	}
	return float64(runtime.GOMAXPROCS(0))
}

// sharedHost reports whether the Redis of meta runs on this host: local
// redis-servers, or a loopback address (a local container engine's ports
// are published there).
func sharedHost(meta results.Meta) bool {
	if meta.RedisBackend == "local" {
		return true
	}
	for _, a := range strings.Split(meta.RedisAddr, ",") {
		host, _, err := net.SplitHostPort(strings.TrimSpace(a))
		if err != nil {
			host = strings.TrimSpace(a)
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
			return true
		}
	}
	return false
}

// CPUSpan measures the CPU of the servers rdb reaches and of this process
// over a span of work that runs outside Run (bench perf's baselines):
// StartCPU, the work, End.
type CPUSpan struct {
	m     *cpuMeter
	start time.Time
	impl  Impl // StartCPUOf's
}

// StartCPU takes a span's first reading.
func StartCPU(ctx context.Context, rdb redis.UniversalClient) *CPUSpan {
	start := time.Now()
	s := &CPUSpan{m: newCPUMeter(rdb, nil, start), start: start}
	s.m.sample(ctx)
	return s
}

// StartCPUOf is StartCPU whose Load counts impl's helper processes
// (Processes) too, as a run's does.
func StartCPUOf(ctx context.Context, rdb redis.UniversalClient, impl Impl) *CPUSpan {
	start := time.Now()
	s := &CPUSpan{m: newCPUMeter(rdb, impl, start), start: start, impl: impl}
	s.m.sample(ctx)
	return s
}

// End takes the span's last reading and returns its CPU; Load is this
// process's (and the helpers' of StartCPUOf's impl).
func (s *CPUSpan) End(ctx context.Context) *results.CPU {
	s.m.sample(ctx)
	if s.impl != nil {
		return s.m.result(s.start, loadCores(s.impl), true)
	}
	return s.m.result(s.start, float64(runtime.GOMAXPROCS(0)), false)
}
