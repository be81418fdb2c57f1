// Package kind names the locks lockimpl implements, Redisson's lock family,
// in one table: each kind's name (as profiles, results and the Redisson
// driver's protocol spell it) and what its holds are like. It imports
// nothing, so that packages which only name kinds need not pull in
// lockimpl's client and go-redis; lockimpl re-exports it as lockimpl.Kind.
package kind

import (
	"fmt"
	"strings"
)

// Kind is which of Redisson's locks a lock is.
type Kind uint8

// The kinds.
const (
	// Reentrant is RLock: exclusive, reentrant.
	Reentrant Kind = iota
	// Fair is RFairLock: exclusive, reentrant, granted in queue order.
	Fair
	// Read is the read half of RReadWriteLock: shared among readers.
	Read
	// Write is the write half of RReadWriteLock: exclusive.
	Write
	// Fenced is RFencedLock: a reentrant lock whose every acquisition,
	// re-entries included, returns the next fencing token of its name.
	Fenced
	// Spin is Redisson's spin lock: a reentrant lock whose waiters poll
	// with exponential backoff instead of subscribing, and whose unlocks
	// publish nothing.
	Spin
	// NonReentrant is Redisson's non-reentrant lock: exclusive, and the
	// holder asking again is refused.
	NonReentrant
	// NonReentrantFair is the non-reentrant fair lock: FIFO, and the
	// holder asking again is refused.
	NonReentrantFair
	numKinds
)

// kinds is the table every property of a kind is read from.
var kinds = [numKinds]struct {
	name string
	// need is what a workload of this kind needs of a lock implementation,
	// as a phrase ("needs fencing tokens").
	need                          string
	fair, nonReentrant, rw, fence bool
}{
	Reentrant:        {name: "reentrant", need: "a reentrant lock"},
	Fair:             {name: "fair", need: "a fair lock", fair: true},
	Read:             {name: "read", need: "a read-write lock's read lock", rw: true},
	Write:            {name: "write", need: "a read-write lock's write lock", rw: true},
	Fenced:           {name: "fenced", need: "fencing tokens", fence: true},
	Spin:             {name: "spin", need: "a spin lock that polls without pub/sub"},
	NonReentrant:     {name: "non-reentrant", need: "a lock that refuses its holder a second acquisition", nonReentrant: true},
	NonReentrantFair: {name: "non-reentrant-fair", need: "a fair lock that refuses its holder a second acquisition", fair: true, nonReentrant: true},
}

// All lists every kind, in the table's order.
func All() []Kind {
	all := make([]Kind, numKinds)
	for i := range all {
		all[i] = Kind(i)
	}
	return all
}

// Parse reads a kind's name.
func Parse(name string) (Kind, error) {
	for k := range numKinds {
		if kinds[k].name == name {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown lock kind %q; use %s", name, List(All()))
}

// List is names of ks for messages: "a, b or c".
func List[K fmt.Stringer](ks []K) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.String()
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// String is the kind's name: "reentrant", "fair", "read", "write",
// "fenced", "spin", "non-reentrant" or "non-reentrant-fair".
func (k Kind) String() string {
	if k < numKinds {
		return kinds[k].name
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Need is what using locks of kind k needs of a lock implementation, as a
// phrase: "fencing tokens", "a fair lock".
func (k Kind) Need() string {
	if k < numKinds {
		return kinds[k].need
	}
	return k.String()
}

// Fair reports whether k grants the lock in queue order.
func (k Kind) Fair() bool { return k < numKinds && kinds[k].fair }

// Reentrant reports whether the holder of a lock of kind k may take it again.
func (k Kind) Reentrant() bool { return k < numKinds && !kinds[k].nonReentrant }

// Fenced reports whether k's acquisitions get fencing tokens.
func (k Kind) Fenced() bool { return k < numKinds && kinds[k].fence }

// ReadWrite reports whether k is a half of a read-write lock (Read or
// Write), whose holds share one hash with the other half's.
func (k Kind) ReadWrite() bool { return k < numKinds && kinds[k].rw }

// Shared reports whether holds of kind k share the lock with each other:
// only read holds do; every other kind's holds exclude every other
// holder.
func (k Kind) Shared() bool { return k == Read }
