package lockimpl

import (
	"context"
	"github.com/lockbench/lockbench/lockimpl/internal/wire"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// renewBatch is how many holds one pipeline renews (Redisson's
// lockWatchdogBatchSize). Each hold is its own script call, so a batch may
// span Redis Cluster slots: the cluster client splits the pipeline by node.
const renewBatch = 100

// watchdog renews, every WatchdogTimeout/3, the TTL of every hold taken
// without a lease, and reports holds it finds gone as lost. It also reads
// back the TTL of every read-write lock held: that hash's TTL is shared by
// all its holds, and other clients' renewals (Redisson's read renewal sets
// it to their own watchdog timeout) may shorten it under ours.
type watchdog struct {
	c      *Client
	mu     sync.Mutex
	holds  map[*hold]struct{} // renewed
	probes map[*hold]struct{} // read-write holds whose shared TTL is re-read
}

func newWatchdog(c *Client) *watchdog {
	return &watchdog{c: c, holds: map[*hold]struct{}{}, probes: map[*hold]struct{}{}}
}

func (w *watchdog) add(h *hold) {
	w.mu.Lock()
	w.holds[h] = struct{}{}
	w.mu.Unlock()
}

func (w *watchdog) addProbe(h *hold) {
	w.mu.Lock()
	w.probes[h] = struct{}{}
	w.mu.Unlock()
}

func (w *watchdog) remove(h *hold) {
	w.mu.Lock()
	delete(w.holds, h)
	delete(w.probes, h)
	w.mu.Unlock()
}

func (w *watchdog) run() {
	defer w.c.wg.Done()
	period := w.c.opts.WatchdogTimeout / 3
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-w.c.closed:
			return
		case <-t.C:
			w.renewAll(period)
		}
	}
}

// renewAll renews every registered hold; a round may take at most one
// period, so rounds never pile up behind a slow or partitioned Redis.
func (w *watchdog) renewAll(budget time.Duration) {
	w.mu.Lock()
	holds := make([]*hold, 0, len(w.holds))
	for h := range w.holds {
		holds = append(holds, h)
	}
	probes := make([]*hold, 0, len(w.probes))
	for h := range w.probes {
		probes = append(probes, h)
	}
	w.mu.Unlock()
	if len(holds)+len(probes) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(w.c.base, budget)
	defer cancel()
	for start := 0; start < len(holds); start += renewBatch {
		w.renew(ctx, holds[start:min(start+renewBatch, len(holds))])
	}
	for start := 0; start < len(probes); start += renewBatch {
		w.probe(ctx, probes[start:min(start+renewBatch, len(probes))])
	}
}

// probe reads the TTL of read-write locks held; a hold's deadline never
// stays later than what Redis says.
func (w *watchdog) probe(ctx context.Context, holds []*hold) {
	send := time.Now()
	pipe := w.c.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(holds))
	for i, h := range holds {
		cmds[i] = pipe.Do(ctx, "PTTL", h.lock.name)
	}
	_, _ = pipe.Exec(ctx)
	for i, cmd := range cmds {
		if n, err := cmd.Int64(); err == nil {
			holds[i].observedTTL(send, n)
		}
	}
}

// renew sends one pipeline of renewals and applies the replies.
func (w *watchdog) renew(ctx context.Context, holds []*hold) {
	ttl := w.c.opts.WatchdogTimeout
	send := time.Now()
	// Per-command errors carry the outcome; a restarted Redis has lost
	// its script cache, so a NOSCRIPT round is resent with the source.
	cmds, err := w.pipeline(ctx, holds, ttl, false)
	if wire.IsNoScript(err) {
		cmds, _ = w.pipeline(ctx, holds, ttl, true)
	}
	for i, cmd := range cmds {
		n, cerr := cmd.Int64()
		switch {
		case cerr != nil:
			// Unknown outcome (Redis unreachable, slow, failing over): the
			// hold's deadline decides whether it is lost.
			w.c.topologyHint(cerr)
		case n == 1:
			holds[i].renewed(send, ttl)
		default:
			holds[i].goneOnRenewal()
		}
	}
}

func (w *watchdog) pipeline(ctx context.Context, holds []*hold, ttl time.Duration, load bool) ([]*redis.Cmd, error) {
	pipe := w.c.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(holds))
	for i, h := range holds {
		l := h.lock
		s, keys := wire.RenewHash, []string{l.name}
		if l.kind == Read {
			s, keys = wire.RenewRead, []string{l.name, wire.ReadKeyPrefix(l.name, l.field)}
		}
		if load {
			cmds[i] = s.Eval(ctx, pipe, keys, ms(ttl), l.field)
		} else {
			cmds[i] = s.EvalSha(ctx, pipe, keys, ms(ttl), l.field)
		}
	}
	_, err := pipe.Exec(ctx)
	return cmds, err
}
