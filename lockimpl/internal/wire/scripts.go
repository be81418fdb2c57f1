package wire

import (
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The Lua below makes the same state changes as Redisson's scripts (keys,
// fields, TTLs, queue and zset, latch, publishes) so that Java and Go peers
// share one lock. Where a reply differs it is noted: replies only reach the
// caller, never another peer. Scripts run with EVALSHA and fall back to EVAL
// on NOSCRIPT (redis.Script.Run), as Redisson does with useScriptCache.
//
// A nil reply means "acquired" for acquire scripts and "not held" for unlock
// scripts, as in Redisson.

// latchReplay answers a re-sent unlock (same request id, so same latch
// key) with the first send's reply, changing nothing. Needs local latch.
const latchReplay = `
local earlier = redis.call('get', latch)
if earlier then
	return tonumber(earlier)
end
`

// --- reentrant lock (RLock) ---

// KEYS: lock. ARGV: lease ms, field.
var ReentrantAcquire = newScript(`
local lock, lease, field = KEYS[1], ARGV[1], ARGV[2]
if redis.call('exists', lock) == 0 or redis.call('hexists', lock, field) == 1 then
	redis.call('hincrby', lock, field, 1)
	redis.call('pexpire', lock, lease)
	return nil
end
return redis.call('pttl', lock)
`)

// KEYS: lock, channel, latch. ARGV: message, lease ms, field, publish
// command, latch ms. Replies 1 released, 0 still held (count decremented),
// nil not held; a retried call with the same latch replies as the first did.
var ReentrantUnlock = newScript(`
local lock, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local msg, lease, field, publish, latchTTL = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
` + latchReplay + `if redis.call('hexists', lock, field) == 0 then
	return nil
end
if redis.call('hincrby', lock, field, -1) > 0 then
	redis.call('pexpire', lock, lease)
	redis.call('set', latch, 0, 'px', latchTTL)
	return 0
end
redis.call('del', lock)
redis.call(publish, channel, msg)
redis.call('set', latch, 1, 'px', latchTTL)
return 1
`)

// KEYS: lock, channel. ARGV: message, publish command. Replies 1 if a lock was deleted.
var ReentrantForceUnlock = redis.NewScript(`
if redis.call('del', KEYS[1]) == 1 then
	redis.call(ARGV[2], KEYS[2], ARGV[1])
	return 1
end
return 0
`)

// KEYS: lock. ARGV: lease ms, field. Replies 1 if renewed, 0 if not held.
var RenewHash = redis.NewScript(`
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 1
end
return 0
`)

// --- the reentrant lock's variants ---

// KEYS: lock, token. ARGV: lease ms, field. RFencedLock's acquire: the
// reentrant acquire, and every acquisition (re-entry included) increments
// the token counter, which never expires. Replies {-1, token} when
// acquired, else {PTTL, -1}.
var FencedAcquire = newScript(`
local lock, token, lease, field = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
if redis.call('exists', lock) == 0 or redis.call('hexists', lock, field) == 1 then
	local t = redis.call('incr', token)
	redis.call('hincrby', lock, field, 1)
	redis.call('pexpire', lock, lease)
	return {-1, t}
end
return {redis.call('pttl', lock), -1}
`)

// KEYS: lock. ARGV: lease ms, field, NonReentrantError. The reentrant
// acquire, except that the holder asking again gets an error reply.
var NonReentrantAcquire = newScript(`
local lock, lease, field, refusal = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
if redis.call('exists', lock) == 0 then
	redis.call('hincrby', lock, field, 1)
	redis.call('pexpire', lock, lease)
	return nil
end
` + refuseReentry + `
return redis.call('pttl', lock)
`)

// KEYS: lock, latch. ARGV: lease ms, field, latch ms. The spin lock's
// unlock: the reentrant unlock without a message, since its waiters poll.
var SpinUnlock = newScript(`
local lock, latch = KEYS[1], KEYS[2]
local lease, field, latchTTL = ARGV[1], ARGV[2], ARGV[3]
` + latchReplay + `if redis.call('hexists', lock, field) == 0 then
	return nil
end
if redis.call('hincrby', lock, field, -1) > 0 then
	redis.call('pexpire', lock, lease)
	redis.call('set', latch, 0, 'px', latchTTL)
	return 0
end
redis.call('del', lock)
redis.call('set', latch, 1, 'px', latchTTL)
return 1
`)

// --- fair lock (RFairLock) ---

// fairPurge drops queue heads whose deadline (zset score) has passed: the
// waiter gave up or died. Other deadlines are left alone. Needs locals
// queue, deadlines, now.
const fairPurge = `
while true do
	local head = redis.call('lindex', queue, 0)
	if not head then break end
	local due = redis.call('zscore', deadlines, head)
	if due and tonumber(due) <= now then
		redis.call('zrem', deadlines, head)
		redis.call('lpop', queue)
	else
		break
	end
end
`

// fairFirst takes a free lock when the queue is empty or this owner heads
// it: it leaves the queue, every remaining deadline moves wait ms earlier,
// and the hold starts at 1. Needs lock, queue, deadlines, lease, field, wait.
const fairFirst = `
if redis.call('exists', lock) == 0 and
	(redis.call('exists', queue) == 0 or redis.call('lindex', queue, 0) == field) then
	redis.call('lpop', queue)
	redis.call('zrem', deadlines, field)
	for _, waiter in ipairs(redis.call('zrange', deadlines, 0, -1)) do
		redis.call('zincrby', deadlines, -wait, waiter)
	end
	redis.call('hset', lock, field, 1)
	redis.call('pexpire', lock, lease)
	return nil
end
`

// fairReenter is the fair lock's re-entry by its holder.
const fairReenter = `
if redis.call('hexists', lock, field) == 1 then
	redis.call('hincrby', lock, field, 1)
	redis.call('pexpire', lock, lease)
	return nil
end
`

// refuseReentry is the non-reentrant locks' answer to their holder asking
// again: an error reply carrying NonReentrantError, changing nothing. Needs
// lock, field, refusal.
const refuseReentry = `
if redis.call('hexists', lock, field) == 1 then
	return redis.error_reply(refusal)
end
`

// FairRetryMs bounds how long a queued fair-lock waiter sleeps while the
// lock is free and another waiter, ahead of it, is about to take it.
const FairRetryMs = 50

var fairRetryMs = strconv.Itoa(FairRetryMs)

// KEYS: lock, queue, deadlines. ARGV: lease ms, field, wait ms, now ms
// (and NonReentrantError for the non-reentrant ones). One attempt that
// never joins the queue (Redisson's tryLock()); replies nil when acquired,
// else the lock's PTTL (Redisson replies 1).
var (
	FairTryOnce             = newScript(fairTryOnce(fairReenter))
	NonReentrantFairTryOnce = newScript(fairTryOnce(refuseReentry))
)

func fairTryOnce(again string) string {
	return `
local lock, queue, deadlines = KEYS[1], KEYS[2], KEYS[3]
local lease, field, wait, now, refusal = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
` + fairPurge + fairFirst + again + `
return redis.call('pttl', lock)
`
}

// KEYS: lock, queue, deadlines. ARGV: lease ms, field, wait ms, now ms
// (and NonReentrantError for the non-reentrant one).
// Acquires, or queues this owner with the deadline "predecessor's deadline
// (or the lock's PTTL) + wait" and replies how long to wait at most.
//
// Reply of an owner already queued: the lock's PTTL when it is held (as
// Redisson), so that every queued waiter looks again when a lease can have
// expired: nothing is published when a lease runs out. When the lock is
// free (or has no TTL) but another owner heads the queue, Redisson replies
// 0, which makes its waiters spin until the head takes the lock; this
// replies FairRetryMs at most (less when the head's deadline comes
// sooner), so they look again as soon, without spinning: the lease the head
// takes is what they wait for next.
var (
	FairAcquire             = newScript(fairAcquire(fairReenter))
	NonReentrantFairAcquire = newScript(fairAcquire(refuseReentry))
)

func fairAcquire(again string) string {
	return `
local lock, queue, deadlines = KEYS[1], KEYS[2], KEYS[3]
local lease, field, wait, now, refusal = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
` + fairPurge + fairFirst + again + `
if redis.call('zscore', deadlines, field) then
	local ttl = redis.call('pttl', lock)
	if ttl > 0 then return ttl end
	local head = redis.call('lindex', queue, 0)
	local due = head and redis.call('zscore', deadlines, head)
	if due then return math.max(1, math.min(tonumber(due) - now, ` + fairRetryMs + `)) end
	return 1
end
local last = redis.call('lindex', queue, -1)
local ttl
if last and last ~= field and redis.call('zscore', deadlines, last) then
	ttl = tonumber(redis.call('zscore', deadlines, last)) - now
else
	ttl = redis.call('pttl', lock)
end
if redis.call('zadd', deadlines, ttl + wait + now, field) == 1 then
	redis.call('rpush', queue, field)
end
return ttl
`
}

// KEYS: queue, deadlines, lock, channel. ARGV: field, wait ms, message,
// publish command. A waiter that gives up leaves the queue; the waiters
// behind it move wait ms earlier. When it headed the queue of a free lock,
// the new head is told (Redisson is silent here, and its new head waits
// out its bound).
var FairLeave = redis.NewScript(`
local queue, deadlines, lock, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local field, wait, msg, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local waiters = redis.call('lrange', queue, 0, -1)
local behind = false
for _, w in ipairs(waiters) do
	if behind then
		redis.call('zincrby', deadlines, -wait, w)
	elseif w == field then
		behind = true
	end
end
redis.call('zrem', deadlines, field)
redis.call('lrem', queue, 0, field)
if waiters[1] == field and redis.call('exists', lock) == 0 then
	local head = redis.call('lindex', queue, 0)
	if head then
		redis.call(publish, channel .. ':' .. head, msg)
	end
end
`)

// KEYS: lock, queue, deadlines, channel, latch. ARGV: message, lease ms,
// field, now ms, publish command, latch ms. Release notifies only the head
// waiter, on its own channel "<channel>:<field>". Replies as
// ReentrantUnlock, and -1 when the lock did not exist (Redisson replies 1
// there; the head is notified either way).
var FairUnlock = newScript(`
local lock, queue, deadlines, channel, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local msg, lease, field, now, publish, latchTTL = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
` + latchReplay + `` + fairPurge + `
local function notifyHead()
	local head = redis.call('lindex', queue, 0)
	if head then
		redis.call(publish, channel .. ':' .. head, msg)
	end
end
if redis.call('exists', lock) == 0 then
	notifyHead()
	redis.call('set', latch, -1, 'px', latchTTL)
	return -1
end
if redis.call('hexists', lock, field) == 0 then
	return nil
end
if redis.call('hincrby', lock, field, -1) > 0 then
	redis.call('pexpire', lock, lease)
	redis.call('set', latch, 0, 'px', latchTTL)
	return 0
end
redis.call('del', lock)
redis.call('set', latch, 1, 'px', latchTTL)
notifyHead()
return 1
`)

// KEYS: lock, queue, deadlines, channel. ARGV: message, now ms, publish command.
var FairForceUnlock = redis.NewScript(`
local lock, queue, deadlines, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local msg, now, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3]
` + fairPurge + `
if redis.call('del', lock) == 1 then
	local head = redis.call('lindex', queue, 0)
	if head then
		redis.call(publish, channel .. ':' .. head, msg)
	end
	return 1
end
return 0
`)

// --- read-write lock (RReadWriteLock) ---

// KEYS: lock, this owner's timeout prefix. ARGV: lease ms, field, write field.
// A read hold is granted when nobody holds the lock, when it is in read
// mode, or when this owner holds the write lock (downgrade). Each read hold
// n gets its own key "<prefix>:n" with its own lease; the hash lives as long
// as the longest of them.
var ReadAcquire = newScript(`
local lock, prefix = KEYS[1], KEYS[2]
local lease, field, writeField = ARGV[1], ARGV[2], ARGV[3]
local mode = redis.call('hget', lock, 'mode')
if not mode then
	redis.call('hset', lock, 'mode', 'read')
	redis.call('hset', lock, field, 1)
	redis.call('set', prefix .. ':1', 1)
	redis.call('pexpire', prefix .. ':1', lease)
	redis.call('pexpire', lock, lease)
	return nil
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', lock, writeField) == 1) then
	local n = redis.call('hincrby', lock, field, 1)
	local key = prefix .. ':' .. n
	redis.call('set', key, 1)
	redis.call('pexpire', key, lease)
	redis.call('pexpire', lock, math.max(redis.call('pttl', lock), tonumber(lease)))
	return nil
end
return redis.call('pttl', lock)
`)

// KEYS: lock, channel, this owner's timeout prefix, key prefix, latch.
// ARGV: message, field, publish command, latch ms. After a read hold ends
// the hash keeps the longest remaining lease of all read holds; the last
// hold deletes it and wakes waiters. Where Redisson replies 0 (lock still
// held) although this owner's last read hold just ended (others read on,
// or this owner still writes), this replies 2, so the caller knows its
// read hold is over.
var ReadUnlock = newScript(`
local lock, channel, prefix, keyPrefix, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local msg, field, publish, latchTTL = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
` + latchReplay + `local mode = redis.call('hget', lock, 'mode')
if not mode then
	redis.call(publish, channel, msg)
	redis.call('set', latch, 1, 'px', latchTTL)
	return nil
end
if redis.call('hexists', lock, field) == 0 then
	return nil
end
local left = redis.call('hincrby', lock, field, -1)
if left == 0 then
	redis.call('hdel', lock, field)
end
redis.call('del', prefix .. ':' .. (left + 1))
if redis.call('hlen', lock) > 1 then
	local longest = -3
	for _, owner in ipairs(redis.call('hkeys', lock)) do
		local holds = tonumber(redis.call('hget', lock, owner))
		if holds then
			for i = holds, 1, -1 do
				longest = math.max(longest, redis.call('pttl', keyPrefix .. ':' .. owner .. ':rwlock_timeout:' .. i))
			end
		end
	end
	local kept = 0
	if left == 0 then kept = 2 end
	if longest > 0 then
		redis.call('pexpire', lock, longest)
		redis.call('set', latch, kept, 'px', latchTTL)
		return kept
	end
	if mode == 'write' then
		redis.call('set', latch, kept, 'px', latchTTL)
		return kept
	end
end
redis.call('del', lock)
redis.call(publish, channel, msg)
redis.call('set', latch, 1, 'px', latchTTL)
return 1
`)

// KEYS: lock. ARGV: lease ms, write field. Re-entry adds the lease to the
// remaining TTL, as Redisson does.
var WriteAcquire = newScript(`
local lock, lease, field = KEYS[1], ARGV[1], ARGV[2]
local mode = redis.call('hget', lock, 'mode')
if not mode then
	redis.call('hset', lock, 'mode', 'write')
	redis.call('hset', lock, field, 1)
	redis.call('pexpire', lock, lease)
	return nil
end
if mode == 'write' and redis.call('hexists', lock, field) == 1 then
	redis.call('hincrby', lock, field, 1)
	redis.call('pexpire', lock, redis.call('pttl', lock) + tonumber(lease))
	return nil
end
return redis.call('pttl', lock)
`)

// KEYS: lock, channel, latch. ARGV: message, lease ms, write field, publish
// command, latch ms. When the owner still holds reads, the lock switches to
// read mode; Redisson publishes nothing then, this also publishes the
// message, so that waiting readers of every client retry at once instead of
// after their TTL wait (a peer only ever retries on a message).
var WriteUnlock = newScript(`
local lock, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local msg, lease, field, publish, latchTTL = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
` + latchReplay + `local mode = redis.call('hget', lock, 'mode')
if not mode then
	redis.call(publish, channel, msg)
	redis.call('set', latch, 1, 'px', latchTTL)
	return nil
end
if mode ~= 'write' or redis.call('hexists', lock, field) == 0 then
	return nil
end
if redis.call('hincrby', lock, field, -1) > 0 then
	redis.call('pexpire', lock, lease)
	redis.call('set', latch, 0, 'px', latchTTL)
	return 0
end
redis.call('hdel', lock, field)
if redis.call('hlen', lock) == 1 then
	redis.call('del', lock)
else
	redis.call('hset', lock, 'mode', 'read')
end
redis.call(publish, channel, msg)
redis.call('set', latch, 1, 'px', latchTTL)
return 1
`)

// KEYS: lock, channel. ARGV: message, publish command, mode to delete.
var RwForceUnlock = redis.NewScript(`
if redis.call('hget', KEYS[1], 'mode') == ARGV[3] then
	redis.call('del', KEYS[1])
	redis.call(ARGV[2], KEYS[2], ARGV[1])
	return 1
end
return 0
`)

// KEYS: lock. A read lock counts as locked in read mode, or in write mode
// when someone also holds a read (more than mode and the write field).
var ReadIsLocked = redis.NewScript(`
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'read' or (mode == 'write' and redis.call('hlen', KEYS[1]) > 2) then
	return 1
end
return 0
`)

// KEYS: lock, key prefix. ARGV: lease ms, field. Renews this owner's read
// holds (their timeout keys) and the hash; never another owner's, so a
// crashed reader's holds still expire. Replies 1 if renewed, 0 if not held.
var RenewRead = redis.NewScript(`
local lock, keyPrefix, lease, field = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local holds = tonumber(redis.call('hget', lock, field))
if not holds then
	return 0
end
for i = holds, 1, -1 do
	redis.call('pexpire', keyPrefix .. ':' .. field .. ':rwlock_timeout:' .. i, lease)
end
redis.call('pexpire', lock, lease)
return 1
`)
