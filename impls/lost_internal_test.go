package impls

import (
	"testing"
	"time"
)

// TestLostSignalTellsByDeadline: asked after the hold's Until, the loss
// signal is closed whether or not its timer ran (a loaded host runs it
// late); asked before, it is not; closing twice is harmless.
func TestLostSignalTellsByDeadline(t *testing.T) {
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	past := &lostSignal{ch: make(chan struct{}), until: time.Now().Add(-time.Millisecond)} // no timer: a late one
	if !closed(past.signal()) {
		t.Error("asked after Until: not closed")
	}
	future := newLostSignal(time.Now().Add(time.Hour))
	defer future.timer.Stop()
	if closed(future.signal()) {
		t.Error("asked an hour before Until: closed")
	}
	soon := newLostSignal(time.Now().Add(time.Millisecond))
	select {
	case <-soon.ch:
	case <-time.After(time.Minute):
		t.Fatal("the timer never closed it")
	}
	soon.signal() // after the timer closed it: no second close
}
