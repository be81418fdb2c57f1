package workloads

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/results"
)

// Popularity is how owners pick lock names.
type Popularity string

// The popularity models.
const (
	PopUniform  Popularity = "uniform"   // every name equally likely
	PopZipf     Popularity = "zipf"      // name i with weight 1/(1+i)^zipf_s: a few hot names
	PopPerOwner Popularity = "per-owner" // each owner its own name: no contention at all
)

// Profile is a workload: which lock, how owners use it, for how long and
// at what pace. Built-in profiles live in builtin/*.yaml; a file can hold
// any subset of the fields, the rest keep Default's values.
type Profile struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	Kind        Kind   `yaml:"kind" json:"kind"`
	// ReadRatio is the share of operations taking the read lock (kind rw).
	ReadRatio float64 `yaml:"read_ratio" json:"read_ratio"`
	// Depth is how many acquisitions of the same lock one operation nests,
	// the outermost included (1: no reentrancy).
	Depth IntDist `yaml:"depth" json:"depth"`
	// ReadInWrite is the share of nested acquisitions inside a write hold
	// that take the read lock, which Redisson allows (a read hold cannot
	// nest a write: upgrades are refused).
	ReadInWrite float64 `yaml:"read_in_write" json:"read_in_write"`
	// Clients are separate lockimpl clients, each with its own connection
	// pool: separate processes or JVMs in production.
	Clients int `yaml:"clients" json:"clients"`
	// Owners per client: each is a goroutine with its own owner identity
	// (a thread in Redisson's terms).
	Owners     int        `yaml:"owners" json:"owners"`
	Locks      int        `yaml:"locks" json:"locks"`
	Popularity Popularity `yaml:"popularity" json:"popularity"`
	// ZipfS is the zipf exponent (> 1; larger is more skewed).
	ZipfS float64      `yaml:"zipf_s" json:"zipf_s"`
	Hold  DurationDist `yaml:"hold" json:"hold"`
	// Think is the pause between an owner's operations (closed loop only).
	Think DurationDist `yaml:"think" json:"think"`
	Lease Lease        `yaml:"lease" json:"lease"`
	// Wait bounds each acquisition (tryLock's waitTime); 0 waits until the
	// run ends.
	Wait Duration `yaml:"wait" json:"wait"`
	// Duration is the measured time, after Warmup. With Ops set too, the
	// run ends at whichever comes first.
	Duration Duration `yaml:"duration" json:"duration"`
	// Ops ends the run after this many measured operations (0: no bound).
	Ops    int64    `yaml:"ops" json:"ops"`
	Warmup Duration `yaml:"warmup" json:"warmup"`
	// Rate is the open-loop target in operations per second across all
	// owners; 0 is closed loop (each owner: operate, think, repeat).
	Rate float64 `yaml:"rate" json:"rate"`
	// Seed makes the random choices (names, modes, depths, times)
	// repeatable.
	Seed uint64 `yaml:"seed" json:"seed"`
	// Multi is how many names each operation of kind multi takes at once.
	Multi int `yaml:"multi" json:"multi,omitempty"`
	// ReplicaSync follows Redisson's checkLockSyncedSlaves (on by
	// default): on a primary with replicas, every acquisition waits for a
	// replica to acknowledge it (WAIT). false sends nothing.
	ReplicaSync bool `yaml:"replica_sync" json:"replica_sync"`
	// AutoPipeline batches the lock commands of each client's owners when
	// a crowd of them send again at once (lockimpl.Options.AutoPipeline).
	// lockimpl only.
	AutoPipeline bool `yaml:"auto_pipeline" json:"auto_pipeline,omitempty"`
	// Topology is the Redis topology the profile is meant for (single,
	// replica, sentinel or cluster), started when --topology is not given;
	// empty means single.
	Topology string `yaml:"topology" json:"topology,omitempty"`
	// Guard makes each critical section update a counter in a separate
	// store (package guard): read, hold, write; a reader's section only
	// enters and leaves, so the store witnesses readers beside writers.
	// off (the default), plain, or fenced (kind fenced: the store refuses
	// stale tokens).
	Guard string `yaml:"guard" json:"guard,omitempty"`
}

// Default is the base every profile starts from.
func Default() Profile {
	return Profile{
		Kind:        KindOf(kind.Reentrant),
		ReplicaSync: true,
		Depth:       FixedInt(1),
		ReadInWrite: 0.5,
		Clients:     4,
		Owners:      4,
		Locks:       16,
		Popularity:  PopUniform,
		ZipfS:       1.1,
		Hold:        DurationDist{Kind: Exp, A: 200 * time.Microsecond},
		Think:       DurationDist{Kind: Exp, A: time.Millisecond},
		Wait:        Duration(10 * time.Second),
		Duration:    Duration(30 * time.Second),
		Warmup:      Duration(5 * time.Second),
		Seed:        1,
	}
}

// MultiNames is how many names an operation of kind multi takes.
func (p Profile) MultiNames() int {
	if p.Multi == 0 {
		return 2
	}
	return p.Multi
}

// TotalOwners is Clients × Owners.
func (p Profile) TotalOwners() int { return p.Clients * p.Owners }

// LockCount is how many names the run uses.
func (p Profile) LockCount() int {
	if p.Popularity == PopPerOwner {
		return p.TotalOwners()
	}
	return p.Locks
}

// Summary is a one-line description of the workload for reports. It is
// the result's meta.workload, which merge compares between runs, so its
// numbers are written plainly (no thousands separators).
func (p Profile) Summary() string {
	var b strings.Builder
	b.WriteString(string(p.Kind))
	if p.Kind == RW {
		fmt.Fprintf(&b, " %g%% reads", p.ReadRatio*100)
	}
	if p.Kind == Multi {
		fmt.Fprintf(&b, " of %d %s", p.MultiNames(), results.Noun(p.MultiNames(), "name"))
	}
	if !p.ReplicaSync {
		b.WriteString(" · replica sync off")
	}
	if p.AutoPipeline {
		b.WriteString(" · auto-pipelined")
	}
	if p.Depth.Max() > 1 {
		fmt.Fprintf(&b, " · depth %s", p.Depth)
	}
	fmt.Fprintf(&b, " · %d %s × %d %s", p.Clients, results.Noun(p.Clients, "client"), p.Owners, results.Noun(p.Owners, "owner"))
	switch p.Popularity {
	case PopPerOwner:
		b.WriteString(" · one lock per owner")
	case PopZipf:
		fmt.Fprintf(&b, " · %d %s zipf(%g)", p.Locks, results.Noun(p.Locks, "lock"), p.ZipfS)
	default:
		fmt.Fprintf(&b, " · %d %s", p.Locks, results.Noun(p.Locks, "lock"))
	}
	fmt.Fprintf(&b, " · hold %s", p.Hold)
	if p.Rate > 0 {
		fmt.Fprintf(&b, " · open loop %g ops/s", p.Rate)
	} else {
		fmt.Fprintf(&b, " · think %s · closed loop", p.Think)
	}
	fmt.Fprintf(&b, " · lease %s", p.Lease)
	return b.String()
}

// The bounds of a run's size and length. Each is what a run can hold:
// Validate refuses a profile past one, naming the field and the reason.
const (
	// MaxOwners bounds clients × owners: each owner is a goroutine with
	// its own identity and records.
	MaxOwners = 100_000
	// MaxLocks bounds locks: the run keeps every lock's name in memory
	// (about 60 bytes each, and zipf draws over all of them), and past a
	// million names, among at most MaxOwners owners, owners almost never
	// meet on one, which per-owner popularity says outright.
	MaxLocks = 1_000_000
	// MaxRunTime bounds warmup and duration together: the run's interval
	// log grows by about 16 KB a second and merge and report read at most
	// infile.HistLog (2 GiB) of one, about a day and a half.
	MaxRunTime = 24 * time.Hour
	// MaxRate bounds the open-loop rate: every operation is at least one
	// Redis round trip, and a Redis serves some hundred thousand commands
	// a second, so a schedule past ten million a second measures nothing
	// but its own backlog.
	MaxRate = 10_000_000
)

// runTimeFix is why duration and warmup are bounded, for both the
// parser (a value past any duration) and Validate.
var runTimeFix = fmt.Sprintf("warmup and duration together must be at most %v: the run's interval log grows about 16 KB a second and merge and report read at most 2 GiB of it; split a longer run into several", fmtHours(MaxRunTime))

// fmtHours writes d as "24h" rather than time.Duration's "24h0m0s".
func fmtHours(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// FieldError is bad profile input: which field, the value, and the fix.
// CLIs exit 2 on it (IsUsage).
type FieldError struct {
	Field string
	Value string
	Fix   string
}

func (e *FieldError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Fix)
	}
	return fmt.Sprintf("%s %s: %s", e.Field, e.Value, e.Fix)
}

// IsUsage marks the error as the user's input to fix.
func (e *FieldError) IsUsage() bool { return true }

func bad(field string, value any, fix string, args ...any) error {
	v := fmt.Sprint(value)
	if s, ok := value.(string); ok {
		v = fmt.Sprintf("%q", s)
	}
	return &FieldError{Field: field, Value: v, Fix: fmt.Sprintf(fix, args...)}
}

// maxNameLen bounds a profile's name: it starts every result file's
// name, which the file system limits (255 bytes) with the time and
// extension still to come.
const maxNameLen = 100

// checkName says why name cannot start a file name ("" if it can).
func checkName(name string) string {
	switch {
	case len(name) > maxNameLen:
		return fmt.Sprintf("is %d bytes long; result files are named after it, so keep it to %d", len(name), maxNameLen)
	case name == "." || name == "..":
		return "is not a file name"
	case strings.ContainsAny(name, "/\\"):
		return "contains a path separator; result files are named after it"
	case strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return "contains a control character"
	}
	return ""
}

// Validate reports the first bad field.
func (p Profile) Validate() error {
	if msg := checkName(p.Name); msg != "" {
		shown := p.Name
		if len(shown) > 40 {
			shown = shown[:40] + "…"
		}
		return bad("name", shown, "%s; use letters, digits, '-', '_' and '.', at most %d characters", msg, maxNameLen)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"read_ratio", p.ReadRatio}, {"read_in_write", p.ReadInWrite}, {"zipf_s", p.ZipfS}, {"rate", p.Rate}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return bad(f.name, f.v, "must be a finite number")
		}
	}
	lock, ok := p.Kind.Lock(results.Exclusive)
	if !ok {
		return bad("kind", string(p.Kind), "unknown lock kind; use %s", kind.List(Kinds()))
	}
	if p.Multi != 0 && p.Kind != Multi {
		return bad("multi", p.Multi, "applies to kind multi only; remove it or set kind: multi")
	}
	if p.Kind == Multi && (p.Multi < 0 || p.Multi == 1 || p.Multi > 16) {
		return bad("multi", p.Multi, "names per multi-lock operation must be 2..16 (0: 2)")
	}
	if p.Kind == Multi && p.Popularity == PopPerOwner {
		return bad("popularity", string(p.Popularity), "kind multi takes several names per operation; use uniform or zipf")
	}
	if p.Kind == Multi && p.MultiNames() > p.Locks {
		return bad("multi", p.MultiNames(), "takes more names than the profile has (locks: %d); raise locks or lower multi", p.Locks)
	}
	switch gm, err := guard.ParseMode(p.Guard); {
	case err != nil:
		return bad("guard", p.Guard, "use off, plain or fenced")
	case gm == guard.Fenced && !lock.Fenced():
		return bad("guard", p.Guard, "fenced writes carry the lock's fencing token, which only kind fenced has; set kind: fenced, or guard: plain")
	}
	switch p.Topology {
	case "", "single", "replica", "sentinel", "cluster":
	default:
		return bad("topology", p.Topology, "use single, replica, sentinel or cluster (or leave it out)")
	}
	if p.ReadRatio < 0 || p.ReadRatio > 1 {
		return bad("read_ratio", p.ReadRatio, "must be between 0 and 1 (0.9 = 90%% reads)")
	}
	if p.ReadRatio != 0 && p.Kind != RW {
		return bad("read_ratio", p.ReadRatio, "applies to kind rw only; remove it or set kind: rw")
	}
	if msg := p.Depth.check(1, 32); msg != "" {
		return bad("depth", p.Depth.String(), "%s; use e.g. 1, 5 or {1: 0.7, 2: 0.3} (values 1..32, weights adding up to 1)", msg)
	}
	if p.Depth.Max() > 1 && (!lock.Reentrant() || p.Kind == Multi) {
		return bad("depth", p.Depth.String(), "a %s lock does not nest; set depth: 1", p.Kind)
	}
	if p.ReadInWrite < 0 || p.ReadInWrite > 1 {
		return bad("read_in_write", p.ReadInWrite, "must be between 0 and 1")
	}
	if p.Clients < 1 {
		return bad("clients", p.Clients, "must be at least 1")
	}
	if p.Owners < 1 {
		return bad("owners", p.Owners, "must be at least 1 owner per client")
	}
	if p.Clients > MaxOwners || p.Owners > MaxOwners || p.TotalOwners() > MaxOwners {
		return bad("owners", p.TotalOwners(), "clients × owners must be at most %d", MaxOwners)
	}
	switch p.Popularity {
	case PopUniform, PopZipf, PopPerOwner:
	default:
		return bad("popularity", string(p.Popularity), "use uniform, zipf or per-owner")
	}
	if p.Popularity != PopPerOwner && p.Locks < 1 {
		return bad("locks", p.Locks, "must be at least 1 (or popularity: per-owner)")
	}
	if p.Popularity != PopPerOwner && p.Locks > MaxLocks {
		return bad("locks", p.Locks, "must be at most %d: the run keeps every lock's name in memory, and among at most %d owners more names are almost never contended; for no contention at all use popularity per-owner", MaxLocks, MaxOwners)
	}
	if p.Popularity == PopZipf && !(p.ZipfS > 1) {
		return bad("zipf_s", p.ZipfS, "must be greater than 1 (1.1 is mild skew, 2 is strong)")
	}
	if msg := p.Hold.check(); msg != "" {
		return bad("hold", p.Hold.String(), "%s", msg)
	}
	if msg := p.Think.check(); msg != "" {
		return bad("think", p.Think.String(), "%s", msg)
	}
	if p.Lease.Fixed < 0 {
		return bad("lease", p.Lease.String(), "must be watchdog or a positive duration")
	}
	if p.Lease.Fixed > 0 && p.Lease.Fixed < MinLease {
		return bad("lease", p.Lease.String(), "a fixed lease must be at least %v (or watchdog): Redis leases are whole milliseconds", MinLease)
	}
	if p.Wait < 0 {
		return bad("wait", time.Duration(p.Wait).String(), "must not be negative (0 waits until the run ends)")
	}
	if p.Duration < 0 {
		return bad("duration", time.Duration(p.Duration).String(), "must not be negative, e.g. 30s")
	}
	if p.Ops < 0 {
		return bad("ops", p.Ops, "must not be negative")
	}
	if p.Duration == 0 && p.Ops == 0 {
		return bad("duration", "0", "a run needs an end: set duration (e.g. 30s) or ops")
	}
	if p.Warmup < 0 {
		return bad("warmup", time.Duration(p.Warmup).String(), "must not be negative (0: no warmup)")
	}
	if p.Duration > Duration(MaxRunTime) {
		return bad("duration", time.Duration(p.Duration).String(), "%s", runTimeFix)
	}
	if p.Warmup > Duration(MaxRunTime)-p.Duration {
		return bad("warmup", time.Duration(p.Warmup).String(), "%s (duration is %v)", runTimeFix, time.Duration(p.Duration))
	}
	if p.Rate < 0 {
		return bad("rate", p.Rate, "must not be negative (0: closed loop)")
	}
	if p.Rate > MaxRate {
		return bad("rate", p.Rate, "must be at most %d ops/s: every operation is at least one Redis round trip, so a faster schedule only builds a backlog", MaxRate)
	}
	// The least rate schedules an operation within the run: less measures
	// nothing. It also keeps an owner's slot interval (clients × owners /
	// rate) within what a time.Duration holds.
	if p.Rate > 0 && p.Duration > 0 && p.Rate*time.Duration(p.Duration).Seconds() < 1 {
		return bad("rate", p.Rate, "schedules less than one operation in the run's duration (%v); the least rate is 1/duration, %.3g ops/s", time.Duration(p.Duration), 1/time.Duration(p.Duration).Seconds())
	}
	if p.Rate > 0 && p.Duration == 0 && float64(p.Ops)/p.Rate > MaxRunTime.Seconds() {
		return bad("rate", p.Rate, "schedules ops %d over more than %s; raise rate, lower ops, or set duration", p.Ops, fmtHours(MaxRunTime))
	}
	if p.Rate > 0 && p.Think.Mean() > 0 {
		return bad("think", p.Think.String(), "an open-loop run (rate > 0) paces by its schedule; set think: 0 or rate: 0")
	}
	return nil
}

// Ignored says why field (named as in profile files) has no effect in p,
// "" when it has one. Profile files carry every field as a template, so
// this judges fields a user set on their own, such as a flag overriding
// one: Validate refuses the contradictions any file could hold.
func (p Profile) Ignored(field string) string {
	switch {
	case field == "zipf_s" && p.Popularity != PopZipf:
		return fmt.Sprintf("zipf_s shapes popularity zipf only, and this run's popularity is %s; add --popularity zipf", p.Popularity)
	case field == "locks" && p.Popularity == PopPerOwner:
		return "popularity per-owner gives each owner a lock of its own, whatever locks says; use --popularity uniform or zipf"
	}
	return ""
}
