package wire

import "strings"

// Redisson derives every key and channel of a lock from its name so that
// all of them hash to the name's Redis Cluster slot: the name goes inside
// braces, unless it already has braces, which then stay the hash tag.

// prefixName is Redisson's prefixName: "p:{name}", or "p:name" when name
// already contains "{".
func prefixName(p, name string) string {
	if strings.Contains(name, "{") {
		return p + ":" + name
	}
	return p + ":{" + name + "}"
}

// suffixName is Redisson's suffixName: "{name}:s", or "name:s" when name
// already contains "{".
func suffixName(name, s string) string {
	if strings.Contains(name, "{") {
		return name + ":" + s
	}
	return "{" + name + "}:" + s
}

// Key and channel names, exactly as Redisson writes them.
func LockChannel(name string) string   { return prefixName("redisson_lock__channel", name) }
func RWLockChannel(name string) string { return prefixName("redisson_rwlock", name) }
func FairQueueKey(name string) string  { return prefixName("redisson_lock_queue", name) }
func FairTimeoutKey(name string) string {
	return prefixName("redisson_lock_timeout", name)
}
func TokenKey(name string) string { return prefixName("redisson_lock_token", name) }

// UnlockLatchKey is "redisson_unlock_latch:{name}:<requestID>", made in
// one allocation: every unlock makes one.
func UnlockLatchKey(name string, requestID []byte) string {
	if strings.Contains(name, "{") {
		return "redisson_unlock_latch:" + name + ":" + string(requestID)
	}
	return "redisson_unlock_latch:{" + name + "}:" + string(requestID)
}

// ReadTimeoutPrefix is "{name}:<field>:rwlock_timeout"; the n-th read hold
// of that owner has the key prefix + ":" + n.
func ReadTimeoutPrefix(name, field string) string {
	return suffixName(name, field) + ":rwlock_timeout"
}

// ReadKeyPrefix is what precedes ":<field>" in ReadTimeoutPrefix: "{name}"
// (or name itself when it has braces). The read unlock and renewal scripts
// rebuild every owner's timeout keys from it.
func ReadKeyPrefix(name, field string) string {
	if strings.Contains(name, "{") {
		return name
	}
	return "{" + name + "}"
}

// Unlock messages, as Redisson sends them (LongCodec: ASCII digits).
const (
	UnlockMessage     = "0" // wakes one waiter per client
	ReadUnlockMessage = "1" // wakes every waiter (write unlock: all readers may go)
)

// NonReentrantError is the error reply of a non-reentrant lock's acquire
// when the owner already holds it (Redisson's REENTRY_ERR).
const NonReentrantError = "NON_REENTRANT_REACQUIRE"
