// Package testkit holds the waiting helpers every package's tests share:
// a generous deadline, polling for a condition, and a context that a hung
// call cannot outlive. Tests wait on events with these, never sleep and
// then assert.
package testkit

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Patience bounds every wait on an event: generous, since it is a
// deadline on a loaded machine, not a sleep.
const Patience = 30 * time.Second

// Eventually polls cond until it holds, failing t after Patience.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", Patience, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Closed reports whether ch is closed, without waiting.
func Closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// WaitClosed fails t unless ch closes within Patience.
func WaitClosed(t testing.TB, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(Patience):
		t.Fatalf("timed out after %v waiting for %s", Patience, what)
	}
}

// Context is a context bounded by Patience and cancelled when t ends, so
// a hung call fails its test instead of the whole binary.
func Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	t.Cleanup(cancel)
	return ctx
}

// ToxiproxyStage is the goroutine the embedded toxiproxy can leave behind:
// a link's stage blocked on its output when the upstream died under a
// toxic (a server killed during a partition). It is the library's, not
// ours, so the leak checks of packages that run chaos scenarios ignore it.
var ToxiproxyStage = goleak.IgnoreTopFunction("github.com/Shopify/toxiproxy/v2/toxics.(*NoopToxic).Pipe")

// FindLeaks is goleak.Find with a grace of a few seconds instead of its
// half second: on a loaded machine a goroutine on its way out (a dialer's
// next probe, a closing pool's reaper) may still be scheduled to exit.
// What is still running after that is a leak.
func FindLeaks(opts ...goleak.Option) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// CheckLeaks ends a TestMain: given the code of m.Run, it fails a run
// whose tests passed but left goroutines running (FindLeaks, naming them
// on stderr) and returns the exit code.
func CheckLeaks(code int, opts ...goleak.Option) int {
	if code == 0 {
		if err := FindLeaks(opts...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}
