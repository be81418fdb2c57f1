package lockimpl

import (
	"sync"
	"time"
)

// hold is an owner's hold of one lock (of one kind), from its first
// acquisition until the unlock that releases it, or until it is lost.
//
// The lost rule. A hold has a deadline on the monotonic clock after which
// its key may have expired in Redis: the send time of the last request that
// set its TTL (acquisition, re-entry, partial unlock or watchdog renewal)
// plus the TTL that request set. Redis started the TTL when it received
// the request, which is no earlier than we sent it, so the deadline never
// comes after the real expiry. Lost closes when a renewal or an unlock finds
// the hold gone, when the deadline passes without a newer successful
// renewal (renewals failing or too slow: network partition, paused Redis),
// and for fixed leases when the lease runs out. Close of the client closes
// it too, since renewals stop. Releasing a hold does not close it.
type hold struct {
	owner *Owner
	key   holdKey
	lock  *Lock // the lock it was first taken through: names, field, kind

	mu       sync.Mutex
	watchdog bool          // renewed by the watchdog
	lease    time.Duration // what a partial unlock re-applies (Redisson's internalLockLeaseTime)
	deadline time.Time     // may have expired after this (monotonic)
	reads    []time.Time   // read locks: deadline of each read hold's timeout key, in order
	timer    *time.Timer
	done     bool // released or lost
	lost     chan struct{}
}

func newHold(o *Owner, l *Lock) *hold {
	return &hold{owner: o, key: holdKey{l.kind, l.name}, lock: l, lost: make(chan struct{}), lease: o.c.opts.WatchdogTimeout}
}

func (h *hold) isLost() bool {
	select {
	case <-h.lost:
		return true
	default:
		return false
	}
}

// acquired records an acquisition (first or re-entry) sent at send.
func (h *hold) acquired(send time.Time, lease time.Duration) {
	wd := h.owner.c.opts.WatchdogTimeout
	h.mu.Lock()
	ttl := lease
	if lease <= 0 {
		ttl = wd
	} else {
		h.lease = lease
	}
	switch h.key.kind {
	case kindReentrant, kindFair:
		// PEXPIRE ttl: the TTL is replaced, even by a shorter one.
		h.deadline = send.Add(ttl)
	case kindWrite:
		// Re-entry adds ttl to what is left.
		if h.deadline.Before(send) {
			h.deadline = send.Add(ttl)
		} else {
			h.deadline = h.deadline.Add(ttl)
		}
	case kindRead:
		h.reads = append(h.reads, send.Add(ttl))
		h.deadline = latest(h.reads)
	}
	register := lease <= 0 && !h.watchdog
	if register {
		h.watchdog = true
	}
	h.armLocked()
	h.mu.Unlock()
	if register {
		h.owner.c.wd.add(h)
	}
}

// partiallyReleased records an unlock that left the hold in place.
func (h *hold) partiallyReleased(send time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.key.kind == kindRead {
		// The script deleted the newest read hold's key; the hash lives as
		// long as the longest remaining one (ours included).
		if n := len(h.reads); n > 0 {
			h.reads = h.reads[:n-1]
		}
		if len(h.reads) > 0 {
			h.deadline = latest(h.reads)
		}
	} else {
		h.deadline = send.Add(h.lease)
	}
	h.armLocked()
}

// renewed records a watchdog renewal sent at send that found the hold.
func (h *hold) renewed(send time.Time, ttl time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return
	}
	d := send.Add(ttl)
	for i := range h.reads {
		h.reads[i] = d
	}
	h.deadline = d
	h.armLocked()
}

// armLocked (re)starts the deadline timer.
func (h *hold) armLocked() {
	if h.done {
		return
	}
	wait := time.Until(h.deadline)
	if h.timer == nil {
		h.timer = time.AfterFunc(wait, h.checkDeadline)
	} else {
		h.timer.Reset(wait)
	}
}

func (h *hold) checkDeadline() {
	h.mu.Lock()
	if h.done {
		h.mu.Unlock()
		return
	}
	if wait := time.Until(h.deadline); wait > 0 { // extended meanwhile
		h.timer.Reset(wait)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	h.lose()
}

// lose marks the hold lost: Lost closes, renewal stops. The owner keeps it
// until an Unlock finds it gone or a new acquisition replaces it.
func (h *hold) lose() {
	if !h.finish() {
		return
	}
	close(h.lost)
}

// release ends a hold that an unlock released.
func (h *hold) release() {
	h.finish()
	h.owner.drop(h)
}

// finish stops the timer and the renewal; it reports whether this call ended the hold.
func (h *hold) finish() bool {
	h.mu.Lock()
	if h.done {
		h.mu.Unlock()
		return false
	}
	h.done = true
	if h.timer != nil {
		h.timer.Stop()
	}
	wd := h.watchdog
	h.mu.Unlock()
	if wd {
		h.owner.c.wd.remove(h)
	}
	h.owner.c.mu.Lock()
	delete(h.owner.c.active, h)
	h.owner.c.mu.Unlock()
	return true
}

func latest(ts []time.Time) time.Time {
	var m time.Time
	for _, t := range ts {
		if t.After(m) {
			m = t
		}
	}
	return m
}
