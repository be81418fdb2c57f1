package results

import (
	"cmp"
	"slices"
)

// Timeline is one lock's holders over a run, as each believed it held the
// lock, with the windows where incompatible holders overlapped: the
// picture of a chaos run's safety verdict.
type Timeline struct {
	Lock  string   `json:"lock"`
	Holds []Holder `json:"holds"`
	// Overlaps are the windows (the union of overlapping pairs) in which
	// two incompatible holders of Lock each believed they held it.
	Overlaps []Window `json:"overlaps,omitempty"`
	// Omitted counts this lock's holds left out to keep the file small.
	Omitted int `json:"omitted,omitempty"`
}

// Window is a span of a run, in seconds since its start.
type Window struct {
	Start float64 `json:"start_s"`
	End   float64 `json:"end_s"`
}

// TimelineHolds bounds a timeline: enough for a chaos run's scripted
// holders and a readable chart; past it, the holds around the first
// overlap are kept.
const TimelineHolds = 600

// BuildTimeline picks the lock to draw, the one with the longest unsafe
// window, else the one held most often, and returns its holders and
// overlap windows. It returns nil when no operation acquired.
func BuildTimeline(ops []Op, l Labels) *Timeline {
	byLock := heldByLock(ops)
	if len(byLock) == 0 {
		return nil
	}
	var best int32 = -1
	var bestUnsafe int64
	var bestHolds int
	var bestWins []Window
	locks := make([]int32, 0, len(byLock))
	for k := range byLock {
		locks = append(locks, k)
	}
	slices.Sort(locks)
	for _, lk := range locks {
		wins, unsafe := overlapWindows(byLock[lk])
		n := len(byLock[lk])
		if best < 0 || unsafe > bestUnsafe || (unsafe == bestUnsafe && n > bestHolds) {
			best, bestUnsafe, bestHolds, bestWins = lk, unsafe, n, wins
		}
	}
	secs := byLock[best]
	t := &Timeline{Lock: l.lock(best)}
	from := 0
	if len(secs) > TimelineHolds {
		if len(bestWins) > 0 {
			// Centre the kept holds on the first overlap.
			first := bestWins[0].Start
			i, _ := slices.BinarySearchFunc(secs, first, func(o *Op, s float64) int { return cmp.Compare(seconds(o.Acquired), s) })
			from = max(0, min(i-TimelineHolds/2, len(secs)-TimelineHolds))
		}
		t.Omitted = len(secs) - TimelineHolds
		secs = secs[from : from+TimelineHolds]
	}
	for _, o := range secs {
		t.Holds = append(t.Holds, holder(o, l))
	}
	if len(secs) > 0 {
		lo, hi := seconds(secs[0].Acquired), seconds(secs[len(secs)-1].Released)
		for _, w := range bestWins {
			if w.End > lo && w.Start < hi {
				t.Overlaps = append(t.Overlaps, w)
			}
		}
	}
	return t
}

// overlapWindows returns the union of the windows in which incompatible
// sections of one lock (sorted by acquisition) overlapped, and its length
// in nanoseconds.
func overlapWindows(secs []*Op) ([]Window, int64) {
	var wins []Window
	var total int64
	var curStart, curEnd int64 = -1, -1
	flush := func() {
		if curEnd > curStart && curStart >= 0 {
			wins = append(wins, Window{Start: seconds(curStart), End: seconds(curEnd)})
			total += curEnd - curStart
		}
	}
	eachOverlap(secs, func(_, cur *Op, end int64) {
		// Starts never decrease, so windows merge in one pass.
		if cur.Acquired <= curEnd {
			curEnd = max(curEnd, end)
			return
		}
		flush()
		curStart, curEnd = cur.Acquired, end
	})
	flush()
	return wins, total
}
