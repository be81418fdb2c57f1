package workloads

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
)

// TestMessageNamesThePackageOnce: a lockimpl error wrapping one of its
// sentinels names lockimpl once in a run's error messages, not as
// "lockimpl: lock …: lockimpl: invalid options"; other messages are kept.
func TestMessageNamesThePackageOnce(t *testing.T) {
	ctx := context.Background()
	env := redisenvtest.Start(t)
	c, err := lockimpl.NewClient(ctx, env.NewClient(), lockimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const name = "lb:message:0"
	o := c.NewOwner()
	_, err = o.Lock(name).Lock(ctx, lockimpl.LockOptions{Lease: -time.Second})
	if err == nil {
		t.Fatal("a negative lease was accepted")
	}
	w := &worker{r: &run{runEnv: &runEnv{names: []string{name}}}, owner: namedOwner(o.ID())}
	want := `lockimpl: lock reentrant lock "<lock>" of <owner>: invalid options: LockOptions.Lease -1s is negative (0 means a watchdog lease)`
	if msg := w.message(0, err); msg != want {
		t.Errorf("%q recorded as\n\t%q; want\n\t%q", err, msg, want)
	}
	for _, kept := range []string{
		"redisson: connect c0 to 127.0.0.1:1: RedisConnectionException: Unable to connect",
		"context deadline exceeded",
		"raw: unlock: redis: connection pool timeout",
	} {
		if got := w.message(0, errors.New(kept)); got != kept {
			t.Errorf("%q recorded as %q", kept, got)
		}
	}
}

// namedOwner is an owner that only has a name: message asks no more.
type namedOwner string

func (o namedOwner) ID() string                         { return string(o) }
func (o namedOwner) Locker(string, results.Mode) Locker { return nil }
