package workloads_test

import (
	"slices"
	"testing"

	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// TestKinds: the profile kinds are the lock kinds a profile drives alone,
// rw in the read-write halves' place, and multi, so that files naming
// them keep loading.
func TestKinds(t *testing.T) {
	want := []workloads.Kind{"reentrant", "fair", "rw", "fenced", "spin", "non-reentrant", "multi"}
	if got := workloads.Kinds(); !slices.Equal(got, want) {
		t.Errorf("Kinds() = %v, want %v", got, want)
	}
	if _, ok := workloads.Kind("non-reentrant-fair").Lock(results.Exclusive); ok {
		t.Error("kind non-reentrant-fair is a profile kind")
	}
	if _, ok := workloads.Kind("read").Lock(results.Read); ok {
		t.Error("kind read is a profile kind: rw drives the read lock")
	}
}

// TestKindLock: the lock each acquisition takes, whose mode is the
// acquisition's.
func TestKindLock(t *testing.T) {
	for _, c := range []struct {
		k    workloads.Kind
		m    results.Mode
		want kind.Kind
	}{
		{workloads.KindOf(kind.Reentrant), results.Exclusive, kind.Reentrant},
		{workloads.KindOf(kind.Fair), results.Exclusive, kind.Fair},
		{workloads.KindOf(kind.Fenced), results.Exclusive, kind.Fenced},
		{workloads.KindOf(kind.Spin), results.Exclusive, kind.Spin},
		{workloads.KindOf(kind.NonReentrant), results.Exclusive, kind.NonReentrant},
		{workloads.RW, results.Read, kind.Read},
		{workloads.RW, results.Write, kind.Write},
		{workloads.Multi, results.Exclusive, kind.Reentrant},
	} {
		got, ok := c.k.Lock(c.m)
		if !ok || got != c.want {
			t.Errorf("%s in mode %s: %v, %v; want %v", c.k, c.m, got, ok, c.want)
		}
		if results.ModeOf(got) != c.m {
			t.Errorf("%s in mode %s takes a %s lock, whose mode is %s", c.k, c.m, got, results.ModeOf(got))
		}
	}
	if _, ok := workloads.Kind("spinning").Lock(results.Exclusive); ok {
		t.Error("kind spinning has a lock")
	}
}

// TestKindFeatures: what each kind needs of an implementation, which
// refusals name.
func TestKindFeatures(t *testing.T) {
	for k, want := range map[workloads.Kind]workloads.Feature{
		workloads.KindOf(kind.Reentrant):    "",
		workloads.KindOf(kind.Fair):         "a fair lock (kind: fair)",
		workloads.KindOf(kind.Fenced):       "fencing tokens (kind: fenced)",
		workloads.KindOf(kind.Spin):         "a spin lock that polls without pub/sub (kind: spin)",
		workloads.KindOf(kind.NonReentrant): "a lock that refuses its holder a second acquisition (kind: non-reentrant)",
		workloads.RW:                        workloads.NeedReadWrite,
		workloads.Multi:                     workloads.NeedMulti,
	} {
		if got := k.Feature(); got != want {
			t.Errorf("%s: feature %q, want %q", k, got, want)
		}
	}
}
