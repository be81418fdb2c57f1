//go:build !linux

package perf

// resetPeakRSS cannot reset the peak here: points run fewest owners first
// instead (ScalePoints).
func resetPeakRSS() bool { return false }
