package testkit

import (
	"errors"
	"syscall"
	"testing"
	"unsafe"
)

// WatchOpens watches the files at paths (inotify) and returns a function
// that lists those opened since, by any process: how a test shows that a
// command never read a file, without timing it. The kernel queues an
// open's event before the open returns, so what a finished command
// opened is listed.
func WatchOpens(t testing.TB, paths ...string) (opened func() []string) {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	byWatch := map[int32]string{}
	for _, p := range paths {
		wd, err := syscall.InotifyAddWatch(fd, p, syscall.IN_OPEN)
		if err != nil {
			t.Fatalf("inotify: watch %s: %v", p, err)
		}
		byWatch[int32(wd)] = p
	}
	seen := map[string]bool{}
	var order []string
	return func() []string {
		buf := make([]byte, 64<<10)
		for {
			n, err := syscall.Read(fd, buf)
			if errors.Is(err, syscall.EAGAIN) {
				return order
			}
			if err != nil {
				t.Fatalf("inotify: read: %v", err)
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				if p, ok := byWatch[ev.Wd]; ok && ev.Mask&syscall.IN_OPEN != 0 && !seen[p] {
					seen[p] = true
					order = append(order, p)
				}
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}
