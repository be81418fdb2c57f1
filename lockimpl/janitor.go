package lockimpl

import (
	"context"
	"time"
)

// janitor deletes unlock latch keys once their unlock has answered, as
// Redisson does after each unlock, batching the deletes into pipelines off
// the unlock's critical path. A latch it never gets to expires by itself
// after LatchTimeout.
type janitor struct {
	c    *Client
	keys chan string
}

func newJanitor(c *Client) *janitor {
	return &janitor{c: c, keys: make(chan string, 4096)}
}

// add queues key for deletion; when the queue is full it deletes at once,
// so a burst of unlocks slows down instead of leaking latches.
func (j *janitor) add(key string) {
	select {
	case j.keys <- key:
	default:
		ctx, cancel := context.WithTimeout(j.c.base, time.Second)
		defer cancel()
		_ = j.c.rdb.Del(ctx, key).Err()
	}
}

func (j *janitor) run() {
	defer j.c.wg.Done()
	batch := make([]string, 0, renewBatch)
	for {
		select {
		case <-j.c.closed:
			return
		case k := <-j.keys:
			batch = append(batch[:0], k)
		drain:
			for len(batch) < cap(batch) {
				select {
				case k := <-j.keys:
					batch = append(batch, k)
				default:
					break drain
				}
			}
			j.delete(batch)
		}
	}
}

func (j *janitor) delete(keys []string) {
	ctx, cancel := context.WithTimeout(j.c.base, time.Second)
	defer cancel()
	pipe := j.c.rdb.Pipeline()
	for _, k := range keys {
		pipe.Del(ctx, k) // one key per command: latches of different locks live in different slots
	}
	_, _ = pipe.Exec(ctx)
}
