package workloads

import (
	"fmt"

	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/results"
)

// Kind is the lock a profile drives, by name: a lock kind that profiles
// drive alone (KindOf), or RW or Multi, which drive several locks. Each
// acquisition's lock is Kind.Lock.
type Kind string

// The kinds made of several locks.
const (
	// RW is RReadWriteLock: each operation takes its read lock (read_ratio
	// of them) or its write lock.
	RW Kind = "rw"
	// Multi is RedissonMultiLock: each operation takes Multi names
	// (reentrant locks) all or none.
	Multi Kind = "multi"
)

// KindOf is the profile kind that drives locks of kind k alone.
func KindOf(k kind.Kind) Kind { return Kind(k.String()) }

// alone reports whether a profile drives lock kind k alone: every kind
// but the read-write lock's halves, which RW drives, and the non-reentrant
// fair lock, which no profile drives (removing it here is all a profile
// needs to).
func alone(k kind.Kind) bool { return !k.ReadWrite() && k != kind.NonReentrantFair }

// Kinds lists the profile kinds in the lock kinds' order: the kinds
// driven alone, RW where the read-write lock's halves are, and Multi.
func Kinds() []Kind {
	var ks []Kind
	for _, k := range kind.All() {
		switch {
		case k == kind.Read:
			ks = append(ks, RW)
		case alone(k):
			ks = append(ks, KindOf(k))
		}
	}
	return append(ks, Multi)
}

func (k Kind) String() string { return string(k) }

// Lock is the kind of lock an acquisition in mode m takes under profile
// kind k: the read-write lock's half for m under RW, a reentrant lock for
// each of a multi-lock's names, else k's own. ok is false for a name that
// is no profile kind.
func (k Kind) Lock(m results.Mode) (l kind.Kind, ok bool) {
	switch k {
	case RW:
		if m == results.Read {
			return kind.Read, true
		}
		return kind.Write, true
	case Multi:
		return kind.Reentrant, true
	}
	l, err := kind.Parse(string(k))
	if err != nil || !alone(l) {
		return 0, false
	}
	return l, true
}

// Fair reports whether profile kind k's locks are granted in queue order.
func (k Kind) Fair() bool {
	l, _ := k.Lock(results.Exclusive)
	return l.Fair()
}

// Feature is what profile kind k needs of an implementation beyond a
// reentrant lock ("" for reentrant).
func (k Kind) Feature() Feature {
	l, _ := k.Lock(results.Exclusive)
	switch {
	case k == RW:
		return NeedReadWrite
	case k == Multi:
		return NeedMulti
	case l == kind.Reentrant:
		return ""
	}
	return Feature(fmt.Sprintf("%s (kind: %s)", l.Need(), k))
}
