package lockimpl

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl/internal/wire"
)

// send is what a lock command is for.
type send uint8

const (
	sendAcquire send = iota // an acquisition's first attempt, or a re-entry
	sendRetry               // an attempt after a wait (woken, or a TTL ran out)
	sendUnlock
)

// eval sends a lock command's script call through cmds (wire.Eval). Where
// lockimpl made the autopipeliners (Client.crowd set), it picks the way
// per command, by the load: a command rides the crowd autopipeliner only
// when more than crowdSize others of this client are in flight and its
// owners send again at once after a reply (turnaround.quick), since the
// crowd holds each batch back for exactly those owners. An attempt after a
// wait never does: it is on a handoff's path. Everything else goes
// straight to a pooled connection of rdb, as on a plain client, with no
// hand-off between goroutines and no wait.
func (c *Client) eval(ctx context.Context, cmd command, noRetry bool) (any, error) {
	via := c.cmds
	if c.crowd != nil {
		n := c.inflight.Add(1)
		defer c.inflight.Add(-1)
		via = c.direct
		if o := cmd.owner; o != nil {
			quick := c.turn.sent(o)
			defer c.turn.replied(o)
			if quick && n > crowdSize && cmd.what != sendRetry {
				via = c.crowd
				c.crowded.Add(1)
			}
		}
	}
	return wire.Eval(ctx, via, cmd.script, cmd.args, noRetry)
}

// quickTurn is the longest mean turnaround (an owner's reply to its next
// command) at which owners count as sending again at once. It is well
// below go-redis's silence gap (200 µs), the longest its crowd waits for
// the owners its last batch woke: owners that hold or think longer would
// make every batch wait that long for nobody.
const quickTurn = 50 * time.Microsecond

// turnaround tracks how soon a client's owners send a lock command after
// their last one returned: a moving average over all owners, updated
// without a lock (a lost update among racing owners only slows it).
type turnaround struct {
	mean atomic.Int64 // nanoseconds; starts at 0, so the first commands count as quick
}

var turnClock = time.Now()

// sent folds o's turnaround into the mean and reports whether the mean is
// quick.
func (t *turnaround) sent(o *Owner) bool {
	m := t.mean.Load()
	if last := o.replied.Load(); last != 0 {
		gap := int64(time.Since(turnClock)) - last
		m += (gap - m) / 16
		t.mean.Store(m)
	}
	return m <= int64(quickTurn)
}

// replied marks the return of o's command.
func (t *turnaround) replied(o *Owner) {
	o.replied.Store(int64(time.Since(turnClock)))
}

// unlockRetries bounds how often lockimpl itself re-sends an unlock whose
// connection failed, when commands ride an autopipeliner and go-redis
// therefore does not (see Client.pipelined); go-redis's own default is 3.
const unlockRetries = 3

// resendable reports whether err leaves an unlock's outcome unknown for a
// reason a re-send may cure: the connection, not Redis, failed.
func resendable(err error) bool {
	var ne net.Error
	var re redis.Error
	switch {
	case err == nil, errors.Is(err, redis.Nil), errors.As(err, &re):
		return false
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return true
	}
	return false
}

// retryBackoff is the pause before re-send n (from 1): 8 ms doubling, as
// go-redis's MinRetryBackoff, to at most 512 ms.
func retryBackoff(n int) time.Duration {
	return min(8*time.Millisecond<<(n-1), 512*time.Millisecond)
}

// sleepCtx waits d, or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
