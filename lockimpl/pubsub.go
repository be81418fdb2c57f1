package lockimpl

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Unlock messages, as Redisson sends them (LongCodec: ASCII digits).
const (
	unlockMessage     = "0" // wakes one waiter per client
	readUnlockMessage = "1" // wakes every waiter (write unlock: all readers may go)
)

// subscriber keeps one subscription per channel per client, shared by every
// owner of the client waiting on that channel (Redisson's RedissonLockEntry).
// With PUBLISH all channels share one pub/sub connection; with SPUBLISH each
// channel has its own, since a sharded connection serves one slot.
type subscriber struct {
	c *Client

	mu      sync.Mutex // guards conns, entries and each entry's refs
	conns   map[string]*psConn
	entries map[string]*entry
	closed  bool
	wg      sync.WaitGroup // dispatchers
}

// psConn is one pub/sub connection and the bookkeeping that tells which
// SUBSCRIBE a confirmation answers: Redis answers in order, so the n-th
// confirmation of a channel answers its n-th SUBSCRIBE.
type psConn struct {
	key string
	ps  *redis.PubSub

	cmdMu sync.Mutex // orders (un)subscribe commands with the counters below
	sent  map[string]int
	acked map[string]int
}

// entry is a client's subscription to one channel and the waiters on it.
type entry struct {
	channel string
	conn    *psConn
	refs    int // owners using it; guarded by subscriber.mu

	mu        sync.Mutex
	seq       int // which confirmation answers our SUBSCRIBE; 0 until sent
	confirmed chan struct{}
	isConfirm bool
	permits   int             // wake-ups that found nobody waiting yet
	waiters   []chan struct{} // FIFO
}

func newSubscriber(c *Client) *subscriber {
	return &subscriber{c: c, conns: map[string]*psConn{}, entries: map[string]*entry{}}
}

// acquire returns the entry of channel, subscribing when it is the first
// user. Release it with release.
func (s *subscriber) acquire(ctx context.Context, channel string) (*entry, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if e := s.entries[channel]; e != nil {
		e.refs++
		s.mu.Unlock()
		return e, nil
	}
	conn := s.connLocked(channel)
	s.mu.Unlock()

	// Creating and subscribing happen under the connection's command lock,
	// so that a concurrent release's UNSUBSCRIBE cannot overtake our SUBSCRIBE.
	conn.cmdMu.Lock()
	defer conn.cmdMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if e := s.entries[channel]; e != nil {
		e.refs++
		s.mu.Unlock()
		return e, nil
	}
	e := &entry{channel: channel, conn: conn, refs: 1, confirmed: make(chan struct{})}
	s.entries[channel] = e
	s.mu.Unlock()

	var err error
	if s.c.sharded {
		err = conn.ps.SSubscribe(ctx, channel)
	} else {
		err = conn.ps.Subscribe(ctx, channel)
	}
	conn.sent[channel]++
	e.mu.Lock()
	e.seq = conn.sent[channel]
	if conn.acked[channel] >= e.seq {
		e.confirmLocked()
	}
	e.mu.Unlock()
	if err != nil {
		s.releaseLocked(e, conn)
		return nil, err
	}
	return e, nil
}

// connLocked returns the connection for channel, creating it (and its
// dispatcher) if needed. It does no I/O: go-redis connects lazily.
func (s *subscriber) connLocked(channel string) *psConn {
	key := ""
	if s.c.sharded {
		key = channel
	}
	if conn := s.conns[key]; conn != nil {
		return conn
	}
	var ps *redis.PubSub
	if s.c.sharded {
		ps = s.c.rdb.SSubscribe(s.c.base)
	} else {
		ps = s.c.rdb.Subscribe(s.c.base)
	}
	conn := &psConn{key: key, ps: ps, sent: map[string]int{}, acked: map[string]int{}}
	s.conns[key] = conn
	s.wg.Add(1)
	go s.dispatch(conn)
	return conn
}

// release gives back an entry; the last user unsubscribes.
func (s *subscriber) release(e *entry) {
	e.conn.cmdMu.Lock()
	defer e.conn.cmdMu.Unlock()
	s.releaseLocked(e, e.conn)
}

// releaseLocked needs conn.cmdMu.
func (s *subscriber) releaseLocked(e *entry, conn *psConn) {
	s.mu.Lock()
	e.refs--
	if e.refs > 0 || s.closed {
		s.mu.Unlock()
		return
	}
	delete(s.entries, e.channel)
	if s.c.sharded {
		delete(s.conns, conn.key)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(s.c.base, s.c.opts.SubscribeTimeout)
	defer cancel()
	if s.c.sharded {
		_ = conn.ps.Close() // its dispatcher ends with it
		return
	}
	_ = conn.ps.Unsubscribe(ctx, e.channel)
}

// dispatch routes confirmations and messages of one connection. go-redis
// reconnects and resubscribes by itself after a network error; messages
// published meanwhile are lost, so a confirmation nobody asked for (a
// resubscription) wakes every waiter of that channel to retry.
func (s *subscriber) dispatch(conn *psConn) {
	defer s.wg.Done()
	for m := range conn.ps.ChannelWithSubscriptions(redis.WithChannelSize(1024)) {
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind != "subscribe" && m.Kind != "ssubscribe" {
				continue
			}
			conn.cmdMu.Lock()
			extra := conn.acked[m.Channel] >= conn.sent[m.Channel]
			if !extra {
				conn.acked[m.Channel]++
			}
			acked := conn.acked[m.Channel]
			conn.cmdMu.Unlock()
			if e := s.lookup(m.Channel); e != nil {
				refs := s.refs(e)
				e.mu.Lock()
				if e.seq > 0 && acked >= e.seq {
					e.confirmLocked()
				}
				if extra {
					e.wakeAllLocked(refs)
				}
				e.mu.Unlock()
			}
		case *redis.Message:
			if e := s.lookup(m.Channel); e != nil {
				refs := s.refs(e)
				e.mu.Lock()
				if m.Payload == unlockMessage {
					e.wakeOneLocked(refs)
				} else {
					e.wakeAllLocked(refs)
				}
				e.mu.Unlock()
			}
		}
	}
}

func (s *subscriber) lookup(channel string) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries[channel]
}

func (s *subscriber) refs(e *entry) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return e.refs
}

// close ends every connection (their dispatchers return) and wakes every
// waiter: they see the client closed.
func (s *subscriber) close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]*psConn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.ps.Close()
	}
	s.wg.Wait()
}

func (e *entry) confirmLocked() {
	if !e.isConfirm {
		e.isConfirm = true
		close(e.confirmed)
	}
}

// wakeOneLocked hands one wake-up to the first waiter, or keeps it as a
// permit for an owner that is between two attempts (Redisson's semaphore
// release); permits never exceed the owners using the entry.
func (e *entry) wakeOneLocked(refs int) {
	if len(e.waiters) > 0 {
		w := e.waiters[0]
		e.waiters = e.waiters[1:]
		w <- struct{}{}
		return
	}
	if e.permits < refs {
		e.permits++
	}
}

// wakeAllLocked wakes every waiter and gives each other user a permit.
func (e *entry) wakeAllLocked(refs int) {
	n := len(e.waiters)
	for _, w := range e.waiters {
		w <- struct{}{}
	}
	e.waiters = e.waiters[:0]
	e.permits = max(e.permits, refs-n)
}

// awaitConfirmed waits until our SUBSCRIBE is confirmed, so no unlock
// published after it can be missed; false when d passed first.
func (e *entry) awaitConfirmed(ctx context.Context, closed <-chan struct{}, d time.Duration) (bool, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-e.confirmed:
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	case <-closed:
		return false, ErrClosed
	}
}

// wait blocks until a wake-up, d (when d >= 0), ctx or the client's close.
func (e *entry) wait(ctx context.Context, closed <-chan struct{}, d time.Duration) error {
	e.mu.Lock()
	if e.permits > 0 {
		e.permits--
		e.mu.Unlock()
		return nil
	}
	w := make(chan struct{}, 1)
	e.waiters = append(e.waiters, w)
	e.mu.Unlock()

	var timeout <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	var err error
	select {
	case <-w:
		return nil
	case <-timeout:
	case <-ctx.Done():
		err = ctx.Err()
	case <-closed:
		err = ErrClosed
	}
	e.mu.Lock()
	for i, x := range e.waiters {
		if x == w {
			e.waiters = append(e.waiters[:i], e.waiters[i+1:]...)
			break
		}
	}
	e.mu.Unlock()
	return err
}
