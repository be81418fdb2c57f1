package lockimpl

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// janitor deletes unlock latch keys once their unlock has answered, as
// Redisson does after each unlock, batching the deletes into pipelines off
// the unlock's critical path: at most one pipeline per janitorEvery, so
// under load a latch costs a fraction of a round trip instead of one. A
// latch it never gets to expires by itself after LatchTimeout.
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

// janitorEvery is how long the janitor gathers latches into one pipeline.
const janitorEvery = 20 * time.Millisecond

func (j *janitor) run() {
	defer j.c.wg.Done()
	batch := make([]string, 0, renewBatch)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-j.c.closed:
			j.final(batch[:0])
			return
		case k := <-j.keys:
			batch = append(batch[:0], k)
		}
		t.Reset(janitorEvery)
	gather:
		for len(batch) < cap(batch) {
			select {
			case k := <-j.keys:
				batch = append(batch, k)
			case <-t.C:
				break gather
			case <-j.c.closed:
				t.Stop()
				j.final(batch)
				return
			}
		}
		t.Stop()
		j.delete(batch)
	}
}

// final deletes what is gathered or queued when the client closes, with a
// context of its own (Close has cancelled the client's), so a closing
// client leaves no latch to expire.
func (j *janitor) final(batch []string) {
	for {
		select {
		case k := <-j.keys:
			batch = append(batch, k)
			continue
		default:
		}
		break
	}
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	j.deleteCtx(ctx, batch)
}

func (j *janitor) delete(keys []string) {
	ctx, cancel := context.WithTimeout(j.c.base, time.Second)
	defer cancel()
	j.deleteCtx(ctx, keys)
}

func (j *janitor) deleteCtx(ctx context.Context, keys []string) {
	if _, cluster := j.c.rdb.(*redis.ClusterClient); !cluster {
		// One command for the batch: the server parses one command instead
		// of one per unlock.
		_ = j.c.rdb.Unlink(ctx, keys...).Err()
		return
	}
	pipe := j.c.rdb.Pipeline()
	for _, k := range keys {
		pipe.Del(ctx, k) // one key per command: latches of different locks live in different slots
	}
	_, _ = pipe.Exec(ctx)
}
