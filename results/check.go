package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Holder is one side of a safety violation.
type Holder struct {
	Owner    string  `json:"owner"`
	Mode     string  `json:"mode"`
	Acquired float64 `json:"acquired_s"` // seconds since the run started
	Released float64 `json:"released_s"`
	Lost     bool    `json:"lost,omitempty"` // the holder noticed its loss at Released
	// LostIgnored: the holder was told of the loss and held on anyway.
	LostIgnored bool `json:"lost_ignored,omitempty"`
}

// Violation is two owners in one lock at once, at least one as writer
// (or exclusive), each believing it held the lock.
type Violation struct {
	Lock         string  `json:"lock"`
	First        Holder  `json:"first"`
	Second       Holder  `json:"second"`
	OverlapStart float64 `json:"overlap_start_s"`
	OverlapEnd   float64 `json:"overlap_end_s"`
	OverlapUs    float64 `json:"overlap_us"`
}

// Safety is the mutual-exclusion verdict over the recorded critical sections.
type Safety struct {
	Sections     int64   `json:"sections"`   // critical sections checked
	Violations   int64   `json:"violations"` // overlapping incompatible pairs
	MaxOverlapUs float64 `json:"max_overlap_us"`
	// UnsafeUs is how long, summed over locks, some lock had two
	// incompatible holders: the union of the overlap windows.
	UnsafeUs float64     `json:"unsafe_us"`
	Examples []Violation `json:"examples,omitempty"` // the first few, in time order
	// Incomplete says why some sections were not checked (empty: all were).
	Incomplete string `json:"incomplete,omitempty"`
	// Witness says who judged exclusion between processes, where each
	// process's clock checker compared only its own sections: WitnessStore
	// when the guarded store counted who was inside for every process of
	// a merged run. StoreOverlaps are the overlaps it witnessed then
	// (Guard.Unexcused), each a violation.
	Witness       string `json:"witness,omitempty"`
	StoreOverlaps int64  `json:"store_overlaps,omitempty"`
	// Unwitnessed says what of the guarded store's evidence the run asked
	// for and did not get (Guard.Missing): the verdict is then incomplete,
	// and the run fails.
	Unwitnessed string `json:"unwitnessed,omitempty"`
}

// WitnessStore is Safety.Witness when the guarded store judged exclusion
// across every process of the run.
const WitnessStore = "guarded store"

// OK reports a complete check of at least one critical section with no
// violation: with nothing checked there is nothing to call safe.
func (s Safety) OK() bool { return s.Verdict() == SafetyOK }

// Missing is what the verdict lacks, Incomplete and Unwitnessed in one
// line ("" when nothing).
func (s Safety) Missing() string {
	var m []string
	for _, x := range []string{s.Incomplete, s.Unwitnessed} {
		if x != "" {
			m = append(m, x)
		}
	}
	return strings.Join(m, "; ")
}

// The safety verdicts, as Safety.Verdict gives them.
const (
	SafetyOK         = "OK"
	SafetyViolated   = "VIOLATED"
	SafetyIncomplete = "INCOMPLETE"
	SafetyNoData     = "NO DATA"
)

// Verdict is the check's outcome in one word: VIOLATED, INCOMPLETE, NO
// DATA (no critical section was checked) or OK.
func (s Safety) Verdict() string {
	switch {
	case s.Violations > 0 || s.StoreOverlaps > 0:
		return SafetyViolated
	case s.Sections == 0:
		return SafetyNoData
	case s.Missing() != "":
		return SafetyIncomplete
	}
	return SafetyOK
}

// CheckSafety finds every pair of critical sections of the same lock that
// overlap in time while incompatible (not both reads) and held by different
// owners. Each section is [Acquired, Released) as its holder believed it.
// It sweeps each lock's sections in order of acquisition keeping those
// still held, so it costs O(n log n + violations).
func CheckSafety(ops []Op, l Labels, examples int) Safety {
	var s Safety
	byLock := heldByLock(ops)
	locks := make([]int32, 0, len(byLock))
	for k := range byLock {
		locks = append(locks, k)
	}
	slices.Sort(locks)
	var all []Violation
	for _, lk := range locks {
		secs := byLock[lk]
		s.Sections += int64(len(secs))
		perLock := 0
		var covered int64 // the union of overlaps so far ends here; starts never decrease
		eachOverlap(secs, func(a, cur *Op, end int64) {
			s.Violations++
			if from := max(cur.Acquired, covered); end > from {
				s.UnsafeUs += float64(end-from) / 1e3
				covered = end
			}
			us := float64(end-cur.Acquired) / 1e3
			s.MaxOverlapUs = math.Max(s.MaxOverlapUs, math.Round(us*10)/10)
			if perLock < examples {
				perLock++
				all = append(all, Violation{
					Lock:         l.lock(lk),
					First:        holder(a, l),
					Second:       holder(cur, l),
					OverlapStart: seconds(cur.Acquired),
					OverlapEnd:   seconds(end),
					OverlapUs:    math.Round(us*10) / 10,
				})
			}
		})
	}
	// Each lock gave its earliest; keep the earliest overall.
	sort.SliceStable(all, func(i, j int) bool { return all[i].OverlapStart < all[j].OverlapStart })
	s.Examples = all[:min(len(all), examples)]
	s.UnsafeUs = math.Round(s.UnsafeUs*10) / 10
	return s
}

// eachOverlap calls f for every pair of one lock's sections (sorted by
// acquisition) that overlap while incompatible and held by different
// owners: a acquired first, the overlap is [cur.Acquired, end). It keeps
// only the sections still held, so it costs O(n + pairs).
func eachOverlap(secs []*Op, f func(a, cur *Op, end int64)) {
	var active []*Op
	for _, cur := range secs {
		// Drop sections that ended before cur began.
		kept := active[:0]
		for _, a := range active {
			if a.Released > cur.Acquired {
				kept = append(kept, a)
			}
		}
		active = kept
		for _, a := range active {
			if a.Owner == cur.Owner || compatible(a.Mode, cur.Mode) {
				continue
			}
			if end := min(a.Released, cur.Released); end > cur.Acquired {
				f(a, cur, end)
			}
		}
		active = append(active, cur)
	}
}

func holder(o *Op, l Labels) Holder {
	return Holder{
		Owner:       l.owner(o.Owner),
		Mode:        o.Mode.String(),
		Acquired:    seconds(o.Acquired),
		Released:    seconds(o.Released),
		Lost:        o.Flags&Lost != 0,
		LostIgnored: o.Flags&LostIgnored != 0,
	}
}

// heldByLock groups the operations that acquired, per lock, in order of
// acquisition.
func heldByLock(ops []Op) map[int32][]*Op {
	m := map[int32][]*Op{}
	for i := range ops {
		if ops[i].Held() {
			m[ops[i].Lock] = append(m[ops[i].Lock], &ops[i])
		}
	}
	for _, secs := range m {
		slices.SortStableFunc(secs, func(a, b *Op) int { return cmp.Compare(a.Acquired, b.Acquired) })
	}
	return m
}

// Overtake is one FIFO violation of a fair lock: Later called after
// Earlier (by more than the slack) yet acquired first, while Earlier was
// still waiting.
type Overtake struct {
	Lock    string  `json:"lock"`
	Earlier Holder  `json:"earlier"`
	Later   Holder  `json:"later"`
	Called  float64 `json:"earlier_called_s"`
	Behind  float64 `json:"later_called_s"`
}

// FIFO is the fair-lock order verdict. Violations and Overtaken tell a
// caller held back once apart from a lock that lets newcomers pass: one
// waiter descheduled between taking its call time and sending the call
// is passed by every acquisition in between (many violations, one
// overtaken), while barging passes waiter after waiter.
type FIFO struct {
	Checked    int64      `json:"checked"`    // acquisitions checked
	Violations int64      `json:"violations"` // acquisitions that overtook an earlier waiter
	Overtaken  int64      `json:"overtaken"`  // acquisitions that some later caller overtook
	SlackUs    float64    `json:"slack_us"`
	Examples   []Overtake `json:"examples,omitempty"`
}

// CheckFIFO counts acquisitions of a fair lock that overtook a waiter
// which called earlier. Queue order is set where each attempt reaches
// Redis, which the client sees only as its send time; two waiters whose
// calls are closer than slack may have reached Redis in either order, so
// only a gap larger than slack counts.
func CheckFIFO(ops []Op, l Labels, slack time.Duration, examples int) FIFO {
	f := FIFO{SlackUs: float64(slack.Microseconds())}
	byLock := heldByLock(ops)
	for _, lk := range slices.Sorted(maps.Keys(byLock)) {
		secs := byLock[lk]
		f.Checked += int64(len(secs))
		perLock := 0
		// minLater[i]: the earliest call among sections acquired after i.
		minLater := make([]int, len(secs)+1)
		minLater[len(secs)] = -1
		for i := len(secs) - 1; i >= 0; i-- {
			minLater[i] = minLater[i+1]
			if minLater[i] < 0 || secs[i].Called < secs[minLater[i]].Called {
				minLater[i] = i
			}
		}
		// A section was overtaken when one acquired before it called later
		// by more than the slack.
		latest := int64(math.MinInt64)
		for _, cur := range secs {
			if latest > cur.Called+int64(slack) {
				f.Overtaken++
			}
			latest = max(latest, cur.Called)
		}
		for i, cur := range secs {
			j := minLater[i+1]
			if j < 0 || secs[j].Called >= cur.Called-int64(slack) {
				continue
			}
			f.Violations++
			if perLock < examples {
				perLock++
				e := secs[j]
				f.Examples = append(f.Examples, Overtake{
					Lock: l.lock(lk), Earlier: holder(e, l), Later: holder(cur, l),
					Called: seconds(e.Called), Behind: seconds(cur.Called),
				})
			}
		}
	}
	sort.SliceStable(f.Examples, func(i, j int) bool { return f.Examples[i].Later.Acquired < f.Examples[j].Later.Acquired })
	f.Examples = f.Examples[:min(len(f.Examples), examples)]
	return f
}

// Handoffs derives two metrics no single worker can see.
//
// Wait: for each measured acquisition, find the latest release of
// another, incompatible section of the same lock that began before it
// acquired; if the acquirer had called before that release, it was
// waiting for it, and called → acquired is its wait.
//
// Handoff: each time the lock falls free (its last holder's release
// begins) while owners wait for it (called before, acquired after), the
// time until the first of them acquires. A waiter is one the last holder
// blocked: after a read hold, only writers. Counting from every such
// release, not only from the one just before a waiter's acquisition,
// keeps polling honest: a poller that finds the lock free only after
// owners that never waited took it and gave it back (barging) is charged
// from the first release it could have had, which pub/sub wake-up answers
// within round trips and polling answers at the next poll.
func Handoffs(ops []Op, measureFrom int64, into *Set) {
	handoffs(ops, measureFrom, func(_ int64, m Metric, v int64) { into.Record(m, v) })
}

type release struct {
	at int64
	op *Op
}

// handoffs calls record(acquired, metric, value) for each wait and handoff.
func handoffs(ops []Op, measureFrom int64, record func(at int64, m Metric, v int64)) {
	for _, secs := range heldByLock(ops) {
		waits(secs, measureFrom, record)
		handoffsOf(secs, measureFrom, record)
	}
}

// waits records the Wait of each measured acquisition in secs (one lock's
// sections in order of acquisition) that waited for an incompatible
// holder's release.
func waits(secs []*Op, measureFrom int64, record func(at int64, m Metric, v int64)) {
	{
		var anyRel, writeRel []release // releases of any section / of incompatible-with-read ones
		for _, o := range secs {
			anyRel = append(anyRel, release{o.Released, o})
			if o.Mode != Read {
				writeRel = append(writeRel, release{o.Released, o})
			}
		}
		byTime := func(a, b release) int { return cmp.Compare(a.at, b.at) }
		slices.SortStableFunc(anyRel, byTime)
		slices.SortStableFunc(writeRel, byTime)
		for _, o := range secs {
			if o.Acquired < measureFrom || o.Flags&Warmup != 0 {
				continue
			}
			rel := anyRel
			if o.Mode == Read {
				rel = writeRel
			}
			// The latest release at or before the acquisition, not its own
			// (a zero-length hold releases when it acquires).
			k := sort.Search(len(rel), func(i int) bool { return rel[i].at > o.Acquired }) - 1
			for k >= 0 && rel[k].op == o {
				k--
			}
			if k < 0 || o.Called >= rel[k].at {
				continue
			}
			record(o.Acquired, Wait, o.Acquired-o.Called)
		}
	}
}

// freed is a moment one lock fell free: its last holder (of mode last)
// began its release.
type freed struct {
	at   int64
	last Mode
}

// freedAt lists the moments secs' lock fell free, in order.
func freedAt(secs []*Op) []freed {
	type event struct {
		at    int64
		order int // at one instant: releases of earlier holds, acquisitions, releases of zero-length holds
		delta int
		mode  Mode
	}
	ev := make([]event, 0, 2*len(secs))
	for _, o := range secs {
		ev = append(ev, event{o.Acquired, 1, +1, o.Mode})
		order := 0
		if o.Released <= o.Acquired {
			order = 2
		}
		ev = append(ev, event{max(o.Released, o.Acquired), order, -1, o.Mode})
	}
	slices.SortStableFunc(ev, func(a, b event) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.order, b.order))
	})
	var out []freed
	held := 0
	for _, e := range ev {
		held += e.delta
		if e.delta >= 0 || held > 0 {
			continue
		}
		held = 0
		if n := len(out); n > 0 && out[n-1].at == e.at {
			// Freed twice at one instant: one moment, which frees readers
			// if any of its releases was a write.
			if e.mode != Read {
				out[n-1].last = e.mode
			}
			continue
		}
		out = append(out, freed{e.at, e.mode})
	}
	return out
}

// waiterHeap orders waiting sections by when they acquired.
type waiterHeap []*Op

func (h *waiterHeap) push(o *Op) {
	*h = append(*h, o)
	for i := len(*h) - 1; i > 0; {
		p := (i - 1) / 2
		if (*h)[p].Acquired <= (*h)[i].Acquired {
			break
		}
		(*h)[p], (*h)[i] = (*h)[i], (*h)[p]
		i = p
	}
}

func (h *waiterHeap) pop() {
	n := len(*h) - 1
	(*h)[0] = (*h)[n]
	*h = (*h)[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && (*h)[l].Acquired < (*h)[m].Acquired {
			m = l
		}
		if r < n && (*h)[r].Acquired < (*h)[m].Acquired {
			m = r
		}
		if m == i {
			return
		}
		(*h)[m], (*h)[i] = (*h)[i], (*h)[m]
		i = m
	}
}

// first is the earliest acquisition at or after t by a section that did
// not release at or before t (one that did held the lock, it did not wait
// for it), dropping the others: later moments come after t.
func (h *waiterHeap) first(t int64) *Op {
	for len(*h) > 0 && ((*h)[0].Acquired < t || (*h)[0].Released <= t) {
		h.pop()
	}
	if len(*h) == 0 {
		return nil
	}
	return (*h)[0]
}

// handoffsOf records a Handoff for each moment secs' lock fell free while
// owners waited, from the moment to the first waiter's acquisition, when
// that acquisition is measured. One sweep in time: sections join a heap
// (readers apart) once they have called, and leave it once acquired.
func handoffsOf(secs []*Op, measureFrom int64, record func(at int64, m Metric, v int64)) {
	byCall := slices.Clone(secs)
	slices.SortStableFunc(byCall, func(a, b *Op) int { return cmp.Compare(a.Called, b.Called) })
	var readers, others waiterHeap
	next := 0
	for _, f := range freedAt(secs) {
		for next < len(byCall) && byCall[next].Called < f.at {
			if o := byCall[next]; o.Acquired > o.Called {
				if o.Mode == Read {
					readers.push(o)
				} else {
					others.push(o)
				}
			}
			next++
		}
		w := others.first(f.at)
		if f.last != Read { // a read hold blocks no reader
			if r := readers.first(f.at); r != nil && (w == nil || r.Acquired < w.Acquired) {
				w = r
			}
		}
		if w == nil || w.Acquired < measureFrom || w.Flags&Warmup != 0 {
			continue
		}
		record(w.Acquired, Handoff, w.Acquired-f.at)
	}
}

// OwnerCounts counts each owner's measured acquisitions.
func OwnerCounts(ops []Op, owners int) []int64 {
	n := make([]int64, owners)
	for i := range ops {
		o := &ops[i]
		if o.Held() && o.Flags&(Warmup|Part) == 0 && int(o.Owner) < owners && o.Owner >= 0 {
			n[o.Owner]++
		}
	}
	return n
}

// Fairness summarizes how evenly owners got the lock.
type Fairness struct {
	Owners int   `json:"owners"`
	Min    int64 `json:"min"` // fewest acquisitions of one owner
	Max    int64 `json:"max"`
	// Jain's index (Σx)²/(n·Σx²): 1 when all owners got the same, 1/n
	// when one got everything.
	Jain float64 `json:"jain"`
	// MinMax is min/max: locktorture flags max/2 > min (MinMax < 0.5).
	MinMax float64 `json:"min_max"`
	// CV is the population standard deviation over the mean.
	CV            float64  `json:"cv"`
	Starved       int      `json:"starved"` // owners with no acquisition
	StarvedOwners []string `json:"starved_owners,omitempty"`
	FIFO          *FIFO    `json:"fifo,omitempty"`
	// PerOwner is each owner's measured acquisitions, by owner name.
	PerOwner map[string]int64 `json:"per_owner,omitempty"`
	// Counted is the acquisitions the figures rest on, Total the run's
	// measured acquisitions: fewer are counted when the record limit
	// (--max-ops) kept the rest out.
	Counted int64 `json:"counted"`
	Total   int64 `json:"total"`
	// Caveat says why the figures may not describe the lock: they rest on
	// part of the run, or on too few acquisitions to tell unfairness from
	// chance (see MinFairnessPerOwner). Empty when they stand.
	Caveat string `json:"caveat,omitempty"`
}

// MinFairnessPerOwner is the acquisitions per owner, on average, that
// fairness is judged on. With fewer, a perfectly fair lock's own chance
// reads as unfairness: owners sharing N acquisitions at random have a
// Jain's index near 1/(1+owners/N), 0.5 at one acquisition each, and
// still 0.9 at ten.
const MinFairnessPerOwner = 10

// Judge records how many acquisitions f rests on of the run's total, and
// the caveat when that is part of the run or too few to judge by.
func (f *Fairness) Judge(total int64) {
	f.Counted = 0
	for _, n := range f.PerOwner {
		f.Counted += n
	}
	f.Total = max(total, f.Counted)
	var why []string
	if f.Counted < f.Total {
		why = append(why, fmt.Sprintf("rests on %s of the run's %s (the record limit, --max-ops, kept the rest out)", commas(f.Counted), Count(f.Total, "acquisition")))
	}
	if need := int64(MinFairnessPerOwner * f.Owners); f.Owners > 1 && f.Counted > 0 && f.Counted < need {
		why = append(why, fmt.Sprintf("%s for %s: too few to tell unfairness from chance, which takes %d per owner (%s)", Count(f.Counted, "acquisition"), Count(f.Owners, "owner"), MinFairnessPerOwner, commas(need)))
	}
	f.Caveat = strings.Join(why, "; ")
}

// Measured reports whether any owner acquired anything: with no
// acquisition there is no fairness to judge, and Jain's index (0) and the
// starved count (every owner) would describe nothing.
func (f Fairness) Measured() bool { return f.Max > 0 }

// ComputeFairness reads per-owner acquisition counts.
func ComputeFairness(counts []int64, owners []string) Fairness {
	f := Fairness{Owners: len(counts)}
	if len(counts) == 0 {
		return f
	}
	f.PerOwner = make(map[string]int64, len(counts))
	var sum, sumSq float64
	f.Min, f.Max = counts[0], counts[0]
	for i, c := range counts {
		f.PerOwner[Labels{Owners: owners}.owner(int32(i))] = c
		sum += float64(c)
		sumSq += float64(c) * float64(c)
		f.Min = min(f.Min, c)
		f.Max = max(f.Max, c)
		if c == 0 {
			f.Starved++
			if len(f.StarvedOwners) < 10 {
				f.StarvedOwners = append(f.StarvedOwners, Labels{Owners: owners}.owner(int32(i)))
			}
		}
	}
	n := float64(len(counts))
	if sumSq > 0 {
		f.Jain = round4(sum * sum / (n * sumSq))
	}
	if f.Max > 0 {
		f.MinMax = round4(float64(f.Min) / float64(f.Max))
	}
	if mean := sum / n; mean > 0 {
		f.CV = round4(math.Sqrt(math.Max(sumSq/n-mean*mean, 0)) / mean)
	}
	return f
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
