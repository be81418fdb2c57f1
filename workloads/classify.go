package workloads

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// noReply reports whether err says a call waited and got no answer (a
// timeout, or its client closed under it), rather than being answered
// (an error reply) or refused at once.
func noReply(err error) bool {
	return errors.Is(err, redis.ErrClosed) || errors.Is(err, net.ErrClosed) || TimedOut(err)
}

// TimedOut reports whether err says a call's deadline passed before an
// answer came: a slow or unreachable server, not one that refused.
func TimedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// refusal is an error that says whether a safety setting refused the
// acquisition, as another library's driver reports it (package redisson's
// Error does), without this package importing the driver.
type refusal interface{ Refused() bool }

// Classify sorts an acquire or release error into its results class: the
// driver and the chaos scenarios' scripted actors count failures alike.
func Classify(err error) results.ErrClass {
	var ne net.Error
	switch {
	case err == nil:
		return results.NoErr
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return results.ErrCtx
	case errors.Is(err, lockimpl.ErrClosed), errors.Is(err, lockimpl.ErrSubscribeTimeout),
		errors.Is(err, redis.ErrClosed), errors.Is(err, redis.ErrPoolTimeout),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne):
		return results.ErrConn
	}
	var rerr redis.Error
	var rf refusal
	if errors.Is(err, lockimpl.ErrReplicaSync) || errors.As(err, &rerr) && strings.Contains(rerr.Error(), "NOREPLICAS") ||
		errors.As(err, &rf) && rf.Refused() {
		return results.ErrRefused
	}
	if errors.As(err, &rerr) && !errors.Is(err, redis.Nil) {
		return results.ErrRedis
	}
	return results.ErrOther
}
