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

// ErrStale is what Read and Write return when the store refused a fenced
// token lower than the highest it has seen: the holder's lock was taken
// over, and the store kept the newer holder's state.
var ErrStale = errors.New("guard: stale fencing token refused")

// The store's hash fields beside the counter.
const (
	fValue    = "value"    // the counter
	fToken    = "token"    // the highest fencing token seen
	fAccepted = "accepted" // writes applied
	fRejected = "rejected" // reads and writes refused for a stale token
	fOverlaps = "overlaps" // enters that found another holder inside
)

// readScript returns the counter of one name (KEYS[1]); with a token
// (ARGV[1] > 0) it first refuses one lower than the highest seen (unless
// ARGV[2] is 0: the planted bug of NewBroken), else records it as the
// highest. KEYS[2] holds the store's totals. A read not refused enters
// holder ARGV[3] ("" enters nobody) into the name's occupants (KEYS[3]); if
// others are inside, it counts an overlap and, while the examples
// (KEYS[4]) number fewer than ARGV[4], records up to ARGV[5] of them with
// the name ARGV[6]. The occupants are ordered by when they entered, and
// each overlap is also counted against the holder inside longest (KEYS[5]):
// a holder that never leaves (its process died inside) is then the
// oldest for every overlap behind it, which a collector can set apart.
// An enter already applied (a retried script) counts nothing again.
var readScript = redis.NewScript(`
local tok = tonumber(ARGV[1])
if tok > 0 then
  local high = tonumber(redis.call('hget', KEYS[1], 'token') or '0')
  if tok < high and ARGV[2] == '1' then
    redis.call('hincrby', KEYS[2], 'rejected', 1)
    return {0, high}
  end
  redis.call('hset', KEYS[1], 'token', math.max(tok, high))
  redis.call('hset', KEYS[2], 'token', math.max(tok, tonumber(redis.call('hget', KEYS[2], 'token') or '0')))
end
local who = ARGV[3]
if who ~= '' and not redis.call('zscore', KEYS[3], who) then
  redis.call('zadd', KEYS[3], redis.call('hincrby', KEYS[2], 'entries', 1), who)
  if redis.call('zcard', KEYS[3]) > 1 then
    redis.call('hincrby', KEYS[2], 'overlaps', 1)
    local oldest = redis.call('zrange', KEYS[3], 0, ARGV[5] - 1)
    redis.call('hincrby', KEYS[5], oldest[1], 1)
    if redis.call('llen', KEYS[4]) < tonumber(ARGV[4]) then
      local inside = {}
      for _, h in ipairs(oldest) do
        if h ~= who then inside[#inside + 1] = h end
      end
      table.sort(inside)
      redis.call('rpush', KEYS[4], cjson.encode({name = ARGV[6], inside = inside, entered = who}))
    end
  end
end
return {1, tonumber(redis.call('hget', KEYS[1], 'value') or '0')}
`)

// writeScript sets the counter of one name (KEYS[1]) to ARGV[1] + 1 (the
// value read plus one) for writer ARGV[2], token ARGV[3] checked as the
// read's (ARGV[4]), and keeps the totals (KEYS[2]): writes applied and the
// sum of every name's counter. It returns {1, value found, last writer}
// or {0, highest token} when refused. The writer leaves the name's
// occupants (KEYS[3]) either way: its section ends here.
var writeScript = redis.NewScript(`
redis.call('zrem', KEYS[3], ARGV[2])
local tok = tonumber(ARGV[3])
if tok > 0 then
  local high = tonumber(redis.call('hget', KEYS[1], 'token') or '0')
  if tok < high and ARGV[4] == '1' then
    redis.call('hincrby', KEYS[2], 'rejected', 1)
    return {0, high}
  end
  redis.call('hset', KEYS[1], 'token', math.max(tok, high))
  redis.call('hset', KEYS[2], 'token', math.max(tok, tonumber(redis.call('hget', KEYS[2], 'token') or '0')))
end
local cur = tonumber(redis.call('hget', KEYS[1], 'value') or '0')
local last = redis.call('hget', KEYS[1], 'writer') or ''
local new = tonumber(ARGV[1]) + 1
redis.call('hset', KEYS[1], 'value', new, 'writer', ARGV[2])
redis.call('hincrby', KEYS[2], 'value', new - cur)
redis.call('hincrby', KEYS[2], 'accepted', 1)
return {1, cur, last}
`)

// Store is a guarded counter per lock name, with the totals of all.
type Store struct {
	rdb    redis.UniversalClient
	key    string
	mode   Mode
	broken bool // accepts lower tokens
}

// New returns the counters under key on rdb ({key} holds the totals,
// {key}:<name> each lock name's counter, {key}#in:<name> who is inside its
// section, {key}#overlaps the overlap examples), written in mode (Plain or
// Fenced). The braces are a hash tag: every key of one store hashes to one
// slot, so that each script may touch a name's keys and the totals
// together on a Redis Cluster too. The '#' keeps a name's occupants apart
// from every counter, whatever the name. key must not be empty. Use a key no
// other run shares; machines of one run give the same key, and so meet on
// the same counters.
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

// Reset clears the totals and the overlap examples (use a fresh key per
// run: the names' counters and occupants are not listed anywhere to
// clear).
func (s *Store) Reset(ctx context.Context) error {
	return s.rdb.Del(ctx, s.totals(), s.overlaps(), s.overlapsBy()).Err()
}

// totals is the totals' key. Hash-tagged with the key, so that it shares
// a cluster slot with every name's counter: a script's keys must.
func (s *Store) totals() string { return "{" + s.key + "}" }

// keys are a script's KEYS: name's counter, the totals, name's occupants,
// the overlap examples.
func (s *Store) keys(name string) []string {
	return []string{s.totals() + ":" + name, s.totals(), s.occupants(name), s.overlaps(), s.overlapsBy()}
}

// overlapsBy counts the overlaps by the holder inside longest at each.
func (s *Store) overlapsBy() string { return s.totals() + "#overlaps-by" }

// occupants are the holders inside name's critical section, scored by
// the order they entered in.
func (s *Store) occupants(name string) string { return s.totals() + "#in:" + name }

// overlaps is the list of overlap examples, the first MaxOverlaps.
func (s *Store) overlaps() string { return s.totals() + "#overlaps" }

// The bounds of the overlap examples: how many the store keeps (the count
// is always exact), and how many holders already inside each names.
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

// Read returns the counter of lock name at the start of a critical
// section, and enters holder into the section: if another holder is
// inside, the store counts an overlap (Totals.Overlaps) and keeps the
// first MaxOverlaps as examples (Overlaps). Holder ids must be unique per
// owner across every process of the run; "" enters nobody, for callers
// that do not track occupancy. In Fenced mode token is the hold's fencing
// token: ErrStale when the store has seen a higher one for name, and the
// holder did not enter. A holder that entered leaves by Write, or by
// Leave when it will not write; after an error other than ErrStale the
// enter may have been applied, so it must Leave too.
func (s *Store) Read(ctx context.Context, name string, token int64, holder string) (int64, error) {
	v, err := readScript.Run(ctx, s.rdb, s.keys(name), s.token(token), s.check(), holder, MaxOverlaps, MaxInside, name).Int64Slice()
	if err != nil {
		return 0, fmt.Errorf("guard: read %s: %w", s.key, err)
	}
	if len(v) != 2 {
		return 0, fmt.Errorf("guard: read %s: reply %v", s.key, v)
	}
	if v[0] == 0 {
		return 0, fmt.Errorf("%w: token %d, store has seen %d", ErrStale, token, v[1])
	}
	return v[1], nil
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
	v, err := writeScript.Run(ctx, s.rdb, s.keys(name)[:3], read, writer, s.token(token), s.check()).Slice()
	if err != nil {
		return Write{}, fmt.Errorf("guard: write %s: %w", s.key, err)
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
// write: it stopped at a lost hold, or its read or write failed. Leaving
// twice, or without having entered, is harmless.
func (s *Store) Leave(ctx context.Context, name, holder string) error {
	if err := s.rdb.ZRem(ctx, s.occupants(name), holder).Err(); err != nil {
		return fmt.Errorf("guard: leave %s: %w", s.key, err)
	}
	return nil
}

// Inside is who is inside lock name's critical section now, as the store
// sees it: empty once every section that entered has left.
func (s *Store) Inside(ctx context.Context, name string) ([]string, error) {
	in, err := s.rdb.ZRange(ctx, s.occupants(name), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("guard: inside %s: %w", s.key, err)
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

// Overlap is one holder entering a lock's critical section while others
// were inside, as the store saw it.
type Overlap struct {
	Name    string   `json:"name"`    // the lock's name
	Inside  []string `json:"inside"`  // holders inside (at most MaxInside), sorted
	Entered string   `json:"entered"` // the holder that entered
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
	// was inside: mutual exclusion broken, seen by the store with no
	// clock.
	Overlaps int64
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
	return Totals{Value: num(fValue), Accepted: num(fAccepted), Rejected: num(fRejected), Token: num(fToken), Overlaps: num(fOverlaps)}, nil
}
