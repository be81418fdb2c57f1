package redisson_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/redisson"
)

// TestDriverCancel: a ctx that ends cuts the driver's calls short without
// leaving a lock behind. A section's hold of an hour ends at once, unlocked
// and marked Cut; a lock call still waiting is answered with ctx's error,
// and the lock its wait then takes in the JVM is given back; and Close,
// with a section holding, releases it and says nothing was left held.
func TestDriverCancel(t *testing.T) {
	env, d := start(t)
	rdb := env.NewClient()
	defer rdb.Close()
	exists := func(name string) bool { return rdb.Exists(context.Background(), name).Val() == 1 }

	holdCtx, cut := context.WithCancel(context.Background())
	defer cut()
	type result struct {
		s   redisson.Section
		err error
	}
	held := make(chan result, 1)
	go func() {
		s, err := d.Section(holdCtx, "holder", "reentrant", "cancel-me", -1, 0, time.Hour)
		held <- result{s, err}
	}()
	testkit.Eventually(t, "the section holds cancel-me", func() bool { return exists("cancel-me") })

	waitCtx, stopWaiting := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := d.Call(waitCtx, "lock", "waiter", "reentrant", "cancel-me", -1, 0)
		waited <- err
	}()
	// Redisson's waiter subscribes to the lock's channel before it waits.
	testkit.Eventually(t, "the lock call waits", func() bool {
		n := rdb.PubSubNumSub(context.Background(), "redisson_lock__channel:{cancel-me}").Val()
		return n["redisson_lock__channel:{cancel-me}"] > 0
	})
	stopWaiting()
	select {
	case err := <-waited:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled wait returned %v, want context.Canceled", err)
		}
	case <-time.After(testkit.Patience):
		t.Fatal("a cancelled wait was not answered")
	}
	if !exists("cancel-me") {
		t.Fatal("the section's lock went before its hold was cut")
	}

	cut()
	var r result
	select {
	case r = <-held:
	case <-time.After(testkit.Patience):
		t.Fatal("a cancelled hold of an hour went on")
	}
	if r.err != nil || !r.s.Cut || r.s.Acquired == 0 || r.s.Released < r.s.Acquired {
		t.Errorf("cut section: %+v, %v; want acquired, released, Cut and no error", r.s, r.err)
	}
	// The waiter's wait went on in the JVM, took the lock and gave it back.
	testkit.Eventually(t, "cancel-me free again", func() bool { return !exists("cancel-me") })

	go func() {
		s, err := d.Section(context.Background(), "closer", "reentrant", "closed-on", -1, 0, time.Hour)
		held <- result{s, err}
	}()
	testkit.Eventually(t, "the section holds closed-on", func() bool { return exists("closed-on") })
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	r = <-held
	if !r.s.Cut && r.err == nil {
		t.Errorf("a section the close ended: %+v, %v", r.s, r.err)
	}
	if n := d.HeldAtClose(); n != 0 || exists("closed-on") {
		t.Errorf("closed with a section holding: HeldAtClose %d, closed-on still held: %v; want it released", n, exists("closed-on"))
	}
}
