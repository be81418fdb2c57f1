package workloads

import (
	"fmt"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestHandleCap: each owner caches up to maxHandles handles until the
// owners' share of handleBudget is smaller, and always at least one.
func TestHandleCap(t *testing.T) {
	for _, c := range []struct{ owners, want int }{
		{0, maxHandles},
		{1, maxHandles},
		{1_000, maxHandles},
		{handleBudget / maxHandles, maxHandles},
		{10_000, handleBudget / 10_000},
		{handleBudget, 1},
		{1_000_000, 1},
	} {
		if got := handleCap(c.owners); got != c.want {
			t.Errorf("handleCap(%d) = %d, want %d", c.owners, got, c.want)
		}
		if got := handleCap(c.owners); c.owners > 0 && got*c.owners > max(handleBudget, c.owners) {
			t.Errorf("handleCap(%d) = %d: %d handles in all, past the budget of %d", c.owners, got, got*c.owners, handleBudget)
		}
	}
}

// TestClientPool: a connection per owner and four more, at least ten, at
// most maxClientPool.
func TestClientPool(t *testing.T) {
	for _, c := range []struct{ owners, want int }{{1, 10}, {6, 10}, {16, 20}, {252, 256}, {1_000, maxClientPool}, {10_000, maxClientPool}} {
		if got := clientPool(c.owners); got != c.want {
			t.Errorf("clientPool(%d) = %d, want %d", c.owners, got, c.want)
		}
	}
}

// countingOwner makes a new handle per Locker call and counts them.
type countingOwner struct{ made map[handleKey]int }

func (o *countingOwner) ID() string { return "counting" }
func (o *countingOwner) Locker(name string, m results.Mode) Locker {
	var lock int
	fmt.Sscan(name, &lock)
	o.made[handleKey{lock, m}]++
	return &countedLocker{name: name}
}

type countedLocker struct {
	Locker
	name string
}

// TestHandleCache: an owner keeps the handles it uses, up to its cap in
// all (the last one used counting), and makes one anew only past the cap;
// with a cap of one, the handle of its one name is kept.
func TestHandleCache(t *testing.T) {
	for _, c := range []struct {
		name             string
		cap, keys        int
		minMade, maxMade int // handles made over three rounds of every key
	}{
		{"within the cap", 4, 4, 4, 4},
		{"one name, cap one", 1, 1, 1, 1},
		{"past the cap", 2, 3, 4, 9}, // three keys in two places: some are made again
		{"cap one, two names", 1, 2, 6, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &countingOwner{made: map[handleKey]int{}}
			w := &worker{r: &run{runEnv: &runEnv{names: []string{"0", "1", "2", "3"}}, handleCap: c.cap}, owner: o}
			for range 3 {
				for k := range c.keys {
					h := w.handle(k, results.Exclusive)
					if got := h.(*countedLocker).name; got != fmt.Sprint(k) {
						t.Fatalf("handle(%d) is %q's", k, got)
					}
					if again := w.handle(k, results.Exclusive); again != h {
						t.Fatalf("handle(%d) asked twice in a row gave two handles", k)
					}
				}
			}
			made := 0
			for _, n := range o.made {
				made += n
			}
			if made < c.minMade || made > c.maxMade {
				t.Errorf("made %d handles, want %d to %d", made, c.minMade, c.maxMade)
			}
			if len(w.handles) > max(c.cap-1, 0) {
				t.Errorf("%d handles in the map beside the last, past the cap %d", len(w.handles), c.cap)
			}
		})
	}
}
