package redisson

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LoopSpec is a closed-loop workload the JVM runs itself (Driver.Loop):
// each of Threads owner threads takes its lock, holds it, unlocks it and
// thinks, until End, with no line on the pipe per operation.
type LoopSpec struct {
	Threads int
	// First is the first thread's owner index in the run (records carry
	// it), so that the owners of several clients' loops number apart.
	First int
	// Locks is how many names the owners pick from at random (Prefix
	// followed by the index); 0 gives each owner one of its own (Prefix,
	// "o" and its index), whose lock index in the records is the owner's.
	Locks int
	// Read is the share of operations taking the read lock (kind rw).
	Read float64
	// Hold and Think are "f:NS", "u:A:B" or "e:MEAN" (nanoseconds).
	Hold, Think string
	// End is when the loop stops, on Now's clock.
	End  int64
	Seed uint64
}

// LoopRecord is one operation of a loop: times on Now's clock, 0 for what
// did not happen.
type LoopRecord struct {
	Owner, Lock int32
	// Mode is 0 exclusive, 1 read, 2 write.
	Mode uint8
	// Outcome is 0 acquired and released, 1 not acquired within the wait,
	// 2 an error.
	Outcome                          uint8
	Called, Acquired, Released, Done int64
}

// loopRecordSize is the bytes of one record in the loop's file.
const loopRecordSize = 4 + 4 + 1 + 1 + 4*8

// Loop runs spec on client's RedissonClient, on locks of kind k named
// from prefix, each acquisition as Call's lock (wait, lease), and returns
// every operation. A ctx that ends stops the loop early: each thread ends
// its operation (unlocking what it holds) and stops, and Loop returns the
// operations done with ctx's error.
func (d *Driver) Loop(ctx context.Context, client string, k Kind, prefix string, wait, lease time.Duration, spec LoopSpec) ([]LoopRecord, error) {
	f, err := os.CreateTemp("", "lockbench-redisson-loop-*.bin")
	if err != nil {
		return nil, err
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)
	s := fmt.Sprintf("threads=%d,first=%d,locks=%d,read=%s,hold=%s,think=%s,end=%d,seed=%d,out=%s",
		spec.Threads, spec.First, spec.Locks, strconv.FormatFloat(spec.Read, 'g', -1, 64), spec.Hold, spec.Think, spec.End, spec.Seed, path)
	if strings.ContainsAny(s, "\t\n") {
		return nil, fmt.Errorf("redisson: loop spec %q: no tabs or newlines", s)
	}
	_, err = d.call(ctx, "loop", client, k, prefix, wait, lease, 0, s)
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	// Cut short, the loop wrote what it did before it answered.
	recs, rerr := readLoop(path)
	if err != nil {
		return recs, err
	}
	return recs, rerr
}

// readLoop reads the records the loop wrote to path.
func readLoop(path string) ([]LoopRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	var out []LoopRecord
	var b [loopRecordSize]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, fmt.Errorf("redisson: loop records: %w", err)
		}
		be := binary.BigEndian
		out = append(out, LoopRecord{
			Owner: int32(be.Uint32(b[0:])), Lock: int32(be.Uint32(b[4:])), Mode: b[8], Outcome: b[9],
			Called: int64(be.Uint64(b[10:])), Acquired: int64(be.Uint64(b[18:])),
			Released: int64(be.Uint64(b[26:])), Done: int64(be.Uint64(b[34:])),
		})
	}
}

// Frame is one Java method and the execution samples in which it was the
// top frame (its self time).
type Frame struct {
	Method  string `json:"method"`
	Samples int    `json:"samples"`
}

// TopFrames reads the flight recording at path (Config.JFR) with the
// JDK's jfr tool and returns the n methods most often on top of the
// sampled stacks (all of them when n <= 0), and the samples in all.
func TopFrames(ctx context.Context, path string, n int) ([]Frame, int, error) {
	out, err := exec.CommandContext(ctx, "jfr", "print", "--events", "jdk.ExecutionSample", "--stack-depth", "1", path).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			lines := strings.Split(strings.TrimSpace(string(ee.Stderr)), "\n")
			err = fmt.Errorf("%w: %s", err, lines[len(lines)-1])
		}
		return nil, 0, fmt.Errorf("redisson: jfr print %s: %w", path, err)
	}
	counts := map[string]int{}
	total := 0
	lines := strings.Split(string(out), "\n")
	for i, l := range lines {
		if !strings.Contains(l, "stackTrace = [") || i+1 >= len(lines) {
			continue
		}
		m := strings.TrimSpace(lines[i+1])
		if m == "]" || m == "" {
			continue
		}
		if j := strings.LastIndex(m, " line:"); j >= 0 {
			m = m[:j]
		}
		counts[strings.TrimSpace(m)]++
		total++
	}
	var fs []Frame
	for m, c := range counts {
		fs = append(fs, Frame{Method: m, Samples: c})
	}
	sortFrames(fs)
	if n > 0 {
		fs = fs[:min(n, len(fs))]
	}
	return fs, total, nil
}

// ByPackage sums frames by package (a method's first two names: io.netty,
// java.util, org.redisson): whose code the JVM ran, most first.
func ByPackage(fs []Frame) []Frame {
	n := map[string]int{}
	for _, f := range fs {
		parts := strings.SplitN(f.Method, ".", 3)
		n[strings.Join(parts[:min(2, len(parts))], ".")] += f.Samples
	}
	var out []Frame
	for p, c := range n {
		out = append(out, Frame{Method: p, Samples: c})
	}
	sortFrames(out)
	return out
}

// sortFrames orders frames most samples first, then by name.
func sortFrames(fs []Frame) {
	slices.SortFunc(fs, func(a, b Frame) int {
		if a.Samples != b.Samples {
			return b.Samples - a.Samples
		}
		return strings.Compare(a.Method, b.Method)
	})
}
