// Package guard counts lost updates and witnesses exclusion: a counter in
// a store apart from the lock's Redis that every critical section reads,
// holds and writes.
//
// It is an application's read-modify-write, so two holders that overlap
// lose an update.
//
// Plain writes set the counter to what the holder read plus one. Fenced
// writes (Kleppmann's fencing) carry the hold's fencing token, and the
// store's script refuses a token lower than the highest it has seen. Each
// script also keeps how many writes the store accepted and refused and who
// wrote last, so lost updates (accepted writes − the final value) are
// counted from the store alone, with no clock, across clients, processes,
// machines and languages.
//
// The same scripts keep who is inside each lock's section: the enter
// (Enter, Read) puts the holder in, as a reader or exclusively, and the
// write or Leave takes it out. A reader entering while an exclusive holder
// is inside, or an exclusive holder entering while anyone is, is an
// overlap the store saw, counted with the holders' ids. The store orders
// the steps, so this judges exclusion across machines, where clocks
// cannot. It sees a section end when the leave arrives, one round trip
// after a holder that honours a lost hold stopped, so it is stricter than
// a checker of the holders' own clocks by that much.
//
// A store that loses its state loses what it witnessed: Begin marks it,
// and every step then fails with ErrEmptied once the mark is gone; each
// enter's number (Entered.Seq) going back tells a store restored to an
// older state. Every key expires (DefaultTTL after it was last written).
//
// It imports no package of this module.
package guard
