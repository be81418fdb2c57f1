package results

import "slices"

// Guard is what the guarded resource says about a run: critical sections
// read a counter in a separate store, held, and wrote it back plus one.
// Lost updates come from the store's own tallies (writes it applied minus
// the counter's final value), so they need no clock and hold across
// clients, processes and machines. Overlaps, likewise, are the store's
// witness of exclusion.
type Guard struct {
	Mode  string `json:"mode"` // plain, or fenced (by the fenced lock's tokens)
	Store string `json:"store"`
	// Sections are the critical sections that read the counter; Written
	// those whose write the store applied, as their holders saw it.
	Sections int64 `json:"sections"`
	Written  int64 `json:"written"`
	// Accepted and Final are the store's: writes applied, the counter's
	// final value.
	Accepted int64 `json:"accepted"`
	Final    int64 `json:"final"`
	// Lost is Accepted − Final: updates some stale holder overwrote.
	Lost int64 `json:"lost_updates"`
	// RejectedReads and RejectedWrites were refused for a stale fencing
	// token (fenced mode): the store kept the newer holder's state.
	// Rejected is the store's own count of both.
	RejectedReads  int64 `json:"rejected_reads"`
	RejectedWrites int64 `json:"rejected_writes"`
	Rejected       int64 `json:"rejected"`
	// StaleAccepted are writes the store applied from holders that knew
	// their hold was lost. A fencing store accepts one only while no
	// higher token has reached it (no newer holder came yet, or the token
	// counter went backwards in a restart or failover); lost updates are
	// Lost's to count.
	StaleAccepted int64 `json:"stale_accepted"`
	// RightfulRefused are reads and writes refused from holders that knew
	// of no loss: the token counter went backwards and the store refused
	// the lock's rightful holder, or the lock was lost under the holder
	// before anything could tell it (a server's clock jumped).
	RightfulRefused int64 `json:"rightful_refused"`
	// Failed are reads and writes that failed otherwise (a write whose
	// reply was lost may or may not have been applied: the store's counts
	// are the truth).
	Failed int64 `json:"failed"`
	// Overwrites are examples of writes that undid others' updates: whose
	// update, by whom, how many.
	Overwrites        []Overwrite `json:"overwrites,omitempty"`
	OverwritesDropped int64       `json:"overwrites_dropped,omitempty"`
	// Occupancy says the store kept who was inside each lock's section,
	// so Overlaps is its count (files written before it did lack it: no
	// count, not 0).
	Occupancy bool `json:"occupancy,omitempty"`
	// Overlaps are holders that entered a section while another holder
	// was inside, as the store saw it: exclusion broken, judged with no
	// clock, across every process of the run. A holder that stopped at a
	// lost hold leaves one round trip later than it stopped, so the store
	// is stricter than the clock checker (Safety) by that much.
	Overlaps int64 `json:"overlaps"`
	// OverlapExamples are the first overlaps, at most MaxOverlapExamples.
	OverlapExamples []Overlap `json:"overlap_examples,omitempty"`
	// OverlapsBy counts the overlaps by the holder that had been inside
	// longest at each: a holder whose process died inside its section
	// never leaves, and every overlap behind it is counted against it.
	OverlapsBy map[string]int64 `json:"overlaps_by,omitempty"`
	// OverlapsExcused are those of Overlaps counted against holders of
	// workers that never reported (MergeWorkers): a section left open by
	// a dead process, which cannot write, is not a second holder at work.
	OverlapsExcused int64 `json:"overlaps_excused,omitempty"`
}

// Unexcused are the overlaps that break exclusion: Overlaps less those
// behind a dead worker's open section.
func (g *Guard) Unexcused() int64 { return g.Overlaps - g.OverlapsExcused }

// Overlap is one holder entering a lock's section while holders it
// conflicts with were inside.
type Overlap struct {
	Name string `json:"name"` // the lock's name
	// Inside are exclusive holders (writers) inside, Readers readers
	// inside (a few of each), by owner id.
	Inside  []string `json:"inside"`
	Readers []string `json:"readers,omitempty"`
	// Entered is the holder that entered, EnteredRead whether to read.
	Entered     string `json:"entered"`
	EnteredRead bool   `json:"entered_read,omitempty"`
}

// Equal reports whether o and p record the same enter.
func (o Overlap) Equal(p Overlap) bool {
	return o.Name == p.Name && o.Entered == p.Entered && o.EnteredRead == p.EnteredRead &&
		slices.Equal(o.Inside, p.Inside) && slices.Equal(o.Readers, p.Readers)
}

// MaxOverlapExamples bounds Guard.OverlapExamples, as the store bounds
// what it keeps.
const MaxOverlapExamples = 20

// Overwrite is one write that undid updates it never read.
type Overwrite struct {
	By, Of  string // the writer, and who wrote the counter last before it
	Updates int64  // updates undone
	At      int64  // ns since the run's start, when the write returned
}

// GuardFenced is Guard.Mode for a store that refuses stale fencing tokens,
// as package guard names the mode (guard.Fenced) and result files spell it.
const GuardFenced = "fenced"

// Fenced reports whether the store refused stale fencing tokens.
func (g *Guard) Fenced() bool { return g.Mode == GuardFenced }

// OK reports whether no update was lost.
func (g *Guard) OK() bool { return g.Lost == 0 }

// NoWrites reports whether no write of a critical section reached the
// guarded counter, as its holders saw it (written) or as the store counted
// it (accepted): then its 0 lost updates measure nothing.
func NoWrites(written, accepted int64) bool { return written == 0 && accepted == 0 }
