// Package lockimpl is a Go implementation of Redisson's lock family on
// go-redis v9, wire-compatible with current Redisson (3.44+ / 4.x): the
// same keys, hash fields, Lua state changes, pub/sub channels and messages,
// and unlock latch. A Java service using Redisson and a Go service using
// lockimpl exclude each other on the same lock name, wake each other's
// waiters and read each other's state. It imports no other package of this
// module.
//
// A Client is a RedissonClient: one per process, with a UUID. An Owner is a
// Redisson thread, the unit of reentrancy, with id "<client UUID>:<n>":
// give each goroutine its own. Owners get locks: Lock (RLock), FairLock
// (RFairLock), ReadWriteLock (RReadWriteLock, whose ReadLock and WriteLock
// are Locks), FencedLock (RFencedLock: every acquisition gets the next
// fencing token, Hold.Token), SpinLock (waiters poll with backoff, no
// pub/sub), NonReentrantLock and NonReentrantFairLock (the holder asking
// again gets ErrNonReentrant); Lock.Kind says which. Owner.NewMultiLock
// groups locks taken all or none (RedissonMultiLock). Lock.Lock and Lock.TryLock
// return a Hold, the one handle that re-enters (Hold.Reenter), unlocks
// (Hold.Unlock) and says the hold was lost (Hold.Lost). An owner asking
// again for a lock it holds or is acquiring gets ErrHeld, so two
// goroutines that share an owner are told, instead of silently re-entering
// each other's hold. Package lockimpl/protocol exports the bare script
// calls for tools that measure the scripts without this client.
//
// Like Redisson's, a fair lock's queue and its waiters' deadlines have no
// TTL: a dead waiter leaves only when the next acquisition of the same name
// purges it. PurgeFairQueue does that purge for a name nobody will take
// again.
//
// For a lock named L (braces in L are kept as the hash tag):
//
//	L                                   hash: owner field -> hold count; read-write: "mode" -> read|write,
//	                                    write holder's field is "<owner>:write"
//	{L}:<owner>:rwlock_timeout:<n>      one key per read hold n, with that hold's lease
//	redisson_lock_queue:{L}             fair lock: waiting owners, in order
//	redisson_lock_timeout:{L}           fair lock: each waiter's deadline (ms since epoch)
//	redisson_lock__channel:{L}          reentrant lock unlocks publish "0" here
//	redisson_lock__channel:{L}:<owner>  fair lock: only the head waiter is notified
//	redisson_rwlock:{L}                 read unlock publishes "0", write unlock "1" (wakes all)
//	redisson_unlock_latch:{L}:<req>     per-unlock latch: a re-sent unlock gets the first answer
//	redisson_lock_token:{L}             fenced lock: the last token issued; never expires
//
// Locks taken without a lease (LockOptions.Lease or TryLockOptions.Lease
// zero) get Options.WatchdogTimeout as TTL, and the client's watchdog
// renews them every third of it while the owner holds them; read locks
// renew only this owner's own timeout keys. Fixed leases are never
// renewed; a re-entry keeps the lease its hold was taken with. Waiting uses pub/sub, one subscription per channel per
// client shared by its waiting owners, and each wait is bounded by the TTL
// the acquire script replied, so a lost message costs at most one TTL.
//
// # Replica sync
//
// As Redisson's checkLockSyncedSlaves (on by default), every acquisition
// on a primary with connected replicas is followed in the same round trip
// by WAIT (WAITAOF on a primary with AOF on, Redis 7.2+), bounded by
// Options.ReplicaSyncTimeout (1 s); when no replica acknowledged, the
// acquisition is given back and fails with ErrReplicaSync, so a failover
// cannot promote a replica that never saw it. Options.SkipReplicaSync
// sends nothing (Redisson still sends the WAIT and ignores it). One
// acknowledging replica narrows the failover window; it does not close it.
//
// # Auto-pipelining
//
// With Options.AutoPipeline, or a *redis.AutoPipeliner given as the
// client, the lock commands of all owners of a Client share go-redis's
// autopipeliner: commands in flight at once go out in one write and come
// back in one read, so the server spends one read and one write call on a
// batch instead of on each command, and the client one wake-up. Where the
// client's round trips, not the server, were the limit (many owners,
// short holds), that has been worth half as much throughput again, and
// next to nothing on a host whose goroutine wake-ups were slow; where
// owners mostly hold and think it costs a little. Measure yours (bench
// run --auto-pipeline true). With Options.AutoPipeline lockimpl picks the
// way per command: a crowd (more than 3 commands of the client in flight)
// rides go-redis's default autopipeliner, which waits to fill a batch; an
// attempt after a wait rides one that flushes at once; unlocks, which end
// critical sections others may wait on, and commands with nothing in
// flight beside them go straight to a pooled connection; the rest ride the
// one that flushes at once. Acquisitions are still never resent: every
// lock command goes as one go-redis must not
// retry (Cmder.NoRetry), since an autopipeliner retries whole batches; an
// unlock whose connection failed is re-sent by lockimpl with its latch.
// Each owner waits for each reply before its next command, even past its
// context's end (go-redis sends a queued command anyway), so the order the
// autopipeliner keeps between owners is not needed, and no lock command
// runs after its sender stopped waiting for it. Pub/sub, the
// watchdog's pipelined renewals and the WAIT of replica sync stay on the
// client's own connections, so a replica-synced acquisition is not batched.
//
// # Fencing tokens
//
// A fenced lock's token counter never expires, as in Redisson: were it to
// expire or be deleted, tokens would start again at 1 and a resource that
// checks them would refuse every new holder (or, if it forgot too, accept
// a stale one). Each name ever fenced costs one small string key for
// ever; an application with unbounded names should fence a bounded set
// (for example one name per resource shard) or delete the counters of
// names retired for good. Tokens also go backwards when Redis loses the
// counter: a restart without persistence, or a failover to a replica that
// had not received the latest INCR.
//
// # Redis Cluster
//
// On a *redis.ClusterClient every script touches one slot (the keys above
// share the name's hash tag) and, where the cluster answers sharded
// pub/sub (Redis 7), messages go by SPUBLISH and waiters SSUBSCRIBE, one
// connection per channel to the node serving its slot. When that node
// drops the subscription because the slot left it (migration, failover),
// its waiters retry at once and the subscription is made again at the
// slot's new owner; after connection errors the client rereads the slot
// map, as Redisson rescans its topology.
//
// # Lost holds
//
// Beyond Redisson, which renews silently and lets a holder believe it still
// holds a lock that expired, Hold.Lost returns a channel that closes when
// the hold is known lost. Each hold has its own channel, so one kept from
// an earlier hold never speaks for a later one. Every hold has a deadline on the monotonic clock:
// the send time of the last request that set its TTL (acquisition,
// re-entry, partial unlock, watchdog renewal) plus that TTL. Since Redis
// starts a TTL on receipt, never before the send, the real expiry is never
// earlier. Lost closes when a renewal or unlock finds the hold gone, when
// the deadline less a safety margin (Options.LostMargin: by default 1% of
// the TTL plus 2 ms for clock drift, as Redlock allows, plus 100 ms, or
// twice what this client's timers have lately been late, for the holder's
// own scheduling delays; at most half the TTL) passes without a newer successful renewal (Redis
// unreachable, paused, or slow for a whole TTL), when a fixed lease runs
// out, when the client is closed (renewals stop), and when an unlock whose
// outcome is unknown (an error or timeout) was the owner's last
// acquisition: like Redisson, lockimpl then stops renewing, so a lock whose
// unlock never arrived expires within its lease instead of being renewed
// forever for an owner that has let go. It also re-sends that unlock in the
// background with the same latch (a repeat of one Redis already applied
// changes nothing) for up to half the latch's lifetime, as Redisson's
// command retries do, so such a lock is usually released at once rather
// than left to its lease while every waiter sleeps out its bound.
// Hold.Deadline says when Lost closes, Hold.Context gives a context that
// ends with the hold, and a re-entry that returns after its hold's
// deadline is given back. A holder that stops its critical
// section on Lost never overlaps the next holder, unless it notices later
// than the margin allows (a process frozen or starved of CPU longer than
// that: checking Lost or the Deadline right before each irreversible step
// is never late), clocks run at rates further apart, or Redis loses the write
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
// never the state peers see (checked by running Redisson's own scripts
// side by side with these on thousands of random operation sequences, for
// every kind): the
// fair lock replies, to an already queued waiter while another heads the
// queue of a free lock (or one without TTL), 50 ms at most instead of 0
// (Redisson's waiters spin there until the head takes the lock); a fair
// unlock of a lock that no longer exists is ErrNotHeld (Redisson reports
// success); a write unlock that leaves this owner's read
// holds also publishes, so waiting readers retry at once; a read unlock
// that ends this owner's last read hold while the lock stays held replies 2
// (Redisson 0); a waiter that leaves the fair queue from its head notifies
// the new head (Redisson does not, so the new head waits out its bound); a
// read→write upgrade by the same owner fails with ErrUpgrade instead of
// waiting for itself forever; a multi-lock takes its locks in name order,
// not the order given; replica sync sends nothing when turned off, or
// when the primary has no replicas. The fair locks' one-attempt TryLock
// replies the lock's PTTL where Redisson replies 1. Latch values are private to the unlock that
// wrote them (each has its own request id), so these replies never reach
// a peer.
//
// One client behaviour goes beyond Redisson: when an owner's last known
// acquisition is released but Redis still counts more under its identity
// (acquisitions applied whose replies were lost), the unlock gives those
// back too, instead of leaving them to hold the lock for a lease after
// every re-entry. The chaos reset-storm scenario found this case, and the
// failed-unlock one above, stalling locks until the run ended.
package lockimpl
