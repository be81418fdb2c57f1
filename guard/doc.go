// Package guard is the resource critical sections protect: a counter in a
// store that is not the lock's Redis (a second redis-server by default, any
// Redis URL for users), updated read → hold → write inside each critical
// section, as an application's read-modify-write is. Two holders that
// overlap then lose an update, which is what a team actually loses when
// mutual exclusion fails; the hold between the read and the write is where
// pauses and partitions bite.
//
// Writes come in two modes. Plain writes set the counter to what the
// holder read plus one. Fenced ones (Kleppmann's fencing) carry the lock's
// fencing token on the read and on the write, and the store refuses, in the
// same script that would apply them, a token lower than the highest it has
// seen: a holder whose lock was taken over is refused at its next step.
//
// Each script keeps, beside the counter, how many writes the store
// accepted and refused and who wrote last, so lost updates are counted
// from the store alone (accepted writes − the counter's final value),
// with no clock: the count holds across clients, processes, machines and
// languages. A write that finds the counter moved since its read also
// names whose update it overwrote.
//
// It imports no package of this module.
package guard
