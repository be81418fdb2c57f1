package wire

import "github.com/lockbench/lockbench/lockimpl/kind"

// Family says whose scripts a non-fair call runs: the reentrant lock's, a
// half of the read-write lock's, or one of the reentrant lock's variants,
// which share its hash and differ in one script each.
type Family uint8

// The families.
const (
	Whole        Family = iota // RLock
	ReadHalf                   // RReadWriteLock's read lock
	WriteHalf                  // RReadWriteLock's write lock
	Fenced                     // RFencedLock: every acquisition increments a token
	Spin                       // spin lock: unlocks publish nothing, waiters poll
	NonReentrant               // non-reentrant lock: the holder's second acquisition is an error
)

// Lock is a lock of one kind, name and owner as its scripts see it.
type Lock struct {
	// Family is whose scripts it runs (a fair kind runs the fair scripts,
	// and its Family is Whole).
	Family Family
	// Field is the owner's field in the lock's hash; Channel is where the
	// lock's waiters are woken: a fair lock wakes each waiter on its own.
	Field, Channel string
}

// LockOf is the lock of kind k named name held by owner (its Redisson
// thread id).
func LockOf(k kind.Kind, name, owner string) Lock {
	switch k {
	case kind.Read:
		return Lock{ReadHalf, owner, RWLockChannel(name)}
	case kind.Write:
		return Lock{WriteHalf, owner + ":write", RWLockChannel(name)}
	case kind.Fenced:
		return Lock{Fenced, owner, LockChannel(name)}
	case kind.Spin:
		return Lock{Spin, owner, ""} // nobody waits on a channel
	case kind.NonReentrant:
		return Lock{NonReentrant, owner, LockChannel(name)}
	}
	if k.Fair() {
		return Lock{Whole, owner, LockChannel(name) + ":" + owner}
	}
	return Lock{Whole, owner, LockChannel(name)}
}
