package workloads

import "testing"

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
