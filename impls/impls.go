package impls

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/workloads"
)

// Default is the implementation --impl names when left out.
const Default = "lockimpl"

// Info describes one implementation for --help and reports.
type Info struct {
	Name    string
	Summary string
}

// All lists the implementations, the default first.
func All() []Info {
	return []Info{
		{Default, "this module's Redisson-compatible locks: watchdog, pub/sub wake-up, reentrant, fair, read-write (default)"},
		{"raw", "lockimpl's Lua scripts by EVALSHA, no client logic: no watchdog, no pub/sub, retry after the returned TTL"},
		{"redsync", "github.com/go-redsync/redsync/v4, one node, its defaults: 8s expiry, retry every 50-250ms; exclusive only"},
		{"redislock", "github.com/bsm/redislock, retry every 50-250ms like redsync; exclusive only"},
		{RedissonName, "real Redisson in one JVM, a RedissonClient per client (make redisson-driver; needs Java 17), Redisson's default configuration: every lock kind, no loss signal"},
		{RedissonTunedName, "redisson with the configuration Redisson's docs advise for throughput: EPOLL transport, one Netty event loop group and executor for the JVM's clients, nettyThreads and threads 2 x cores, connection pool = owners per client, all kept open"},
		{RedissonJVMName, "redisson (default configuration) running the load in the JVM's own threads, no pipe per operation: what the pipe costs; closed loop, depth 1, uniform or per-owner names"},
	}
}

// Names lists the implementations' names, the default first.
func Names() []string {
	var n []string
	for _, i := range All() {
		n = append(n, i.Name)
	}
	return n
}

// Peers are the peer libraries, the implementations that are neither
// lockimpl nor its own scripts.
func Peers() []string { return []string{Redsync{}.Name(), Redislock{}.Name()} }

// Lookup returns the implementation called name. An unknown name is a
// *workloads.FieldError on --impl.
func Lookup(name string) (workloads.Impl, error) {
	switch name {
	case "lockimpl":
		return workloads.Lockimpl{}, nil
	case "raw":
		return Raw{}, nil
	case "redsync":
		return Redsync{}, nil
	case "redislock":
		return Redislock{}, nil
	case RedissonName:
		return &Redisson{}, nil
	case RedissonTunedName:
		return &Redisson{Tuned: true}, nil
	case RedissonJVMName:
		return &RedissonJVM{}, nil
	}
	return nil, &workloads.FieldError{Field: "--impl", Value: strconv.Quote(name),
		Fix: "unknown implementation; use " + strings.Join(Names(), ", ")}
}

// clientSeq numbers the peer clients of this process for their owner IDs.
var clientSeq atomic.Int64

// processID tells this process's owners from other processes' on a shared
// lock (raw writes owner IDs as hash fields, as lockimpl writes its UUIDs).
var processID = func() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// ownerIDs hands out "<impl>-<process>-<client>:<n>" owner IDs for one client.
type ownerIDs struct {
	prefix string
	n      atomic.Int64
}

func newOwnerIDs(impl string) *ownerIDs {
	return &ownerIDs{prefix: fmt.Sprintf("%s-%s-%d:", impl, processID, clientSeq.Add(1))}
}

func (o *ownerIDs) next() string { return o.prefix + strconv.FormatInt(o.n.Add(1), 10) }

// exclusiveOnly is the check of the peer libraries, which have exclusive,
// non-reentrant mutexes with a fixed expiry; lossSignal says whether the
// library tells a holder when its expiry passes.
func exclusiveOnly(impl string, p workloads.Profile, expiry time.Duration, expirySource, defaults string, lossSignal bool) (string, error) {
	if !lossSignal {
		if err := workloads.HoldsWithinLease(impl, p); err != nil {
			return "", err
		}
	}
	note := defaults
	for _, f := range p.Needs() {
		switch f {
		case p.Kind.Feature(): // every kind but reentrant
			return "", workloads.Refuse(impl, p, f, impl+" has exclusive mutexes only; run this profile with --impl lockimpl (or raw for kind rw)")
		case workloads.NeedReentrancy:
			return "", workloads.Refuse(impl, p, f, impl+"'s mutexes are not reentrant; set --depth 1 or use --impl lockimpl")
		case workloads.NeedAutoPipeline:
			return "", workloads.Refuse(impl, p, f, "it sends its own commands; drop --auto-pipeline (or the profile's auto_pipeline: true), or use --impl lockimpl")
		case workloads.NeedWatchdog:
			n, err := workloads.FixedForWatchdog(impl, p, expiry, expirySource)
			if err != nil {
				return "", err
			}
			note += "; " + n
		}
	}
	return note, nil
}

// farDeadline gives ctx a deadline far away unless it has one: redislock
// caps a wait on a context without a deadline at the lock's TTL.
func farDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, time.Now().Add(100*365*24*time.Hour))
}

// retryDelay is redsync's default delay between tries: 50–250 ms at
// random. redislock gets it too, for a like comparison.
func retryDelay() time.Duration {
	return 50*time.Millisecond + mrand.N(200*time.Millisecond)
}

// sleeper is one owner's reusable timer.
type sleeper struct{ t *time.Timer }

func newSleeper() *sleeper {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &sleeper{t}
}

// sleep waits d, or returns ctx's error when it ends first.
func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.t.Reset(d)
	select {
	case <-s.t.C:
		return nil
	case <-ctx.Done():
		s.t.Stop()
		return ctx.Err()
	}
}

// notHeld wraps workloads.ErrNotHeld with the library's answer.
func notHeld(impl string, cause error) error { return &notHeldError{impl: impl, cause: cause} }

// notHeldError is workloads.ErrNotHeld from impl, which its message names
// instead of lockimpl (whose sentinel it is): "redsync: lock not held by
// this owner (…)", not "redsync: lockimpl: lock not held …".
type notHeldError struct {
	impl  string
	cause error // the library's answer, or nil
}

func (e *notHeldError) Error() string {
	s := e.impl + ": " + strings.TrimPrefix(workloads.ErrNotHeld.Error(), "lockimpl: ")
	if e.cause != nil {
		s += " (" + e.cause.Error() + ")"
	}
	return s
}

func (e *notHeldError) Unwrap() []error {
	if e.cause == nil {
		return []error{workloads.ErrNotHeld}
	}
	return []error{workloads.ErrNotHeld, e.cause}
}

// IsRedisson reports whether name is one of the Redisson rows, which need
// the driver's jar.
func IsRedisson(name string) bool {
	return name == RedissonName || name == RedissonTunedName || name == RedissonJVMName
}
