package lockimpl

import (
	"context"
	"fmt"
	"github.com/lockbench/lockbench/lockimpl/internal/wire"
	"time"

	"github.com/redis/go-redis/v9"
)

// purgeFair drops every waiter whose deadline has passed from a fair
// lock's queue, and deletes the queue and its deadlines once nobody waits:
// what Redisson's fair acquire script does for the stale waiters at the
// head of the queue, for the whole queue at once.
//
// KEYS[1] redisson_lock_queue:{L}, KEYS[2] redisson_lock_timeout:{L}
// ARGV[1] now, ms since the epoch
// Returns the waiters left.
var purgeFair = redis.NewScript(`
local stale = redis.call('zrangebyscore', KEYS[2], '-inf', ARGV[1])
for _, id in ipairs(stale) do
    redis.call('lrem', KEYS[1], 0, id)
    redis.call('zrem', KEYS[2], id)
end
local left = redis.call('llen', KEYS[1])
if left == 0 then
    redis.call('del', KEYS[1], KEYS[2])
end
return left
`)

// PurgeFairQueue removes from fair lock name's wait queue every waiter
// whose deadline is at or before now, and deletes the queue's keys once it
// is empty. It returns how many waiters are left.
//
// Redisson's fair lock keeps its queue (redisson_lock_queue:{name}) and
// the waiters' deadlines (redisson_lock_timeout:{name}) without a TTL, and
// only the next acquisition of the same name clears out waiters that died:
// a name nobody takes again keeps them for ever. A process that knows a
// name is abandoned (its users are gone) calls this to clear it up. The
// deadlines are the waiters' own clocks, as Redisson records them; pass a
// now with margin for clock skew between machines.
func PurgeFairQueue(ctx context.Context, rdb redis.Scripter, name string, now time.Time) (int64, error) {
	left, err := purgeFair.Run(ctx, rdb, []string{wire.FairQueueKey(name), wire.FairTimeoutKey(name)}, now.UnixMilli()).Int64()
	if err != nil {
		return 0, fmt.Errorf("lockimpl: purge fair queue of %s: %w", name, err)
	}
	return left, nil
}
