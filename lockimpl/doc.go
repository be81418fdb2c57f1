// Package lockimpl is Redisson's lock family in Go, on go-redis v9 and
// wire-compatible with current Redisson (3.44+ / 4.x).
//
// It uses the same keys, hash fields, Lua state changes, pub/sub channels
// and messages, and unlock latch as Redisson, so a Java service using
// Redisson and a Go service using lockimpl exclude each other on the same
// lock name, wake each other's waiters and read each other's state. It
// imports no other package of this module.
//
// A Client is a RedissonClient, one per process; an Owner is a Redisson
// thread, the unit of reentrancy: give each goroutine its own. Owners make
// locks of each kind Kind names, and multi-locks taken all or none
// (Owner.NewMultiLock). Lock and TryLock return a Hold, the one handle that
// re-enters, unlocks and says the hold was lost. An owner asking again for
// a lock it holds or is acquiring gets ErrHeld, so two goroutines that
// share an owner are told instead of re-entering each other's hold.
// docs/lockimpl.md describes the keys, the watchdog, replica sync,
// auto-pipelining, fencing tokens and Redis Cluster.
//
// # Lost holds
//
// Beyond Redisson, which renews silently and lets a holder believe it still
// holds a lock that expired, Hold.Lost returns a channel that closes when
// the hold is known lost. Each hold has its own channel, so one kept from
// an earlier hold never speaks for a later one. Every hold has a deadline
// on the monotonic clock: the send time of the last request that set its
// TTL (acquisition, re-entry, partial unlock, watchdog renewal) plus that
// TTL. Since Redis starts a TTL on receipt, never before the send, the real
// expiry is never earlier. Lost closes when a renewal or unlock finds the
// hold gone, when the deadline less a safety margin (Options.LostMargin: by
// default 1% of the TTL plus 2 ms for clock drift, as Redlock allows, plus
// 100 ms, or twice what this client's timers have lately been late, for the
// holder's own scheduling delays; at most half the TTL) passes without a
// newer successful renewal (Redis unreachable, paused, or slow for a whole
// TTL), when a fixed lease runs out, when the client is closed (renewals
// stop), and when an unlock whose outcome is unknown (an error or timeout)
// was the owner's last acquisition: like Redisson, lockimpl then stops
// renewing, so a lock whose unlock never arrived expires within its lease
// instead of being renewed forever for an owner that has let go. It also
// re-sends that unlock in the background with the same latch (a repeat of
// one Redis already applied changes nothing) for up to half the latch's
// lifetime, as Redisson's command retries do, so such a lock is usually
// released at once rather than left to its lease while every waiter sleeps
// out its bound. Hold.Deadline says when Lost closes, Hold.Context gives a
// context that ends with the hold, and a re-entry that returns after its
// hold's deadline is given back. A holder that stops its critical section
// on Lost never overlaps the next holder, unless it notices later than the
// margin allows (a process frozen or starved of CPU longer than that:
// checking Lost or the Deadline right before each irreversible step is
// never late), clocks run at rates further apart, or Redis loses the write
// (restart without persistence, failover): the chaos scenarios show each.
//
// One exception is inherent to Redisson's read-write lock: all holds of a
// name share the hash's TTL, and a peer's read renewal sets it to that
// peer's watchdog timeout, which may be shorter than our lease (a fixed
// lease, or a peer configured with a shorter timeout). lockimpl re-reads
// the TTL of every read-write lock it holds each watchdog round (every
// third of WatchdogTimeout), so in such mixed setups Lost of a read or
// write hold can close up to one round late.
//
// # Differences from Redisson
//
// Only replies, two extra wake-up messages and client behaviour differ,
// never the state peers see (checked by running Redisson's own scripts side
// by side with these on thousands of random operation sequences, for every
// kind): the fair lock replies, to an already queued waiter while another
// heads the queue of a free lock (or one without TTL), 50 ms at most
// instead of 0 (Redisson's waiters spin there until the head takes the
// lock); a fair unlock of a lock that no longer exists is ErrNotHeld
// (Redisson reports success); a write unlock that leaves this owner's read
// holds also publishes, so waiting readers retry at once; a read unlock
// that ends this owner's last read hold while the lock stays held replies 2
// (Redisson 0); a waiter that leaves the fair queue from its head notifies
// the new head (Redisson does not, so the new head waits out its bound); a
// read→write upgrade by the same owner fails with ErrUpgrade instead of
// waiting for itself forever; a multi-lock takes its locks in name order,
// not the order given; replica sync sends nothing when turned off, or when
// the primary has no replicas. The fair locks' one-attempt TryLock replies
// the lock's PTTL where Redisson replies 1. Latch values are private to the
// unlock that wrote them (each has its own request id), so these replies
// never reach a peer.
//
// One client behaviour goes beyond Redisson: when an owner's last known
// acquisition is released but Redis still counts more under its identity
// (acquisitions applied whose replies were lost), the unlock gives those
// back too, instead of leaving them to hold the lock for a lease after
// every re-entry.
package lockimpl
