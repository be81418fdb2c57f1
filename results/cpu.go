package results

// CPU is where a run's CPU time went over its measured time, in cores (1
// is one core busy all the time), and which side of the run saturated. A
// benchmark that does not say who ran out of CPU cannot say whether it
// measured the lock, the server or itself.
type CPU struct {
	// Redis is the busiest server's main thread: Redis runs commands on
	// one thread, so near 1 the server is the limit. From INFO
	// used_cpu_*_main_thread, or the process's used_cpu_* where the
	// server has no per-thread figures.
	Redis float64 `json:"redis_cores"`
	// RedisNode is that server's address.
	RedisNode string `json:"redis_node,omitempty"`
	// RedisTotal is the CPU of every server read, processes whole
	// (background threads and forks' parents included).
	RedisTotal float64 `json:"redis_total_cores"`
	// Load is the load generator's: this process (driver, lock client,
	// Go client) and its helper processes (Redisson's JVM).
	Load float64 `json:"load_cores"`
	// Waits is lockbench's own part of Load that its waits took: spinning
	// to deadlines and the high-resolution clock's kicks (Waits.CPUS over the measured
	// time); the rest of Own drove the load.
	Waits float64 `json:"wait_cores,omitempty"`
	// Helper is the helper processes' part of Load (Redisson's JVM), so
	// that the JVM's CPU reads apart from lockbench's own; 0 without any.
	Helper float64 `json:"helper_cores,omitempty"`
	// HelperSys is the kernel's part of Helper (the helpers' system time:
	// their sockets' reads and writes, futexes, epoll), so that the JVM's
	// time in its own code reads apart from the syscalls it makes.
	HelperSys float64 `json:"helper_sys_cores,omitempty"`
	// LoadLimit is how many cores the load generator can use: GOMAXPROCS,
	// or every core of the host where a helper process runs beside it.
	LoadLimit float64 `json:"load_limit_cores"`
	// HostCores is this host's CPUs; SharedHost says Redis runs on the
	// same host (local or container backend) and competes for them.
	HostCores  int  `json:"host_cores"`
	SharedHost bool `json:"shared_host"`
	// Host is the busy time of this host's CPUs, every process and the
	// kernel counted (0 where it could not be read): beside Redis and the
	// load generator it shows what other work took.
	Host float64 `json:"host_busy_cores,omitempty"`
	// Unread says why Redis's CPU could not be read (INFO refused or not
	// answered); Redis and RedisTotal are then 0.
	Unread string `json:"unread,omitempty"`
	// Series is the same per interval, over the whole run.
	Series []CPUPoint `json:"series,omitempty"`
}

// CPUPoint is one interval's CPU, in cores.
type CPUPoint struct {
	T     float64 `json:"t_s"` // end of the interval, seconds since the run started
	Redis float64 `json:"redis_cores"`
	Load  float64 `json:"load_cores"`
}

// Saturated is the share of a core (or of a set of cores) above which it
// counts as used up: sampling and the scheduler keep a busy one a few per
// cent short of full.
const Saturated = 0.9

// The limits Limit names.
const (
	LimitRedis = "redis" // the server's command thread
	LimitLoad  = "load"  // the load generator's CPUs
	LimitHost  = "host"  // a host shared by both ran out of cores
	LimitNone  = ""      // nothing saturated: latency is the limit
)

// HostBusy is the host's busy CPU: the kernel's count where it was read,
// else what Redis and the load generator used.
func (c *CPU) HostBusy() float64 {
	if c.Host > 0 {
		return c.Host
	}
	return c.RedisTotal + c.Load
}

// Own is the load generator's CPU without its helper processes': this
// process's.
func (c *CPU) Own() float64 { return max(0, c.Load-c.Helper) }

// Driving is lockbench's own CPU less what its waits took.
func (c *CPU) Driving() float64 { return max(0, c.Own()-c.Waits) }

// Others is the host CPU that neither Redis nor the load generator used:
// other processes and the kernel's work no process is charged for.
func (c *CPU) Others() float64 {
	if c.Host <= 0 || c.Unread != "" {
		return 0 // with Redis's share unknown, nothing can be told apart
	}
	return max(0, c.Host-c.RedisTotal-c.Load)
}

// Limit names what saturated: the server's command thread, the load
// generator's CPUs, the CPUs of a host both share, or nothing.
func (c *CPU) Limit() string {
	switch {
	case c.Unread == "" && c.Redis >= Saturated:
		return LimitRedis
	case c.LoadLimit > 0 && c.Load >= Saturated*c.LoadLimit:
		return LimitLoad
	case c.SharedHost && c.HostCores > 0 && (c.Unread == "" || c.Host > 0) && c.HostBusy() >= Saturated*float64(c.HostCores):
		return LimitHost
	}
	return LimitNone
}
