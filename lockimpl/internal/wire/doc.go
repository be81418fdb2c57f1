// Package wire holds what lockimpl puts on the wire: Redisson's Lua
// scripts, the key and channel names derived from a lock's name, and the
// unlock messages. lockimpl drives them; lockimpl/protocol exports single
// script calls for tools that send the scripts without lockimpl's client.
package wire
