package workloads

import (
	"context"
	"crypto/rand"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Rendezvous is one worker's part in starting a run spread over several
// machines together. Each worker registers on a Redis every worker can
// reach, all wait until Workers are there, and all start at one instant
// read from Redis's own clock (TIME), the one clock they share: the last
// to arrive sets it, Lead ahead of Redis's time then, and every worker
// converts it into its own clock by measuring its offset from Redis's.
// No worker trusts its own wall clock, and no coordinator runs anywhere.
//
// The keys live under "lockbench:rendezvous:{RunID}:", in one cluster
// slot, and expire (TTL) even when every worker dies.
type Rendezvous struct {
	// RunID names the run; every worker of one run gives the same, and a
	// new run a new one (a Kubernetes Job's name, say).
	RunID string
	// Index is this worker's, 0..Workers-1; Workers how many there are.
	Index, Workers int
	// Timeout bounds the wait for the others. When it passes without all
	// of them, the rendezvous is abandoned for every worker: each fails
	// naming the indexes that never arrived.
	Timeout time.Duration
	// Lead is how far after the last arrival the run starts (default
	// DefaultRendezvousLead): time for every worker to hear the instant
	// and measure its clock against Redis's.
	Lead time.Duration
	// TTL is how long the keys outlive the latest arrival (default
	// Timeout + Lead + one minute).
	TTL time.Duration
	// Used, when set, is a key in the run id's slot ("{RunID}" in its
	// name) that exists once a run of this id has met, and outlives the
	// rendezvous keys (its results, say): a worker that finds it and has
	// not arrived already is refused, as the id is a finished run's.
	Used string
	// Settings are what shapes this worker's load (LoadSettings): the
	// first to arrive records its own, and a worker whose differ is
	// refused, naming them, and ends the rendezvous for every worker.
	Settings []Setting
}

// DefaultRendezvousLead is the default Rendezvous.Lead.
const DefaultRendezvousLead = 500 * time.Millisecond

// MaxRendezvousTimeout bounds Rendezvous.Timeout: the workers of one run
// are started together (a Job's pods, a script's processes), and keys
// that wait longer for them are a mistake left on the user's Redis.
const MaxRendezvousTimeout = 24 * time.Hour

// maxRendezvousLead bounds Rendezvous.Lead: time to hear the start, not
// a schedule.
const maxRendezvousLead = time.Minute

// maxRunIDLen bounds a run id, which goes into key names.
const maxRunIDLen = 128

// Meeting is what a worker knows after a rendezvous: when to start, on its
// own clock and on Redis's, and how well it knows it.
type Meeting struct {
	// Start is the agreed instant on this machine's clock (with a
	// monotonic reading, so waiting for it is immune to wall-clock steps).
	Start time.Time
	// RedisStart is the same instant on Redis's clock, as Redis set it.
	RedisStart time.Time
	// Offset is Redis's clock minus this machine's wall clock, measured
	// over the quickest of a few round trips.
	Offset time.Duration
	// Uncertainty bounds the error of Start: half that round trip, plus
	// TIME's microsecond. Two workers' Starts agree within the sum of
	// their Uncertainties.
	Uncertainty time.Duration
	// Late is how far Start had already passed when this worker learned
	// it (0 when it learned it in time): a worker that arrived after the
	// others started, or a Lead too short for the round trips.
	Late time.Duration
}

// RendezvousError is a rendezvous that did not complete: every waiting
// worker gets the same one.
type RendezvousError struct {
	RunID   string
	Workers int
	// Missing are the indexes that never arrived (sorted); empty when the
	// rendezvous was abandoned for another reason.
	Missing []int
	// By is the index of the worker that abandoned the rendezvous.
	By int
	// Reason says why, e.g. that the timeout passed.
	Reason string
}

func (e *RendezvousError) Error() string {
	s := fmt.Sprintf("rendezvous of run %s: ", e.RunID)
	if len(e.Missing) > 0 {
		idx := make([]string, len(e.Missing))
		for i, m := range e.Missing {
			idx[i] = strconv.Itoa(m)
		}
		s += fmt.Sprintf("%s %s of %d never arrived; ", nounPlural(len(e.Missing), "worker", "workers"), strings.Join(idx, ", "), e.Workers)
	}
	return s + fmt.Sprintf("worker %d gave up: %s", e.By, e.Reason)
}

func nounPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// abandonment is what the start key holds instead of an instant when the
// rendezvous was abandoned.
type abandonment struct {
	By      int    `json:"by"`
	Missing []int  `json:"missing"`
	Reason  string `json:"reason"`
}

// arriveScript registers ARGV[1] (the index) as ARGV[5] (who) in the hash
// KEYS[1], with the worker count ARGV[2] and, from the first to arrive,
// its settings ARGV[8] (as "<index> <settings>"); the last to arrive sets
// the start key KEYS[2] to Redis's TIME plus ARGV[4] ms, in microseconds,
// and publishes on ARGV[6]. Both keys expire ARGV[3] ms after the latest
// arrival. It returns {"ok", arrived} or {"workers", theirs} when the run
// was started with another worker count, {"taken", who} when another
// process already arrived with this index, {"used", ""} when ARGV[7] is 1
// and KEYS[3] (Rendezvous.Used) exists, or {"settings", "<index>
// <settings>"} when the first worker's settings differ.
var arriveScript = redis.NewScript(`
if redis.replicate_commands then redis.replicate_commands() end
local w = redis.call('HGET', KEYS[1], 'workers')
if w and w ~= ARGV[2] then return {'workers', w} end
local prev = redis.call('HGET', KEYS[1], ARGV[1])
if prev and prev ~= ARGV[5] then return {'taken', prev} end
if not prev and ARGV[7] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then return {'used', ''} end
local s = redis.call('HGET', KEYS[1], 'settings')
if s and string.sub(s, string.find(s, ' ', 1, true) + 1) ~= ARGV[8] then return {'settings', s} end
if not s then redis.call('HSET', KEYS[1], 'settings', ARGV[1] .. ' ' .. ARGV[8]) end
redis.call('HSET', KEYS[1], 'workers', ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local n = redis.call('HLEN', KEYS[1]) - 2
if n >= tonumber(ARGV[2]) and redis.call('EXISTS', KEYS[2]) == 0 then
  local t = redis.call('TIME')
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2]) + tonumber(ARGV[4]) * 1000
  redis.call('SET', KEYS[2], string.format('%.0f', us), 'PX', ARGV[3])
  redis.call('PUBLISH', ARGV[6], 'start')
elseif redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return {'ok', tostring(n)}
`)

// timeScript is Redis's TIME on the node that holds KEYS[1], so that a
// cluster's workers all read the clock that set the start.
var timeScript = redis.NewScript(`return redis.call('TIME')`)

// keys are the rendezvous's key names: the arrivals hash, the start key
// and the channel the start is announced on.
func (r Rendezvous) keys() (arrived, start, channel string) {
	base := "lockbench:rendezvous:{" + r.RunID + "}:"
	return base + "arrived", base + "start", base + "started"
}

// check refuses a rendezvous that cannot work, naming the field (as the
// bench run flags will).
func (r Rendezvous) check() error {
	if err := CheckRunID(r.RunID); err != nil {
		return err
	}
	switch {
	case r.Workers < 1:
		return bad("workers", r.Workers, "must be at least 1")
	case r.Index < 0 || r.Index >= r.Workers:
		return bad("worker-index", r.Index, "must be 0..%d for %d workers", r.Workers-1, r.Workers)
	case r.Timeout <= 0:
		return bad("rendezvous-timeout", r.Timeout.String(), "must be positive, e.g. 2m")
	case r.Timeout > MaxRendezvousTimeout:
		return bad("rendezvous-timeout", r.Timeout.String(), "%s; a run's workers start together, and keys waiting longer would outlive any of them", maxRendezvousTimeout())
	case r.Lead < 0 || r.Lead > maxRendezvousLead:
		return bad("rendezvous-lead", r.Lead.String(), "must be 0..%v: time to hear the start", maxRendezvousLead)
	case r.TTL < 0 || r.TTL > MaxRendezvousTimeout+time.Hour:
		return bad("rendezvous-ttl", r.TTL.String(), "must be 0..%v: the keys need not outlive the wait", MaxRendezvousTimeout+time.Hour)
	}
	return nil
}

// maxRendezvousTimeout says the bound on Rendezvous.Timeout, as every
// refusal of a longer one does.
func maxRendezvousTimeout() string {
	return fmt.Sprintf("must be at most %v", MaxRendezvousTimeout)
}

// CheckRunID refuses a run id that cannot name a run's keys and its
// directory: empty, too long, or with anything but letters, digits, '.',
// '_' and '-' (a brace would break the keys' hash tag, a '/' or '..' leave
// the directory).
func CheckRunID(id string) error {
	switch {
	case id == "":
		return bad("run-id", "", "every worker of a run needs the same run id (a Kubernetes Job's name, say)")
	case len(id) > maxRunIDLen:
		return bad("run-id", id[:40]+"…", "is %d bytes long; keep it to %d", len(id), maxRunIDLen)
	case strings.IndexFunc(id, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-')
	}) >= 0 || strings.Contains(id, ".."):
		return bad("run-id", id, "use letters, digits, '.', '_' and '-' only (no '..'): it names keys and a directory under --out")
	}
	return nil
}

// Meet registers this worker and waits, at most Timeout, until every
// worker has: it returns the agreed start, which the caller waits for.
// When the timeout passes, or ctx ends, it abandons the rendezvous for
// every worker and returns a *RendezvousError (ctx's error when ctx ended)
// naming the workers that never arrived.
func (r Rendezvous) Meet(ctx context.Context, rdb redis.UniversalClient) (Meeting, error) {
	if err := r.check(); err != nil {
		return Meeting{}, err
	}
	if r.Lead == 0 {
		r.Lead = DefaultRendezvousLead
	}
	if r.TTL == 0 {
		r.TTL = r.Timeout + r.Lead + time.Minute
	}
	deadline := time.Now().Add(r.Timeout)
	arrivedKey, startKey, channel := r.keys()

	// Listen before arriving, so that the announcement cannot pass
	// unheard between arriving and listening.
	sub := rdb.Subscribe(ctx, channel)
	defer func() { _ = sub.Close() }()
	if _, err := sub.Receive(ctx); err != nil {
		return Meeting{}, fmt.Errorf("rendezvous of run %s: subscribing: %w", r.RunID, err)
	}
	started := sub.Channel()

	used, checkUsed := r.Used, 1
	if used == "" {
		used, checkUsed = arrivedKey, 0
	}
	settings, err := json.Marshal(r.Settings)
	if err != nil {
		return Meeting{}, fmt.Errorf("rendezvous of run %s: %w", r.RunID, err)
	}
	res, err := arriveScript.Run(ctx, rdb, []string{arrivedKey, startKey, used},
		r.Index, r.Workers, r.TTL.Milliseconds(), r.Lead.Milliseconds(), whoAmI(), channel, checkUsed, settings).StringSlice()
	if err != nil {
		return Meeting{}, fmt.Errorf("rendezvous of run %s: arriving: %w", r.RunID, err)
	}
	switch {
	case len(res) == 2 && res[0] == "workers":
		return Meeting{}, bad("workers", r.Workers, "run %s was started with %s workers; every worker must be given the same count", r.RunID, res[1])
	case len(res) == 2 && res[0] == "used":
		return Meeting{}, bad("run-id", r.RunID, "a run with this id already ran (its keys are still in the store); give every worker of this run a new id")
	case len(res) == 2 && res[0] == "taken":
		return Meeting{}, bad("worker-index", r.Index, "another worker of run %s (%s) already arrived with this index; give each its own, or the run a new id", r.RunID, res[1])
	case len(res) == 2 && res[0] == "settings":
		return Meeting{}, r.refuseSettings(ctx, rdb, res[1])
	}

	// Wait on the announcement; the poll is only a backstop for a
	// subscription that dropped.
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		v, err := rdb.Get(ctx, startKey).Result()
		switch {
		case err == nil:
			return r.started(ctx, rdb, startKey, v)
		case !errors.Is(err, redis.Nil) && ctx.Err() == nil:
			return Meeting{}, fmt.Errorf("rendezvous of run %s: reading the start: %w", r.RunID, err)
		}
		select {
		case <-started:
		case <-poll.C:
		case <-timer.C:
			return r.abandon(ctx, rdb, fmt.Sprintf("not all %d workers arrived within %v", r.Workers, r.Timeout), true, nil)
		case <-ctx.Done():
			return r.abandon(ctx, rdb, "interrupted: "+context.Cause(ctx).Error(), true, ctx.Err())
		}
	}
}

// started turns the start key's value v into this worker's Meeting, or
// into the error of an abandoned rendezvous.
func (r Rendezvous) started(ctx context.Context, rdb redis.UniversalClient, startKey, v string) (Meeting, error) {
	redisStart, err := r.parseStart(v)
	if err != nil {
		return Meeting{}, err
	}
	mid, redisAt, rtt, err := redisClock(ctx, rdb, startKey)
	if err != nil {
		return Meeting{}, fmt.Errorf("rendezvous of run %s: reading Redis's clock: %w", r.RunID, err)
	}
	m := Meeting{
		Start:       mid.Add(redisStart.Sub(redisAt)),
		RedisStart:  redisStart,
		Offset:      redisAt.Sub(mid.Round(0)),
		Uncertainty: rtt/2 + time.Microsecond,
	}
	if late := time.Since(m.Start); late > 0 {
		m.Late = late
	}
	return m, nil
}

// parseStart reads the start key's value v: the agreed start on Redis's
// clock, or the *RendezvousError of an abandoned rendezvous.
func (r Rendezvous) parseStart(v string) (time.Time, error) {
	if strings.HasPrefix(v, "{") {
		var a abandonment
		if err := json.Unmarshal([]byte(v), &a); err != nil {
			return time.Time{}, fmt.Errorf("rendezvous of run %s: start key holds %q: %w", r.RunID, v, err)
		}
		return time.Time{}, &RendezvousError{RunID: r.RunID, Workers: r.Workers, Missing: a.Missing, By: a.By, Reason: a.Reason}
	}
	us, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("rendezvous of run %s: start key holds %q, not microseconds", r.RunID, v)
	}
	return time.UnixMicro(us), nil
}

// redisClock reads Redis's clock a few times on the node holding key and
// keeps the quickest round trip: redisAt is Redis's time at the local
// instant mid (the round trip's midpoint, monotonic reading kept).
func redisClock(ctx context.Context, rdb redis.UniversalClient, key string) (mid, redisAt time.Time, rtt time.Duration, err error) {
	rtt = -1
	for range 5 {
		t0 := time.Now()
		v, err := timeScript.Run(ctx, rdb, []string{key}).StringSlice()
		t1 := time.Now()
		if err != nil {
			return mid, redisAt, rtt, err
		}
		if len(v) != 2 {
			return mid, redisAt, rtt, fmt.Errorf("TIME answered %q", v)
		}
		sec, err1 := strconv.ParseInt(v[0], 10, 64)
		usec, err2 := strconv.ParseInt(v[1], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return mid, redisAt, rtt, fmt.Errorf("TIME answered %q: %w", v, err)
		}
		if d := t1.Sub(t0); rtt < 0 || d < rtt {
			rtt, mid, redisAt = d, t0.Add(d/2), time.Unix(sec, usec*1000)
		}
	}
	return mid, redisAt, rtt, nil
}

// refuseSettings refuses this worker, whose settings differ from those
// the first worker recorded (theirs, "<index> <settings>"), and ends the
// rendezvous for the others, who would otherwise wait out the timeout
// for a worker that will not come.
func (r Rendezvous) refuseSettings(ctx context.Context, rdb redis.UniversalClient, theirs string) error {
	by, js, _ := strings.Cut(theirs, " ")
	e := &SettingsError{RunID: r.RunID, Index: r.Index}
	var other []Setting
	e.Other, _ = strconv.Atoi(by)
	if err := json.Unmarshal([]byte(js), &other); err != nil {
		return fmt.Errorf("rendezvous of run %s: worker %s's settings %q: %w", r.RunID, by, js, err)
	}
	e.Diffs = diffSettings(r.Settings, other)
	if _, err := r.abandon(ctx, rdb, e.differences(), false, nil); err != nil {
		var re *RendezvousError
		if !errors.As(err, &re) {
			return errors.Join(e, err)
		}
	}
	return e
}

// abandon ends a rendezvous that did not complete, for every worker: it
// sets the start key to why (naming those that never arrived when
// missing is set), unless the start was set meanwhile, which it then
// returns. ctxErr, when set, is returned instead of the RendezvousError
// (the caller's context ended).
func (r Rendezvous) abandon(ctx context.Context, rdb redis.UniversalClient, reason string, missing bool, ctxErr error) (Meeting, error) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	arrivedKey, startKey, _ := r.keys()
	a := abandonment{By: r.Index, Reason: reason}
	arrived, err := rdb.HKeys(actx, arrivedKey).Result()
	if err != nil {
		return Meeting{}, errors.Join(ctxErr, fmt.Errorf("rendezvous of run %s: %s, and reading who arrived failed: %w", r.RunID, reason, err))
	}
	for i := range r.Workers {
		if missing && !slices.Contains(arrived, strconv.Itoa(i)) {
			a.Missing = append(a.Missing, i)
		}
	}
	b, _ := json.Marshal(a)
	set, err := rdb.SetNX(actx, startKey, b, r.TTL).Result()
	if err != nil {
		return Meeting{}, errors.Join(ctxErr, fmt.Errorf("rendezvous of run %s: %s, and abandoning it failed: %w", r.RunID, reason, err))
	}
	if !set && ctxErr == nil {
		// Someone set it first: the start, or another's abandonment.
		v, err := rdb.Get(actx, startKey).Result()
		if err == nil {
			return r.started(actx, rdb, startKey, v)
		}
	}
	if ctxErr != nil {
		return Meeting{}, ctxErr
	}
	return Meeting{}, &RendezvousError{RunID: r.RunID, Workers: r.Workers, Missing: a.Missing, By: a.By, Reason: a.Reason}
}

// whoAmI names this process for the arrivals hash: host, pid and a random
// part, so that a second process claiming the same index is told apart.
func whoAmI() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Setting is one thing that shapes a run's load: its name as a profile
// file (or, for what a profile does not hold, a flag) names it, and its
// value as the profile syntax writes it.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// notLoad are the profile's fields that do not shape its load, and why:
// LoadSettings leaves them out, and every other field is in.
var notLoad = map[string]string{
	"description": "words for people, which the load never reads",
}

// LoadSettings are what in p shapes a run's load: every field but those
// notLoad names, by its file name. The workers of a spread run compare
// them (Rendezvous.Settings) before any load, so a field added to
// Profile is compared without anyone listing it.
func (p Profile) LoadSettings() []Setting {
	v := reflect.ValueOf(p)
	var out []Setting
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if _, skip := notLoad[name]; !skip {
			out = append(out, Setting{Name: name, Value: settingValue(v.Field(i))})
		}
	}
	return out
}

// settingValue writes a profile field's value as a profile does: the
// syntax its type writes (String or MarshalText), else the value.
func settingValue(f reflect.Value) string {
	switch x := f.Interface().(type) {
	case fmt.Stringer:
		return x.String()
	case encoding.TextMarshaler:
		if b, err := x.MarshalText(); err == nil {
			return string(b)
		}
	}
	switch f.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Pointer:
		b, _ := json.Marshal(f.Interface())
		return string(b)
	}
	return fmt.Sprint(f.Interface())
}

// SettingDiff is a setting on which two workers disagree.
type SettingDiff struct {
	Name string
	// Mine is this worker's value, Theirs the first worker's; "" when
	// the worker has no such setting (another version of lockbench).
	Mine, Theirs string
}

// diffSettings are the settings on which mine and theirs disagree, in
// mine's order, then those only theirs has.
func diffSettings(mine, theirs []Setting) []SettingDiff {
	other := map[string]string{}
	for _, s := range theirs {
		other[s.Name] = s.Value
	}
	var out []SettingDiff
	seen := map[string]bool{}
	for _, s := range mine {
		seen[s.Name] = true
		if v, ok := other[s.Name]; !ok || v != s.Value {
			out = append(out, SettingDiff{Name: s.Name, Mine: s.Value, Theirs: v})
		}
	}
	for _, s := range theirs {
		if !seen[s.Name] {
			out = append(out, SettingDiff{Name: s.Name, Theirs: s.Value})
		}
	}
	return out
}

// SettingsError refuses a worker of a spread run whose load would differ
// from the first worker's: their results could not be merged as one
// run's. It is bad input (exit 2).
type SettingsError struct {
	RunID string
	// Index is the refused worker's, Other the first worker's.
	Index, Other int
	Diffs        []SettingDiff
}

func (e *SettingsError) Error() string {
	return fmt.Sprintf("worker %d: %s; every worker of run %s must run the same load: give each the same profile, flags and --impl",
		e.Index, e.differences(), e.RunID)
}

// IsUsage marks the error as the user's input to fix.
func (e *SettingsError) IsUsage() bool { return true }

// differences says each differing setting: "duration 8s differs from
// worker 0's 3s, warmup 3s from 1s".
func (e *SettingsError) differences() string {
	parts := make([]string, len(e.Diffs))
	for i, d := range e.Diffs {
		if i == 0 {
			parts[i] = fmt.Sprintf("%s %s differs from worker %d's %s", d.Name, orUnset(d.Mine), e.Other, orUnset(d.Theirs))
		} else {
			parts[i] = fmt.Sprintf("%s %s from %s", d.Name, orUnset(d.Mine), orUnset(d.Theirs))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("its settings differ from worker %d's", e.Other)
	}
	return strings.Join(parts, ", ")
}

func orUnset(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

// RendezvousState is what a store holds of a run's rendezvous while its
// keys last (Rendezvous.TTL after the latest arrival).
type RendezvousState struct {
	// Workers is the run's worker count: 0 when the store holds no
	// rendezvous of the run.
	Workers int
	// Arrived are the indexes that arrived, sorted.
	Arrived []int
	// Start is the agreed start on Redis's clock, once every worker came.
	Start time.Time
	// Abandoned is why the rendezvous ended without a start.
	Abandoned *RendezvousError
}

// ReadRendezvous reads the state of run id's rendezvous in rdb, for a
// collector telling why a run has no results.
func ReadRendezvous(ctx context.Context, rdb redis.UniversalClient, runID string) (RendezvousState, error) {
	r := Rendezvous{RunID: runID}
	arrivedKey, startKey, _ := r.keys()
	fields, err := rdb.HGetAll(ctx, arrivedKey).Result()
	if err != nil {
		return RendezvousState{}, fmt.Errorf("rendezvous of run %s: %w", runID, err)
	}
	var st RendezvousState
	st.Workers, _ = strconv.Atoi(fields["workers"])
	for f := range fields {
		if i, err := strconv.Atoi(f); err == nil {
			st.Arrived = append(st.Arrived, i)
		}
	}
	slices.Sort(st.Arrived)
	v, err := rdb.Get(ctx, startKey).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return st, nil
	case err != nil:
		return st, fmt.Errorf("rendezvous of run %s: %w", runID, err)
	}
	r.Workers = st.Workers
	st.Start, err = r.parseStart(v)
	if errors.As(err, &st.Abandoned) {
		err = nil
	}
	return st, err
}
