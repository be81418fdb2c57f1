package perf

import "os"

// resetPeakRSS makes the process's peak RSS start again from its present
// RSS (Linux 4.0+: clear_refs 5 resets the high-water mark that getrusage
// reports), so that a run's peak is its own; it reports whether it could.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}
