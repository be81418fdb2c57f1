// Package redisson runs real Redisson in a JVM beside the Go harness.
//
// The driver in redisson-driver/ (a Maven project pinned to one Redisson
// release) takes and releases Redisson's locks for named owners, a Java
// thread each, and stamps each call on the machine's monotonic clock,
// which Now reads on the Go side, so the two sides' critical sections
// compare directly. A call the caller stops waiting for is cut short in
// the JVM, so no lock is left behind unknown (see Driver.Call). The JVM
// dies with the harness (EOF on its standard input, and the kernel's
// parent-death signal on Linux). Its settings, credentials included, come
// on that pipe, never its command line; its environment keeps only what a
// JVM reads; and no error it surfaces carries the password.
//
// It imports no package of this module but internal/infile, through
// which it checks the jar it is given. docs/redisson.md is the guide.
package redisson
