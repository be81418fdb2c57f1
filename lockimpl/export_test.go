package lockimpl

import "github.com/lockbench/lockbench/lockimpl/internal/wire"

// Internals the black-box tests observe.

// WatchdogLen is how many holds the watchdog renews.
func (c *Client) WatchdogLen() int {
	c.wd.mu.Lock()
	defer c.wd.mu.Unlock()
	return len(c.wd.holds)
}

// SubscriptionRefs is how many owners of c use the subscription to channel.
func (c *Client) SubscriptionRefs(channel string) int {
	c.subs.mu.Lock()
	defer c.subs.mu.Unlock()
	if e := c.subs.entries[channel]; e != nil {
		return e.refs
	}
	return 0
}

// PublishCommand is "PUBLISH" or "SPUBLISH": what unlocks send.
func (c *Client) PublishCommand() string { return c.publish }

// ReentrantUnlockScript lets a test re-send an unlock with the same latch.
var ReentrantUnlockScript = wire.ReentrantUnlock

// Names exposes the key and channel naming.
var (
	LockChannel       = wire.LockChannel
	RWLockChannel     = wire.RWLockChannel
	FairQueueKey      = wire.FairQueueKey
	FairTimeoutKey    = wire.FairTimeoutKey
	ReadTimeoutPrefix = wire.ReadTimeoutPrefix
	UnlockLatchKey    = func(name, id string) string { return wire.UnlockLatchKey(name, []byte(id)) }
)

// LeaveQueue takes the owner out of a fair lock's queue, as a waiter that
// gives up does.
func (l *Lock) LeaveQueue() { l.leaveQueue(l.owner.c.opts.FairWaitTimeout) }

// FreezeDeadlineTimer stops the deadline timer of the hold, as if the
// process had been frozen while its deadline passed.
func (hd *Hold) FreezeDeadlineTimer() {
	hd.h.mu.Lock()
	hd.h.timer.Stop()
	hd.h.mu.Unlock()
}

// Crowded is how many lock commands rode the crowd autopipeliner.
func (c *Client) Crowded() int64 { return c.crowded.Load() }
