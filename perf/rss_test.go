package perf_test

import (
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"

	"github.com/lockbench/lockbench/perf"
)

func maxRSS(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Maxrss << 10
}

// TestResetPeakRSS: after a reset, the peak RSS a point reads is no longer
// that of a large allocation made and given back before it.
func TestResetPeakRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the peak RSS resets on Linux only")
	}
	const size = 256 << 20
	b := make([]byte, size)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	high := maxRSS(t)
	runtime.KeepAlive(b)
	b = nil
	debug.FreeOSMemory()
	if !perf.ResetPeakRSS() {
		t.Fatal("could not reset the peak RSS (/proc/self/clear_refs)")
	}
	if after := maxRSS(t); after > high-size/2 {
		t.Errorf("peak RSS %d MiB after the reset, %d MiB before: want the given-back %d MiB gone from it", after>>20, high>>20, size>>20)
	}
}
