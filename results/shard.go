package results

import (
	"sync"
	"unsafe"
)

// DefaultMaxOps bounds the acquisitions a run keeps for the safety,
// fairness and handoff analyses (56 bytes each): 10 M is about 560 MB.
// Acquisitions past it still count in histograms and throughput; the
// result says the analyses saw only part of the run.
const DefaultMaxOps = 10_000_000

// interval is what a shard gathered since the last tick.
type interval struct {
	set Set
	// all, allFailed and allTimeouts count every finished operation,
	// warmup included (the series); the rest count measured operations only.
	all         int64
	allFailed   int64
	allTimeouts int64
	attempts    int64
	failed      int64
	acquired    [numModes]int64
	nested      int64
	errors      [numErrClasses]int64
	lost        int64
	cut         int64
	unreleased  int64 // warmup included: a lock left held is left held
}

func (iv *interval) reset() {
	iv.set.Reset()
	*iv = interval{set: iv.set}
}

func (iv *interval) add(from *interval) {
	iv.set.Merge(&from.set)
	iv.all += from.all
	iv.allFailed += from.allFailed
	iv.allTimeouts += from.allTimeouts
	iv.attempts += from.attempts
	iv.failed += from.failed
	for i := range iv.acquired {
		iv.acquired[i] += from.acquired[i]
	}
	iv.nested += from.nested
	for i := range iv.errors {
		iv.errors[i] += from.errors[i]
	}
	iv.lost += from.lost
	iv.cut += from.cut
	iv.unreleased += from.unreleased
}

// Shard is where a group of workers records. Its mutex is taken once per
// operation and contended only by the shard's own workers and the
// once-a-second tick, so there is no global lock on the hot path.
type Shard struct {
	mu  sync.Mutex
	cur *interval
	ops opLog
	c   *Collector
	// Measured successful operations and acquisitions per lock group (see
	// Collector.GroupLocks), for the whole run.
	groupOps, groupAcq []int64
	msgs               []ErrorMessage // distinct error messages, first seen first
	msgsDropped        int64          // failures whose message found no room
}

// opLog is a shard's kept operations, in their analysis form (keptOp),
// in chunks of a fixed size. A slice grown by append doubles: it holds up
// to twice its operations, copies them at each step and leaves the old
// arrays to the collector, which at a million operations (a minute of a
// thousand owners) was most of a run's memory.
type opLog struct {
	chunks [][]keptOp
	n      int
}

// keptOp is what the analyses read of an Op: 40 bytes instead of 56. The
// intended start and the unlock's return only fed the latencies, which
// Record filed already.
type keptOp struct {
	called, acquired, released int64
	owner, lock                int32
	mode                       Mode
	depth                      uint8
	err                        ErrClass
	flags                      OpFlag
}

// OpRecordBytes is what a run keeps of each acquisition for the
// analyses, and AnalysedOpBytes what the analyses hold of each while they
// run: the footprint of a run's records (bench perf's scale part).
const (
	OpRecordBytes   = int64(unsafe.Sizeof(keptOp{}))
	AnalysedOpBytes = int64(unsafe.Sizeof(Op{}))
)

// opChunk is how many operations the largest chunks hold: 16,384 × 40
// bytes, 640 KiB. The first holds 256, each next twice the last, so a
// short run keeps little.
const opChunk = 1 << 14

func (l *opLog) add(op Op) {
	if k := len(l.chunks); k == 0 || len(l.chunks[k-1]) == cap(l.chunks[k-1]) {
		size := 256
		if k > 0 {
			size = min(opChunk, 2*cap(l.chunks[k-1]))
		}
		l.chunks = append(l.chunks, make([]keptOp, 0, size))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, keptOp{called: op.Called, acquired: op.Acquired, released: op.Released, owner: op.Owner, lock: op.Lock,
		mode: op.Mode, depth: op.Depth, err: op.Err, flags: op.Flags})
	l.n++
}

// drain appends the operations to dst as Ops (Start is Called, Done 0)
// and forgets them, chunk by chunk.
func (l *opLog) drain(dst []Op) []Op {
	for i, c := range l.chunks {
		for _, k := range c {
			dst = append(dst, Op{Start: k.called, Called: k.called, Acquired: k.acquired, Released: k.released, Owner: k.owner, Lock: k.lock,
				Mode: k.mode, Depth: k.depth, Err: k.err, Flags: k.flags})
		}
		l.chunks[i] = nil
	}
	l.chunks, l.n = nil, 0
	return dst
}

// maxMessages bounds the distinct error messages a shard keeps: a run that
// fails fails in a few ways, and the first are what a reader needs.
const maxMessages = 8

// Record adds one finished operation: op itself, the durations (ns) of
// its nested acquisitions and of its nested unlocks. Latencies of warmup
// operations are not recorded; the operation is kept for the safety check.
// A failed operation is an attempt, not throughput; one the run's stall
// bound cut (ErrStalled) is recorded with the time it had waited, so a
// stall shows in the latencies instead of leaving them.
func (s *Shard) Record(op Op, nested, nestedReleases []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Only acquisitions feed the analyses; the budget is shared by all
	// shards so a busy shard does not run out while others have room.
	if op.Held() {
		if s.c.kept.Add(1) <= s.c.maxOps {
			s.ops.add(op)
		} else {
			s.c.dropped.Add(1)
		}
	}
	iv := s.cur
	failed := op.Failed()
	if op.Flags&Cut != 0 && (!op.Held() || !failed) {
		// The run's end cut it short: an acquisition still waiting, or a
		// hold that did not last its planned time, is neither a success
		// nor a failure (--hold 1000h would otherwise count every
		// acquisition as an operation done). A cut hold's acquisition and
		// release were real and are timed; its truncated hold is not.
		if op.Flags&Warmup == 0 {
			iv.cut++
			if op.Flags&(Lost|LostIgnored) != 0 {
				iv.lost++
			}
			if op.Held() {
				iv.acquired[op.Mode]++
				if g := s.group(op.Lock); g >= 0 {
					s.groupAcq[g]++
				}
				iv.nested += int64(len(nested))
				s.recordTimes(iv, op, nested, nestedReleases, false)
			}
		}
		if op.Flags&ReleaseFailed != 0 {
			iv.unreleased++
		}
		return
	}
	iv.all++
	errClass := op.Err
	if errClass == NoErr && op.Flags&NestFailed != 0 {
		errClass = ErrOther
	}
	if failed {
		iv.allFailed++
		if errClass == ErrTimeout {
			iv.allTimeouts++
		}
	}
	if op.Flags&ReleaseFailed != 0 {
		iv.unreleased++
	}
	if op.Flags&Warmup != 0 {
		return
	}
	iv.attempts++
	g := s.group(op.Lock)
	if g >= 0 && !failed {
		s.groupOps[g]++
	}
	if failed {
		iv.failed++
		iv.errors[errClass]++
	}
	if op.Flags&(Lost|LostIgnored) != 0 {
		iv.lost++
	}
	if !op.Held() {
		if op.Err == ErrStalled && op.Done > op.Start {
			iv.set.Record(AcquireMetric(op.Mode), op.Done-op.Start)
		}
		return
	}
	iv.acquired[op.Mode]++
	if g >= 0 {
		s.groupAcq[g]++
	}
	iv.nested += int64(len(nested))
	s.recordTimes(iv, op, nested, nestedReleases, true)
}

// group is lock's group (Collector.GroupLocks), -1 when there are none.
func (s *Shard) group(lock int32) int {
	if s.c.groupOf != nil && int(lock) < len(s.c.groupOf) {
		return int(s.c.groupOf[lock])
	}
	return -1
}

// recordTimes files a held operation's latencies: the acquisitions, the
// hold (unless it was cut short) and the releases.
func (s *Shard) recordTimes(iv *interval, op Op, nested, nestedReleases []int64, hold bool) {
	iv.set.Record(AcquireMetric(op.Mode), op.Acquired-op.Start)
	for _, d := range nested {
		iv.set.Record(AcquireNested, d)
	}
	if hold {
		iv.set.Record(Hold, op.Released-op.Acquired)
	}
	for _, d := range nestedReleases {
		iv.set.Record(Release, d)
	}
	if op.Done > 0 {
		iv.set.Record(Release, op.Done-op.Released)
	}
}

// RecordPart files a further name of a held multi-name operation (flag
// Part) for the safety and handoff analyses only: the operation itself was
// filed by Record and counts once.
func (s *Shard) RecordPart(op Op) {
	if !op.Held() {
		return
	}
	op.Flags |= Part
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c.kept.Add(1) <= s.c.maxOps {
		s.ops.add(op)
	} else {
		s.c.dropped.Add(1)
	}
}

// NoteError keeps the message of a failure of class c at time at (ns since
// the collector's base), verbatim: the first few distinct messages of a run
// tell a reader what went wrong (READONLY, NOAUTH, a refused connection)
// where the class alone cannot. Call it besides Record, for failures only.
func (s *Shard) NoteError(c ErrClass, msg string, at int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.msgs {
		if m := &s.msgs[i]; m.Message == msg && m.Class == c.String() {
			m.Count++
			m.First = min(m.First, seconds(at))
			return
		}
	}
	if len(s.msgs) >= maxMessages {
		s.msgsDropped++
		return
	}
	s.msgs = append(s.msgs, ErrorMessage{Class: c.String(), Message: msg, Count: 1, First: seconds(at)})
}

// RecordValue adds one value of metric m (the ping sampler uses it).
func (s *Shard) RecordValue(m Metric, ns int64) {
	s.mu.Lock()
	s.cur.set.Record(m, ns)
	s.mu.Unlock()
}
