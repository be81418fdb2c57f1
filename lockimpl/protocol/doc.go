// Package protocol exports single script calls of lockimpl's locks, for
// tools that send Redisson's Lua without lockimpl's client logic: a raw
// baseline that measures the scripts alone, and redis-benchmark driving
// them at full speed. Services that take locks use package lockimpl; these
// calls have no watchdog, no waiting and no lost-hold signal.
package protocol
