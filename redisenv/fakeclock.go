package redisenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoFakeClock is returned by JumpClock for a node that runs on the
// host's real clock: one not started with Config.FakeClock.
var ErrNoFakeClock = errors.New("redisenv: node runs on the real clock (start it with Config.FakeClock)")

// ErrFaketimeNotFound is returned by Start with Config.FakeClock when
// libfaketime is not installed.
var ErrFaketimeNotFound = errors.New("redisenv: libfaketime not found")

// FaketimeInstallHint says how to get libfaketime on this machine.
const FaketimeInstallHint = "install it with: sudo apt-get install -y faketime (or run: make setup)"

// faketimeLibs are where distributions put libfaketime, most likely first
// (scripts/setup.sh looks in the same places).
var faketimeLibs = []string{
	"/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
	"/usr/lib/*/faketime/libfaketime.so.1",
	"/usr/lib/faketime/libfaketime.so.1",
	"/usr/lib64/faketime/libfaketime.so.1",
	"/usr/local/lib/faketime/libfaketime.so.1",
}

// EnvFaketime names libfaketime.so.1 where it is not in a distribution's
// usual place.
const EnvFaketime = "LOCKBENCH_FAKETIME"

// FindFaketime returns the path of libfaketime.so.1 ($LOCKBENCH_FAKETIME
// when set), or ErrFaketimeNotFound saying how to install it.
func FindFaketime() (string, error) {
	if p := os.Getenv(EnvFaketime); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: $%s=%s: %v; point it at libfaketime.so.1, or unset it", ErrFaketimeNotFound, EnvFaketime, p, err)
		}
		return p, nil
	}
	for _, pattern := range faketimeLibs {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return m[0], nil
		}
	}
	return "", fmt.Errorf("%w (looked in %s and the like): %s", ErrFaketimeNotFound, filepath.Dir(faketimeLibs[0]), FaketimeInstallHint)
}

// fakeClock is a local server's libfaketime state: the file whose offset
// the server's wall clock follows, and that offset.
type fakeClock struct {
	lib    string // libfaketime.so.1
	file   string // FAKETIME_TIMESTAMP_FILE
	offset time.Duration
}

// environ is what redis-server runs under. libfaketime rereads the file at
// every clock call (FAKETIME_NO_CACHE), so a jump shows at once; the
// monotonic clock stays real, as it does when an NTP step moves a host's
// wall clock. libc is preloaded after it so that glibc's malloc, not the
// jemalloc Debian's redis-server links, serves the process: jemalloc reads
// the clock while it initialises, before libfaketime has, and the two
// deadlock at start. The parent's own preloads and libfaketime settings
// are left out: they would replace or skew the node's.
func (f *fakeClock) environ() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "LD_PRELOAD=") || strings.HasPrefix(kv, "FAKETIME") || strings.HasPrefix(kv, "DONT_FAKE_MONOTONIC=")
	})
	return append(env,
		"LD_PRELOAD="+f.lib+" libc.so.6",
		"FAKETIME_TIMESTAMP_FILE="+f.file,
		"FAKETIME_NO_CACHE=1",
		"DONT_FAKE_MONOTONIC=1",
	)
}

// write sets the offset the server's clock follows. The file is replaced
// whole (rename), so the server never reads half of it.
func (f *fakeClock) write(offset time.Duration) error {
	tmp := f.file + ".tmp"
	s := strconv.FormatFloat(offset.Seconds(), 'f', 6, 64)
	if offset >= 0 {
		s = "+" + s
	}
	if err := os.WriteFile(tmp, []byte(s+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, f.file)
}

// clockSlack is how far a server's TIME may be from the host's clock plus
// its offset and still count as showing the offset: the read's own
// round trip, on a loaded host.
const clockSlack = 250 * time.Millisecond

// JumpClock moves node's wall clock by by (forward when positive) from
// where it stands, and returns once the server's TIME shows the new
// offset. Only a local node started with Config.FakeClock has a clock to
// move (ErrNoFakeClock otherwise). Keys expire by the wall clock, so a jump
// forward expires at once every key whose TTL it passes; the offset
// survives the node's restarts.
func (e *Env) JumpClock(ctx context.Context, node Node, by time.Duration) error {
	n, ok := node.(*localNode)
	if !ok || n.clock == nil {
		return fmt.Errorf("redisenv: jump the clock of %s: %w", node.Name(), ErrNoFakeClock)
	}
	n.mu.Lock()
	offset := n.clock.offset + by
	err := n.clock.write(offset)
	if err == nil {
		n.clock.offset = offset
	}
	n.mu.Unlock()
	if err != nil {
		return fmt.Errorf("redisenv: jump the clock of %s: %w", n.name, err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: n.Addr(), Password: n.password, MaxRetries: -1})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(ctx, n.startTimeout)
	defer cancel()
	var last error
	for {
		before := time.Now()
		t, err := rdb.Time(ctx).Result()
		if err == nil {
			// The server read its clock between before and now.
			if d := t.Sub(before) - offset; d >= -clockSlack && d <= time.Since(before)+clockSlack {
				return nil
			}
			last = fmt.Errorf("TIME is %v ahead of this host, want %v", t.Sub(before).Round(time.Millisecond), offset)
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisenv: jump the clock of %s at %s: %v: %w", n.name, n.Addr(), last, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
