package workloads

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
)

// Fair locks keep their wait queue and the waiters' deadlines without a
// TTL (Redisson's protocol): when a run is killed, its waiters' entries
// stay, and since every run uses names of its own, no later acquisition
// ever clears them. Runs of fair profiles therefore register their lock
// names in Redis while they run; each such run first clears the queues of
// registered runs whose heartbeat stopped, once their waiters' deadlines
// have passed.
const (
	// fairRunsKey is a sorted set: a run's key prefix, scored with the
	// time (ms since the epoch) its registration lapses unless renewed.
	fairRunsKey = "lockbench:fair-runs"
	// fairNamesPrefix + a run's key prefix is the set of its lock names.
	fairNamesPrefix = "lockbench:fair-run-names:"
	// fairHeartbeat is how often a running run renews its registration;
	// it lapses after fairLapse without one.
	fairHeartbeat = 10 * time.Second
	fairLapse     = 3 * fairHeartbeat
	// fairSkew is the margin for clocks of other machines: a waiter's
	// deadline is its own clock's.
	fairSkew = 10 * time.Second
)

// fairRegistry registers one run's fair lock names.
type fairRegistry struct {
	rdb    redis.UniversalClient
	prefix string
	names  []string
	last   time.Time // last renewal
}

// startFairRegistry clears abandoned runs' queues (see CleanStaleFairQueues)
// and registers this run's names. Its cleaning is best effort: a failure
// there never stops the run, it is only reported.
func startFairRegistry(ctx context.Context, rdb redis.UniversalClient, prefix string, names []string, now time.Time) (*fairRegistry, int, error) {
	cleaned, cerr := CleanStaleFairQueues(ctx, rdb, now)
	reg := &fairRegistry{rdb: rdb, prefix: prefix, names: names}
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	if err := rdb.SAdd(ctx, fairNamesPrefix+prefix, args...).Err(); err != nil {
		return nil, cleaned, fmt.Errorf("register fair lock names: %w", err)
	}
	if err := reg.renew(ctx, now); err != nil {
		return nil, cleaned, err
	}
	return reg, cleaned, cerr
}

// renew pushes the registration's lapse past now + fairLapse, at most once
// per heartbeat.
func (f *fairRegistry) renew(ctx context.Context, now time.Time) error {
	if !f.last.IsZero() && now.Sub(f.last) < fairHeartbeat {
		return nil
	}
	f.last = now
	if err := f.rdb.ZAdd(ctx, fairRunsKey, redis.Z{Score: float64(now.Add(fairLapse).UnixMilli()), Member: f.prefix}).Err(); err != nil {
		return fmt.Errorf("renew fair lock registration: %w", err)
	}
	return nil
}

// finish clears the run's own queues (its waiters are all gone) and
// unregisters it; a name whose queue is not empty keeps the registration,
// so that a later run clears it.
func (f *fairRegistry) finish(ctx context.Context) error {
	_, err := purgeRun(ctx, f.rdb, f.prefix, time.Now().Add(24*time.Hour))
	return err
}

// CleanStaleFairQueues clears the fair-lock queues of lockbench runs whose
// registration lapsed (killed, or cut off from Redis): every waiter whose
// deadline passed (with a margin for clock skew) leaves the queue, empty
// queues are deleted, and a run none of whose queues has a waiter left is
// unregistered. It returns how many runs it unregistered.
func CleanStaleFairQueues(ctx context.Context, rdb redis.UniversalClient, now time.Time) (int, error) {
	dead, err := rdb.ZRangeByScore(ctx, fairRunsKey, &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10)}).Result()
	if err != nil {
		return 0, fmt.Errorf("read fair lock registrations: %w", err)
	}
	cleaned := 0
	for _, prefix := range dead {
		left, err := purgeRun(ctx, rdb, prefix, now.Add(-fairSkew))
		if err != nil {
			return cleaned, err
		}
		if left == 0 {
			cleaned++
		}
	}
	return cleaned, nil
}

// purgeRun purges the queues of the run registered under prefix of every
// waiter due by now, and unregisters the run when no waiter is left. It
// returns the waiters left.
func purgeRun(ctx context.Context, rdb redis.UniversalClient, prefix string, now time.Time) (int64, error) {
	names, err := rdb.SMembers(ctx, fairNamesPrefix+prefix).Result()
	if err != nil {
		return 0, fmt.Errorf("read fair lock names of %s: %w", prefix, err)
	}
	var left int64
	for _, n := range names {
		l, err := lockimpl.PurgeFairQueue(ctx, rdb, n, now)
		if err != nil {
			return 0, err
		}
		left += l
	}
	if left > 0 {
		return left, nil
	}
	if err := rdb.Del(ctx, fairNamesPrefix+prefix).Err(); err != nil {
		return 0, fmt.Errorf("unregister %s: %w", prefix, err)
	}
	if err := rdb.ZRem(ctx, fairRunsKey, prefix).Err(); err != nil {
		return 0, fmt.Errorf("unregister %s: %w", prefix, err)
	}
	return 0, nil
}
