package lockimpl

import (
	"context"
	"errors"
	"time"

	"github.com/lockbench/lockbench/lockimpl/internal/wire"

	"github.com/redis/go-redis/v9"
)

// unlock releases one acquisition of hold h (the last one releases the
// lock and wakes waiters).
func (l *Lock) unlock(ctx context.Context, h *hold) error {
	if !l.owner.current(h) {
		// Released, or replaced by a newer hold of this owner: an unlock
		// sent now would give back that one's acquisition.
		return l.fail(ctx, "unlock", ErrNotHeld)
	}
	h.mu.Lock()
	lease := h.lease
	h.mu.Unlock()
	h.unlocking(+1)
	defer h.unlocking(-1)
	send := time.Now()
	latch := l.owner.c.reqIDs.LatchKey(l.name)
	n, err := l.unlockWith(ctx, lease, latch)
	switch {
	case errors.Is(err, ErrNotHeld):
		h.lose()
		l.owner.drop(h)
		return l.fail(ctx, "unlock", ErrNotHeld)
	case err != nil:
		if h.unlockFailed() {
			l.owner.drop(h)
			done := l.owner.startResend(l.key())
			if !l.owner.c.retryLater(func() { defer done(); l.retryUnlock(lease, latch) }) {
				done()
			}
		}
		return l.fail(ctx, "unlock", err)
	case n == 0:
		if !h.partiallyReleased(send) {
			// Redis counts acquisitions of ours that we never learned of
			// (an acquire applied whose reply was lost). Every one we know
			// of is released: renewal stops (Redisson counts renewal per
			// acquisition too) and the orphans are given back.
			h.release()
			l.drainOrphans(ctx, lease)
		}
	default: // 1: released; 2: this owner's read holds are over, others' remain
		h.release()
	}
	return nil
}

// maxOrphans bounds drainOrphans: each orphan is one lost acquire reply.
const maxOrphans = 16

// drainOrphans unlocks until Redis no longer counts this owner as a
// holder. It runs when the owner's last known acquisition is released yet
// Redis still counts more: acquisitions applied whose replies were lost.
// Left alone they would hold the lock for a lease after every re-entry of
// this owner, and for ever while it keeps re-entering. Errors leave the
// rest to expire within the lease.
func (l *Lock) drainOrphans(ctx context.Context, lease time.Duration) {
	for range maxOrphans {
		if n, err := l.unlockOnce(ctx, lease); err != nil || n != 0 {
			return
		}
	}
}

// unlockOnce runs the unlock script of l's kind once with a fresh latch:
// n is its reply (0 still held, 1 released, 2 read holds over), ErrNotHeld
// when this owner held nothing.
func (l *Lock) unlockOnce(ctx context.Context, lease time.Duration) (int64, error) {
	return l.unlockWith(ctx, lease, l.owner.c.reqIDs.LatchKey(l.name))
}

// retryUnlock re-sends a last unlock whose outcome is unknown (a reset or
// timeout swallowed its reply, or it never left), with the same latch, so
// that one Redis already applied changes nothing, until Redis answers or
// half the latch's lifetime has passed. Without it a lock whose unlock was
// lost stays held, unrenewed, until its lease runs out, and every waiter
// sleeps out its bound: the reset-storm stall.
func (l *Lock) retryUnlock(lease time.Duration, latch string) {
	c := l.owner.c
	deadline := time.Now().Add(c.opts.LatchTimeout / 2)
	wait := 50 * time.Millisecond
	for time.Now().Before(deadline) {
		t := time.NewTimer(wait)
		select {
		case <-c.base.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
		ctx, cancel := context.WithTimeout(c.base, c.opts.SubscribeTimeout)
		_, err := l.unlockWith(ctx, lease, latch)
		cancel()
		if err == nil || errors.Is(err, ErrNotHeld) {
			return
		}
	}
}

// unlockWith runs the unlock script of l's kind with latch: once, or on
// an autopipeliner, where go-redis resends nothing lockimpl sends, again
// after a connection failure (the latch makes a repeat harmless), as
// go-redis would have.
func (l *Lock) unlockWith(ctx context.Context, lease time.Duration, latch string) (int64, error) {
	c := l.owner.c
	var cmd command
	if l.kind.Fair() {
		call := wire.Call{Script: wire.FairUnlock, Keys: []string{l.name, wire.FairQueueKey(l.name), wire.FairTimeoutKey(l.name), wire.LockChannel(l.name), latch},
			Args: []any{wire.UnlockMessage, ms(lease), l.field, c.opts.Clock().UnixMilli(), c.publishArg, c.latchArg}}
		cmd = command{script: call.Script, args: call.Command()}
	} else {
		p := l.pieces()
		cmd.script, cmd.args = wire.UnlockArgs(l.family, &p, c.publishArg, latch, l.leaseArg(lease), c.latchArg)
	}
	cmd.what, cmd.owner = sendUnlock, l.owner
	res, err := c.eval(ctx, cmd, c.pipelined)
	for n := 1; c.pipelined && n <= unlockRetries && resendable(err); n++ {
		if sleepCtx(ctx, retryBackoff(n)) != nil {
			break
		}
		res, err = c.eval(ctx, cmd, true)
	}
	if err == nil || errors.Is(err, redis.Nil) {
		c.dropLatch(latch)
	}
	n, _ := res.(int64)
	switch {
	case errors.Is(err, redis.Nil) || (err == nil && n < 0):
		return 0, ErrNotHeld
	case err != nil:
		c.topologyHint(err)
		return 0, err
	}
	return n, nil
}

// dropLatch deletes a latch key once its unlock answered: in the
// background while the client runs, at once after Close.
func (c *Client) dropLatch(key string) { c.latches.add(key) }
