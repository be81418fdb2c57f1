package results

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/lockimpl/kind"
)

// Mode is how an acquisition holds its lock.
type Mode uint8

// The modes. Exclusive is a reentrant or fair lock; Read and Write are the
// halves of a read-write lock. Only Read is compatible with Read.
const (
	Exclusive Mode = iota
	Read
	Write
	numModes
)

var modeNames = [numModes]string{"exclusive", "read", "write"}

func (m Mode) String() string {
	if m < numModes {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// ModeOf is the mode of a hold of lock kind k: Read and Write for the
// read-write lock's halves, Exclusive for every other kind.
func ModeOf(k kind.Kind) Mode {
	switch {
	case !k.ReadWrite():
		return Exclusive
	case k.Shared():
		return Read
	}
	return Write
}

// compatible reports whether holders in modes a and b may overlap: only
// holds of a shared kind (the read lock's) do.
func compatible(a, b Mode) bool { return a == Read && b == Read }

// ErrClass sorts a failed operation by cause.
type ErrClass uint8

// The error classes.
const (
	// NoErr: the operation succeeded.
	NoErr ErrClass = iota
	// ErrTimeout: the wait timeout passed with the lock held by others.
	ErrTimeout
	// ErrCtx: an operation deadline or cancellation ended a call.
	ErrCtx
	// ErrConn: the connection failed (network error, closed client, pool
	// exhausted, pub/sub subscription not confirmed).
	ErrConn
	// ErrRedis: Redis answered with an error (READONLY on a replica,
	// NOAUTH, OOM, a script error).
	ErrRedis
	// ErrStalled: the call was still waiting on Redis when the run's stall
	// bound ran out; the time it had waited is recorded as its latency.
	ErrStalled
	// ErrOther: anything else (an unexpected reply, a failed nested
	// acquisition).
	ErrOther
	// ErrRefused: a safety setting refused the acquisition: too few
	// replicas acknowledged it (the lock is given back), or the server
	// had too few good replicas to take the write (NOREPLICAS). It is
	// availability paid for safety, not a fault of the lock.
	ErrRefused
	numErrClasses
)

var errClassNames = [numErrClasses]string{"none", "timeout", "ctx", "conn", "redis", "stalled", "other", "refused"}

// ErrClassNames lists the failure classes in the order results print them.
func ErrClassNames() []string { return append([]string(nil), errClassNames[1:]...) }

func (c ErrClass) String() string {
	if c < numErrClasses {
		return errClassNames[c]
	}
	return fmt.Sprintf("err(%d)", uint8(c))
}

// OpFlag marks facts about an operation.
type OpFlag uint8

// The flags.
const (
	// Warmup: the operation started during warmup; it counts for safety but
	// not for latency, throughput or fairness.
	Warmup OpFlag = 1 << iota
	// Lost: the holder learned its hold was lost (lease expired, lock
	// deleted) before it began to release; Released is that moment.
	Lost
	// Cut: the run ended during the operation (its acquire was cancelled
	// or its hold shortened): neither a success nor an error, counted
	// apart (Throughput.Cut).
	Cut
	// NestFailed: a nested (reentrant) acquisition failed; the operation
	// went on at the depth it reached. Counted as an "other" error.
	NestFailed
	// LostIgnored: the holder was told its hold was lost but, like an
	// application that never checks (Redisson's API gives it no signal),
	// went on until its planned release; Released is that release.
	LostIgnored
	// ReleaseFailed: the outermost unlock of a held lock got an error or no
	// answer, so Redis may still hold it until its lease ends.
	ReleaseFailed
	// Part: one more name of an operation that took several at once (a
	// multi-lock), with the operation's times. It counts for safety and
	// handoffs on its name, never as an operation of its own.
	Part
)

// Op is one operation of one owner: an outermost acquisition, its nested
// acquisitions, the hold and the release. Times are nanoseconds since the
// run's base time (one monotonic clock for every worker).
//
// The critical section, as the holder believes it, is [Acquired, Released):
// from the moment its acquire returned to the moment it began its outermost
// unlock, or noticed the hold lost. That belief is what the safety checker
// judges.
type Op struct {
	Start    int64 // intended start: the schedule's time in open loop, else the call
	Called   int64 // when the outermost acquire was called
	Acquired int64 // when the outermost acquire returned success; 0 if it failed
	Released int64 // when the holder stopped believing it holds
	Done     int64 // when the outermost unlock returned
	Owner    int32 // index into Labels.Owners
	Lock     int32 // index into Labels.Locks
	Mode     Mode
	Depth    uint8 // acquisitions in the operation, the outermost included
	Err      ErrClass
	Flags    OpFlag
}

// Held reports whether the operation acquired its lock. A held operation
// can still have failed (Err set): its release got no answer, and the
// critical section it had still counts for safety.
func (o *Op) Held() bool { return o.Acquired != 0 }

// Failed reports whether the operation counts as a failure: an error of
// any class, or a nested acquisition that failed.
func (o *Op) Failed() bool { return o.Err != NoErr || o.Flags&NestFailed != 0 }

// Labels names the owners and locks that Op indexes.
type Labels struct {
	Owners []string
	Locks  []string
}

func (l Labels) owner(i int32) string {
	if int(i) < len(l.Owners) {
		return l.Owners[i]
	}
	return fmt.Sprintf("owner#%d", i)
}

func (l Labels) lock(i int32) string {
	if int(i) < len(l.Locks) {
		return l.Locks[i]
	}
	return fmt.Sprintf("lock#%d", i)
}

// seconds converts a run-relative nanosecond time for result files.
func seconds(ns int64) float64 { return float64(ns) / float64(time.Second) }
