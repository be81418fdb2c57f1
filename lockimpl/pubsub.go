package lockimpl

import (
	"context"
	"github.com/lockbench/lockbench/lockimpl/internal/wire"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// idleGrace is how long a subscription nobody uses stays subscribed. A
// lock's waiters come and go; keeping the channel a little avoids a
// SUBSCRIBE/UNSUBSCRIBE pair per contended acquisition, and it means an
// UNSUBSCRIBE is only ever sent long after its SUBSCRIBE was confirmed, so
// a confirmation always belongs to the entry that is current.
const idleGrace = 2 * time.Second

// subscriber keeps one subscription per channel per client, shared by every
// owner of the client waiting on that channel (Redisson's RedissonLockEntry).
// With PUBLISH all channels share one pub/sub connection; with SPUBLISH each
// channel has its own, since a sharded connection serves one slot's node.
type subscriber struct {
	c *Client

	mu      sync.Mutex // guards conns, entries, and each entry's refs and idleSince
	conns   map[string]*psConn
	entries map[string]*entry
	closed  bool
	wg      sync.WaitGroup // dispatchers and the sweeper
}

// psConn is one go-redis PubSub: one connection, which go-redis redials
// and resubscribes by itself after a network error.
type psConn struct {
	key   string // "" for the shared plain connection, else the channel
	ps    *redis.PubSub
	cmdMu sync.Mutex // serialises (un)subscribe commands on it

	confirmed     chan struct{} // closed by its first subscription confirmation
	confirmedOnce sync.Once
}

func newPSConn(key string, ps *redis.PubSub) *psConn {
	return &psConn{key: key, ps: ps, confirmed: make(chan struct{})}
}

// entry is a client's subscription to one channel and the waiters on it.
type entry struct {
	channel   string
	conn      *psConn
	refs      int       // owners using it; guarded by subscriber.mu
	idleSince time.Time // when refs last dropped to 0; guarded by subscriber.mu

	mu        sync.Mutex
	confirmed chan struct{} // closed by the first confirmation
	isConfirm bool
	permits   int             // wake-ups that found nobody waiting yet
	waiters   []chan struct{} // FIFO
}

func newSubscriber(c *Client) *subscriber {
	s := &subscriber{c: c, conns: map[string]*psConn{}, entries: map[string]*entry{}}
	s.wg.Add(1)
	go s.sweep()
	return s
}

// acquire returns the entry of channel, subscribing when there is none.
// Release it with release. Waiters must wait for entry.confirmed before
// trusting that no message can be missed.
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
	e := &entry{channel: channel, refs: 1, confirmed: make(chan struct{})}
	s.entries[channel] = e
	if !s.c.sharded {
		e.conn = s.plainConnLocked()
	}
	s.mu.Unlock()

	if s.c.sharded {
		// A sharded connection must be opened with its channel, so that
		// go-redis dials the node that owns the channel's slot.
		conn := newPSConn(channel, s.c.rdb.SSubscribe(s.c.base, channel))
		s.mu.Lock()
		e.conn = conn
		closed := s.closed
		if !closed {
			s.conns[channel] = conn
			s.wg.Add(1)
		}
		s.mu.Unlock()
		if closed {
			_ = conn.ps.Close()
			return nil, ErrClosed
		}
		go s.dispatch(conn)
		return e, nil
	}
	// A failed write still leaves the channel in go-redis's set, and it
	// resubscribes when it redials; the confirmation then arrives late,
	// and waiters are bounded by their own timeouts meanwhile.
	e.conn.cmdMu.Lock()
	err := e.conn.ps.Subscribe(ctx, channel)
	e.conn.cmdMu.Unlock()
	if err != nil {
		s.release(e)
		return nil, err
	}
	return e, nil
}

// plainConnLocked returns the shared connection, creating it and its
// dispatcher on first use. It does no I/O.
func (s *subscriber) plainConnLocked() *psConn {
	if conn := s.conns[""]; conn != nil {
		return conn
	}
	conn := newPSConn("", s.c.rdb.Subscribe(s.c.base))
	s.conns[""] = conn
	s.wg.Add(1)
	go s.dispatch(conn)
	return conn
}

// release gives back an entry; the sweeper unsubscribes it once it has
// been unused for idleGrace.
func (s *subscriber) release(e *entry) {
	s.mu.Lock()
	e.refs--
	if e.refs == 0 {
		e.idleSince = time.Now()
	}
	s.mu.Unlock()
}

// sweep unsubscribes entries left unused for idleGrace.
func (s *subscriber) sweep() {
	defer s.wg.Done()
	t := time.NewTicker(idleGrace / 2)
	defer t.Stop()
	for {
		select {
		case <-s.c.closed:
			return
		case <-t.C:
		}
		var idle []*entry
		s.mu.Lock()
		for ch, e := range s.entries {
			if e.refs == 0 && time.Since(e.idleSince) >= idleGrace {
				delete(s.entries, ch)
				if e.conn.key != "" {
					delete(s.conns, e.conn.key)
				}
				idle = append(idle, e)
			}
		}
		s.mu.Unlock()
		for _, e := range idle {
			if e.conn.key != "" {
				_ = e.conn.ps.Close() // its dispatcher ends with it
				continue
			}
			ctx, cancel := context.WithTimeout(s.c.base, s.c.opts.SubscribeTimeout)
			e.conn.cmdMu.Lock()
			_ = e.conn.ps.Unsubscribe(ctx, e.channel)
			e.conn.cmdMu.Unlock()
			cancel()
		}
	}
}

// dispatch routes confirmations and messages of one connection. Messages
// published while go-redis was redialling are lost, so a confirmation of
// an already confirmed channel (a resubscription) wakes all its waiters.
func (s *subscriber) dispatch(conn *psConn) {
	defer s.wg.Done()
	for m := range conn.ps.ChannelWithSubscriptions(redis.WithChannelSize(1024)) {
		var channel, payload string
		resubscribed := false
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind == "sunsubscribe" {
				// We never send SUNSUBSCRIBE (an idle sharded connection
				// is closed instead), so the node dropped us: the slot
				// left it, by migration or failover.
				s.lostShard(conn, m.Channel)
				continue
			}
			if m.Kind != "subscribe" && m.Kind != "ssubscribe" {
				continue
			}
			channel = m.Channel
			conn.confirmedOnce.Do(func() { close(conn.confirmed) })
		case *redis.Message:
			channel, payload = m.Channel, m.Payload
		default:
			continue
		}
		s.mu.Lock()
		e := s.entries[channel]
		refs := 0
		if e != nil {
			refs = e.refs
		}
		s.mu.Unlock()
		if e == nil {
			continue
		}
		e.mu.Lock()
		switch {
		case payload == "" && !e.isConfirm:
			e.isConfirm = true
			close(e.confirmed)
		case payload == "":
			resubscribed = true
		}
		switch {
		case resubscribed, payload != "" && payload != wire.UnlockMessage:
			e.wakeAllLocked(refs)
		case payload == wire.UnlockMessage:
			e.wakeOneLocked(refs)
		}
		e.mu.Unlock()
	}
}

// lostShard handles a node dropping the sharded subscription of channel on
// conn: waiters retry at once (their acquire follows the slot's MOVED), and
// a new connection subscribes at the slot's new owner.
func (s *subscriber) lostShard(conn *psConn, channel string) {
	s.mu.Lock()
	e := s.entries[channel]
	if e == nil || e.conn != conn || s.closed {
		s.mu.Unlock()
		return
	}
	refs := e.refs
	s.wg.Add(1)
	s.mu.Unlock()
	e.mu.Lock()
	e.wakeAllLocked(refs)
	e.mu.Unlock()
	go s.resubscribe(e, conn)
}

// resubscribe replaces e's sharded connection with one at the node that
// serves its slot now. go-redis picks the node from its slot map, which
// may still be stale: a subscription the node refuses (MOVED) is never
// confirmed, so an unconfirmed one is dropped and tried again after a
// reload of the map, until it is confirmed, e is swept or the client closes.
func (s *subscriber) resubscribe(e *entry, old *psConn) {
	defer s.wg.Done()
	_ = old.ps.Close()
	cc, _ := s.c.rdb.(*redis.ClusterClient)
	wait := 50 * time.Millisecond
	for {
		if cc != nil {
			cc.ReloadState(s.c.base)
		}
		select {
		case <-s.c.closed:
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
		conn := newPSConn(e.channel, s.c.rdb.SSubscribe(s.c.base, e.channel))
		s.mu.Lock()
		if s.closed || s.entries[e.channel] != e {
			s.mu.Unlock()
			_ = conn.ps.Close()
			return
		}
		e.conn = conn
		s.conns[e.channel] = conn
		s.wg.Add(1)
		s.mu.Unlock()
		go s.dispatch(conn)
		t := time.NewTimer(s.c.opts.SubscribeTimeout)
		select {
		case <-conn.confirmed:
			t.Stop()
			return // the dispatcher wakes every waiter on this confirmation
		case <-s.c.closed:
			t.Stop()
			return
		case <-t.C:
		}
		s.mu.Lock()
		if s.entries[e.channel] != e || e.conn != conn {
			s.mu.Unlock()
			return // swept meanwhile: the sweeper closed conn
		}
		s.mu.Unlock()
		_ = conn.ps.Close()
	}
}

// close ends every connection (their dispatchers return) and the sweeper;
// waiters see the client closed.
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

// awaitConfirmed waits until the channel's subscription is confirmed, so no
// unlock published after it can be missed; false when d passed first.
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
	defer e.mu.Unlock()
	for i, x := range e.waiters {
		if x == w {
			e.waiters = append(e.waiters[:i], e.waiters[i+1:]...)
			return err
		}
	}
	// A wake-up was handed to us as we gave up: pass it on, or it is lost
	// and the next waiter sleeps a whole TTL.
	<-w
	if len(e.waiters) > 0 {
		next := e.waiters[0]
		e.waiters = e.waiters[1:]
		next <- struct{}{}
	} else {
		e.permits++
	}
	return err
}
