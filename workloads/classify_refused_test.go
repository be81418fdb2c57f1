package workloads_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// refusing is an error of another library's driver that says whether a
// safety setting refused the acquisition.
type refusing bool

func (r refusing) Error() string { return "driver error" }
func (r refusing) Refused() bool { return bool(r) }

// TestClassifyRefusedByDriver: a driver's error that says it is a
// refusal classifies as refused, wrapped or not; one that says it is not
// stays another error.
func TestClassifyRefusedByDriver(t *testing.T) {
	for _, c := range []struct {
		err  error
		want results.ErrClass
	}{
		{refusing(true), results.ErrRefused},
		{fmt.Errorf("holder 0: %w", refusing(true)), results.ErrRefused},
		{refusing(false), results.ErrOther},
		{errors.New("NoSyncedSlavesException"), results.ErrOther},
	} {
		if got := workloads.Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
