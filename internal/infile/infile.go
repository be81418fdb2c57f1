// Package infile is how lockbench opens every file it reads: a regular
// file under the size limit of its kind. Profiles, results and their
// interval logs, chaos reports, sweeps, the side-by-side and mitigation
// files, the logs and records of the servers it starts, and the head of
// the Redisson driver's jar all come through it. It refuses anything but a
// regular file (a FIFO would block its reader until a writer came, a
// device such as /dev/zero never ends) and any file larger than the limit
// for its kind, reading at most one byte past that limit. It imports no
// package of this module, so every package may use it.
package infile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Limit is the most lockbench reads of one kind of file, in bytes.
type Limit int64

// The limits, stated in docs/commands.md. Each leaves headroom over the files
// lockbench writes: a result's JSON grows by about 0.4 KB per measured
// second (its limit holds a run of about a week), its interval log by
// about 16 KB, 1.4 GB a day.
const (
	// Profile bounds a --profile-file; a profile is a few hundred bytes.
	Profile Limit = 1 << 20
	// JSON bounds a result, chaos report, sweep or matrix file, which is
	// read whole into memory.
	JSON Limit = 256 << 20
	// HistLog bounds a result's interval log (.hlog), which is streamed:
	// a day's run with half again as headroom. Every interval's histogram
	// is decoded at a few MB per second, so a day's log takes minutes to
	// read, and a larger file is refused at once rather than read for
	// longer.
	HistLog Limit = 2 << 30
)

// what names the kind of file l bounds, for messages.
func (l Limit) what() string {
	switch l {
	case Profile:
		return "a profile"
	case JSON:
		return "a lockbench JSON file (result, chaos report, sweep, matrix)"
	case HistLog:
		return "an interval log (.hlog)"
	}
	return "this kind of file"
}

// String is l in binary units, e.g. "1 MiB".
func (l Limit) String() string { return size(int64(l)) }

// ErrNotRegular and ErrTooLarge are what an [*Error] refuses a file for.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("larger than its limit")
)

// Error is a file refused: not a regular file, or over its limit. Its
// message is "PATH: REASON"; it is bad input (exit 2).
type Error struct {
	Path   string
	Reason string // e.g. "is a named pipe (FIFO), not a regular file"
	Err    error  // ErrNotRegular or ErrTooLarge
}

func (e *Error) Error() string { return e.Path + ": " + e.Reason }

// Unwrap returns ErrNotRegular or ErrTooLarge.
func (e *Error) Unwrap() error { return e.Err }

// IsUsage marks the error as bad input.
func (e *Error) IsUsage() bool { return true }

// Reason is err's reason without the path a caller already names: an
// [*Error]'s reason, an [*fs.PathError]'s cause, or err itself.
func Reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Read returns the whole of the regular file at path, refusing anything
// else and a file of more than limit bytes.
func Read(path string, limit Limit) ([]byte, error) {
	f, st, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > int64(limit) {
		return nil, tooLarge(path, limit, st.Size())
	}
	// Sized from fstat, as os.ReadFile does, but never past limit+1: a file
	// that grows meanwhile, or reports no size (as /proc's do), still
	// stops there.
	b := make([]byte, 0, min(st.Size(), int64(limit))+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):min(cap(b), int(limit)+1)])
		b = b[:len(b)+n]
		if int64(len(b)) > int64(limit) {
			return nil, tooLarge(path, limit, -1)
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Open opens the regular file at path to be streamed, refusing anything
// else and a file of more than limit bytes; a read past limit bytes (the file
// grew) fails with an [*Error].
func Open(path string, limit Limit) (io.ReadCloser, error) {
	f, st, err := open(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > int64(limit) {
		f.Close()
		return nil, tooLarge(path, limit, st.Size())
	}
	return &bounded{f: f, path: path, limit: limit, left: int64(limit)}, nil
}

// Check refuses, as Open would, the file at path: anything but a regular
// file, and a file of more than limit bytes; it neither opens nor reads
// it. A command that reads several large files checks them all first.
func Check(path string, limit Limit) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := regular(path, st); err != nil {
		return err
	}
	if st.Size() > int64(limit) {
		return tooLarge(path, limit, st.Size())
	}
	return nil
}

// bounded reads a file that may give at most limit bytes.
type bounded struct {
	f     *os.File
	path  string
	limit Limit
	left  int64 // bytes it may still give; -1 once it gave one too many
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, tooLarge(b.path, b.limit, -1)
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.f.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n - 1, tooLarge(b.path, b.limit, -1)
	}
	return n, err
}

func (b *bounded) Close() error { return b.f.Close() }

// Head returns the first n bytes of the regular file at path (fewer when
// it is shorter), refusing anything else: enough to tell what kind of file
// it is, whatever its size.
func Head(path string, n int) ([]byte, error) {
	f, _, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return b[:k], err
}

// Tail returns the end of the regular file at path that starts at offset
// from, or, when that is longer than n bytes, its last n bytes starting
// at a line's beginning: the end of a log, which is what messages quote,
// however long the log grew. A file shorter than from gives nothing.
func Tail(path string, from, n int64) ([]byte, error) {
	f, st, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	start := max(from, st.Size()-n)
	if start >= st.Size() {
		return nil, nil
	}
	cut := start > from
	if cut {
		start-- // the byte before tells whether start begins a line
	}
	b := make([]byte, st.Size()-start)
	k, err := f.ReadAt(b, start)
	if err != nil && err != io.EOF {
		return nil, err
	}
	b = b[:k]
	if cut {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil, nil
		}
		b = b[i+1:]
	}
	return b, nil
}

// open opens path for reading if it is a regular file. The path is
// checked before the open, so a device is never opened (opening some has
// effects), and the opened file after it, so a FIFO swapped in meanwhile
// is refused too. O_NONBLOCK keeps that open from waiting for a FIFO's
// writer; on a regular file it changes nothing. O_NOCTTY keeps a terminal
// from becoming ours.
func open(path string) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if err := regular(path, st); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	if st, err = f.Stat(); err == nil {
		err = regular(path, st)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// regular refuses st unless it is a regular file's.
func regular(path string, st fs.FileInfo) error {
	m := st.Mode()
	var what string
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return &Error{Path: path, Reason: "is a directory", Err: ErrNotRegular}
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	default:
		what = "a special file"
	}
	return &Error{Path: path, Reason: "is " + what + ", not a regular file", Err: ErrNotRegular}
}

// tooLarge refuses a file over limit; n is its size, or -1 where only
// the read found it out (the file grew, or its size says nothing).
func tooLarge(path string, limit Limit, n int64) error {
	is := "is larger than " + limit.String()
	if n > 0 {
		is = "is " + size(n)
	}
	return &Error{Path: path, Reason: fmt.Sprintf("%s, over the %v limit for %s", is, limit, limit.what()), Err: ErrTooLarge}
}

// size is n bytes in the largest binary unit that divides it: "1 MiB",
// "1536 KiB", "1048577 bytes".
func size(n int64) string {
	u := 0
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	for n >= 1024 && n%1024 == 0 && u < len(units)-1 {
		n /= 1024
		u++
	}
	return fmt.Sprintf("%d %s", n, units[u])
}
