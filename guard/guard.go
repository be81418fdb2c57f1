package guard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Mode is how critical sections write the guarded counter.
type Mode string

// The write modes.
const (
	// Off: critical sections touch no resource.
	Off Mode = "off"
	// Plain: read, hold, write what was read plus one.
	Plain Mode = "plain"
	// Fenced: as Plain, the read and the write carrying the lock's fencing
	// token, which the store refuses when lower than the highest it saw.
	// It is named after the lock kind whose tokens it carries (kind.Fenced).
	Fenced Mode = "fenced"
)

// ParseMode reads a mode as profiles and flags spell it ("" is Off).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", Off:
		return Off, nil
	case Plain, Fenced:
		return Mode(s), nil
	}
	return "", fmt.Errorf("guard mode %q: use off, plain or fenced", s)
}

// ErrStale is what Enter, Read and Write return when the store refused a
// fenced token lower than the highest it has seen: the holder's lock was
// taken over, and the store kept the newer holder's state.
var ErrStale = errors.New("guard: stale fencing token refused")

// ErrEmptied is what every step of a store that began (Begin) returns once
// its mark is gone: the store restarted empty, was flushed, or evicted the
// run's keys, and with them what it had witnessed. Nothing is written then.
var ErrEmptied = errors.New("guard: the store lost the run's keys (restarted empty, flushed or evicted)")

// DefaultTTL is how long the store keeps a key after a step last wrote it:
// whatever a run leaves on a user's server expires, even when the run dies
// before it can tidy up.
const DefaultTTL = 24 * time.Hour

// The store's hash fields beside the counter.
const (
	fValue    = "value"    // the counter
	fToken    = "token"    // the highest fencing token seen
	fAccepted = "accepted" // writes applied
	fRejected = "rejected" // reads and writes refused for a stale token
	fOverlaps = "overlaps" // enters that found a conflicting holder inside
	fMark     = "run"      // Begin's mark: gone when the store lost the run's keys
)

// Every script's KEYS are a name's counter, the totals, the name's
// exclusive holders and its readers, the overlap examples and the overlaps
// by holder (Store.keys); its ARGV begin with whether the store began
// (its mark must be there) and the keys' time to live in ms. The prelude
// refuses a step of a store that lost its mark ({-1}) before it writes
// anything, and gives keep, which makes a key expire.
const prelude = `
if ARGV[1] == '1' and redis.call('hexists', KEYS[2], 'run') == 0 then return {-1} end
local ttl = tonumber(ARGV[2])
local function keep(k) if ttl > 0 then redis.call('pexpire', k, ttl) end end
`

// fence is the scripts' token check: with a token (ARGV[tok] > 0) it
// refuses one lower than the highest the name has seen ({0, highest})
// unless ARGV[tok+1] is 0 (the planted bug of NewBroken), else records it
// as the name's highest and the store's.
func fence(tok int) string {
	return fmt.Sprintf(`
local tok = tonumber(ARGV[%d])
if tok > 0 then
  local high = tonumber(redis.call('hget', KEYS[1], 'token') or '0')
  if tok < high and ARGV[%d] == '1' then
    redis.call('hincrby', KEYS[2], 'rejected', 1)
    keep(KEYS[2])
    return {0, high}
  end
  redis.call('hset', KEYS[1], 'token', math.max(tok, high))
  redis.call('hset', KEYS[2], 'token', math.max(tok, tonumber(redis.call('hget', KEYS[2], 'token') or '0')))
  keep(KEYS[1])
  keep(KEYS[2])
end
`, tok, tok+1)
}

// enterScript returns the counter of one name and enters holder ARGV[5]
// ("" enters nobody) into its section, after the token check of ARGV[3]
// and ARGV[4]: as a reader (ARGV[6] is 1) among the readers (KEYS[4]),
// else among the exclusive holders (KEYS[3]). A reader conflicts with an
// exclusive holder inside, an exclusive holder with anyone inside: finding
// one is an overlap, counted in the totals and against the holder inside
// longest (KEYS[6]; a holder that never leaves, whose process died inside,
// is then the oldest for every overlap behind it, which a collector can
// set apart), and, while the examples (KEYS[5]) number fewer than ARGV[7],
// recorded with up to ARGV[8] holders of each kind inside and the name
// ARGV[9]. Each enter gets the next number of the store's enters, returned
// beside the counter: it only grows while the store keeps its state. An
// enter already applied (a retried script) counts nothing again.
var enterScript = redis.NewScript(prelude + fence(3) + `
local who, seq = ARGV[5], 0
if who ~= '' then
  local reads = ARGV[6] == '1'
  local mine = KEYS[3]
  if reads then mine = KEYS[4] end
  local again = redis.call('zscore', mine, who)
  if again then
    seq = tonumber(again)
  else
    seq = redis.call('hincrby', KEYS[2], 'entries', 1)
    keep(KEYS[2])
    local n = tonumber(ARGV[8])
    local excl = redis.call('zrange', KEYS[3], 0, n - 1, 'withscores')
    local readers = {}
    if not reads then readers = redis.call('zrange', KEYS[4], 0, n - 1, 'withscores') end
    if #excl + #readers > 0 then
      redis.call('hincrby', KEYS[2], 'overlaps', 1)
      local oldest = excl[1]
      if oldest == nil or (readers[1] and tonumber(readers[2]) < tonumber(excl[2])) then oldest = readers[1] end
      redis.call('hincrby', KEYS[6], oldest, 1)
      keep(KEYS[6])
      if redis.call('llen', KEYS[5]) < tonumber(ARGV[7]) then
        local function ids(l)
          local out = {}
          for i = 1, #l, 2 do out[#out + 1] = l[i] end
          table.sort(out)
          return out
        end
        local ex = {name = ARGV[9], entered = who}
        if #excl > 0 then ex.inside = ids(excl) end
        if #readers > 0 then ex.readers = ids(readers) end
        if reads then ex.entered_read = true end
        redis.call('rpush', KEYS[5], cjson.encode(ex))
        keep(KEYS[5])
      end
    end
    redis.call('zadd', mine, seq, who)
    keep(mine)
  end
end
return {1, tonumber(redis.call('hget', KEYS[1], 'value') or '0'), seq}
`)

// writeScript sets the counter of one name (KEYS[1]) to ARGV[3] + 1 (the
// value read plus one) for writer ARGV[4], after the token check of
// ARGV[5] and ARGV[6], and keeps the totals (KEYS[2]): writes applied and
// the sum of every name's counter. It returns {1, value found, last
// writer}, or {0, highest token} when refused. The writer leaves the
// name's exclusive holders (KEYS[3]) either way: its section ends here.
var writeScript = redis.NewScript(prelude + `
redis.call('zrem', KEYS[3], ARGV[4])
` + fence(5) + `
local cur = tonumber(redis.call('hget', KEYS[1], 'value') or '0')
local last = redis.call('hget', KEYS[1], 'writer') or ''
local new = tonumber(ARGV[3]) + 1
redis.call('hset', KEYS[1], 'value', new, 'writer', ARGV[4])
redis.call('hincrby', KEYS[2], 'value', new - cur)
redis.call('hincrby', KEYS[2], 'accepted', 1)
keep(KEYS[1])
keep(KEYS[2])
return {1, cur, last}
`)

// leaveScript takes holder ARGV[3] out of one name's section, whichever
// kind of holder it entered as.
var leaveScript = redis.NewScript(prelude + `
redis.call('zrem', KEYS[3], ARGV[3])
redis.call('zrem', KEYS[4], ARGV[3])
return {1}
`)

// Store is a guarded counter per lock name, with the totals of all.
type Store struct {
	rdb    redis.UniversalClient
	key    string
	mode   Mode
	broken bool // accepts lower tokens
	began  bool // Begin marked the store: every step checks the mark
}

// New returns the counters under key on rdb ({key} holds the totals,
// {key}:<name> each lock name's counter, {key}#in:<name> and
// {key}#rd:<name> who is inside its section, exclusively and reading,
// {key}#overlaps the overlap examples), written in mode (Plain or
// Fenced). The braces are a hash tag: every key of one store hashes to one
// slot, so that each script may touch a name's keys and the totals
// together on a Redis Cluster too. The '#' keeps a name's occupants apart
// from every counter, whatever the name. key must not be empty. Use a key no
// other run shares; machines of one run give the same key, and so meet on
// the same counters. Every key a step writes expires DefaultTTL after.
func New(rdb redis.UniversalClient, key string, mode Mode) *Store {
	return &Store{rdb: rdb, key: key, mode: mode}
}

// NewBroken is a Fenced store with a planted bug: it accepts tokens lower
// than the highest it has seen (and keeps the highest). It exists to show
// that the lost-update checks catch a fencing store that does not fence.
func NewBroken(rdb redis.UniversalClient, key string) *Store {
	return &Store{rdb: rdb, key: key, mode: Fenced, broken: true}
}

// check is the scripts' flag for refusing lower tokens.
func (s *Store) check() int {
	if s.broken {
		return 0
	}
	return 1
}

// Fences reports whether the store refuses stale tokens: Fenced mode,
// without NewBroken's planted bug.
func (s *Store) Fences() bool { return s.mode == Fenced && !s.broken }

// Mode is how the store is written.
func (s *Store) Mode() Mode { return s.mode }

// Key is the key New was given: the totals live at {Key()}, each name's
// counter at {Key()}:<name>.
func (s *Store) Key() string { return s.key }

// Reset clears the totals, the mark and the overlap examples (use a fresh
// key per run: the names' counters and occupants are not listed anywhere
// to clear).
func (s *Store) Reset(ctx context.Context) error {
	return s.rdb.Del(ctx, s.totals(), s.overlaps(), s.overlapsBy()).Err()
}

// Begin marks the store for a run, after Reset: from then on every step
// of this Store checks that the mark is still there and fails with
// ErrEmptied when it is not, and Totals says whether it is. A store that
// restarts empty, is flushed or evicts the run's keys loses what it
// witnessed, and this is how the run knows. Machines of one run may each
// Begin the store they share: the first marks it.
func (s *Store) Begin(ctx context.Context) error {
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSetNX(ctx, s.totals(), fMark, time.Now().UnixMilli())
		p.PExpire(ctx, s.totals(), DefaultTTL)
		return nil
	})
	if err != nil {
		return fmt.Errorf("guard: begin %s: %w", s.key, err)
	}
	s.began = true
	return nil
}

// totals is the totals' key. Hash-tagged with the key, so that it shares
// a cluster slot with every name's counter: a script's keys must.
func (s *Store) totals() string { return "{" + s.key + "}" }

// keys are a script's KEYS: name's counter, the totals, name's exclusive
// holders and readers, the overlap examples, the overlaps by holder.
func (s *Store) keys(name string) []string {
	return []string{s.totals() + ":" + name, s.totals(), s.occupants(name), s.readers(name), s.overlaps(), s.overlapsBy()}
}

// args are a script's ARGV: the prelude's, then rest.
func (s *Store) args(rest ...any) []any {
	began := 0
	if s.began {
		began = 1
	}
	return append([]any{began, DefaultTTL.Milliseconds()}, rest...)
}

// overlapsBy counts the overlaps by the holder inside longest at each.
func (s *Store) overlapsBy() string { return s.totals() + "#overlaps-by" }

// occupants are the holders inside name's critical section exclusively,
// scored by the order they entered in.
func (s *Store) occupants(name string) string { return s.totals() + "#in:" + name }

// readers are the holders inside name's critical section as readers.
func (s *Store) readers(name string) string { return s.totals() + "#rd:" + name }

// overlaps is the list of overlap examples, the first MaxOverlaps.
func (s *Store) overlaps() string { return s.totals() + "#overlaps" }

// The bounds of the overlap examples: how many the store keeps (the count
// is always exact), and how many holders of each kind already inside
// each names.
const (
	MaxOverlaps = 20
	MaxInside   = 4
)

// token is what a script gets: the holder's token in Fenced mode, else 0
// (unchecked).
func (s *Store) token(t int64) int64 {
	if s.mode == Fenced {
		return max(t, 1)
	}
	return 0
}

// Entry is a critical section entering the store.
type Entry struct {
	// Token is the hold's fencing token, checked in Fenced mode.
	Token int64
	// Holder names who enters: unique per owner across every process of
	// the run; "" enters nobody, for callers that do not track occupancy.
	Holder string
	// Shared enters a reader, which conflicts only with an exclusive
	// holder (a writer); else the holder enters exclusively, and
	// conflicts with anyone inside.
	Shared bool
}

// Entered is what the store said to an entry.
type Entered struct {
	// Value is the counter.
	Value int64
	// Seq numbers the enter among the store's enters (0 for Holder ""):
	// it only grows while the store keeps its state, so one holder seeing
	// it go back knows the store lost some of what it witnessed (it
	// restarted from an older snapshot, or failed over to a replica
	// behind it).
	Seq int64
}

// Enter starts a critical section of lock name: it returns the counter and
// enters e's holder into the section. If a holder it conflicts with is
// inside, the store counts an overlap (Totals.Overlaps) and keeps the
// first MaxOverlaps as examples (Overlaps). In Fenced mode ErrStale
// when the store has seen a higher token for name, and the holder did not
// enter. A holder that entered leaves by Write, or by Leave when it will
// not write; after an error other than ErrStale or ErrEmptied the enter
// may have been applied, so it must Leave too.
func (s *Store) Enter(ctx context.Context, name string, e Entry) (Entered, error) {
	shared := 0
	if e.Shared {
		shared = 1
	}
	v, err := enterScript.Run(ctx, s.rdb, s.keys(name), s.args(s.token(e.Token), s.check(), e.Holder, shared, MaxOverlaps, MaxInside, name)...).Int64Slice()
	if err != nil {
		return Entered{}, fmt.Errorf("guard: read %s: %w", s.key, err)
	}
	switch {
	case len(v) == 1 && v[0] == -1:
		return Entered{}, fmt.Errorf("%w (%s)", ErrEmptied, s.key)
	case len(v) == 2 && v[0] == 0:
		return Entered{}, fmt.Errorf("%w: token %d, store has seen %d", ErrStale, e.Token, v[1])
	case len(v) != 3:
		return Entered{}, fmt.Errorf("guard: read %s: reply %v", s.key, v)
	}
	return Entered{Value: v[1], Seq: v[2]}, nil
}

// Read is Enter of an exclusive holder, returning the counter.
func (s *Store) Read(ctx context.Context, name string, token int64, holder string) (int64, error) {
	e, err := s.Enter(ctx, name, Entry{Token: token, Holder: holder})
	return e.Value, err
}

// Write is one write's outcome.
type Write struct {
	// Overwrote is how many updates the write undid: the counter had moved
	// this far past what the writer read (negative: it had gone back).
	Overwrote int64
	// Overwritten is who wrote the counter last before this write, whose
	// update (with any before it that the writer never saw) is lost when
	// Overwrote > 0.
	Overwritten string
}

// Write sets the counter of lock name to read plus one for writer, at the
// end of a critical section, and writer (its holder id) leaves the
// section, refused or not. In Fenced mode token is the hold's fencing
// token: ErrStale when the store has seen a higher one (nothing written).
func (s *Store) Write(ctx context.Context, name string, read int64, writer string, token int64) (Write, error) {
	v, err := writeScript.Run(ctx, s.rdb, s.keys(name), s.args(read, writer, s.token(token), s.check())...).Slice()
	if err != nil {
		return Write{}, fmt.Errorf("guard: write %s: %w", s.key, err)
	}
	if len(v) == 1 {
		return Write{}, fmt.Errorf("%w (%s)", ErrEmptied, s.key)
	}
	if len(v) < 2 {
		return Write{}, fmt.Errorf("guard: write %s: reply %v", s.key, v)
	}
	n, _ := v[1].(int64)
	if ok, _ := v[0].(int64); ok == 0 {
		return Write{}, fmt.Errorf("%w: token %d, store has seen %d", ErrStale, token, n)
	}
	w := Write{Overwrote: n - read}
	if len(v) > 2 {
		w.Overwritten, _ = v[2].(string)
	}
	return w, nil
}

// Leave takes holder out of lock name's critical section without a
// write: a reader's section ended, or a holder stopped at a lost hold, or
// its read or write failed. Leaving twice, or without having entered, is
// harmless.
func (s *Store) Leave(ctx context.Context, name, holder string) error {
	v, err := leaveScript.Run(ctx, s.rdb, s.keys(name), s.args(holder)...).Int64Slice()
	if err != nil {
		return fmt.Errorf("guard: leave %s: %w", s.key, err)
	}
	if len(v) == 1 && v[0] == -1 {
		return fmt.Errorf("%w (%s)", ErrEmptied, s.key)
	}
	return nil
}

// Inside is who is inside lock name's critical section now, as the store
// sees it, the exclusive holders first: empty once every section that
// entered has left.
func (s *Store) Inside(ctx context.Context, name string) ([]string, error) {
	var in []string
	for _, k := range []string{s.occupants(name), s.readers(name)} {
		h, err := s.rdb.ZRange(ctx, k, 0, -1).Result()
		if err != nil {
			return nil, fmt.Errorf("guard: inside %s: %w", s.key, err)
		}
		in = append(in, h...)
	}
	return in, nil
}

// Expire gives the store's keys of the lock names a time to live: a
// store shared by a run's machines outlives the run, and nobody else
// knows its keys to clear them.
func (s *Store) Expire(ctx context.Context, names []string, ttl time.Duration) error {
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range []string{s.totals(), s.overlaps(), s.overlapsBy()} {
			p.PExpire(ctx, k, ttl)
		}
		for _, n := range names {
			p.PExpire(ctx, s.totals()+":"+n, ttl)
			p.PExpire(ctx, s.occupants(n), ttl)
			p.PExpire(ctx, s.readers(n), ttl)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("guard: expire %s: %w", s.key, err)
	}
	return nil
}

// OverlapsBy counts the overlaps by the holder that had been inside
// longest at each one.
func (s *Store) OverlapsBy(ctx context.Context) (map[string]int64, error) {
	m, err := s.rdb.HGetAll(ctx, s.overlapsBy()).Result()
	if err != nil {
		return nil, fmt.Errorf("guard: overlaps of %s: %w", s.key, err)
	}
	out := make(map[string]int64, len(m))
	for h, v := range m {
		out[h], _ = strconv.ParseInt(v, 10, 64)
	}
	return out, nil
}

// Overlap is one holder entering a lock's critical section while holders
// it conflicts with were inside, as the store saw it.
type Overlap struct {
	Name string `json:"name"` // the lock's name
	// Inside are the exclusive holders (writers) inside, Readers the
	// readers inside that the enter conflicts with: at most MaxInside of
	// each, sorted.
	Inside  []string `json:"inside"`
	Readers []string `json:"readers,omitempty"`
	// Entered is the holder that entered, EnteredRead whether as a reader.
	Entered     string `json:"entered"`
	EnteredRead bool   `json:"entered_read,omitempty"`
}

// Overlaps reads the store's overlap examples, in the order they happened.
func (s *Store) Overlaps(ctx context.Context) ([]Overlap, error) {
	raw, err := s.rdb.LRange(ctx, s.overlaps(), 0, MaxOverlaps-1).Result()
	if err != nil {
		return nil, fmt.Errorf("guard: overlaps of %s: %w", s.key, err)
	}
	out := make([]Overlap, 0, len(raw))
	for _, r := range raw {
		var o Overlap
		if err := json.Unmarshal([]byte(r), &o); err != nil {
			return nil, fmt.Errorf("guard: overlaps of %s: %q: %w", s.key, r, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// Totals are the store's own tallies over every name.
type Totals struct {
	// Value is the sum of the names' counters.
	Value int64
	// Accepted and Rejected are writes applied, and reads and writes
	// refused for a stale token.
	Accepted, Rejected int64
	// Token is the highest fencing token seen.
	Token int64
	// Overlaps are holders that entered a critical section while another
	// they conflict with was inside: mutual exclusion broken, seen by the
	// store with no clock.
	Overlaps int64
	// Emptied says the store began (Begin) and its mark is gone: these
	// tallies are not the run's (see ErrEmptied).
	Emptied bool
}

// Lost is the updates lost: writes applied that the counters do not
// count.
func (t Totals) Lost() int64 { return t.Accepted - t.Value }

// Totals reads the store's tallies.
func (s *Store) Totals(ctx context.Context) (Totals, error) {
	m, err := s.rdb.HGetAll(ctx, s.totals()).Result()
	if err != nil {
		return Totals{}, fmt.Errorf("guard: totals of %s: %w", s.key, err)
	}
	num := func(f string) int64 {
		n, _ := strconv.ParseInt(m[f], 10, 64)
		return n
	}
	_, marked := m[fMark]
	return Totals{Value: num(fValue), Accepted: num(fAccepted), Rejected: num(fRejected), Token: num(fToken), Overlaps: num(fOverlaps),
		Emptied: s.began && !marked}, nil
}
