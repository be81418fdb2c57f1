package lockimpl

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

// ReentrantUnlockScript lets a test re-send an unlock with the same latch.
var ReentrantUnlockScript = reentrantUnlock

// Names exposes the key and channel naming.
var (
	LockChannel       = lockChannel
	RWLockChannel     = rwlockChannel
	FairQueueKey      = fairQueueKey
	FairTimeoutKey    = fairTimeoutKey
	ReadTimeoutPrefix = readTimeoutPrefix
	UnlockLatchKey    = unlockLatchKey
)

// LeaveQueue takes the owner out of a fair lock's queue, as a waiter that
// gives up does.
func (l *Lock) LeaveQueue() { l.leaveQueue(l.owner.c.opts.FairWaitTimeout) }

// FreezeDeadlineTimer stops the deadline timer of the owner's hold of l,
// as if the process had been frozen while its deadline passed.
func (l *Lock) FreezeDeadlineTimer() {
	if h := l.owner.hold(holdKey{l.kind, l.name}); h != nil {
		h.mu.Lock()
		h.timer.Stop()
		h.mu.Unlock()
	}
}
