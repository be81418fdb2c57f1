package workloads

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// A run's memory is about a fixed part and a part per owner (its
// goroutine's stack, its records, its share of the connections' buffers):
// some 14 to 25 KiB an owner. The collector's headroom grows the heap past
// that by half again, and the pages it frees go back to the kernel
// slowly, so a run of many owners peaks well above what it holds.
const (
	memFloor    = 232 << 20 // the soft limit of a run of up to ~10,000 owners; the binary's own pages come on top in RSS
	memPerOwner = 24 << 10  // above it: well over what an owner holds
)

// memLimits is the runs in the process that asked for a limit (tests run
// several at once): the process's limit is the sum of theirs, and the one
// before comes back when the last ends.
var memLimits memLimiter

type memLimiter struct {
	sync.Mutex
	active []int64
	before int64
}

// LimitMemory sets the runtime's soft memory limit for a run of owners, so
// that the collector runs, and returns freed pages, before the heap's
// headroom swells the footprint; the limit stays well above what such a
// run holds live (heap and stacks), so that near it the collector runs
// more often but never chases it. It returns
// what ends the run's part of the limit. With GOMEMLIMIT set it changes
// nothing.
func LimitMemory(owners int) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	limit := max(int64(memFloor), min(int64(owners), math.MaxInt64/4/memPerOwner)*memPerOwner)
	m := &memLimits
	m.Lock()
	defer m.Unlock()
	if len(m.active) == 0 {
		m.before = debug.SetMemoryLimit(-1)
	}
	m.active = append(m.active, limit)
	m.apply()
	var once sync.Once
	return func() {
		once.Do(func() {
			m.Lock()
			defer m.Unlock()
			for i, l := range m.active {
				if l == limit {
					m.active = append(m.active[:i], m.active[i+1:]...)
					break
				}
			}
			m.apply()
		})
	}
}

// apply sets the limit for the runs now active, or the one before.
func (m *memLimiter) apply() {
	if len(m.active) == 0 {
		debug.SetMemoryLimit(m.before)
		return
	}
	var sum int64
	for _, l := range m.active {
		sum = min(sum+l, math.MaxInt64/4) // each is at most that: no overflow
	}
	debug.SetMemoryLimit(sum)
}
