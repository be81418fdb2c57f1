package workloads

import (
	"bytes"
	"embed"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lockbench/lockbench/guard"
	"github.com/lockbench/lockbench/internal/infile"
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
	// AutoPipeline sends the lock commands of each client through
	// go-redis's autopipeliner (lockimpl.Options.AutoPipeline): concurrent
	// owners' commands share batches. lockimpl only.
	AutoPipeline bool `yaml:"auto_pipeline" json:"auto_pipeline,omitempty"`
	// Topology is the Redis topology the profile is meant for (single,
	// replica or cluster), started when --topology is not given; empty
	// means single.
	Topology string `yaml:"topology" json:"topology,omitempty"`
	// Guard makes each critical section update a counter in a separate
	// store (package guard): read, hold, write. off (the default), plain,
	// or fenced (kind fenced: the store refuses stale tokens).
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
	case gm != guard.Off && p.Kind == RW:
		return bad("guard", p.Guard, "readers write nothing: guard a kind with exclusive holds (%s)", exclusiveKinds())
	case gm == guard.Fenced && !lock.Fenced():
		return bad("guard", p.Guard, "fenced writes carry the lock's fencing token, which only kind fenced has; set kind: fenced, or guard: plain")
	}
	switch p.Topology {
	case "", "single", "replica", "cluster":
	default:
		return bad("topology", p.Topology, "use single, replica or cluster (or leave it out)")
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
	if p.Clients > 100_000 || p.Owners > 100_000 || p.TotalOwners() > 100_000 {
		return bad("owners", p.TotalOwners(), "clients × owners must be at most 100000")
	}
	switch p.Popularity {
	case PopUniform, PopZipf, PopPerOwner:
	default:
		return bad("popularity", string(p.Popularity), "use uniform, zipf or per-owner")
	}
	if p.Popularity != PopPerOwner && p.Locks < 1 {
		return bad("locks", p.Locks, "must be at least 1 (or popularity: per-owner)")
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
	if p.Rate < 0 {
		return bad("rate", p.Rate, "must not be negative (0: closed loop)")
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

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtins lists the built-in profiles, by name.
func Builtins() []Profile {
	entries, _ := builtinFS.ReadDir("builtin")
	var ps []Profile
	for _, e := range entries {
		p, err := decode(builtinPath(strings.TrimSuffix(e.Name(), ".yaml")))
		if err != nil {
			panic(fmt.Sprintf("workloads: built-in %s: %v", e.Name(), err))
		}
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b Profile) int { return strings.Compare(a.Name, b.Name) })
	return ps
}

func builtinPath(name string) string { return path.Join("builtin", name+".yaml") }

// BuiltinNames lists the names of the built-in profiles.
func BuiltinNames() []string {
	var names []string
	for _, p := range Builtins() {
		names = append(names, p.Name)
	}
	return names
}

// BuiltinYAML is the file behind a built-in profile, to copy and edit.
func BuiltinYAML(name string) ([]byte, error) {
	b, err := builtinFS.ReadFile(builtinPath(name))
	if err != nil {
		return nil, unknownProfile(name)
	}
	return b, nil
}

func unknownProfile(name string) error {
	return bad("profile", name, "no such built-in profile; known: %s (or --profile-file FILE)", strings.Join(BuiltinNames(), ", "))
}

// Builtin returns the built-in profile name.
func Builtin(name string) (Profile, error) {
	if _, err := BuiltinYAML(name); err != nil || strings.ContainsAny(name, "/\\") {
		return Profile{}, unknownProfile(name)
	}
	return decode(builtinPath(name))
}

func decode(p string) (Profile, error) {
	b, err := builtinFS.ReadFile(p)
	if err != nil {
		return Profile{}, err
	}
	return Parse(b, ".yaml")
}

// LoadFile reads a YAML (.yaml, .yml) or JSON (.json) profile. Fields it
// leaves out keep Default's values; an unknown field is an error. The name
// defaults to the file's base name.
func LoadFile(file string) (Profile, error) {
	b, err := infile.Read(file, infile.Profile)
	if err != nil {
		fix := "cannot read it: " + infile.Reason(err)
		switch {
		case errors.Is(err, infile.ErrNotRegular):
			fix = infile.Reason(err) + "; give a YAML or JSON file"
		case errors.Is(err, infile.ErrTooLarge):
			fix = infile.Reason(err)
		}
		return Profile{}, &FieldError{Field: "profile-file", Value: fmt.Sprintf("%q", file), Fix: fix}
	}
	p, err := Parse(b, filepath.Ext(file))
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return Profile{}, err
		}
		return Profile{}, &FieldError{Field: "profile-file", Value: fmt.Sprintf("%q", file), Fix: err.Error()}
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	return p, nil
}

// Parse decodes a profile over Default; ext ".json" selects JSON, anything
// else YAML. Each field is decoded on its own so every error names its
// field; unknown fields are refused, so a typo never silently becomes a
// default.
func Parse(b []byte, ext string) (Profile, error) {
	p := Default()
	fields := profileFields(&p)
	if strings.EqualFold(ext, ".json") {
		if len(bytes.TrimSpace(b)) == 0 {
			return Profile{}, errEmptyProfile
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return Profile{}, fmt.Errorf("not a valid JSON profile: %v", strings.TrimPrefix(err.Error(), "json: "))
		}
		if err := jsonDuplicates(b); err != nil {
			return Profile{}, err
		}
		if len(m) == 0 {
			return Profile{}, errEmptyProfile
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			f, ok := fields[k]
			if !ok {
				return Profile{}, unknownField(k, "")
			}
			if err := json.Unmarshal(m[k], f.Addr().Interface()); err != nil {
				return Profile{}, fieldDecodeError(k, strings.TrimSpace(string(m[k])), f, err)
			}
		}
		return p, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Profile{}, errEmptyProfile
		}
		return Profile{}, fmt.Errorf("not a valid YAML profile: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	docs := 1
	for {
		var more yaml.Node
		if err := dec.Decode(&more); err != nil {
			break
		}
		docs++
	}
	if docs > 1 {
		return Profile{}, fmt.Errorf("holds %d YAML documents (separated by ---); a profile is one", docs)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null" {
		return Profile{}, errEmptyProfile
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return Profile{}, fmt.Errorf("not a YAML profile: line %d: want field: value lines", m.Line)
	}
	if len(m.Content) == 0 {
		return Profile{}, errEmptyProfile
	}
	if err := yamlDuplicates(m); err != nil {
		return Profile{}, err
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		f, ok := fields[k]
		if !ok {
			return Profile{}, unknownField(k, fmt.Sprintf("line %d", m.Content[i].Line))
		}
		if v.Kind == yaml.ScalarNode {
			if err := checkScalar(k, v.Value, f); err != nil {
				return Profile{}, err
			}
		}
		if err := v.Decode(f.Addr().Interface()); err != nil {
			return Profile{}, fieldDecodeError(k, v.Value, f, err)
		}
	}
	return p, nil
}

// errEmptyProfile refuses a file with no field: an empty file (or a
// truncated one) would otherwise run every default, which is not what
// anyone wrote.
var errEmptyProfile = errors.New("the file has no fields; write at least one, e.g. kind: reentrant, or use --profile NAME")

// yamlDuplicates refuses a key given twice in a mapping (depth's too):
// the last would silently win.
func yamlDuplicates(m *yaml.Node) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if line, ok := seen[k.Value]; ok {
			return &FieldError{Field: k.Value, Fix: fmt.Sprintf("appears twice (lines %d and %d); keep one", line, k.Line)}
		}
		seen[k.Value] = k.Line
		if v := m.Content[i+1]; v.Kind == yaml.MappingNode {
			if err := yamlDuplicates(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonDuplicates refuses a key given twice in an object, at any depth:
// encoding/json keeps the last without a word.
func jsonDuplicates(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers are judged by their fields, not here
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if seen[k] {
					return &FieldError{Field: k, Fix: "appears twice; keep one"}
				}
				seen[k] = true
				if err := walk(); err != nil {
					return err
				}
			}
		case '[':
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	return walk()
}

// profileFields maps each field's file name to the field of p.
func profileFields(p *Profile) map[string]reflect.Value {
	m := map[string]reflect.Value{}
	v := reflect.ValueOf(p).Elem()
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		m[name] = v.Field(i)
	}
	return m
}

func unknownField(k, where string) error {
	fix := "unknown field; bench profiles show rw90 lists the fields"
	if where != "" {
		fix = "unknown field (" + where + "); bench profiles show rw90 lists the fields"
	}
	return &FieldError{Field: k, Fix: fix}
}

// fieldDecodeError keeps a custom type's own message and turns the
// decoders' type-mismatch messages into what the field wants.
func fieldDecodeError(k, val string, f reflect.Value, err error) error {
	msg := err.Error()
	if _, custom := f.Addr().Interface().(encoding.TextUnmarshaler); custom {
		// Its own message says what it wants, unless the decoder refused
		// the value's type before asking it (a number for a duration).
		if strings.Contains(msg, "cannot unmarshal") {
			msg = "want text such as " + map[bool]string{true: `"30s"`, false: `"exp(1ms)"`}[f.Type() == reflect.TypeFor[Duration]()]
		}
		return &FieldError{Field: k, Value: fmt.Sprintf("%q", orEmpty(val)), Fix: strings.TrimPrefix(msg, "yaml: ")}
	}
	switch f.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint64:
		msg = "want a whole number"
	case reflect.Float64:
		msg = "want a number"
	case reflect.String:
		msg = "want text"
	case reflect.Bool:
		msg = "want true or false"
	default:
		if strings.Contains(msg, "cannot unmarshal") {
			msg = "wrong type"
		}
	}
	return &FieldError{Field: k, Value: fmt.Sprintf("%q", orEmpty(val)), Fix: strings.TrimPrefix(msg, "yaml: ")}
}

func orEmpty(v string) string {
	if v == "" {
		return "(empty or not a single value)"
	}
	return v
}

// ParseBool reads a yes/no value the one way lockbench reads every one,
// in profile fields (YAML, JSON, flag overrides) and in flags alike: true
// or false, as JSON writes them. YAML's yes/no/on/off and Go's 1/0/t/f
// were each taken by some readers and refused by others.
func ParseBool(s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("want true or false")
}

// checkScalar refuses a fraction for a whole-number field (YAML would
// silently truncate 2.9 to 2), and for a yes/no field anything ParseBool
// does not take (YAML would take yes, on or y).
func checkScalar(k, val string, f reflect.Value) error {
	if f.Kind() == reflect.Bool {
		if _, err := ParseBool(strings.TrimSpace(val)); err != nil {
			return &FieldError{Field: k, Value: fmt.Sprintf("%q", orEmpty(val)), Fix: err.Error()}
		}
		return nil
	}
	switch f.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint64:
		if _, custom := f.Addr().Interface().(encoding.TextUnmarshaler); custom {
			return nil
		}
		if _, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64); err != nil {
			return &FieldError{Field: k, Value: fmt.Sprintf("%q", orEmpty(val)), Fix: "want a whole number"}
		}
	}
	return nil
}

// YAML writes p in the profile file format.
func (p Profile) YAML() []byte {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		panic(err) // every field type marshals
	}
	return b.Bytes()
}

// Set decodes value into the field named as in profile files ("read_ratio",
// "hold"), as a CLI flag overriding a profile does.
func (p *Profile) Set(field, value string) error {
	f, ok := profileFields(p)[field]
	if !ok {
		return unknownField(field, "")
	}
	if err := checkScalar(field, value, f); err != nil {
		return err
	}
	n := yaml.Node{Kind: yaml.ScalarNode, Value: value}
	if err := n.Decode(f.Addr().Interface()); err != nil {
		return fieldDecodeError(field, value, f, err)
	}
	return nil
}

// Fields lists the profile's field names in file order.
func Fields() []string {
	var names []string
	t := reflect.TypeFor[Profile]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		names = append(names, name)
	}
	return names
}
