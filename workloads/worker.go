package workloads

import (
	"errors"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/lockimpl"
	"github.com/lockbench/lockbench/results"
)

// worker is one owner's goroutine.
type worker struct {
	r     *run
	idx   int32
	whole int // the owner's index in the whole profile (see Config.Share)
	// holder names the owner to the guarded store: its id, after
	// "w<index>/" in a worker's share, so that a collector knows whose
	// section a holder's is.
	holder   string
	guardSeq int64 // the holder's last enter number in the guarded store
	owner    Owner
	rng      *rand.Rand
	zipf     *rand.Zipf
	shard    *results.Shard
	wait     waiter

	// The owner's handles: the last one used, and a map for the others,
	// made only when an owner uses a second (one name per owner needs none).
	lastKey        handleKey
	last           Locker
	handles        map[handleKey]Locker
	parts          []int32 // further names of a multi-lock operation
	nestedHandles  []Locker
	nested, nestRl []int64

	// Where the worker is in its operation, for the stall reaper (see
	// run.reap): guarded by mu, which the worker takes only at phase
	// changes and when it records.
	mu        sync.Mutex
	phase     phase
	cur       results.Op // the operation so far, as of the last phase change
	phaseAt   time.Time  // when the current phase began
	abandoned bool       // reaped: record nothing more, stop
}

// phase is where a worker is in one operation.
type phase uint8

const (
	idle      phase = iota
	acquiring       // the outermost acquire is in flight
	nesting         // holding, a nested acquire in flight
	holding         // inside the critical section
	releasing       // an unlock is in flight
)

type handleKey struct {
	lock int
	mode results.Mode
}

func newWorker(r *run, i int, o Owner) *worker {
	whole := i
	if r.cfg.Share != nil {
		whole += r.cfg.Share.FirstOwner
	}
	holder := o.ID()
	if s := r.cfg.Share; s != nil {
		holder = results.WorkerPrefix(s.Index) + holder
	}
	w := &worker{
		r:      r,
		idx:    int32(i),
		whole:  whole,
		holder: holder,
		owner:  o,
		rng:    rand.New(rand.NewPCG(r.p.Seed, uint64(whole))),
		shard:  r.col.Shard(i),
		wait:   newWaiter(r.waits.clock, r.waits.rec(i)),
	}
	if r.p.Popularity == PopZipf {
		w.zipf = rand.NewZipf(w.rng, r.p.ZipfS, 1, uint64(len(r.names)-1))
	}
	return w
}

// since is the collector's clock.
func (w *worker) since(t time.Time) int64 { return w.r.col.Since(t) }

// sleep waits until deadline (a wait of kind k, measured unless warm)
// or until the load stops, reporting whether it slept in full.
func (w *worker) sleep(k results.WaitKind, deadline time.Time, warm bool) bool {
	begin := time.Now()
	r := w.wait.until(w.r.ctx, nil, deadline, false)
	w.wait.record(k, begin, deadline.Sub(begin), r, !warm)
	return r.end == waited
}

// loop runs operations until the load stops. Closed loop: operate, think,
// repeat. Open loop: each owner follows its share of a fixed schedule, and
// an operation that starts late is measured from when it should have
// started, so a backlog shows up as latency instead of vanishing (wrk2).
func (w *worker) loop() {
	p := w.r.p
	var next time.Time
	var every time.Duration
	if p.Rate > 0 {
		// The whole's schedule (a share's owners and rate are in the same
		// proportion), each owner in its slot of it.
		owners, rate := float64(p.TotalOwners()), p.Rate
		if s := w.r.cfg.Share; s != nil {
			owners, rate = float64(s.TotalOwners), s.TotalRate
		}
		every = time.Duration(float64(time.Second) * owners / rate)
		next = w.r.loadStart.Add(time.Duration(float64(time.Second) * float64(w.whole) / rate))
	}
	for !w.r.stopped.Load() {
		var intended time.Time
		if p.Rate > 0 {
			if time.Until(next) > 0 && !w.sleep(results.WaitStart, next, next.Before(w.r.warmEnd)) {
				return
			}
			intended, next = next, next.Add(every)
		} else {
			intended = time.Now()
		}
		warm := intended.Before(w.r.warmEnd)
		if p.Ops > 0 && !warm && w.r.issued.Add(1) > p.Ops {
			// All issued: stop issuing, but let other owners finish the
			// operations they have in flight.
			w.r.completed.Store(true)
			return
		}
		if !w.op(intended, warm) {
			return
		}
		if p.Rate == 0 {
			if t := p.Think.Sample(w.rng); t > 0 && !w.sleep(results.WaitThink, time.Now().Add(t), warm) {
				return
			}
		}
	}
}

func (w *worker) pick() int {
	switch w.r.p.Popularity {
	case PopPerOwner:
		return w.whole
	case PopZipf:
		return int(w.zipf.Uint64())
	}
	return w.rng.IntN(len(w.r.names))
}

// maxHandles bounds each owner's handle cache, and handleBudget the
// handles a run's owners cache in all: with thousands of owners on
// hundreds of names, caching every pair would hold more memory than the
// locks; past the bound, handles are made per use (a few small
// allocations).
const (
	maxHandles   = 64
	handleBudget = 1 << 16
)

// handleCap is each owner's share of handleBudget among owners, at least
// one handle (an owner on its own name caches it whatever the owners).
func handleCap(owners int) int {
	return max(1, min(maxHandles, handleBudget/max(owners, 1)))
}

func (w *worker) handle(lock int, m results.Mode) Locker {
	k := handleKey{lock, m}
	if w.last != nil && w.lastKey == k {
		return w.last
	}
	h, ok := w.handles[k]
	if ok {
		delete(w.handles, k) // the last one is kept apart from the map
	} else {
		h = w.owner.Locker(w.r.names[lock], m)
	}
	if w.last != nil && len(w.handles) < w.r.handleCap-1 {
		if w.handles == nil {
			w.handles = map[handleKey]Locker{}
		}
		w.handles[w.lastKey] = w.last
	}
	w.lastKey, w.last = k, h
	return h
}

// multiHandle picks the further names of a multi-lock operation on lock
// (distinct, by the profile's popularity) into w.parts and returns the
// owner's handle on all of them. A new handle per operation: the name sets
// vary.
func (w *worker) multiHandle(lock int) Locker {
	w.parts = w.parts[:0]
	names := []string{w.r.names[lock]}
	taken := func(i int) bool {
		if i == lock {
			return true
		}
		return slices.Contains(w.parts, int32(i))
	}
	for len(names) < w.r.p.MultiNames() {
		i := w.pick()
		for tries := 0; taken(i) && tries < 8; tries++ {
			i = w.pick()
		}
		for taken(i) { // a skewed pick keeps repeating: take the next free name
			i = (i + 1) % len(w.r.names)
		}
		w.parts = append(w.parts, int32(i))
		names = append(names, w.r.names[i])
	}
	return w.owner.(MultiOwner).MultiLocker(names)
}

// track publishes the worker's phase and the operation so far. It
// reports false when the run has abandoned the worker (Redis stalled past
// the run's bound): the worker then stops, recording nothing more, since
// the reaper recorded its operation as it stood.
func (w *worker) track(p phase, op *results.Op, at time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.abandoned {
		return false
	}
	w.phase, w.cur, w.phaseAt = p, *op, at
	return true
}

// record files a finished operation, and its error's message when it
// failed, unless the worker was abandoned meanwhile.
func (w *worker) record(op *results.Op, err error) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.abandoned {
		return false
	}
	w.phase = idle
	w.shard.Record(*op, w.nested, w.nestRl)
	for _, lock := range w.parts {
		part := *op
		part.Lock = lock
		w.shard.RecordPart(part)
	}
	if err != nil && op.Err != results.NoErr {
		w.shard.NoteError(op.Err, w.message(op.Lock, err), op.Done)
	}
	return true
}

// localAddr matches the local end of a TCP connection in a network
// error ("127.0.0.1:53124->"), different for every connection: without it
// one refused or timed-out server would make as many messages as sockets.
var localAddr = regexp.MustCompile(`(\[[0-9a-fA-F:.]+\]|[0-9]{1,3}(\.[0-9]{1,3}){3}):[0-9]+->`)

// message is err's text as a reader can group it: the lock's name (one
// per lock), the owner's id (one per owner) and the connection's local
// port (one per socket) replaced.
func (w *worker) message(lock int32, err error) string {
	msg := err.Error()
	if int(lock) < len(w.r.names) {
		msg = strings.ReplaceAll(msg, w.r.names[lock], "<lock>")
	}
	if id := w.owner.ID(); id != "" {
		msg = strings.ReplaceAll(msg, id, "<owner>")
	}
	return localAddr.ReplaceAllString(msg, "")
}

// op runs one operation: the outermost acquisition, nested ones, the hold,
// the nested releases and the outermost release, and records it. It
// reports false when the worker was abandoned and must stop.
func (w *worker) op(intended time.Time, warm bool) bool {
	p := w.r.p
	lock := w.pick()
	mode := results.Exclusive
	if p.Kind == RW {
		mode = results.Write
		if w.rng.Float64() < p.ReadRatio {
			mode = results.Read
		}
	}
	depth := p.Depth.Sample(w.rng)
	op := results.Op{Start: w.since(intended), Owner: w.idx, Lock: int32(lock), Mode: mode, Depth: 1}
	if warm {
		op.Flags |= results.Warmup
	}
	w.nestedHandles, w.nested, w.nestRl = w.nestedHandles[:0], w.nested[:0], w.nestRl[:0]
	var l Locker
	if p.Kind == Multi {
		l = w.multiHandle(lock)
	} else {
		w.parts = w.parts[:0]
		l = w.handle(lock, mode)
	}
	lease := p.Lease.Fixed
	called := time.Now()
	op.Called = w.since(called)
	if !w.track(acquiring, &op, called) {
		return false
	}
	if s, ok := l.(Sectioned); ok && depth == 1 && w.r.cfg.Guard == nil {
		return w.section(s, &op, lease)
	}
	ok, err := l.Acquire(w.r.ctx, time.Duration(p.Wait), lease)
	now := time.Now()
	if start, end := callTimes(l); !end.IsZero() {
		op.Called, now = w.since(start), end
		if p.Rate == 0 {
			op.Start = op.Called // closed loop: the operation begins with the call
		}
	}
	if !ok || err != nil {
		switch {
		case err == nil:
			op.Err = results.ErrTimeout
		case w.r.stopped.Load() && w.r.ctx.Err() != nil:
			op.Flags |= results.Cut // the run's end cancelled it
		default:
			op.Err = Classify(err)
		}
		op.Released, op.Done = op.Called, w.since(now)
		return w.record(&op, err)
	}
	op.Acquired = w.since(now)
	lost := l.Lost()

	for range depth - 1 {
		m := mode
		if mode == results.Write && w.rng.Float64() < p.ReadInWrite {
			m = results.Read // read inside write: allowed; write inside read is not
		}
		h := w.handle(lock, m)
		t0 := time.Now()
		if !w.track(nesting, &op, t0) {
			return false
		}
		ok, err := h.Acquire(w.r.ctx, time.Duration(p.Wait), lease)
		if !ok || err != nil {
			if !w.r.stopped.Load() {
				op.Flags |= results.NestFailed
			}
			break
		}
		w.nested = append(w.nested, int64(took(h, t0)))
		w.nestedHandles = append(w.nestedHandles, h)
	}
	op.Depth = uint8(1 + len(w.nestedHandles))

	// The guarded update reads before the hold and writes after it,
	// unless the holder stopped at Lost (it would not write then); a
	// reader's section reads nothing and writes nothing. The enter puts
	// the owner into the store's section; every section that entered
	// ends in the write or a leave.
	store := w.r.cfg.Guard
	var sec guardSection
	if store != nil {
		sec = w.r.guard.enter(w.r.relCtx, store, w.r.names[lock], l, w.holder, mode == results.Read, w.since(time.Now()), &w.guardSeq)
	}
	var lostAt time.Time
	if d := p.Hold.Sample(w.rng); d > 0 && (store == nil || sec.inside) {
		if !w.track(holding, &op, time.Now()) {
			if sec.inside {
				w.r.guard.leave(w.r.relCtx, store, sec, w.since(time.Now()), true)
			}
			return false
		}
		if w.r.cfg.IgnoreLost {
			lost = nil // never ready: the holder is not listening
		}
		begin := time.Now()
		r := w.wait.until(w.r.ctx, lost, begin.Add(d), true)
		switch r.end {
		case waitLost:
			lostAt = r.at
		case waitCut:
			op.Flags |= results.Cut
		}
		w.wait.record(results.WaitHold, begin, d, r, !warm)
		if w.r.cfg.IgnoreLost {
			lost = l.Lost()
		}
	}
	if lostAt.IsZero() && !w.r.cfg.IgnoreLost && lost != nil {
		// A careful holder asks again right before it writes: Lost consults
		// the hold's deadline, which a late timer cannot delay.
		select {
		case <-l.Lost():
			lostAt = time.Now()
		default:
		}
	}
	switch {
	case !sec.inside:
	case !sec.shared && (lostAt.IsZero() || w.r.cfg.IgnoreLost):
		w.r.guard.write(w.r.relCtx, store, sec, l, func() int64 { return w.since(time.Now()) })
	default: // a reader's end, or stopped at Lost: leave before releasing
		w.r.guard.leave(w.r.relCtx, store, sec, w.since(time.Now()), true)
	}
	relStart := time.Now()
	op.Released = w.since(relStart) // as far as the reaper knows, until the release is timed
	if !w.track(releasing, &op, relStart) {
		return false
	}
	for i := len(w.nestedHandles) - 1; i >= 0; i-- {
		t0 := time.Now()
		if err := w.nestedHandles[i].Release(w.r.relCtx); err == nil {
			w.nestRl = append(w.nestRl, int64(took(w.nestedHandles[i], t0)))
		}
	}
	relStart = time.Now()
	if lostAt.IsZero() {
		select {
		case <-lost:
			lostAt = relStart
		default:
		}
	}
	op.Released = w.since(relStart)
	switch {
	case lostAt.IsZero():
	case w.r.cfg.IgnoreLost:
		op.Flags |= results.LostIgnored
	default:
		op.Released = w.since(lostAt)
		op.Flags |= results.Lost
	}
	err = w.release(l)
	op.Done = w.since(time.Now())
	if start, end := callTimes(l); !end.IsZero() {
		// The holder's critical section ran until its process sent the
		// unlock, later than the harness asked for it.
		if lostAt.IsZero() || w.r.cfg.IgnoreLost {
			op.Released = w.since(start)
		}
		op.Done = w.since(end)
	}
	switch {
	case err == nil:
	case op.Flags&(results.Lost|results.LostIgnored) != 0 && errors.Is(err, lockimpl.ErrNotHeld):
		// Known lost: the unlock finding nothing is the expected answer.
		err = nil
	case w.r.cfg.IgnoreLost && l.Lost() == nil && errors.Is(err, lockimpl.ErrNotHeld):
		// No loss signal to ignore: the unlock is where the holder learns.
		op.Flags |= results.LostIgnored
		err = nil
	case errors.Is(err, lockimpl.ErrNotHeld):
		// Gone without the holder being told: a failure, but there is
		// nothing left in Redis to release.
		op.Err = Classify(err)
	default:
		op.Err = Classify(err)
		op.Flags |= results.ReleaseFailed // Redis may still hold it
	}
	return w.record(&op, err)
}

// section runs op as one Sectioned call: the hold is sampled here and
// spent in the implementation's process.
func (w *worker) section(s Sectioned, op *results.Op, lease time.Duration) bool {
	p := w.r.p
	hold := p.Hold.Sample(w.rng)
	t, ok, err := s.Section(w.r.ctx, time.Duration(p.Wait), lease, hold)
	now := time.Now()
	if t.End.IsZero() { // no answer: the run's end, or the process gone
		switch {
		case w.r.stopped.Load() && w.r.ctx.Err() != nil:
			op.Flags |= results.Cut
		default:
			op.Err = Classify(err)
		}
		op.Released, op.Done = op.Called, w.since(now)
		return w.record(op, err)
	}
	op.Called = w.since(t.Start)
	if p.Rate == 0 {
		op.Start = op.Called
	}
	if !ok {
		switch {
		case err == nil:
			op.Err = results.ErrTimeout
		case w.r.stopped.Load() && w.r.ctx.Err() != nil:
			op.Flags |= results.Cut // the run's end stopped the wait
		default:
			op.Err = Classify(err)
		}
		op.Released, op.Done = op.Called, w.since(t.End)
		return w.record(op, err)
	}
	op.Acquired, op.Released, op.Done = w.since(t.Acquired), w.since(t.Released), w.since(t.End)
	if t.Cut {
		op.Flags |= results.Cut // the run's end cut the hold short
	} else if hold > 0 && op.Flags&results.Warmup == 0 {
		// Held in the implementation's process, by its clock; what its
		// precision cost is its own.
		w.wait.rec.Record(results.WaitHold, hold, t.Released.Sub(t.Acquired))
		w.r.waits.sectioned.Store(true)
	}
	switch {
	case err == nil:
	case w.r.cfg.IgnoreLost && errors.Is(err, lockimpl.ErrNotHeld):
		op.Flags |= results.LostIgnored // learnt at the unlock, as in op
		err = nil
	case errors.Is(err, lockimpl.ErrNotHeld):
		op.Err = Classify(err)
	default:
		op.Err = Classify(err)
		op.Flags |= results.ReleaseFailed
	}
	return w.record(op, err)
}

// callTimes is l's latest call's own start and end when l is Timed, zero
// times otherwise.
func callTimes(l Locker) (start, end time.Time) {
	if t, ok := l.(Timed); ok {
		return t.LastCall()
	}
	return time.Time{}, time.Time{}
}

// took is how long l's latest call took, by l's own times when it has
// them, else since t0.
func took(l Locker, t0 time.Time) time.Duration {
	if start, end := callTimes(l); !end.IsZero() {
		return end.Sub(start)
	}
	return time.Since(t0)
}

// release unlocks with a context that the run's end does not cancel, so a
// stopped run still gives back what it holds; the client's read and write
// timeouts bound the call.
func (w *worker) release(l Locker) error { return l.Release(w.r.relCtx) }
