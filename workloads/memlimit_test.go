package workloads_test

import (
	"runtime/debug"
	"testing"

	"github.com/lockbench/lockbench/workloads"
)

// TestLimitMemory: a run's soft memory limit grows with its owners, above
// the floor every small run gets, and is restored afterwards; with
// GOMEMLIMIT set it is the user's and left alone.
func TestLimitMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	restore := workloads.LimitMemory(10)
	small := debug.SetMemoryLimit(-1)
	restore()
	restore = workloads.LimitMemory(1_000_000)
	big := debug.SetMemoryLimit(-1)
	restore()
	if small == before || big <= small || debug.SetMemoryLimit(-1) != before {
		t.Errorf("limits: before %d, 10 owners %d, a million %d, after %d; want one that grows with the owners, restored", before, small, big, debug.SetMemoryLimit(-1))
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	restore = workloads.LimitMemory(1_000_000)
	got := debug.SetMemoryLimit(-1)
	restore()
	if got != before {
		t.Errorf("with GOMEMLIMIT set the limit became %d", got)
	}
}

// TestLimitMemoryOverlapping: runs at once in one process share a limit of
// their sum, whatever order they end in, and the one before comes back
// when the last ends.
func TestLimitMemoryOverlapping(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	a := workloads.LimitMemory(10)
	one := debug.SetMemoryLimit(-1)
	b := workloads.LimitMemory(10)
	two := debug.SetMemoryLimit(-1)
	a()
	a() // twice is harmless
	left := debug.SetMemoryLimit(-1)
	b()
	after := debug.SetMemoryLimit(-1)
	if two != 2*one || left != one || after != before {
		t.Errorf("limits: one run %d, two %d, after the first ended %d, after both %d (before %d)", one, two, left, after, before)
	}
}
