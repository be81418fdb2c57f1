package lockimpl

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// janitor deletes unlock latch keys once their unlock has answered, as
// Redisson does after each unlock, batching the deletes off the unlock's
// critical path: one round per janitorEvery at most, so under load a latch
// costs a fraction of a round trip instead of one. Unlocks append to a
// slice and wake the janitor only when it was empty: a channel send per
// unlock woke its goroutine per unlock (a futex call each), which cost a
// single uncontended owner about a quarter of its lock cycles. A latch it never gets to expires
// by itself after LatchTimeout.
type janitor struct {
	c      *Client
	mu     sync.Mutex
	keys   []string
	closed bool          // final has run: add deletes at once
	kick   chan struct{} // cap 1: keys went from empty to not
}

// maxLatchQueue bounds the queued latches; past it, add deletes at once,
// so a burst of unlocks slows down instead of leaking latches.
const maxLatchQueue = 4096

func newJanitor(c *Client) *janitor {
	return &janitor{c: c, kick: make(chan struct{}, 1)}
}

// add queues key for deletion, or deletes it at once when the queue is
// full or the janitor has stopped (an unlock that raced Close).
func (j *janitor) add(key string) {
	j.mu.Lock()
	if len(j.keys) >= maxLatchQueue || j.closed {
		j.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = j.c.rdb.Del(ctx, key).Err()
		return
	}
	j.keys = append(j.keys, key)
	first := len(j.keys) == 1
	j.mu.Unlock()
	if first {
		select {
		case j.kick <- struct{}{}:
		default:
		}
	}
}

// take returns the queued keys, leaving spare (emptied) in their place;
// last marks the janitor stopped.
func (j *janitor) take(spare []string, last bool) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	batch := j.keys
	j.keys = spare[:0]
	j.closed = j.closed || last
	return batch
}

// janitorEvery is how long the janitor gathers latches into one round.
const janitorEvery = 20 * time.Millisecond

func (j *janitor) run() {
	defer j.c.wg.Done()
	t := time.NewTimer(time.Hour)
	t.Stop()
	var spare []string
	for {
		select {
		case <-j.c.closed:
			j.final()
			return
		case <-j.kick:
		}
		t.Reset(janitorEvery)
		select {
		case <-t.C:
		case <-j.c.closed:
			t.Stop()
			j.final()
			return
		}
		batch := j.take(spare, false)
		j.delete(batch)
		spare = batch
	}
}

// final deletes what is queued when the client closes; later adds delete
// at once, so a closing client leaves no latch to expire.
func (j *janitor) final() {
	if batch := j.take(nil, true); len(batch) > 0 {
		j.delete(batch)
	}
}

// delete deletes keys with a context of its own: Close cancels the
// client's, and waits for the janitor, which this bounds.
func (j *janitor) delete(keys []string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	j.deleteCtx(ctx, keys)
}

// deleteCtx deletes keys in commands of at most renewBatch keys.
func (j *janitor) deleteCtx(ctx context.Context, keys []string) {
	if _, cluster := j.c.rdb.(*redis.ClusterClient); cluster {
		pipe := j.c.rdb.Pipeline()
		for _, k := range keys {
			pipe.Del(ctx, k) // one key per command: latches of different locks live in different slots
		}
		_, _ = pipe.Exec(ctx)
		return
	}
	for len(keys) > 0 {
		n := min(len(keys), renewBatch)
		// One command per chunk: the server parses one command instead of
		// one per unlock.
		_ = j.c.rdb.Unlink(ctx, keys[:n]...).Err()
		keys = keys[n:]
	}
}
