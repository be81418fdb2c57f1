package workloads_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// TestRunShares runs a profile split over two workers, as two processes
// would: each drives only its own owners, on the whole's lock names (with
// popularity per-owner, owner i's name is lock i whichever worker has it),
// in its slot of the whole's open-loop schedule, starting when the
// rendezvous says.
func TestRunShares(t *testing.T) {
	env := redisenvtest.Start(t)
	p := short(t, "mutex", 3, 2, 200*time.Millisecond, time.Second)
	p.Popularity, p.Rate = workloads.PopPerOwner, 300
	if err := p.Set("think", "0"); err != nil {
		t.Fatal(err)
	}
	prefix := uniquePrefix(t)
	// Every lock its own "shard", so that the result counts each lock's
	// acquisitions.
	var names []string
	for i := range p.LockCount() {
		names = append(names, "lock"+strconv.Itoa(i))
	}
	lockOf := func(name string) int {
		i, err := strconv.Atoi(name[strings.LastIndexByte(name, ':')+1:])
		if err != nil {
			t.Errorf("lock name %q is not the prefix and an index", name)
		}
		return i
	}
	start := time.Now().Add(300 * time.Millisecond)
	var wg sync.WaitGroup
	res := make([]*results.Result, 2)
	errs := make([]error, 2)
	for i := range 2 {
		s, err := p.Split(i, 2)
		if err != nil {
			t.Fatal(err)
		}
		cfg := workloads.Config{
			Profile: s.Profile, Share: &s, KeyPrefix: prefix, NewRedis: env.NewPool,
			ShardNames: names, ShardOf: lockOf,
			Rendezvous: func(context.Context) (time.Time, results.Worker, error) {
				return start, results.Worker{RunID: "shares", RedisStart: start}, nil
			},
		}
		wg.Go(func() { res[i], errs[i] = workloads.Run(testkit.Context(t), cfg) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	owners := []int{4, 2} // worker 0 has clients 0 and 1, worker 1 client 2
	first := []int{0, 4}
	for i, r := range res {
		w := r.Worker
		if w == nil || w.Index != i || w.Workers != 2 || w.FirstOwner != first[i] || w.Owners != owners[i] || w.RunID != "shares" {
			t.Fatalf("worker %d: Worker %+v, want index %d, owners %d from %d", i, w, i, owners[i], first[i])
		}
		if r.Meta.Workload != p.Summary() {
			t.Errorf("worker %d: workload %q, want the whole's %q (merge compares it)", i, r.Meta.Workload, p.Summary())
		}
		if want := p.Rate * float64(owners[i]) / 6; r.Throughput.TargetRate != want {
			t.Errorf("worker %d: target %v ops/s, want its share %v", i, r.Throughput.TargetRate, want)
		}
		if w.RedisStart.Before(start) || r.Meta.Start.Before(start) {
			t.Errorf("worker %d started at %v (Redis's clock %v), before the agreed %v", i, r.Meta.Start, w.RedisStart, start)
		}
		// Only its own owners' locks were taken, each by its owner.
		for lock, sh := range r.PerShard {
			mine := lock >= first[i] && lock < first[i]+owners[i]
			if mine != (sh.Acquisitions > 0) {
				t.Errorf("worker %d: lock %d acquired %d times; want acquisitions only on locks %d..%d",
					i, lock, sh.Acquisitions, first[i], first[i]+owners[i]-1)
			}
		}
		requireSafe(t, r)
		t.Logf("worker %d: %s", i, fmt.Sprint(r.Throughput.OpsPerSec, " ops/s, redis start ", w.RedisStart.Format(time.StampMicro)))
	}
}
