package infile_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/infile"
	"github.com/lockbench/lockbench/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.CheckLeaks(m.Run())) }

// fifo makes a named pipe in dir; nothing ever opens it for writing, so
// an open for reading that waits for a writer waits for ever.
func fifo(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// within runs f and fails t if it has not returned after Patience (a
// reader stuck on a FIFO); the FIFO is then opened for writing and closed,
// which lets the stuck reader go.
func within(t *testing.T, what, pipe string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(testkit.Patience):
		if w, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatalf("%s still blocked after %v", what, testkit.Patience)
		return nil
	}
}

func write(t *testing.T, dir, name string, n int) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRead: a regular file up to its limit is read whole; one byte more,
// a device, a FIFO (at once, though no writer ever comes) and a directory
// are refused with one line naming the file and why.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	const limit infile.Limit = 1 << 10
	at := write(t, dir, "at-limit", int(limit))
	over := write(t, dir, "over", int(limit)+1)
	pipe := fifo(t, dir)
	if b, err := infile.Read(at, limit); err != nil || len(b) != int(limit) {
		t.Errorf("a file of exactly the limit: %d bytes, %v", len(b), err)
	}
	for _, tc := range []struct {
		path string
		is   error
		want string
	}{
		{over, infile.ErrTooLarge, over + ": is 1025 bytes, over the 1 KiB limit"},
		{"/dev/zero", infile.ErrNotRegular, "/dev/zero: is a character device, not a regular file"},
		{pipe, infile.ErrNotRegular, pipe + ": is a named pipe (FIFO), not a regular file"},
		{dir, infile.ErrNotRegular, dir + ": is a directory"},
		{filepath.Join(dir, "missing"), fs.ErrNotExist, "no such file"},
	} {
		err := within(t, "Read "+tc.path, pipe, func() error { _, err := infile.Read(tc.path, limit); return err })
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Read(%s): %v; want %v saying %q on one line", tc.path, err, tc.is, tc.want)
		}
		var e *infile.Error
		if errors.As(err, &e) && !e.IsUsage() {
			t.Errorf("Read(%s): %v is not bad input", tc.path, err)
		}
	}
}

// TestReadStopsAtTheLimit: a file whose size says nothing (procfs gives 0)
// is still refused once it gives more than the limit, not read to its end.
func TestReadStopsAtTheLimit(t *testing.T) {
	b, err := infile.Read("/proc/self/status", 1<<20)
	if err != nil || len(b) == 0 {
		t.Fatalf("/proc/self/status: %d bytes, %v", len(b), err)
	}
	if _, err := infile.Read("/proc/self/status", 16); !errors.Is(err, infile.ErrTooLarge) || !strings.Contains(err.Error(), "is larger than 16 bytes") {
		t.Errorf("over a 16-byte limit: %v", err)
	}
}

// TestOpen: a stream gives a file up to its limit and fails once the file
// grew past it; a FIFO is refused at once.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	const limit infile.Limit = 1 << 10
	p := write(t, dir, "log", int(limit))
	r, err := infile.Open(p, limit)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || len(b) != int(limit) {
		t.Errorf("a file of exactly the limit: %d bytes, %v", len(b), err)
	}
	r, err = infile.Open(p, limit)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.WriteFile(p, []byte(strings.Repeat("y", 4*int(limit))), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err = io.ReadAll(r)
	if !errors.Is(err, infile.ErrTooLarge) || len(b) != int(limit) {
		t.Errorf("a file grown past the limit: %d bytes, %v; want %d and ErrTooLarge", len(b), err, limit)
	}
	if _, err := infile.Open(write(t, dir, "big", int(limit)+1), limit); !errors.Is(err, infile.ErrTooLarge) {
		t.Errorf("a file over the limit: %v", err)
	}
	pipe := fifo(t, dir)
	err = within(t, "Open of a FIFO", pipe, func() error { _, err := infile.Open(pipe, limit); return err })
	if !errors.Is(err, infile.ErrNotRegular) {
		t.Errorf("Open of a FIFO: %v", err)
	}
}

// TestTail: what follows an offset, cut to whole lines once it is longer
// than the bytes asked for.
func TestTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "redis.log")
	if err := os.WriteFile(p, []byte("one\ntwo\nthree\nfour\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		from, n int64
		want    string
	}{
		{0, 1 << 20, "one\ntwo\nthree\nfour\n"},
		{4, 1 << 20, "two\nthree\nfour\n"},
		{0, 8, "four\n"},         // the last 8 bytes start mid-line: "ee\nfour\n"
		{0, 11, "three\nfour\n"}, // the last 11 start at a line
		{100, 1 << 20, ""},       // the log is shorter than the offset
		{14, 1 << 20, "four\n"},  // an offset at a line
	} {
		b, err := infile.Tail(p, tc.from, tc.n)
		if err != nil || string(b) != tc.want {
			t.Errorf("Tail(from %d, %d bytes) = %q, %v; want %q", tc.from, tc.n, b, err, tc.want)
		}
	}
	if _, err := infile.Tail("/dev/zero", 0, 10); !errors.Is(err, infile.ErrNotRegular) {
		t.Errorf("Tail of /dev/zero: %v", err)
	}
}

// TestHead: the first bytes of a regular file, all of a shorter one; a
// FIFO (at once) and a device are refused.
func TestHead(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "jar", 100)
	if b, err := infile.Head(p, 4); err != nil || string(b) != "xxxx" {
		t.Errorf("Head(4) of 100 bytes = %q, %v", b, err)
	}
	if b, err := infile.Head(write(t, dir, "short", 2), 4); err != nil || string(b) != "xx" {
		t.Errorf("Head(4) of 2 bytes = %q, %v", b, err)
	}
	pipe := fifo(t, dir)
	err := within(t, "Head of a FIFO", pipe, func() error { _, err := infile.Head(pipe, 4); return err })
	if !errors.Is(err, infile.ErrNotRegular) {
		t.Errorf("Head of a FIFO: %v", err)
	}
	if _, err := infile.Head("/dev/zero", 4); !errors.Is(err, infile.ErrNotRegular) {
		t.Errorf("Head of /dev/zero: %v", err)
	}
}

// TestLimits: the limits as docs/commands.md states them. An interval log
// grows by about 16 KB per measured second: its limit holds a day's run
// with a quarter more at least, and not so much more that a file at the
// limit would be read for many more minutes than a day's.
func TestLimits(t *testing.T) {
	for l, want := range map[infile.Limit]string{infile.Profile: "1 MiB", infile.JSON: "256 MiB", infile.HistLog: "2 GiB", 1536 << 10: "1536 KiB"} {
		if l.String() != want {
			t.Errorf("%d: %q, want %q", int64(l), l.String(), want)
		}
	}
	day := int64(24*60*60) * 16_000
	if l := int64(infile.HistLog); l < day*5/4 || l > 2*day {
		t.Errorf("interval log limit %v: want a day's run (%d MB) with between a quarter and as much again as headroom", infile.HistLog, day/1_000_000)
	}
}

// TestCheck: Check refuses what Open would, without opening the file.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	const limit infile.Limit = 1 << 10
	ok, big, pipe := write(t, dir, "ok", int(limit)), write(t, dir, "big", int(limit)+1), fifo(t, dir)
	opened := testkit.WatchOpens(t, ok, big, pipe)
	if err := infile.Check(ok, limit); err != nil {
		t.Errorf("a file of exactly the limit: %v", err)
	}
	if err := infile.Check(big, limit); !errors.Is(err, infile.ErrTooLarge) || !strings.Contains(err.Error(), big+": is 1025 bytes, over the 1 KiB limit") {
		t.Errorf("a file over the limit: %v", err)
	}
	if err := infile.Check(pipe, limit); !errors.Is(err, infile.ErrNotRegular) {
		t.Errorf("a FIFO: %v", err)
	}
	if err := infile.Check(filepath.Join(dir, "missing"), limit); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if o := opened(); len(o) > 0 {
		t.Errorf("Check opened %q", o)
	}
}
