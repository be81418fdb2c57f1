package results

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

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
	// those whose write the store applied, as their holders saw it; Reads
	// those of readers (kind rw), which write nothing.
	Sections int64 `json:"sections"`
	Written  int64 `json:"written"`
	Reads    int64 `json:"reads,omitempty"`
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
	// Unwitnessed are the sections the store did not see whole, as their
	// holders saw it: their enter or their leave failed (or was refused
	// because the store had lost the run's keys), so an overlap with them
	// may have gone uncounted. Gaps say why, and what else is missing.
	Unwitnessed int64      `json:"unwitnessed,omitempty"`
	Gaps        []GuardGap `json:"gaps,omitempty"`
}

// GuardGap is one reason the store's evidence is incomplete.
type GuardGap struct {
	Cause string `json:"cause"` // one of the Gap causes
	// FromS is when the run first met it, in seconds since its start.
	FromS float64 `json:"from_s"`
	// Sections it left unwitnessed (0 for causes that lose evidence
	// already kept, whose sections nobody can count).
	Sections int64 `json:"sections,omitempty"`
	// Error is the first error it came with, verbatim.
	Error string `json:"error,omitempty"`
}

// The causes of a GuardGap.
const (
	// GapUnreachable: a step got no answer (the store was down, or the
	// network to it).
	GapUnreachable = "unreachable"
	// GapFailed: a step was answered with an error.
	GapFailed = "failed"
	// GapEmptied: the store lost the run's keys (restarted empty, was
	// flushed, or evicted them): what it witnessed before is gone too.
	GapEmptied = "emptied"
	// GapWentBack: an enter's number went back: the store was restored
	// to an older state, and lost some of what it had witnessed.
	GapWentBack = "went_back"
	// GapUnread: the store could not be read at the end of the run.
	GapUnread = "unread"
)

// AddGap counts one section's gap of cause at fromS (seconds since the
// run's start; sections is 1, or 0 for a gap that leaves no section of its
// own unwitnessed), keeping the first time and error of each cause.
func (g *Guard) AddGap(cause string, fromS float64, sections int64, err error) {
	g.Unwitnessed += sections
	gp := GuardGap{Cause: cause, FromS: fromS, Sections: sections}
	if err != nil {
		gp.Error = err.Error()
	}
	g.addGap(gp)
}

// addGap adds gp to the gap of its cause (the earlier's time and error
// kept), or as one of its own.
func (g *Guard) addGap(gp GuardGap) {
	if i := slices.IndexFunc(g.Gaps, func(o GuardGap) bool { return o.Cause == gp.Cause }); i >= 0 {
		o := &g.Gaps[i]
		o.Sections += gp.Sections
		if gp.FromS < o.FromS {
			o.FromS, o.Error = gp.FromS, cmp.Or(gp.Error, o.Error)
		}
	} else {
		g.Gaps = append(g.Gaps, gp)
	}
	slices.SortStableFunc(g.Gaps, func(a, b GuardGap) int { return cmp.Compare(a.FromS, b.FromS) })
}

// CountsWhole reports whether the store's own counts (accepted writes,
// the counter, overlaps) cover the run: false when it lost or went back on
// what it had kept, or could not be read at the end.
func (g *Guard) CountsWhole() bool {
	return !slices.ContainsFunc(g.Gaps, func(gp GuardGap) bool {
		return gp.Cause == GapEmptied || gp.Cause == GapWentBack || gp.Cause == GapUnread
	})
}

// Missing says what of the store's evidence is missing, "" when nothing
// is: how many sections it did not witness, and each gap with when it
// began. A run that asked for the store and did not get all of it has no
// complete verdict (Safety.Unwitnessed), and fails.
func (g *Guard) Missing() string {
	if g.Unwitnessed == 0 && len(g.Gaps) == 0 {
		return ""
	}
	var why []string
	for _, gp := range g.Gaps {
		why = append(why, gp.text())
	}
	s := strings.Join(why, "; ")
	if g.Unwitnessed > 0 {
		s = fmt.Sprintf("the guarded store witnessed %s of %s; %s unwitnessed: %s",
			commas(g.Sections-g.Unwitnessed), Count(g.Sections, "section"), commas(g.Unwitnessed), s)
	} else {
		s = "the guarded store's evidence is incomplete: " + s
	}
	if !g.CountsWhole() {
		s += "; its counts of lost updates and overlaps do not cover the run"
	}
	return s
}

// text is the gap in words.
func (gp GuardGap) text() string {
	detail := ""
	if gp.Error != "" {
		detail = " (" + gp.Error + ")"
	}
	switch gp.Cause {
	case GapUnreachable:
		return fmt.Sprintf("store unreachable from t=%.1fs%s", gp.FromS, detail)
	case GapFailed:
		return fmt.Sprintf("store steps failed from t=%.1fs%s", gp.FromS, detail)
	case GapEmptied:
		return fmt.Sprintf("store lost the run's keys by t=%.1fs (restarted empty, flushed or evicted them), and what it had witnessed with them", gp.FromS)
	case GapWentBack:
		return fmt.Sprintf("store went back to an older state by t=%.1fs (restored from a snapshot, or failed over to a replica behind it), losing some of what it had witnessed", gp.FromS)
	case GapUnread:
		return fmt.Sprintf("store could not be read at the run's end, t=%.1fs%s", gp.FromS, detail)
	}
	return fmt.Sprintf("%s from t=%.1fs%s", gp.Cause, gp.FromS, detail)
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

// judgeAcross gives the safety verdict of runs merged from several
// processes, from each run's own caveats (incomplete, unwitnessed, each
// named by its run) and the merged guard; missing are the workers that
// never reported. Each process's clock checker compared only its own
// sections. Where the runs shared a guarded store that counted who was
// inside, the store judges between them, with no clock: its overlaps are
// violations, and what it missed is what the verdict lacks.
func judgeAcross(m *Result, incomplete, unwitnessed []string, missing []int) {
	s, g := &m.Safety, m.Guard
	if g == nil || !g.Occupancy {
		s.Incomplete = strings.Join(append([]string{MergeIncomplete}, incomplete...), "; ")
		s.Unwitnessed = strings.Join(unwitnessed, "; ")
		return
	}
	g.OverlapsExcused = excused(g.OverlapsBy, missing)
	s.Witness, s.StoreOverlaps, s.Unwitnessed = WitnessStore, g.Unexcused(), g.Missing()
	if n := g.OverlapsExcused; n > 0 {
		incomplete = append(incomplete, fmt.Sprintf("the store could not judge %s behind a section a dead worker left open", Count(n, "later enter")))
	}
	if len(missing) > 0 {
		ids := make([]string, len(missing))
		for i, w := range missing {
			ids[i] = strconv.Itoa(w)
		}
		who := "worker " + ids[0]
		if len(ids) > 1 {
			who = "workers " + strings.Join(ids, ", ")
		}
		incomplete = append(incomplete, fmt.Sprintf("whether the store witnessed every section of %s, which never reported, is unknown", who))
	}
	s.Incomplete = strings.Join(incomplete, "; ")
}
