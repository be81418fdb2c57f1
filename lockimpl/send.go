package lockimpl

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
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
// lockimpl made the autopipeliners (Client.crowd set), it picks the way by
// how many commands of this client are in flight and what the command is
// for. An attempt after a wait rides cmds, which flushes at once: it is on
// a handoff's path, and a crowd's wait would only delay it. Else, with
// more than crowdSize in flight, the crowd autopipeliner, whose wait fills
// a batch; an unlock, which ends a critical section others may wait on,
// and an acquisition with nothing to share a batch with go straight to a
// pooled connection of rdb, since the autopipeliner's hand-offs between
// goroutines would only add to them; the rest ride cmds.
func (c *Client) eval(ctx context.Context, cmd command, noRetry bool) (any, error) {
	via := c.cmds
	if c.crowd != nil {
		n := c.inflight.Add(1)
		defer c.inflight.Add(-1)
		switch {
		case cmd.what == sendRetry:
		case n > crowdSize:
			via = c.crowd
		case cmd.what == sendUnlock, n == 1:
			via = c.direct
		}
	}
	return wire.Eval(ctx, via, cmd.script, cmd.args, noRetry)
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

// requestIDs makes the request ids of unlock latches: 16 random hex
// digits per client, then 16 of a counter, 32 in all like Redisson's
// random ids. A latch only has to differ from every other unlock's of the
// same lock within its lifetime; a counter does that without a random
// read per unlock.
type requestIDs struct {
	prefix [16]byte
	n      atomic.Uint64
}

// init draws the client's random prefix.
func (r *requestIDs) init() {
	var b [8]byte
	_, _ = rand.Read(b[:])
	hexTo(r.prefix[:], binary.BigEndian.Uint64(b[:]))
}

// latchKey is the key of a fresh unlock latch for lock name.
func (r *requestIDs) latchKey(name string) string {
	var id [32]byte
	copy(id[:16], r.prefix[:])
	hexTo(id[16:], r.n.Add(1))
	return wire.UnlockLatchKey(name, id[:])
}

// hexTo writes v as 16 lower-case hex digits into dst.
func hexTo(dst []byte, v uint64) {
	var buf [16]byte
	s := strconv.AppendUint(buf[:0], v, 16)
	n := copy(dst[16-len(s):], s)
	for i := range 16 - n {
		dst[i] = '0'
	}
}
