package lockimpl

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Hold is one owner's hold of a lock, returned by the acquisition that
// took it. It lasts until the Unlock that gives back its last acquisition,
// or until it is lost; re-entries go through it (Reenter), so an owner
// cannot re-enter by accident. A Hold belongs to the goroutine that
// acquired it, as a Redisson lock belongs to a thread.
type Hold struct {
	lock *Lock
	h    *hold
}

// Lock is the lock this hold is of.
func (hd *Hold) Lock() *Lock { return hd.lock }

// Lost returns a channel closed when this hold is known lost (see the
// package doc for the rule): the holder must stop its critical section.
// It stays open after a clean Unlock. Each hold has its own channel: a
// later acquisition returns a new Hold with a new one.
func (hd *Hold) Lost() <-chan struct{} {
	// A process that was frozen (GC pause, SIGSTOP, VM pause) checks here
	// before its deadline timer had a chance to run: the deadline itself
	// decides, so the answer is never stale.
	hd.h.loseIfDue()
	return hd.h.lost
}

// Deadline is when Lost closes unless a renewal moves it later (or a
// re-entry, for a fixed lease): the earliest moment the key may expire in
// Redis, less Options.LostMargin. Work that must end while the lock is
// held has until then; check time.Now().Before(hold.Deadline()), or Lost,
// right before each irreversible step, which no late timer can delay. It
// stays where it was once the hold has ended.
func (hd *Hold) Deadline() time.Time {
	hd.h.mu.Lock()
	defer hd.h.mu.Unlock()
	return hd.h.lostAt()
}

// Context returns a context derived from parent that ends when this hold
// ends: when Lost closes (its cause is ErrLost), or when the last Unlock
// releases the hold. Work passed ctx stops with the hold, as with etcd's
// Session.Ctx. Like Lost's channel it ends by a timer, which a busy host
// may run late; Lost() and Deadline read the clock, so check one of them
// right before an irreversible step. Unlock with parent, not ctx: ctx has
// ended once the hold is lost. Call cancel once the context is no longer
// needed.
func (hd *Hold) Context(parent context.Context) (ctx context.Context, cancel context.CancelFunc) {
	return endsWith(parent, hd.h)
}

// endsWith is a context derived from parent that ends when the first of
// holds ends: lost (cause ErrLost) or released.
func endsWith(parent context.Context, holds ...*hold) (context.Context, context.CancelFunc) {
	ctx, cancelCause := context.WithCancelCause(parent)
	for _, h := range holds {
		h.whenEnded(func(lost bool) {
			if lost {
				cancelCause(ErrLost)
			} else {
				cancelCause(errReleased)
			}
		})
	}
	return ctx, func() { cancelCause(context.Canceled) }
}

// Count is how many acquisitions of this hold (the first and re-entries)
// have not been unlocked yet: 0 once it is released or lost.
func (hd *Hold) Count() int {
	hd.h.mu.Lock()
	defer hd.h.mu.Unlock()
	if hd.h.done {
		return 0
	}
	return hd.h.count
}

// Token is the fencing token of this hold's latest acquisition (the first
// or the last Reenter) of a Fenced lock, and 0 for other kinds. The
// resource the lock guards should refuse a write carrying a token lower
// than one it has already seen.
func (hd *Hold) Token() int64 {
	hd.h.mu.Lock()
	defer hd.h.mu.Unlock()
	return hd.h.token
}

// Reenter acquires the lock once more for the same owner, as a second
// lock() in the same Redisson thread does, with the lease the hold was
// taken with; each Reenter needs its own Unlock. It never waits: the
// owner already holds the lock. It returns ErrNotHeld when the hold has
// ended (released or lost), also when it is found lost while the re-entry
// is in flight: the re-entry is then given back, since it may have taken
// the lock anew after the key expired, and Lost closes. It returns
// ErrNonReentrant for a non-reentrant lock.
func (hd *Hold) Reenter(ctx context.Context) error {
	l, h := hd.lock, hd.h
	if !l.kind.Reentrant() {
		return l.fail(ctx, "re-enter", ErrNonReentrant)
	}
	if !l.owner.current(h) || h.isDone() {
		return l.fail(ctx, "re-enter", ErrNotHeld)
	}
	h.mu.Lock()
	lease := h.lease
	if h.watchdog {
		lease = 0
	}
	h.mu.Unlock()
	_, got, err := l.attempt(ctx, lease, false, l.owner.c.opts.FairWaitTimeout, sendAcquire, h)
	if err != nil {
		return err
	}
	if got == nil {
		// Someone else holds the lock: ours is gone.
		h.lose()
		return l.fail(ctx, "re-enter", ErrNotHeld)
	}
	return nil
}

// Unlock gives back one acquisition; the last one releases the lock and
// wakes waiters. It returns ErrNotHeld, changing nothing, when the hold
// has already been released, and when Redis no longer holds it for this
// owner (expired or force-unlocked). Each call carries its own unlock
// latch, so a retried call answers as the first did.
func (hd *Hold) Unlock(ctx context.Context) error { return hd.lock.unlock(ctx, hd.h) }

// String names the hold for errors and logs.
func (hd *Hold) String() string { return "hold of " + hd.lock.String() }

// hold is an owner's hold of one lock (of one kind), from its first
// acquisition until the unlock that releases it, or until it is lost.
//
// The lost rule. A hold has a deadline on the monotonic clock after which
// its key may have expired in Redis: the send time of the last request that
// set its TTL (acquisition, re-entry, partial unlock or watchdog renewal)
// plus the TTL that request set. Redis started the TTL when it received
// the request, which is no earlier than we sent it, so the deadline never
// comes after the real expiry. Lost closes when a renewal or an unlock finds
// the hold gone, when the deadline (less a safety margin, see margin)
// passes without a newer successful renewal (renewals failing or too slow:
// network partition, paused Redis), and for fixed leases when the lease
// runs out. Close of the client closes
// it too, since renewals stop, and so does a failed last unlock (see
// unlockFailed). Releasing a hold does not close it.
// Read-write holds share their hash's TTL with everyone's holds, so the
// watchdog also caps their deadline by the PTTL it reads back each round
// (see the package doc).
type hold struct {
	owner *Owner
	key   holdKey
	lock  *Lock // the lock it was first taken through: names, field, kind
	pub   Hold  // the Hold its first acquisition returns, allocated with it

	mu       sync.Mutex
	watchdog bool          // renewed by the watchdog
	probed   bool          // read-write: the watchdog re-reads the shared TTL
	lease    time.Duration // what a partial unlock re-applies (Redisson's internalLockLeaseTime)
	deadline time.Time     // may have expired after this (monotonic)
	margin   time.Duration // Lost closes this much before deadline (see Client.margin)
	reads    []time.Time   // read locks: deadline of each read hold's timeout key, in order
	lastSet  time.Time     // send time of the newest request applied to the deadline
	unlocks  int           // unlocks in flight: a renewal finding the hold gone is theirs
	count    int           // acquisitions not yet unlocked (re-entries included)
	token    int64         // fencing token of the latest acquisition
	timer    *time.Timer
	firesAt  time.Time // when the timer is due, if set for the future
	done     bool      // released or lost
	wasLost  bool      // done by lose
	lost     chan struct{}
	onLost   []func()     // run once lost closes (a multi-lock's own Lost)
	onEnd    []func(bool) // run once the hold ends, told whether it was lost (Hold.Context)
}

func newHold(o *Owner, l *Lock) *hold {
	h := &hold{owner: o, key: holdKey{l.kind, l.name}, lock: l, lost: make(chan struct{}), lease: o.c.opts.WatchdogTimeout}
	h.pub = Hold{lock: l, h: h}
	return h
}

// isDone reports whether the hold ended (released or lost); lose sets
// done before it closes lost, so this is the check that has no window.
func (h *hold) isDone() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.done
}

// acquired records an acquisition (first or re-entry) sent at send. It
// records nothing and reports false when the hold ended, or its deadline
// passed, before the reply came: the key may have expired in between, so
// the acquisition does not continue this hold.
func (h *hold) acquired(send time.Time, lease time.Duration, token int64) bool {
	wd := h.owner.c.opts.WatchdogTimeout
	h.mu.Lock()
	if h.done || (!h.deadline.IsZero() && !time.Now().Before(h.lostAt())) {
		h.mu.Unlock()
		return false
	}
	h.count++
	h.token = token
	h.noteSet(send)
	ttl := lease
	if lease <= 0 {
		ttl = wd
	} else {
		h.lease = lease
	}
	h.margin = h.owner.c.margin(ttl)
	switch h.key.kind {
	case Write:
		// Re-entry adds ttl to what is left.
		if h.deadline.Before(send) {
			h.deadline = send.Add(ttl)
		} else {
			h.deadline = h.deadline.Add(ttl)
		}
	case Read:
		h.reads = append(h.reads, send.Add(ttl))
		h.deadline = latest(h.reads)
	default:
		// PEXPIRE ttl: the TTL is replaced, even by a shorter one.
		h.deadline = send.Add(ttl)
	}
	register := lease <= 0 && !h.watchdog
	if register {
		h.watchdog = true
	}
	probe := (h.key.kind == Read || h.key.kind == Write) && !h.probed
	h.probed = true
	h.armLocked()
	h.mu.Unlock()
	if register {
		h.owner.c.wd.add(h)
	}
	if probe {
		h.owner.c.wd.addProbe(h)
	}
	if (register || probe) && h.isDone() {
		// Lost meanwhile (a reply that came after the deadline fires the
		// timer at once): finish removed it before it was added.
		h.owner.c.wd.remove(h)
	}
	return true
}

// partiallyReleased records an unlock that left the hold in place. It
// reports false, changing nothing, when that unlock was the last of the
// acquisitions this owner knows of: Redis still counts some it never
// learned of, and the caller ends the hold.
func (h *hold) partiallyReleased(send time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.count <= 1 {
		return false
	}
	h.count--
	h.noteSet(send)
	if h.key.kind == Read {
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
		h.margin = h.owner.c.margin(h.lease)
	}
	h.armLocked()
	return true
}

// unlockFailed records an unlock whose outcome is unknown (it failed or
// timed out). As in Redisson, it counts as an unlock for renewal: when it
// was the owner's last acquisition the renewal stops, so the key expires
// within its lease if the unlock never applied, instead of being renewed
// forever for an owner that has let go. The hold then ends as lost. It
// reports whether it ended the hold.
func (h *hold) unlockFailed() bool {
	h.mu.Lock()
	h.count--
	last := h.count <= 0
	h.mu.Unlock()
	if last {
		h.lose()
	}
	return last
}

// renewed records a watchdog renewal sent at send that found the hold.
func (h *hold) renewed(send time.Time, ttl time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// A request sent after this renewal has already set the TTL, perhaps
	// shorter (a re-entry with a lease, a partial unlock): the order Redis
	// applied them in is unknown, so the renewal must not extend it.
	if h.done || send.Before(h.lastSet) {
		return
	}
	h.lastSet = send
	d := send.Add(ttl)
	h.margin = h.owner.c.margin(ttl)
	for i := range h.reads {
		h.reads[i] = d
	}
	h.deadline = d
	h.armLocked()
}

func (h *hold) noteSet(send time.Time) {
	if send.After(h.lastSet) {
		h.lastSet = send
	}
}

// observedTTL caps the deadline by a PTTL reply (ms; -2 the key is gone,
// -1 it has no expiry) read at send or later.
func (h *hold) observedTTL(send time.Time, pttl int64) {
	if pttl == -2 {
		h.goneOnRenewal()
		return
	}
	if pttl < 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if d := send.Add(time.Duration(pttl) * time.Millisecond); !h.done && d.Before(h.deadline) {
		h.deadline = d
		h.armLocked()
	}
}

// goneOnRenewal handles a renewal that found the hold gone: lost, unless
// an unlock of it is in flight (the renewal then saw that unlock's work).
func (h *hold) goneOnRenewal() {
	h.mu.Lock()
	unlocking := h.unlocks > 0
	h.mu.Unlock()
	if !unlocking {
		h.lose()
	}
}

// unlocking marks an unlock in flight (delta +1) or finished (-1).
func (h *hold) unlocking(delta int) {
	h.mu.Lock()
	h.unlocks += delta
	h.mu.Unlock()
}

// margin is the safety margin of a TTL (Options.LostMargin): Lost closes
// this much before the key may expire, so that a holder that stops on Lost
// stops first despite clocks running at slightly different rates
// (Redlock's 1% plus 2 ms) and its own scheduling delays.
func (c *Client) margin(ttl time.Duration) time.Duration {
	m := c.opts.LostMargin
	if m == 0 {
		m = ttl/100 + 2*time.Millisecond + max(SchedulingAllowance, 2*c.late.get())
	}
	return min(m, ttl/2)
}

// lateness is a decaying maximum of how late deadline timers fired: it
// halves every lateHalfLife without a larger sample. Samples race; losing
// one only keeps the older maximum a little longer or shorter.
type lateness struct{ v, at atomic.Int64 }

const lateHalfLife = 10 * time.Second

func (l *lateness) get() time.Duration {
	v := l.v.Load()
	if v == 0 {
		return 0
	}
	halvings := time.Since(time.Unix(0, l.at.Load())) / lateHalfLife
	return time.Duration(v) >> min(halvings, 62)
}

func (l *lateness) note(d time.Duration) {
	if d > l.get() {
		l.at.Store(time.Now().UnixNano())
		l.v.Store(int64(d))
	}
}

// lostAt is when Lost closes: the deadline less the margin. Needs mu.
func (h *hold) lostAt() time.Time { return h.deadline.Add(-h.margin) }

// armLocked (re)starts the deadline timer.
func (h *hold) armLocked() {
	if h.done {
		return
	}
	at := h.lostAt()
	wait := time.Until(at)
	h.firesAt = time.Time{}
	if wait > 0 {
		h.firesAt = at
	}
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
	if time.Until(h.lostAt()) > 0 { // extended meanwhile
		h.armLocked()
		h.mu.Unlock()
		return
	}
	// How late the timer ran, when it was set for a time still ahead (a
	// reply that came after the deadline sets it for the past: that is
	// the network's lateness, not the host's).
	var late time.Duration
	if !h.firesAt.IsZero() {
		late = time.Since(h.firesAt)
	}
	h.mu.Unlock()
	h.lose()
	// Later margins allow for it (see Client.margin).
	h.owner.c.late.note(late)
}

// loseIfDue loses the hold now if its deadline has passed, without
// waiting for the timer.
func (h *hold) loseIfDue() {
	h.mu.Lock()
	due := !h.done && !h.deadline.IsZero() && !time.Now().Before(h.lostAt())
	h.mu.Unlock()
	if due {
		h.lose()
	}
}

// lose marks the hold lost: Lost closes, renewal stops. The owner keeps it
// until an Unlock finds it gone or a new acquisition replaces it.
func (h *hold) lose() {
	if !h.finish(true) {
		return
	}
	h.mu.Lock()
	fs, ends := h.onLost, h.onEnd
	h.onLost, h.onEnd = nil, nil
	h.mu.Unlock()
	for _, f := range fs {
		f()
	}
	for _, f := range ends {
		f(true)
	}
}

// whenEnded runs f(lost) once the hold ends (at once if it has).
func (h *hold) whenEnded(f func(lost bool)) {
	h.mu.Lock()
	if h.done {
		lost := h.wasLost
		h.mu.Unlock()
		f(lost)
		return
	}
	h.onEnd = append(h.onEnd, f)
	h.mu.Unlock()
}

// whenLost runs f once the hold is lost (at once if it already is).
func (h *hold) whenLost(f func()) {
	h.mu.Lock()
	select {
	case <-h.lost:
		h.mu.Unlock()
		f()
		return
	default:
	}
	h.onLost = append(h.onLost, f)
	h.mu.Unlock()
}

// release ends a hold that an unlock released.
func (h *hold) release() {
	if h.finish(false) {
		h.mu.Lock()
		ends := h.onEnd
		h.onEnd = nil
		h.mu.Unlock()
		for _, f := range ends {
			f(false)
		}
	}
	h.owner.drop(h)
}

// finish stops the timer and the renewal; it reports whether this call ended the hold.
func (h *hold) finish(lost bool) bool {
	h.mu.Lock()
	if h.done {
		h.mu.Unlock()
		return false
	}
	h.done, h.wasLost = true, lost
	if lost {
		// Closed with done set, under mu: Lost never returns an open
		// channel for a hold another goroutine is losing.
		close(h.lost)
	}
	if h.timer != nil {
		h.timer.Stop()
	}
	wd := h.watchdog || h.probed
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
