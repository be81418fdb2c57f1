package workloads

import (
	"fmt"
	"math/bits"
)

// Share is one worker's part of a profile split over several workers
// (Profile.Split): together the workers run the profile's clients ×
// owners as one machine would, on the same lock names, each owner once.
type Share struct {
	// Index is this worker's, 0..Workers-1.
	Index, Workers int
	// Profile is what this worker runs: its clients (owners per client,
	// locks and everything else as in the whole), its part of the
	// open-loop rate and of an operation count.
	Profile Profile
	// Whole is the profile split.
	Whole Profile
	// FirstClient is the whole profile's index of this worker's first
	// client, FirstOwner of its first owner (FirstClient × Owners): owner
	// i of this worker is owner FirstOwner+i of the whole, which keeps its
	// random choices, its open-loop slot and, with popularity per-owner,
	// its lock name the same as on one machine.
	FirstClient, FirstOwner int
	// TotalOwners is the whole profile's clients × owners, and TotalRate
	// its rate: the open-loop schedule is the whole's, each owner in its
	// slot.
	TotalOwners int
	TotalRate   float64
}

// Split is worker index's share of p run by workers workers: the clients
// are dealt out in contiguous runs, the first Clients mod workers workers
// one client more, so the same index always gets the same owners. The
// open-loop rate and an operation count are divided in proportion to the
// owners. It refuses more workers than clients (a client is one process's
// lock client and pool, which does not span machines), an operation count
// too small to give every worker one, and a profile that does not
// validate.
func (p Profile) Split(index, workers int) (Share, error) {
	if err := p.Validate(); err != nil {
		return Share{}, err
	}
	switch {
	case workers < 1:
		return Share{}, bad("workers", workers, "must be at least 1")
	case workers > p.Clients:
		return Share{}, bad("workers", workers, "the profile has %d %s, and each worker needs at least one; use at most %d workers, or raise clients",
			p.Clients, nounPlural(p.Clients, "client", "clients"), p.Clients)
	case index < 0 || index >= workers:
		return Share{}, bad("worker-index", index, "must be 0..%d for %d workers", workers-1, workers)
	}
	// Clients dealt out in contiguous runs, the first Clients mod workers
	// one more.
	base, extra := p.Clients/workers, p.Clients%workers
	firstClient := func(i int) int { return i*base + min(i, extra) }
	first, n := firstClient(index), firstClient(index+1)-firstClient(index)
	total := p.TotalOwners()
	s := Share{
		Index: index, Workers: workers, Profile: p, Whole: p,
		FirstClient: first, FirstOwner: first * p.Owners,
		TotalOwners: total, TotalRate: p.Rate,
	}
	s.Profile.Clients = n
	if p.Rate > 0 {
		s.Profile.Rate = p.Rate * float64(n*p.Owners) / float64(total)
	}
	if p.Ops > 0 {
		// Cumulative shares rounded down, differenced: the parts add up
		// to Ops exactly. 128-bit products: ops × owners can pass int64.
		upTo := func(worker int) int64 {
			hi, lo := bits.Mul64(uint64(p.Ops), uint64(firstClient(worker)*p.Owners))
			q, _ := bits.Div64(hi, lo, uint64(total)) // hi < total, as the owners are at most total
			return int64(q)
		}
		// Every worker refuses when one would get none, not only that one.
		for i := range workers {
			if upTo(i+1) == upTo(i) {
				return Share{}, bad("workers", workers, "the profile's %d ops leave worker %d none; use fewer workers or raise ops", p.Ops, i)
			}
		}
		s.Profile.Ops = upTo(index+1) - upTo(index)
	}
	return s, nil
}

// String says which part of the whole the share is, for logs.
func (s Share) String() string {
	return fmt.Sprintf("worker %d of %d: clients %d..%d, owners %d..%d of %d",
		s.Index, s.Workers, s.FirstClient, s.FirstClient+s.Profile.Clients-1,
		s.FirstOwner, s.FirstOwner+s.Profile.TotalOwners()-1, s.TotalOwners)
}
