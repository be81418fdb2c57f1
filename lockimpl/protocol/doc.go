// Package protocol exports single script calls of lockimpl's locks, for
// tools that measure the scripts without lockimpl's client.
//
// A raw baseline uses them, and redis-benchmark drives them at full speed. Services that take locks use package lockimpl; these
// calls have no watchdog, no waiting and no lost-hold signal.
package protocol
