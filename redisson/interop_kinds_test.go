package redisson_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/redisson"
)

// section is one critical section on CLOCK_MONOTONIC, by a Java or Go owner.
type section struct {
	from, to int64
	java     bool
}

// goLocker takes the lockimpl lock of a driver kind on names for o and
// returns its unlock.
func goLocker(t *testing.T, o *lockimpl.Owner, k redisson.Kind, names []string) func(ctx context.Context) (func(context.Context) error, error) {
	if k == redisson.Multi {
		var parts []*lockimpl.Lock
		for _, n := range names {
			parts = append(parts, o.Lock(n))
		}
		m, err := o.NewMultiLock(parts...)
		return func(ctx context.Context) (func(context.Context) error, error) {
			if err != nil {
				return nil, err
			}
			h, err := m.Lock(ctx, lockimpl.LockOptions{})
			if err != nil {
				return nil, err
			}
			return h.Unlock, nil
		}
	}
	lk, err := kind.Parse(string(k))
	if err != nil {
		t.Fatal(err)
	}
	l := o.LockOf(lk, names[0])
	return func(ctx context.Context) (func(context.Context) error, error) {
		h, err := l.Lock(ctx, lockimpl.LockOptions{})
		if err != nil {
			return nil, err
		}
		return h.Unlock, nil
	}
}

// TestInteropExclusion: for each lock kind both sides have, two Redisson
// owners (Java threads) and two lockimpl owners contend for the same
// names; their critical sections, on one monotonic clock (the JVM's own
// times for the Java side), never overlap, the lock passes between the
// languages hundreds of times per kind, and each side wakes the other's
// waiters by pub/sub (the spin lock by its polling): no handoff waits for
// a lease to run out.
func TestInteropExclusion(t *testing.T) {
	env, d := start(t)
	c := goClient(t, env, lockimpl.Options{})
	t.Logf("Redisson %s", d.Version())
	var total, totalCross int
	// Every kind whose holds exclude each other, and the multi-lock.
	var kinds []redisson.Kind
	for _, k := range kind.All() {
		if !k.Shared() {
			kinds = append(kinds, redisson.KindOf(k))
		}
	}
	for _, k := range append(kinds, redisson.Multi) {
		t.Run(string(k), func(t *testing.T) {
			ctx := testkit.Context(t)
			names := []string{"x-" + string(k)}
			javaNames := names
			if k == redisson.Multi {
				// lockimpl takes a multi-lock's parts in name order whatever
				// the order given; Redisson in the order given, so its
				// users give the same order (or the two sides can wait on
				// each other until a round's per-lock wait runs out).
				names = []string{"m-b", "m-a", "m-c"}
				javaNames = []string{"m-a", "m-b", "m-c"}
			}
			rounds := 250
			if k == redisson.KindOf(kind.Spin) {
				rounds = 100 // its waiters back off up to 128 ms between polls
			}
			const work, think = 200 * time.Microsecond, 3 * time.Millisecond
			var mu sync.Mutex
			var secs []section
			add := func(s section) {
				mu.Lock()
				secs = append(secs, s)
				mu.Unlock()
			}
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for _, owner := range []string{"j1", "j2"} {
				wg.Go(func() {
					for range rounds {
						s, err := d.Section(ctx, owner+"-"+string(k), k, strings.Join(javaNames, ","), -1, 0, work)
						if err != nil {
							errs <- err
							return
						}
						add(section{s.Acquired, s.Released, true})
						time.Sleep(think)
					}
				})
			}
			for range 2 {
				lock := goLocker(t, c.NewOwner(), k, names)
				wg.Go(func() {
					for range rounds {
						unlock, err := lock(ctx)
						if err != nil {
							errs <- err
							return
						}
						from := redisson.Now()
						time.Sleep(work)
						to := redisson.Now()
						if err := unlock(ctx); err != nil {
							errs <- err
							return
						}
						add(section{from, to, false})
						time.Sleep(think)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			slices.SortFunc(secs, func(a, b section) int { return int(a.from - b.from) })
			var overlaps, cross int
			var gaps []time.Duration
			for i := 1; i < len(secs); i++ {
				prev, cur := secs[i-1], secs[i]
				if cur.from < prev.to {
					overlaps++
					continue
				}
				if cur.java != prev.java {
					cross++
					gaps = append(gaps, time.Duration(cur.from-prev.to))
				}
			}
			if len(secs) != 4*rounds {
				t.Fatalf("%d critical sections, want %d", len(secs), 4*rounds)
			}
			if overlaps != 0 {
				t.Fatalf("%d overlapping critical sections between owners", overlaps)
			}
			if cross < rounds/2 {
				t.Fatalf("only %d handoffs between the languages in %d sections: the test did not contend", cross, len(secs))
			}
			slices.Sort(gaps)
			p50, worst := gaps[len(gaps)/2], gaps[len(gaps)-1]
			t.Logf("%s: %d sections, 0 overlaps, %d cross-language handoffs: p50 %v, max %v", k, len(secs), cross, p50, worst)
			mu.Lock()
			total += len(secs)
			totalCross += cross
			mu.Unlock()
			// Woken by the other side's unlock message (or a spin lock's
			// poll, at most 128 ms apart), not by the lease's end: a missed
			// wake-up waits for the watchdog's 30 s lease. The bound is that
			// order of magnitude, not the host's speed, so a loaded host
			// passes and a lost message still fails.
			limit := time.Second
			if p50 > limit || worst > 5*time.Second {
				t.Errorf("cross-language handoff p50 %v, max %v: want p50 under %v and none waiting for a lease", p50, worst, limit)
			}
		})
	}
	t.Logf("all kinds: %d sections, 0 overlaps, %d cross-language handoffs", total, totalCross)
}
