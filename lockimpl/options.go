package lockimpl

import (
	"fmt"
	"github.com/redis/go-redis/v9"
	"time"
)

// Defaults, the same as Redisson's.
const (
	// DefaultWatchdogTimeout is the lease of a lock taken without one
	// (Redisson's lockWatchdogTimeout); the watchdog renews it every third of it.
	DefaultWatchdogTimeout = 30 * time.Second
	// DefaultFairWaitTimeout is how long a queued fair-lock waiter may take
	// to claim its turn before others skip it (Redisson's fairLockWaitTimeout).
	DefaultFairWaitTimeout = 5 * time.Minute
	// DefaultLatchTimeout is how long an unlock's latch key lives, so that a
	// re-sent unlock gets the first one's answer. Redisson derives it from
	// (timeout + retry delay) × retry attempts = (3 s + 2 s) × 4.
	DefaultLatchTimeout = 20 * time.Second
	// DefaultSubscribeTimeout bounds waiting for a pub/sub subscription to
	// be confirmed (Redisson's subscriptionTimeout).
	DefaultSubscribeTimeout = 7500 * time.Millisecond
	// DefaultReplicaSyncTimeout bounds the WAIT after an acquisition
	// (Redisson's slavesSyncTimeout).
	DefaultReplicaSyncTimeout = time.Second
	// DefaultSpinInitialDelay and DefaultSpinMaxDelay bound a spin lock's
	// sleeps between attempts (Redisson's ExponentialBackOff defaults).
	DefaultSpinInitialDelay = time.Millisecond
	DefaultSpinMaxDelay     = 128 * time.Millisecond
	// SchedulingAllowance is the part of the default Options.LostMargin
	// that covers the holder's own delays: a timer that fires late and a
	// goroutine that runs late on a host whose CPUs are busy.
	SchedulingAllowance = 100 * time.Millisecond
)

// PublishMode says how unlock messages travel.
type PublishMode int

// Publish modes.
const (
	// PublishAuto uses SPUBLISH/SSUBSCRIBE on a Redis Cluster that supports
	// sharded pub/sub (Redis 7+), PUBLISH/SUBSCRIBE otherwise, as Redisson does.
	PublishAuto PublishMode = iota
	// PublishPlain forces PUBLISH/SUBSCRIBE.
	PublishPlain
	// PublishSharded forces SPUBLISH/SSUBSCRIBE.
	PublishSharded
)

// String is the mode's name.
func (m PublishMode) String() string {
	switch m {
	case PublishAuto:
		return "auto"
	case PublishPlain:
		return "plain"
	case PublishSharded:
		return "sharded"
	}
	return fmt.Sprintf("PublishMode(%d)", int(m))
}

// Options configure a Client. The zero value means every default.
type Options struct {
	// WatchdogTimeout is the lease of locks taken without one; the watchdog
	// renews such holds every WatchdogTimeout/3. Default DefaultWatchdogTimeout.
	WatchdogTimeout time.Duration
	// FairWaitTimeout is added to a fair-lock waiter's deadline in the queue
	// when it waits without a wait time (Lock). Default DefaultFairWaitTimeout.
	FairWaitTimeout time.Duration
	// Clock is the client's wall clock, which the fair lock sends to Redis
	// as "now" for queue deadlines. Chaos tests skew it. Default time.Now.
	Clock func() time.Time
	// PublishMode picks PUBLISH or SPUBLISH. Default PublishAuto.
	PublishMode PublishMode
	// LatchTimeout is the lifetime of an unlock's latch key. Default DefaultLatchTimeout.
	LatchTimeout time.Duration
	// SubscribeTimeout bounds the wait for a subscription confirmation.
	// Default DefaultSubscribeTimeout.
	SubscribeTimeout time.Duration
	// AcquireClient, when set, runs the acquire scripts; it must not retry
	// (MaxRetries -1) and must reach the same server as the Client's rdb.
	// Default: rdb itself, sending each acquisition as a command go-redis
	// never resends (Cmder.NoRetry), whatever its MaxRetries.
	AcquireClient redis.Scripter
	// AutoPipeline batches the lock commands of many owners that send
	// again at once (a crowd of them in flight) on go-redis's autopipeliner
	// of rdb, one write and one read per batch, which lifts throughput
	// where the client's round trips, not Redis, are the limit; every other
	// command goes as on a plain client. Lock commands are still never
	// resent by go-redis, and each is waited for once queued, so none runs
	// after its sender gave up on it. docs/lockimpl.md says which command
	// rides which way, and why.
	AutoPipeline bool
	// SkipReplicaSync turns off the replica check. By default, as in
	// Redisson (checkLockSyncedSlaves), every acquisition on a primary with
	// connected replicas is followed, in the same round trip, by WAIT
	// (WAITAOF when the primary has AOF on), and an acquisition that no
	// replica acknowledged within ReplicaSyncTimeout is given back and
	// fails with ErrReplicaSync: a failover then cannot hand the lock to a
	// second holder because the first one's write never left the primary.
	// One acknowledging replica is enough; it narrows the failover window
	// but does not close it (WAIT does not make Redis consistent). With
	// SkipReplicaSync nothing is sent (Redisson still sends the WAIT and
	// ignores its answer). Without replicas nothing is sent either; the
	// count is read from INFO at most once a second.
	SkipReplicaSync bool
	// MinReplicaAcks, when above 0, makes every acquisition wait for that
	// many replicas to acknowledge it, however many INFO counts connected,
	// and gives back and fails (ErrReplicaSync) one that fewer
	// acknowledged. The default check counts the replicas it sees: a
	// primary whose replica's link is already down sends no WAIT and
	// holds the lock on its own, which a failover then loses. With
	// MinReplicaAcks that acquisition fails instead: safety bought with
	// availability while a replica is away. Refused with SkipReplicaSync.
	MinReplicaAcks int
	// ReplicaSyncTimeout bounds the WAITs of one acquisition, all
	// together (a script the primary had lost is sent again within what
	// is left); keep it under the redis client's ReadTimeout. Default
	// DefaultReplicaSyncTimeout.
	ReplicaSyncTimeout time.Duration
	// SpinInitialDelay and SpinMaxDelay bound a spin lock's sleeps between
	// attempts: the first is SpinInitialDelay, each next one twice the last
	// plus a little jitter, up to SpinMaxDelay. Defaults
	// DefaultSpinInitialDelay and DefaultSpinMaxDelay.
	SpinInitialDelay time.Duration
	SpinMaxDelay     time.Duration
	// ID is the client's UUID, the first half of every owner id. Empty
	// means a new random UUID (as Redisson's ServiceManager id).
	ID string
	// LostMargin is how long before the earliest moment a hold's key may
	// expire in Redis its Lost channel closes (and Hold.Deadline falls).
	// Zero: 1% of the TTL plus 2 ms for clocks running at different rates
	// (Redlock's allowance), plus SchedulingAllowance or, when this
	// client's deadline timers have lately fired later than that, twice
	// their lateness. Either way, a margin set here too, it is at most
	// half the TTL: a hold keeps at least half its lease.
	// Raise it where a holder needs time to stop: what it does after Lost
	// closes must end before the key can expire. Negative is refused.
	LostMargin time.Duration
}

func (o Options) withDefaults() Options {
	if o.WatchdogTimeout <= 0 {
		o.WatchdogTimeout = DefaultWatchdogTimeout
	}
	if o.FairWaitTimeout <= 0 {
		o.FairWaitTimeout = DefaultFairWaitTimeout
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.LatchTimeout <= 0 {
		o.LatchTimeout = DefaultLatchTimeout
	}
	if o.SubscribeTimeout <= 0 {
		o.SubscribeTimeout = DefaultSubscribeTimeout
	}
	if o.ReplicaSyncTimeout <= 0 {
		o.ReplicaSyncTimeout = DefaultReplicaSyncTimeout
	}
	if o.SpinInitialDelay <= 0 {
		o.SpinInitialDelay = DefaultSpinInitialDelay
	}
	if o.SpinMaxDelay <= 0 {
		o.SpinMaxDelay = DefaultSpinMaxDelay
	}
	o.SpinMaxDelay = max(o.SpinMaxDelay, o.SpinInitialDelay)
	return o
}

// ms is a duration as the integer milliseconds Redis arguments need
// (go-redis would send a time.Duration as nanoseconds), at least 1.
func ms(d time.Duration) int64 {
	return max(1, d.Milliseconds())
}
