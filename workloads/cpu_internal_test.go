package workloads

import (
	"math"
	"runtime"
	"testing"
	"time"
)

// Redis's share is its CPU seconds over the time between the two INFO
// replies, not between the samples' starts: an INFO that took 400 ms to
// answer would otherwise put 1.4 s of the server's work into one second.
func TestCPUMeterTimesRedisByItsReplies(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	m := &cpuMeter{base: t0, samples: []cpuSample{
		{at: at(0), redisAt: at(0), redis: map[string]serverCPU{"r": {main: 10, total: 10}}},
		{at: at(1000), redisAt: at(1400), redis: map[string]serverCPU{"r": {main: 11.4, total: 11.4}}},
	}}
	c := m.result(t0, 2, false)
	if math.Abs(c.Redis-1) > 1e-9 {
		t.Errorf("Redis = %.3f cores, want 1.000 (1.4 s of CPU over the 1.4 s between the replies)", c.Redis)
	}
	if len(c.Series) != 1 || math.Abs(c.Series[0].Redis-1) > 1e-9 {
		t.Errorf("series = %+v, want one point at 1.000", c.Series)
	}
}

// The host's busy time sums all its CPUs, so it is judged against all of
// them, not only those this process may use.
func TestHostCPUCountsTheHostsCPUs(t *testing.T) {
	secs, cpus, ok := hostCPU()
	if runtime.GOOS != "linux" {
		t.Skip("hostCPU reads /proc/stat")
	}
	if !ok || secs <= 0 || cpus < runtime.NumCPU() {
		t.Errorf("hostCPU = %.1f s, %d CPUs, ok %v; want busy time and at least runtime.NumCPU (%d) CPUs", secs, cpus, ok, runtime.NumCPU())
	}
}
