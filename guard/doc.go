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
// The same scripts keep who is inside each lock's section: the read enters
// the holder, the write (or Leave) takes it out. A holder entering while
// another is inside is an overlap the store saw, counted with both ids.
// This judges exclusion across machines, where clocks cannot. The store
// sees a section end when the leave arrives, one round trip after a
// holder that honours a lost hold stopped, so it is stricter than a
// checker of the holders' own clocks by that much.
//
// It imports no package of this module.
package guard
