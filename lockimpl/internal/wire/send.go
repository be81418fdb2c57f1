package wire

import (
	"context"
	"errors"
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

// Send runs one command through via. On a deferred autopipeliner the wait
// ends with ctx; the command may still run afterwards, as a command whose
// reply a plain client stopped reading at a deadline may have run.
func Send(ctx context.Context, via redis.UniversalClient, args []any, noRetry bool) (any, error) {
	cmd := redis.NewCmd(ctx, args...)
	var cm redis.Cmder = cmd
	if noRetry {
		cm = once{cmd}
	}
	if ap, ok := via.(*redis.AutoPipeliner); ok && !ap.IsBlocking() {
		if err := ap.Submit(ctx, cm).WaitContext(ctx); err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, err // still in flight: its fields are not ours to read
		}
	} else {
		_ = via.Process(ctx, cm)
	}
	return cmd.Result()
}

// IsNoScript reports Redis's NOSCRIPT reply.
func IsNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
