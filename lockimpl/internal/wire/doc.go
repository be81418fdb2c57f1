// Package wire holds what lockimpl puts on the wire: Redisson's Lua
// scripts, the key and channel names derived from a lock's name, and the
// unlock messages. lockimpl drives them; lockimpl/protocol exports single
// script calls for tools that send the scripts without lockimpl's client.
package wire

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
