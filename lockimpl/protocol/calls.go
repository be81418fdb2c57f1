package protocol

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/lockimpl/internal/wire"
	"github.com/lockbench/lockbench/lockimpl/kind"
)

// ScriptCall is one script invocation exactly as a lockimpl lock sends it.
type ScriptCall struct {
	// Source is the Lua script, for tools that send it themselves.
	Source string
	// Keys are the call's keys; a caller may change them (the latch) and
	// Run sends them as they are then.
	Keys []string
	// Args is the text of the arguments, for other tools; changing it
	// changes nothing Run sends.
	Args []string

	call wire.Call
}

// Run sends the call with EVALSHA (EVAL on NOSCRIPT), as lockimpl does. An
// acquire replies nil (redis.Nil) when acquired, else the lock's TTL in
// ms (a fenced acquire replies {-1, token} or {TTL, -1}); an unlock replies
// nil when the owner held nothing. Only calls made
// by Calls can Run.
func (c ScriptCall) Run(ctx context.Context, rdb redis.Scripter) *redis.Cmd {
	return c.call.Script.Run(ctx, rdb, c.Keys, c.call.Args...)
}

// RunOnce sends the call as lockimpl sends an acquisition: as a command
// go-redis never resends (Cmder.NoRetry), whatever rdb's MaxRetries, and
// on a deferred autopipeliner a wait that ctx ends. It returns the reply's
// error (redis.Nil for an acquire's "acquired").
func (c ScriptCall) RunOnce(ctx context.Context, rdb redis.UniversalClient) error {
	call := wire.Call{Script: c.call.Script, Keys: c.Keys, Args: c.call.Args}
	_, err := wire.Eval(ctx, rdb, call.Script, call.Command(), true)
	return err
}

func export(c wire.Call) ScriptCall {
	sc := ScriptCall{Source: c.Script.Source, Keys: c.Keys, call: c}
	for _, a := range c.Args {
		sc.Args = append(sc.Args, fmt.Sprint(a))
	}
	return sc
}

// Calls returns the acquire and the unlock that a lock of kind k (any but
// a fair kind, whose queue needs lockimpl's client) sends for one hold of
// lock name by the owner with id ownerID (Owner.ID), with lease and
// PUBLISH. The unlock's last key is its latch, latch here (see LatchKey):
// a caller sending several unlocks sets a fresh one in each, as lockimpl
// does, since an unlock that finds its latch replays the first answer and
// changes nothing.
func Calls(k lockimpl.Kind, name, ownerID string, lease time.Duration, latch string) (acquire, unlock ScriptCall, err error) {
	if !slices.Contains(Kinds(), k) {
		return acquire, unlock, fmt.Errorf("protocol: Calls: kind %s: use %s", k, kind.List(Kinds()))
	}
	if lease <= 0 {
		return acquire, unlock, fmt.Errorf("protocol: Calls: lease %v must be positive", lease)
	}
	w := wire.LockOf(k, name, ownerID)
	acquire = export(wire.AcquireCall(w.Family, name, w.Field, ms(lease)))
	unlock = export(wire.UnlockCall(w.Family, name, w.Field, w.Channel, "PUBLISH", latch, ms(lease), ms(lockimpl.DefaultLatchTimeout)))
	return acquire, unlock, nil
}

// Kinds are the kinds Calls serves: every kind but the fair ones.
func Kinds() []lockimpl.Kind {
	var ks []lockimpl.Kind
	for _, k := range kind.All() {
		if !k.Fair() {
			ks = append(ks, k)
		}
	}
	return ks
}

// NewOwnerID returns an owner id as lockimpl's and Redisson's look: a new
// random client UUID and thread number n.
func NewOwnerID(n int) string { return wire.NewUUID() + ":" + strconv.Itoa(n) }

// LatchKey is the key of an unlock's latch for lock name and request id
// (Redisson's redisson_unlock_latch:{name}:id).
func LatchKey(name, requestID string) string { return wire.UnlockLatchKey(name, []byte(requestID)) }

// LatchKeys makes fresh unlock latch keys as a lockimpl client does, with
// the same request ids (a random half and a counter) at the same cost.
type LatchKeys struct{ ids wire.RequestIDs }

// NewLatchKeys returns a generator with a random prefix of its own.
func NewLatchKeys() *LatchKeys {
	k := &LatchKeys{}
	k.ids.Init()
	return k
}

// Next is the key of a fresh unlock latch for lock name.
func (k *LatchKeys) Next(name string) string { return k.ids.LatchKey(name) }

// ms is a duration as integer milliseconds, at least 1, as lockimpl sends it.
func ms(d time.Duration) int64 { return max(1, d.Milliseconds()) }
