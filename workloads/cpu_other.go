//go:build !linux

package workloads

// pidCPU is unknown here: helper processes are left out of the load
// generator's CPU.
func pidCPU(int) (user, sys float64) { return 0, 0 }

// hostCPU is unknown here: the host's share is estimated from Redis's and
// the load generator's.
func hostCPU() (float64, int, bool) { return 0, 0, false }
