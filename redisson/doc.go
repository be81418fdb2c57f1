// Package redisson runs real Redisson in a JVM beside the Go harness: the
// driver in redisson-driver/ (a Maven project pinned to one Redisson
// release) holds and releases Redisson's locks on behalf of named owners,
// a Java thread each, and reports each call's start and end on the
// machine's monotonic clock (System.nanoTime, CLOCK_MONOTONIC on Linux),
// which Now reads on the Go side, so the two sides' critical sections can
// be compared directly. A call the caller stops waiting for is cut short
// in the JVM, so that no lock is left behind unknown (see Driver.Call).
// The JVM dies with the harness: its standard input is the harness's pipe
// (EOF cuts its calls short and stops it), and on Linux the kernel kills
// it when the harness dies, SIGKILL included. Its settings, credentials
// included, come on the first line of that pipe, never on its command
// line; its environment keeps only the variables a JVM reads (no
// $REDIS_URL); and no error it surfaces carries the password.
//
// It imports no package of this module but internal/infile, through
// which it checks the jar it is given.
package redisson
