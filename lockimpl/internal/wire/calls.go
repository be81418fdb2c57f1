package wire

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Script is a Lua script with its source, which tools outside lockimpl
// (redis-benchmark) are given as text, and its SHA1 as an interface value
// made once, for the EVALSHA arguments of every call.
type Script struct {
	*redis.Script
	Source string
	sha    any
}

func newScript(src string) Script {
	s := redis.NewScript(src)
	return Script{s, src, s.Hash()}
}

// Call is one script invocation: the script, its keys and arguments.
// AcquireCall and UnlockCall build the calls of the reentrant lock, its
// variants, and both halves of the read-write lock, from the same layouts
// as AcquireArgs and UnlockArgs, which lockimpl sends; lockimpl/protocol
// exports them, so the raw baseline and redis-benchmark send exactly what
// a lock does.
type Call struct {
	Script Script
	Keys   []string
	Args   []any
}

// Run sends the call (EVALSHA, EVAL on NOSCRIPT).
func (c Call) Run(ctx context.Context, rdb redis.Scripter) *redis.Cmd {
	return c.Script.Run(ctx, rdb, c.Keys, c.Args...)
}

// Command is the call as one command's arguments: "evalsha", the
// script's SHA1, the key count, the keys, then the arguments. Key i is at
// KeyIndex(i).
func (c Call) Command() []any {
	cmd := make([]any, 0, 3+len(c.Keys)+len(c.Args))
	cmd = append(cmd, "evalsha", c.Script.Hash(), len(c.Keys))
	for _, k := range c.Keys {
		cmd = append(cmd, k)
	}
	return append(cmd, c.Args...)
}

// KeyIndex is where key i of a call is in its Command.
func KeyIndex(i int) int { return 3 + i }

// Pieces are the strings of one lock's script calls as interface values.
// A string turned into an interface is an allocation of its own: a lock
// handle keeps its name and channel boxed, an owner its field, so that a
// call built from Pieces allocates little more than its argument slice.
type Pieces struct {
	Name, Field, Channel any
	// ReadTimeout and ReadKeys are the read half's key prefixes
	// (ReadTimeoutPrefix, ReadKeyPrefix), WriteField its write holder's
	// field; Token is the fenced lock's counter key.
	ReadTimeout, ReadKeys, WriteField, Token any
}

// NewPieces are the pieces of family f's calls on lock name by field
// (a string), waking waiters on channel: name, field and channel given as
// interface values, the family's other strings made here.
func NewPieces(f Family, name string, nameArg, field, channel any) Pieces {
	p := Pieces{Name: nameArg, Field: field, Channel: channel}
	fs, _ := field.(string)
	switch f {
	case ReadHalf:
		p.ReadTimeout, p.ReadKeys, p.WriteField = ReadTimeoutPrefix(name, fs), ReadKeyPrefix(name, fs), fs+":write"
	case Fenced:
		p.Token = TokenKey(name)
	}
	return p
}

// AcquireArgs is the acquire of family f as EVALSHA arguments (see
// Call.Command) and its script.
func AcquireArgs(f Family, p *Pieces, leaseMs any) (Script, []any) {
	switch f {
	case ReadHalf:
		return ReadAcquire, []any{"evalsha", ReadAcquire.sha, 2, p.Name, p.ReadTimeout, leaseMs, p.Field, p.WriteField}
	case WriteHalf:
		return WriteAcquire, []any{"evalsha", WriteAcquire.sha, 1, p.Name, leaseMs, p.Field}
	case Fenced:
		return FencedAcquire, []any{"evalsha", FencedAcquire.sha, 2, p.Name, p.Token, leaseMs, p.Field}
	case NonReentrant:
		return NonReentrantAcquire, []any{"evalsha", NonReentrantAcquire.sha, 1, p.Name, leaseMs, p.Field, NonReentrantError}
	}
	return ReentrantAcquire, []any{"evalsha", ReentrantAcquire.sha, 1, p.Name, leaseMs, p.Field}
}

// UnlockArgs is one unlock of family f as EVALSHA arguments and its
// script, waking waiters on the pieces' channel (a spin lock wakes
// nobody), with the latch key last among the keys.
func UnlockArgs(f Family, p *Pieces, publish, latch, leaseMs, latchMs any) (Script, []any) {
	switch f {
	case Spin:
		return SpinUnlock, []any{"evalsha", SpinUnlock.sha, 2, p.Name, latch, leaseMs, p.Field, latchMs}
	case ReadHalf:
		return ReadUnlock, []any{"evalsha", ReadUnlock.sha, 5, p.Name, p.Channel, p.ReadTimeout, p.ReadKeys, latch,
			UnlockMessage, p.Field, publish, latchMs}
	case WriteHalf:
		return WriteUnlock, []any{"evalsha", WriteUnlock.sha, 3, p.Name, p.Channel, latch,
			ReadUnlockMessage, leaseMs, p.Field, publish, latchMs}
	}
	return ReentrantUnlock, []any{"evalsha", ReentrantUnlock.sha, 3, p.Name, p.Channel, latch,
		UnlockMessage, leaseMs, p.Field, publish, latchMs}
}

// callOf is a command of AcquireArgs or UnlockArgs as a Call.
func callOf(s Script, cmd []any) Call {
	n := cmd[2].(int)
	c := Call{Script: s, Keys: make([]string, n), Args: cmd[KeyIndex(n):]}
	for i := range n {
		c.Keys[i] = cmd[KeyIndex(i)].(string)
	}
	return c
}

// AcquireCall is the acquire of family f on name by field.
func AcquireCall(f Family, name, field string, leaseMs any) Call {
	p := NewPieces(f, name, name, field, "")
	return callOf(AcquireArgs(f, &p, leaseMs))
}

// UnlockCall is one unlock of family f on name by field, waking waiters
// on channel, with its latch key last among the keys.
func UnlockCall(f Family, name, field, channel, publish, latch string, leaseMs, latchMs any) Call {
	p := NewPieces(f, name, name, field, channel)
	return callOf(UnlockArgs(f, &p, publish, latch, leaseMs, latchMs))
}
