package workloads_test

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/workloads"
)

// TestSplitCoversEveryOwnerOnce splits profiles over several worker
// counts: every client and owner of the whole belongs to exactly one
// worker, in order, with the same locks; the rates and operation counts
// add up to the whole's.
func TestSplitCoversEveryOwnerOnce(t *testing.T) {
	for _, shape := range []struct{ clients, owners int }{{1, 3}, {4, 4}, {7, 2}, {10, 1}, {13, 5}} {
		for workers := 1; workers <= shape.clients && workers <= 8; workers++ {
			p := short(t, "mutex", shape.clients, shape.owners, 0, 0)
			p.Rate, p.Think, p.Ops = 1000, workloads.FixedDist(0), 997
			whole := p.TotalOwners()
			seen := make([]int, whole)
			clients, nextOwner := 0, 0
			var rate float64
			var ops int64
			for i := range workers {
				s, err := p.Split(i, workers)
				if err != nil {
					t.Fatalf("%d×%d over %d, worker %d: %v", shape.clients, shape.owners, workers, i, err)
				}
				sp := s.Profile
				if s.Index != i || s.Workers != workers || s.TotalOwners != whole || s.TotalRate != p.Rate {
					t.Errorf("share %+v does not say what it is part of", s)
				}
				if s.FirstClient != clients || s.FirstOwner != nextOwner {
					t.Errorf("%d workers, worker %d starts at client %d owner %d, want %d and %d (contiguous)",
						workers, i, s.FirstClient, s.FirstOwner, clients, nextOwner)
				}
				if sp.Clients < shape.clients/workers || sp.Clients > shape.clients/workers+1 {
					t.Errorf("%d clients over %d workers: worker %d has %d", shape.clients, workers, i, sp.Clients)
				}
				if sp.Owners != p.Owners || sp.Locks != p.Locks || sp.Seed != p.Seed || sp.Name != p.Name {
					t.Errorf("worker %d's profile changed more than clients, rate and ops: %+v", i, sp)
				}
				if err := sp.Validate(); err != nil {
					t.Errorf("worker %d's profile does not validate: %v", i, err)
				}
				for o := range sp.TotalOwners() {
					seen[s.FirstOwner+o]++
				}
				clients += sp.Clients
				nextOwner += sp.TotalOwners()
				rate += sp.Rate
				ops += sp.Ops
				if want := p.Rate * float64(sp.TotalOwners()) / float64(whole); math.Abs(sp.Rate-want) > 1e-9 {
					t.Errorf("worker %d's rate %g, want %g (its owners' part)", i, sp.Rate, want)
				}
			}
			if clients != p.Clients {
				t.Errorf("%d workers run %d clients, want %d", workers, clients, p.Clients)
			}
			for o, n := range seen {
				if n != 1 {
					t.Errorf("%d×%d over %d workers: owner %d runs %d times, want once", shape.clients, shape.owners, workers, o, n)
				}
			}
			if math.Abs(rate-p.Rate) > 1e-6 {
				t.Errorf("%d workers' rates add up to %g, want %g", workers, rate, p.Rate)
			}
			if ops != p.Ops {
				t.Errorf("%d workers' ops add up to %d, want %d", workers, ops, p.Ops)
			}
		}
	}
}

// TestSplitIsDeterministic: the same index gets the same share every time.
func TestSplitIsDeterministic(t *testing.T) {
	p := short(t, "mutex", 10, 3, 0, time.Second)
	for i := range 4 {
		a, errA := p.Split(i, 4)
		b, errB := p.Split(i, 4)
		if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("Split(%d, 4) twice: %+v, %v and %+v, %v", i, a, errA, b, errB)
		}
	}
	s, _ := p.Split(1, 4) // 10 clients over 4: 3, 3, 2, 2
	if got := s.String(); got != "worker 1 of 4: clients 3..5, owners 9..17 of 30" {
		t.Errorf("share 1 of 4 prints as %q", got)
	}
}

func TestSplitRefusesBadWorkers(t *testing.T) {
	p := short(t, "mutex", 3, 4, 0, time.Second)
	for _, c := range []struct {
		index, workers int
		field, says    string
	}{
		{0, 0, "workers", "at least 1"},
		{0, -2, "workers", "at least 1"},
		{0, 4, "workers", "at most 3 workers"},
		{3, 3, "worker-index", "0..2"},
		{-1, 3, "worker-index", "0..2"},
	} {
		_, err := p.Split(c.index, c.workers)
		requireFieldError(t, err, c.field)
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("Split(%d, %d): %v, want it to say %q", c.index, c.workers, err, c.says)
		}
	}

	// An operation count too small to give every worker one: every
	// worker refuses, not only the one left without.
	few := p
	few.Ops = 2
	for i := range 3 {
		if _, err := few.Split(i, 3); err == nil {
			t.Errorf("2 ops over 3 workers: worker %d accepted", i)
		} else {
			requireFieldError(t, err, "workers")
		}
	}

	// A profile that does not validate is not split.
	broken := p
	broken.Clients = 0
	_, err := broken.Split(0, 1)
	requireFieldError(t, err, "clients")
}
