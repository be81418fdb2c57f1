package workloads

import (
	"context"
	"errors"
	"net"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/results"
)

// tick closes an interval each second, reports progress and keeps a fair
// run's registration alive.
func (r *run) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
			// The interval closes now, not when the tick was due: on a
			// busy host the two differ, and what the interval counts runs
			// to now.
			now := time.Now()
			if r.fair != nil {
				_ = r.fair.renew(r.ctx, now) // a lapse only lets a later run clean up early
			}
			g := runtime.NumGoroutine()
			r.noteGoroutines(g)
			pt := r.col.Tick(now, now.Before(r.warmEnd), g)
			if r.cfg.Progress != nil {
				ops, errs := r.col.Totals()
				r.cfg.Progress(Progress{
					Elapsed: now.Sub(r.loadStart), Total: r.total, Warmup: pt.Warmup,
					Interval: pt, Ops: ops, Errors: errs, AcquireP99: r.col.AcquireP99(),
				})
			}
		}
	}
}

// ping samples the PING round trip on its own connection: the floor under
// every lock operation, measured in the same run. A PING that got no
// reply (timed out, or still waiting when the run closed its clients at a
// stall) is recorded with the time it waited, as a stalled acquisition
// is: a stall shows in the ping histogram instead of leaving it. The PING
// in flight when the load stops is seen through, not cancelled (ctx ends
// only as the clients close): if Redis is stalled, that PING shows it.
func (r *run) ping(ctx context.Context, rdb redis.UniversalClient, sh *results.Shard) {
	t := time.NewTicker(r.cfg.PingEvery)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
		if r.ctx.Err() != nil {
			return
		}
		t0 := time.Now()
		err := rdb.Ping(ctx).Err()
		if err == nil || noReply(err) || ctx.Err() != nil {
			if t0.After(r.warmEnd) {
				sh.RecordValue(results.Ping, int64(time.Since(t0)))
			}
		}
		if ctx.Err() != nil || errors.Is(err, redis.ErrClosed) || errors.Is(err, net.ErrClosed) {
			return // the clients are closing: at a stall, or at the end
		}
	}
}
