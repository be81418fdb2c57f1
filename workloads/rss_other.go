//go:build !unix

package workloads

// peakRSS is unknown here.
func peakRSS() int64 { return 0 }

// processCPU is unknown here.
func processCPU() float64 { return 0 }
