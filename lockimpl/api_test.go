package lockimpl_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testkit"
	"github.com/lockbench/lockbench/lockimpl"
)

// TestOwnerSharedByGoroutinesRefused: an owner used by a second goroutine
// while the first holds or waits for a lock is refused with ErrHeld, not
// silently let in as a re-entry (which would give no exclusion at all).
func TestOwnerSharedByGoroutinesRefused(t *testing.T) {
	f := setup(t)
	c := f.client(lockimpl.Options{})
	shared := c.NewOwner()

	h := lock(t, shared.Lock("held"))
	for _, try := range []func() error{
		func() error { _, err := shared.Lock("held").Lock(bg, lockimpl.LockOptions{}); return err },
		func() error { _, err := shared.Lock("held").TryLock(bg, lockimpl.TryLockOptions{}); return err },
	} {
		if err := try(); !errors.Is(err, lockimpl.ErrHeld) {
			t.Errorf("second acquisition by the holding owner: %v, want ErrHeld", err)
		}
	}
	f.wantHash("held", map[string]string{shared.ID(): "1"})
	unlock(t, h)

	// While one goroutine of the owner waits, another is refused at once.
	other := lock(t, c.NewOwner().Lock("busy"))
	waiting := lockAsync(shared.Lock("busy"))
	testkit.Eventually(t, "the owner's first goroutine waiting", func() bool { return c.SubscriptionRefs(lockimpl.LockChannel("busy")) == 1 })
	if _, err := shared.Lock("busy").TryLock(bg, lockimpl.TryLockOptions{Wait: time.Second}); !errors.Is(err, lockimpl.ErrHeld) {
		t.Errorf("acquisition while the same owner waits: %v, want ErrHeld", err)
	}
	unlock(t, other)
	recvOK(t, waiting.err, testkit.Patience, "the waiting goroutine acquired")
	unlock(t, waiting.h)
}

// TestOptionsOutOfRange: negative durations are refused before anything is
// sent, naming the field.
func TestOptionsOutOfRange(t *testing.T) {
	f := setup(t)
	l := f.client(lockimpl.Options{}).NewOwner().Lock("L")
	for name, try := range map[string]func() error{
		"LockOptions.Lease":    func() error { _, err := l.Lock(bg, lockimpl.LockOptions{Lease: -time.Second}); return err },
		"TryLockOptions.Wait":  func() error { _, err := l.TryLock(bg, lockimpl.TryLockOptions{Wait: -time.Second}); return err },
		"TryLockOptions.Lease": func() error { _, err := l.TryLock(bg, lockimpl.TryLockOptions{Lease: -1}); return err },
	} {
		err := try()
		if !errors.Is(err, lockimpl.ErrInvalidOptions) {
			t.Errorf("%s negative: %v, want ErrInvalidOptions", name, err)
		} else if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	f.wantAbsent("L")
}

// TestStaleHoldCannotUnlockNewOne: after a hold is lost and the owner
// acquires the lock again, the old Hold's Unlock must not give back the
// new acquisition (both count under the same hash field), and its Lost
// stays closed while the new hold's is open.
func TestStaleHoldCannotUnlockNewOne(t *testing.T) {
	f := setup(t)
	o := f.client(lockimpl.Options{WatchdogTimeout: watch}).NewOwner()
	old := lock(t, o.Lock("L"))
	f.raw.Del(bg, "L") // the hold is lost: an operator's DEL
	testkit.WaitClosed(t, "the old hold's Lost", old.Lost())

	renewed := lock(t, o.Lock("L"))
	if err := old.Unlock(bg); !errors.Is(err, lockimpl.ErrNotHeld) {
		t.Errorf("unlock of the stale hold: %v, want ErrNotHeld", err)
	}
	if err := old.Reenter(bg); !errors.Is(err, lockimpl.ErrNotHeld) {
		t.Errorf("re-entry of the stale hold: %v, want ErrNotHeld", err)
	}
	f.wantHash("L", map[string]string{o.ID(): "1"})
	if testkit.Closed(renewed.Lost()) {
		t.Error("the new hold's Lost is closed")
	}
	unlock(t, renewed)
	f.wantAbsent("L")
}
