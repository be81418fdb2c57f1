package wire

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// once is a command go-redis must not send a second time (Cmder.NoRetry):
// an acquire script applied twice counts its acquisition twice. Wrapping
// the *redis.Cmd keeps its reply where the caller reads it.
type once struct{ *redis.Cmd }

// NoRetry tells go-redis, and its autopipeliner, never to resend it.
func (once) NoRetry() bool { return true }

// Once is cmd as a command go-redis never resends, for a pipeline.
func Once(cmd *redis.Cmd) redis.Cmder { return once{cmd} }

// Eval sends a script call, given as EVALSHA arguments (Call.Command),
// through via and returns its reply; on NOSCRIPT (a restarted or flushed
// server) it sends the source by EVAL. noRetry sends it as a command
// go-redis never resends. redis.Nil is an acquire's "acquired" and an
// unlock's "not held", as in Redisson.
func Eval(ctx context.Context, via redis.UniversalClient, s Script, args []any, noRetry bool) (any, error) {
	res, err := Send(ctx, via, args, noRetry)
	if IsNoScript(err) {
		src := make([]any, len(args))
		copy(src, args)
		src[0], src[1] = "eval", s.Source
		res, err = Send(ctx, via, src, noRetry)
	}
	return res, err
}

// Send runs one command through via. A command handed to a deferred
// autopipeliner is waited for until its batch has run, whatever ctx does
// meanwhile: go-redis sends a queued command even after its caller gave
// up, and a lock command that runs after its sender stopped waiting is an
// acquisition nobody knows of, or an unlock that can land after its own
// re-send and release a newer hold. Seeing it through keeps each owner's
// commands in order, as a plain client does by ignoring ctx during a read
// (the connection's read timeout bounds the wait). A ctx that has already
// ended sends nothing.
func Send(ctx context.Context, via redis.UniversalClient, args []any, noRetry bool) (any, error) {
	cmd := redis.NewCmd(ctx, args...)
	var cm redis.Cmder = cmd
	if noRetry {
		cm = once{cmd}
	}
	if ap, ok := via.(*redis.AutoPipeliner); ok && !ap.IsBlocking() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		_ = ap.Submit(ctx, cm).Wait()
	} else {
		_ = via.Process(ctx, cm)
	}
	return cmd.Result()
}

// IsNoScript reports Redis's NOSCRIPT reply.
func IsNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
