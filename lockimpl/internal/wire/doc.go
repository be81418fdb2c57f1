// Package wire holds what lockimpl puts on the wire: Redisson's Lua
// scripts, the key and channel names derived from a lock's name, and the
// unlock messages. lockimpl drives them; lockimpl/protocol exports single
// script calls for tools that send the scripts without lockimpl's client.
package wire

// Half says whose scripts a call runs: the reentrant lock's (Whole), or
// a half of the read-write lock's.
type Half uint8

// The halves.
const (
	Whole Half = iota
	ReadHalf
	WriteHalf
)
