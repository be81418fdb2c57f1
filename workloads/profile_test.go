package workloads_test

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/lockimpl/kind"
	"github.com/lockbench/lockbench/workloads"
)

func TestBuiltinsValidate(t *testing.T) {
	ps := workloads.Builtins()
	if len(ps) == 0 {
		t.Fatal("no built-in profiles")
	}
	names := workloads.BuiltinNames()
	if len(names) != len(ps) {
		t.Fatalf("BuiltinNames has %d names, Builtins %d profiles", len(names), len(ps))
	}
	if !slices.IsSorted(names) {
		t.Errorf("BuiltinNames not sorted: %v", names)
	}
	if len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("BuiltinNames has duplicates: %v", names)
	}
	for _, want := range []string{"rw90", "rw50", "rw10", "mutex", "fair", "reentrant-deep", "hotkey", "uncontended", "open-rw90"} {
		if !slices.Contains(names, want) {
			t.Errorf("BuiltinNames %v lacks %q", names, want)
		}
	}
	for i, p := range ps {
		t.Run(p.Name, func(t *testing.T) {
			if p.Name == "" || p.Name != names[i] {
				t.Errorf("name %q, BuiltinNames[%d] = %q", p.Name, i, names[i])
			}
			if strings.TrimSpace(p.Description) == "" {
				t.Errorf("%s has no description", p.Name)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("%s does not validate: %v", p.Name, err)
			}
			if p.Summary() == "" || !strings.HasPrefix(p.Summary(), string(p.Kind)) {
				t.Errorf("%s: Summary %q should start with the kind", p.Name, p.Summary())
			}
			// Builtin(name) is the same profile.
			b, err := workloads.Builtin(p.Name)
			if err != nil {
				t.Fatalf("Builtin(%q): %v", p.Name, err)
			}
			if !reflect.DeepEqual(b, p) {
				t.Errorf("Builtin(%q) = %+v, Builtins() has %+v", p.Name, b, p)
			}
			// The file behind it parses to the same profile.
			src, err := workloads.BuiltinYAML(p.Name)
			if err != nil {
				t.Fatalf("BuiltinYAML(%q): %v", p.Name, err)
			}
			if !strings.Contains(string(src), "name: "+p.Name) {
				t.Errorf("BuiltinYAML(%q) does not name the profile:\n%s", p.Name, src)
			}
			parsed, err := workloads.Parse(src, ".yaml")
			if err != nil {
				t.Fatalf("Parse(BuiltinYAML(%q)): %v", p.Name, err)
			}
			if !reflect.DeepEqual(parsed, p) {
				t.Errorf("Parse(BuiltinYAML(%q)) = %+v, want %+v", p.Name, parsed, p)
			}
			// The YAML the program writes reads back as the same profile.
			again, err := workloads.Parse(p.YAML(), ".yaml")
			if err != nil {
				t.Fatalf("Parse(YAML()) of %s: %v\n%s", p.Name, err, p.YAML())
			}
			if !reflect.DeepEqual(again, p) {
				t.Errorf("YAML round trip of %s:\n got %+v\nwant %+v\nYAML:\n%s", p.Name, again, p, p.YAML())
			}
			// So does its JSON.
			js, err := json.Marshal(p)
			if err != nil {
				t.Fatalf("json.Marshal(%s): %v", p.Name, err)
			}
			fromJSON, err := workloads.Parse(js, ".json")
			if err != nil {
				t.Fatalf("Parse(JSON) of %s: %v\n%s", p.Name, err, js)
			}
			if !reflect.DeepEqual(fromJSON, p) {
				t.Errorf("JSON round trip of %s:\n got %+v\nwant %+v\nJSON: %s", p.Name, fromJSON, p, js)
			}
		})
	}
}

func TestBuiltinShapes(t *testing.T) {
	get := func(name string) workloads.Profile {
		t.Helper()
		p, err := workloads.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		ok   func(p workloads.Profile) bool
		want string
	}{
		{"rw90", func(p workloads.Profile) bool { return p.Kind == workloads.RW && p.ReadRatio == 0.9 }, "rw, 90% reads"},
		{"rw50", func(p workloads.Profile) bool { return p.Kind == workloads.RW && p.ReadRatio == 0.5 }, "rw, 50% reads"},
		{"rw10", func(p workloads.Profile) bool { return p.Kind == workloads.RW && p.ReadRatio == 0.1 }, "rw, 10% reads"},
		{"mutex", func(p workloads.Profile) bool {
			return p.Kind == workloads.KindOf(kind.Reentrant) && p.LockCount() == 1
		}, "reentrant on one name"},
		{"fair", func(p workloads.Profile) bool { return p.Kind == workloads.KindOf(kind.Fair) }, "fair"},
		{"reentrant-deep", func(p workloads.Profile) bool { return p.Depth.Max() > 1 }, "depth > 1"},
		{"hotkey", func(p workloads.Profile) bool { return p.Popularity == workloads.PopZipf }, "zipf"},
		{"uncontended", func(p workloads.Profile) bool {
			return p.Popularity == workloads.PopPerOwner && p.LockCount() == p.TotalOwners()
		}, "one lock per owner"},
		{"open-rw90", func(p workloads.Profile) bool { return p.Rate > 0 && p.Think.Mean() == 0 }, "open loop"},
	} {
		if p := get(c.name); !c.ok(p) {
			t.Errorf("%s is not %s: %+v", c.name, c.want, p)
		}
	}

	if s := get("rw90").Summary(); !strings.Contains(s, "rw 90% reads") || !strings.Contains(s, "closed loop") {
		t.Errorf("rw90 summary %q", s)
	}
	if s := get("open-rw90").Summary(); !strings.Contains(s, "open loop 2000 ops/s") {
		t.Errorf("open-rw90 summary %q", s)
	}
	if s := get("uncontended").Summary(); !strings.Contains(s, "one lock per owner") {
		t.Errorf("uncontended summary %q", s)
	}
	if s := get("hotkey").Summary(); !strings.Contains(s, "1000 locks zipf(1.2)") {
		t.Errorf("hotkey summary %q", s)
	}
	if s := get("reentrant-deep").Summary(); !strings.Contains(s, "depth 5") {
		t.Errorf("reentrant-deep summary %q", s)
	}
}

func TestUnknownBuiltin(t *testing.T) {
	for _, name := range []string{"nope", "", "../builtin/rw90", "builtin/rw90", "RW90"} {
		_, err := workloads.Builtin(name)
		fe := requireFieldError(t, err, "profile")
		for _, known := range workloads.BuiltinNames() {
			if !strings.Contains(fe.Fix, known) {
				t.Errorf("Builtin(%q) error %q does not list %q", name, err, known)
			}
		}
		if name != "" && !strings.Contains(err.Error(), name) {
			t.Errorf("Builtin(%q) error %q does not repeat the name", name, err)
		}
	}
	_, err := workloads.BuiltinYAML("nope")
	requireFieldError(t, err, "profile")
}

func TestDefaultAndEmptyProfile(t *testing.T) {
	d := workloads.Default()
	if err := d.Validate(); err != nil {
		t.Fatalf("Default does not validate: %v", err)
	}
	// A file with no field is refused: an empty or truncated file would
	// otherwise run every default, which nobody wrote.
	for _, src := range []struct{ text, ext string }{{"", ".yaml"}, {"# only a comment\n", ".yaml"}, {"{}", ".yaml"}, {"  \n", ".json"}, {"{}", ".JSON"}} {
		if _, err := workloads.Parse([]byte(src.text), src.ext); err == nil || !strings.Contains(err.Error(), "the file has no fields") {
			t.Errorf("Parse(%q, %s) = %v, want the empty profile refused", src.text, src.ext, err)
		}
	}
	// A partial file changes only what it names.
	p, err := workloads.Parse([]byte("owners: 7\nhold: 1ms\n"), ".yml")
	if err != nil {
		t.Fatal(err)
	}
	want := d
	want.Owners, want.Hold = 7, workloads.FixedDist(time.Millisecond)
	if !reflect.DeepEqual(p, want) {
		t.Errorf("partial file: got %+v, want %+v", p, want)
	}
}

func TestFields(t *testing.T) {
	f := workloads.Fields()
	if len(f) != reflect.TypeFor[workloads.Profile]().NumField() {
		t.Fatalf("Fields() = %v: not one per Profile field", f)
	}
	if f[0] != "name" || f[1] != "description" || f[2] != "kind" {
		t.Errorf("Fields() not in file order: %v", f)
	}
	// Every field the built-in files write is a known field, in order.
	src, err := workloads.BuiltinYAML("rw90")
	if err != nil {
		t.Fatal(err)
	}
	var inFile []string
	for line := range strings.Lines(string(src)) {
		if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(k, "#") {
			inFile = append(inFile, k)
		}
	}
	if !slices.Equal(inFile, f) {
		t.Errorf("rw90.yaml fields %v, Fields() %v", inFile, f)
	}
}

// badInput is one profile that must be refused, naming field.
type badInput struct {
	name  string
	src   string
	ext   string
	field string
}

func TestBadInput(t *testing.T) {
	for _, c := range []badInput{
		{"read_ratio above 1", "kind: rw\nread_ratio: 1.5", ".yaml", "read_ratio"},
		{"read_ratio negative", "kind: rw\nread_ratio: -0.1", ".yaml", "read_ratio"},
		{"read_ratio on reentrant", "kind: reentrant\nread_ratio: 0.5", ".yaml", "read_ratio"},
		{"read_ratio on fair", "kind: fair\nread_ratio: 0.9", ".yaml", "read_ratio"},
		{"read_ratio text", "kind: rw\nread_ratio: most", ".yaml", "read_ratio"},
		{"read_in_write above 1", "read_in_write: 2", ".yaml", "read_in_write"},
		{"negative duration", "duration: -1s", ".yaml", "duration"},
		{"negative warmup", "warmup: -500ms", ".yaml", "warmup"},
		{"negative wait", "wait: -1s", ".yaml", "wait"},
		{"negative hold", "hold: -1ms", ".yaml", "hold"},
		{"negative exp hold", "hold: exp(-1ms)", ".yaml", "hold"},
		{"uniform hold min above max", "hold: uniform(2ms,1ms)", ".yaml", "hold"},
		{"negative think", "think: uniform(-1ms,1ms)", ".yaml", "think"},
		{"malformed hold", "hold: exp(1ms", ".yaml", "hold"},
		{"unknown hold distribution", "hold: gauss(1ms)", ".yaml", "hold"},
		{"uniform with one argument", "hold: uniform(1ms)", ".yaml", "hold"},
		{"hold not a duration", "hold: soon", ".yaml", "hold"},
		{"think not a duration", "think: 5x", ".yaml", "think"},
		{"unknown YAML field", "kind: rw\nread_ratoi: 0.9", ".yaml", "read_ratoi"},
		{"unknown JSON field", `{"kind": "rw", "ownerz": 3}`, ".json", "ownerz"},
		{"zero owners", "owners: 0", ".yaml", "owners"},
		{"negative owners", "owners: -4", ".yaml", "owners"},
		{"too many owners", "clients: 1000\nowners: 1000", ".yaml", "owners"},
		{"zero clients", "clients: 0", ".yaml", "clients"},
		{"clients not a number", "clients: abc", ".yaml", "clients"},
		{"clients not a number (JSON)", `{"clients": "abc"}`, ".json", "clients"},
		{"clients fractional (JSON)", `{"clients": 2.5}`, ".json", "clients"},
		{"clients fractional (YAML truncates silently)", "clients: 2.9", ".yaml", "clients"},
		{"owners overflow the product", "clients: 2\nowners: 4611686018427387904", ".yaml", "owners"},
		{"kind spinning", "kind: spinning", ".yaml", "kind"},
		{"multi on a mutex", "kind: reentrant\nmulti: 3", ".yaml", "multi"},
		{"multi of one", "kind: multi\nmulti: 1", ".yaml", "multi"},
		{"nested non-reentrant", "kind: non-reentrant\ndepth: 2", ".yaml", "depth"},
		{"multi per owner", "kind: multi\npopularity: per-owner", ".yaml", "popularity"},
		{"topology", "topology: ring", ".yaml", "topology"},
		{"replica_sync", "replica_sync: maybe", ".yaml", "replica_sync"},
		{"kind spinning (JSON)", `{"kind": "spinning"}`, ".json", "kind"},
		{"kind not text", "kind: [rw]", ".yaml", "kind"},
		{"popularity hot", "popularity: hot", ".yaml", "popularity"},
		{"zipf_s 1.0", "popularity: zipf\nzipf_s: 1.0", ".yaml", "zipf_s"},
		{"zero locks", "locks: 0", ".yaml", "locks"},
		{"duration 0 and ops 0", "duration: 0\nops: 0", ".yaml", "duration"},
		{"negative ops", "ops: -1", ".yaml", "ops"},
		{"negative rate", "rate: -5\nthink: 0", ".yaml", "rate"},
		{"think with rate", "rate: 100\nthink: exp(1ms)", ".yaml", "think"},
		{"think with rate (default think)", "rate: 100", ".yaml", "think"},
		{"depth 0", "depth: 0", ".yaml", "depth"},
		{"depth 33", "depth: 33", ".yaml", "depth"},
		{"depth negative weight", "depth: {1: 0.5, 2: -0.5}", ".yaml", "depth"},
		{"depth zero weights", "depth: {1: 0, 2: 0}", ".yaml", "depth"},
		{"depth list", "depth: [1, 2]", ".yaml", "depth"},
		{"depth text", "depth: deep", ".yaml", "depth"},
		{"depth text (JSON)", `{"depth": "deep"}`, ".json", "depth"},
		{"depth 0 (JSON)", `{"depth": 0}`, ".json", "depth"},
		{"lease -5s", "lease: -5s", ".yaml", "lease"},
		{"lease 0s", "lease: 0s", ".yaml", "lease"},
		{"lease text", "lease: forever", ".yaml", "lease"},
		{"duration text", "duration: 5x", ".yaml", "duration"},
		{"duration text (JSON)", `{"duration": "soon"}`, ".json", "duration"},
		{"seed negative", "seed: -1", ".yaml", "seed"},
		{"read_ratio NaN", "kind: rw\nread_ratio: .nan", ".yaml", "read_ratio"},
		{"rate infinite", "rate: .inf\nthink: 0", ".yaml", "rate"},
		{"zipf_s NaN", "popularity: zipf\nzipf_s: .nan", ".yaml", "zipf_s"},
		{"read_in_write -inf", "read_in_write: -.inf", ".yaml", "read_in_write"},
		{"rate overflowing (JSON)", `{"rate": 1e999, "think": "0"}`, ".json", "rate"},
		{"depth weight NaN", "depth: {1: .nan, 2: 0.5}", ".yaml", "depth"},
		{"depth weights over 1", "depth: {1: 0.7, 2: 0.7}", ".yaml", "depth"},
		{"depth weights under 1 (JSON)", `{"depth": {"1": 0.5, "2": 0.3}}`, ".json", "depth"},
		{"lease under a millisecond", "lease: 500us", ".yaml", "lease"},
		{"name too long", "name: " + strings.Repeat("x", 300), ".yaml", "name"},
		{"name with a slash", "name: a/b", ".yaml", "name"},
		{"name dot-dot", `{"name": ".."}`, ".json", "name"},
		{"name with a newline (JSON)", `{"name": "a\nb"}`, ".json", "name"},
		{"duplicate key", "owners: 2\nhold: 1ms\nowners: 3", ".yaml", "owners"},
		{"duplicate key (JSON)", `{"owners": 2, "owners": 3}`, ".json", "owners"},
		{"duplicate depth key", "depth: {1: 0.5, 1: 0.5}", ".yaml", "1"},
		{"locks past the int64 a slice takes", "locks: 99999999999999", ".yaml", "locks"},
		{"locks past the bound", "locks: 1000001", ".yaml", "locks"},
		{"locks past the bound, zipf (JSON)", `{"popularity": "zipf", "locks": 100000000}`, ".json", "locks"},
		{"rate past the bound", "rate: 1e308\nthink: 0", ".yaml", "rate"},
		{"rate under one operation in the run", "rate: 1e-300\nthink: 0", ".yaml", "rate"},
		{"rate under one operation in the run (JSON)", `{"rate": 0.1, "think": "0", "duration": "5s"}`, ".json", "rate"},
		{"rate too slow for its ops", "rate: 1e-300\nthink: 0\nduration: 0\nops: 5", ".yaml", "rate"},
		{"duration past a time.Duration", "duration: 9999999999h", ".yaml", "duration"},
		{"duration past the bound", "duration: 1000000h", ".yaml", "duration"},
		{"warmup past the bound (JSON)", `{"warmup": "25h"}`, ".json", "warmup"},
		{"warmup and duration past the bound together", "duration: 20h\nwarmup: 5h", ".yaml", "warmup"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := workloads.Parse([]byte(c.src), c.ext)
			if err == nil {
				err = p.Validate()
			}
			requireFieldError(t, err, c.field)
		})
	}
}

// TestBoundsSayWhy: a profile past a bound is refused with the bound and
// its reason, in a file and in a flag override alike, and a profile at a
// bound is accepted.
func TestBoundsSayWhy(t *testing.T) {
	for _, c := range []struct{ field, value, want string }{
		{"locks", "99999999999999", "must be at most 1000000: the run keeps every lock's name in memory"},
		{"rate", "1e308", "must be at most 10000000 ops/s"},
		{"rate", "1e-300", "less than one operation in the run's duration (30s); the least rate is 1/duration, 0.0333 ops/s"},
		{"duration", "9999999999h", "warmup and duration together must be at most 24h: the run's interval log"},
		{"duration", "1000000h", "at most 24h"},
		{"warmup", "24h", "at most 24h"},
	} {
		p := workloads.Default()
		p.Think = workloads.DurationDist{}
		err := p.Set(c.field, c.value)
		if err == nil {
			err = p.Validate()
		}
		fe := requireFieldError(t, err, c.field)
		if !strings.Contains(fe.Error(), c.want) {
			t.Errorf("%s %s: %q, want it to say %q", c.field, c.value, fe, c.want)
		}
		f, ferr := workloads.Parse([]byte(c.field+": "+c.value+"\nthink: 0\n"), ".yaml")
		if ferr == nil {
			ferr = f.Validate()
		}
		if ferr == nil || ferr.Error() != fe.Error() {
			t.Errorf("%s %s in a file: %v, want the flag's %q", c.field, c.value, ferr, fe)
		}
	}
	// Hours past what a time.Duration holds, in a field with no bound of
	// its own, say that bound instead of "not a duration".
	if err := new(workloads.Profile).Set("wait", "9999999999h"); err == nil || !strings.Contains(err.Error(), "longer than any duration can be (at most 2562047h)") {
		t.Errorf("wait 9999999999h: %v", err)
	}
	for _, edit := range []func(*workloads.Profile){
		func(p *workloads.Profile) { p.Locks = workloads.MaxLocks },
		func(p *workloads.Profile) { p.Popularity, p.Locks = workloads.PopZipf, workloads.MaxLocks },
		func(p *workloads.Profile) { p.Rate, p.Think = workloads.MaxRate, workloads.DurationDist{} },
		func(p *workloads.Profile) { p.Rate, p.Think = 1/30.0, workloads.DurationDist{} }, // one operation in 30 s
		func(p *workloads.Profile) {
			p.Duration, p.Warmup = workloads.Duration(workloads.MaxRunTime-time.Hour), workloads.Duration(time.Hour)
		},
	} {
		p := workloads.Default()
		edit(&p)
		if err := p.Validate(); err != nil {
			t.Errorf("a profile at a bound: %v", err)
		}
	}
}

// TestScheduleFitsADuration: at the bounds, an owner's open-loop slot
// interval (clients × owners / rate, the least rate being one operation
// in the longest run) is still a time.Duration, which the schedule's
// arithmetic needs.
func TestScheduleFitsADuration(t *testing.T) {
	longest := float64(workloads.MaxOwners) * workloads.MaxRunTime.Seconds() * 1e9
	if longest >= math.MaxInt64 {
		t.Errorf("MaxOwners × MaxRunTime = %.3g ns, past a time.Duration (%d ns): a slot interval would overflow", longest, int64(math.MaxInt64))
	}
	if shortest := float64(time.Second) / workloads.MaxRate; shortest < 1 {
		t.Errorf("at MaxRate one owner's slot interval is %g ns, under the schedule's nanosecond", shortest)
	}
}

// A file that is not a profile at all is refused without naming a field.
func TestParseNotAProfile(t *testing.T) {
	for _, c := range []struct{ src, ext string }{
		{"- a\n- b\n", ".yaml"},
		{"kind: [unclosed\n", ".yaml"},
		{"just text", ".yaml"},
		{`["kind"]`, ".json"},
		{`{"kind": `, ".json"},
	} {
		if _, err := workloads.Parse([]byte(c.src), c.ext); err == nil {
			t.Errorf("Parse(%q, %s) accepted it", c.src, c.ext)
		}
	}
}

func TestSet(t *testing.T) {
	p := workloads.Default()
	set := func(field, value string) {
		t.Helper()
		if err := p.Set(field, value); err != nil {
			t.Fatalf("Set(%q, %q): %v", field, value, err)
		}
	}
	set("hold", "uniform(1ms,2ms)")
	if want := (workloads.DurationDist{Kind: workloads.Uniform, A: time.Millisecond, B: 2 * time.Millisecond}); p.Hold != want {
		t.Errorf("hold = %+v, want %+v", p.Hold, want)
	}
	set("depth", "1:0.5,2:0.5")
	if !slices.Equal(p.Depth.Values, []int{1, 2}) || !slices.Equal(p.Depth.Weights, []float64{0.5, 0.5}) {
		t.Errorf("depth = %+v, want 1:0.5,2:0.5", p.Depth)
	}
	set("depth", "3")
	if !reflect.DeepEqual(p.Depth, workloads.FixedInt(3)) {
		t.Errorf("depth = %+v, want 3", p.Depth)
	}
	set("kind", "rw")
	set("read_ratio", "0.25")
	set("think", "exp(2ms)")
	set("lease", "10s")
	set("wait", "0")
	set("duration", "1m30s")
	set("warmup", "0")
	set("clients", "3")
	set("seed", "42")
	set("name", "123") // text, even when it looks like a number
	if p.Kind != workloads.RW || p.ReadRatio != 0.25 || p.Lease.Fixed != 10*time.Second || p.Wait != 0 ||
		time.Duration(p.Duration) != 90*time.Second || p.Warmup != 0 || p.Clients != 3 || p.Seed != 42 || p.Name != "123" ||
		p.Think != (workloads.DurationDist{Kind: workloads.Exp, A: 2 * time.Millisecond}) {
		t.Errorf("after Set: %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("profile after Set does not validate: %v", err)
	}
	set("lease", "watchdog")
	if p.Lease.Fixed != 0 || p.Lease.String() != "watchdog" {
		t.Errorf("lease = %v, want watchdog", p.Lease)
	}

	before := p
	for _, c := range []struct{ field, value, wantField string }{
		{"nope", "1", "nope"},
		{"clients", "abc", "clients"},
		{"read_ratio", "lots", "read_ratio"},
		{"hold", "exp(1ms", "hold"},
		{"depth", "1:x", "depth"},
		{"lease", "-5s", "lease"},
	} {
		err := p.Set(c.field, c.value)
		fe := requireFieldError(t, err, c.wantField)
		if c.field != "nope" && !strings.Contains(fe.Value, c.value) {
			t.Errorf("Set(%q, %q): error value %q does not show the input", c.field, c.value, fe.Value)
		}
	}
	if !reflect.DeepEqual(p.Name, before.Name) || p.Clients != before.Clients || p.ReadRatio != before.ReadRatio {
		t.Errorf("failed Sets changed the profile: %+v, was %+v", p, before)
	}
}

func TestFieldErrorMessages(t *testing.T) {
	_, err := workloads.Parse([]byte("kind: rw\nread_ratoi: 0.9\n"), ".yaml")
	if fe := requireFieldError(t, err, "read_ratoi"); !strings.Contains(fe.Fix, "line 2") {
		t.Errorf("unknown field error %q should say where it is", err)
	}
	_, err = workloads.Parse([]byte("clients: abc"), ".yaml")
	if fe := requireFieldError(t, err, "clients"); !strings.Contains(fe.Fix, "whole number") || fe.Value != `"abc"` {
		t.Errorf("clients: abc: %q (value %q)", err, fe.Value)
	}
	_, err = workloads.Parse([]byte("hold: exp(1ms"), ".yaml")
	if fe := requireFieldError(t, err, "hold"); !strings.Contains(fe.Fix, "parenthesis") {
		t.Errorf("hold: exp(1ms: %q should say what is missing", err)
	}
	_, err = workloads.Parse([]byte("lease: -5s"), ".yaml")
	if fe := requireFieldError(t, err, "lease"); !strings.Contains(fe.Fix, "positive") {
		t.Errorf("lease: -5s: %q", err)
	}
	p := workloads.Default()
	p.ReadRatio = 1.5
	p.Kind = workloads.RW
	if fe := requireFieldError(t, p.Validate(), "read_ratio"); fe.Value != "1.5" || !strings.Contains(fe.Fix, "between 0 and 1") {
		t.Errorf("read_ratio 1.5: %q", fe)
	}
	// The error text is "field value: fix", or "field: fix" without a value.
	fe := &workloads.FieldError{Field: "f", Value: `"v"`, Fix: "do this"}
	if fe.Error() != `f "v": do this` {
		t.Errorf("Error() = %q", fe.Error())
	}
	fe.Value = ""
	if fe.Error() != "f: do this" {
		t.Errorf("Error() = %q", fe.Error())
	}
	var usage interface{ IsUsage() bool }
	if !errors.As(error(fe), &usage) || !usage.IsUsage() {
		t.Error("FieldError does not satisfy IsUsage")
	}
}

func TestLoadFile(t *testing.T) {
	p, err := workloads.LoadFile(filepath.Join("testdata", "custom.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := workloads.Default()
	want.Name = "custom" // from the file name
	want.Description = "custom: rw 75% reads on 4 names, per-test file"
	want.Kind, want.ReadRatio = workloads.RW, 0.75
	want.Depth = workloads.IntDist{Values: []int{1, 3}, Weights: []float64{0.5, 0.5}}
	want.Clients, want.Owners, want.Locks = 2, 3, 4
	want.Hold = workloads.DurationDist{Kind: workloads.Uniform, A: 100 * time.Microsecond, B: 300 * time.Microsecond}
	want.Lease = workloads.Lease{Fixed: 15 * time.Second}
	want.Duration, want.Warmup = workloads.Duration(2*time.Second), workloads.Duration(250*time.Millisecond)
	if !reflect.DeepEqual(p, want) {
		t.Errorf("custom.yaml:\n got %+v\nwant %+v", p, want)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("custom.yaml does not validate: %v", err)
	}

	p, err = workloads.LoadFile(filepath.Join("testdata", "custom.json"))
	if err != nil {
		t.Fatal(err)
	}
	want = workloads.Default()
	want.Name = "from-json" // the file's own name wins
	want.Kind, want.Depth = workloads.KindOf(kind.Fair), workloads.FixedInt(2)
	want.Clients, want.Owners, want.Locks = 1, 5, 1
	want.Hold = workloads.DurationDist{Kind: workloads.Exp, A: 150 * time.Microsecond}
	want.Think = workloads.FixedDist(0)
	want.Rate, want.Ops, want.Duration, want.Seed = 500, 1000, 0, 7
	if !reflect.DeepEqual(p, want) {
		t.Errorf("custom.json:\n got %+v\nwant %+v", p, want)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("custom.json does not validate: %v", err)
	}

	// An unknown field names itself, not the file.
	_, err = workloads.LoadFile(filepath.Join("testdata", "typo.yaml"))
	requireFieldError(t, err, "owner")
	// Broken YAML and a missing file blame the file.
	_, err = workloads.LoadFile(filepath.Join("testdata", "broken.yaml"))
	if fe := requireFieldError(t, err, "profile-file"); !strings.Contains(fe.Value, "broken.yaml") {
		t.Errorf("broken.yaml: %q should name the file", err)
	}
	_, err = workloads.LoadFile(filepath.Join("testdata", "missing.yaml"))
	if fe := requireFieldError(t, err, "profile-file"); !strings.Contains(fe.Fix, "no such file") {
		t.Errorf("missing.yaml: %q", err)
	}
}

// Errors on duration fields say what a duration looks like, not "a whole
// number" (a Duration is an int64 underneath).
func TestDurationFieldMessages(t *testing.T) {
	for _, c := range []struct{ in, ext, want string }{
		{"duration: 5x", ".yaml", "not a duration"},
		{"duration: 30", ".yaml", "not a duration"},
		{`{"duration": 30}`, ".json", `want text such as "30s"`},
		{"warmup: soon", ".yaml", "not a duration"},
	} {
		_, err := workloads.Parse([]byte(c.in), c.ext)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "whole number") {
			t.Errorf("Parse(%q) = %v, want a message containing %q", c.in, err, c.want)
		}
	}
	var p workloads.Profile
	if err := p.Set("clients", "2.9"); err == nil || !strings.Contains(err.Error(), "whole number") {
		t.Errorf(`Set("clients", "2.9") = %v, want "want a whole number"`, err)
	}
}

// TestParseOneDocument: a YAML file of several documents is refused; only
// the first would have run.
func TestParseOneDocument(t *testing.T) {
	_, err := workloads.Parse([]byte("owners: 2\n---\nowners: 3\n"), ".yaml")
	if err == nil || !strings.Contains(err.Error(), "holds 2 YAML documents") {
		t.Errorf("two documents: %v", err)
	}
}

// TestValidateInCode: profiles built in code meet the same rules.
func TestValidateInCode(t *testing.T) {
	p := workloads.Default()
	p.ReadRatio = math.NaN()
	requireFieldError(t, p.Validate(), "read_ratio")
	p = workloads.Default()
	p.Lease = workloads.Lease{Fixed: 500 * time.Microsecond}
	requireFieldError(t, p.Validate(), "lease")
	p = workloads.Default()
	p.Depth = workloads.IntDist{Values: []int{1, 2}, Weights: []float64{2, 2}}
	fe := requireFieldError(t, p.Validate(), "depth")
	if !strings.Contains(fe.Fix, "weights add up to 4") {
		t.Errorf("depth error %q does not give the sum", fe.Fix)
	}
}

// A flag override of a yes/no field says what it takes.
func TestSetBoolSaysTrueOrFalse(t *testing.T) {
	p := workloads.Default()
	err := p.Set("replica_sync", "maybe")
	requireFieldError(t, err, "replica_sync")
	if !strings.Contains(err.Error(), "want true or false") {
		t.Errorf("error %q does not say true or false", err)
	}
	if err := p.Set("replica_sync", "false"); err != nil || p.ReplicaSync {
		t.Errorf("Set replica_sync false: %v, ReplicaSync %v", err, p.ReplicaSync)
	}
}

// TestBooleansOneWay: a yes/no field takes true or false, and nothing
// else, in a flag override, a YAML file and a JSON file alike (YAML took
// yes and on where 1 was refused).
func TestBooleansOneWay(t *testing.T) {
	for _, v := range []string{"yes", "no", "on", "off", "y", "1", "0", "t", "True", "FALSE", ""} {
		p := workloads.Default()
		if err := p.Set("auto_pipeline", v); err == nil || !strings.Contains(err.Error(), "want true or false") {
			t.Errorf("Set auto_pipeline %q: %v, want refused with true or false", v, err)
		}
		if v == "" {
			continue
		}
		if _, err := workloads.Parse([]byte("auto_pipeline: "+v+"\n"), ".yaml"); err == nil || !strings.Contains(err.Error(), "want true or false") {
			t.Errorf("YAML auto_pipeline: %s: %v, want refused with true or false", v, err)
		}
		if _, err := workloads.Parse([]byte(`{"replica_sync": "`+v+`"}`), ".json"); err == nil || !strings.Contains(err.Error(), "want true or false") {
			t.Errorf("JSON replica_sync %q: %v, want refused with true or false", v, err)
		}
	}
	for _, v := range []string{"true", "false"} {
		p, err := workloads.Parse([]byte("auto_pipeline: "+v+"\n"), ".yaml")
		q := workloads.Default()
		qerr := q.Set("auto_pipeline", v)
		r, rerr := workloads.Parse([]byte(`{"auto_pipeline": `+v+`}`), ".json")
		if err != nil || qerr != nil || rerr != nil || p.AutoPipeline != (v == "true") || q.AutoPipeline != p.AutoPipeline || r.AutoPipeline != p.AutoPipeline {
			t.Errorf("%s: YAML %v (%v), flag %v (%v), JSON %v (%v)", v, p.AutoPipeline, err, q.AutoPipeline, qerr, r.AutoPipeline, rerr)
		}
	}
}

// TestBuiltinKindComments: the comment beside each built-in profile's kind,
// which `bench profiles show` hands users as a template, lists every kind.
func TestBuiltinKindComments(t *testing.T) {
	var names []string
	for _, k := range workloads.Kinds() {
		names = append(names, k.String())
	}
	want := "# " + strings.Join(names, " | ")
	for _, name := range workloads.BuiltinNames() {
		y, err := workloads.BuiltinYAML(name)
		if err != nil {
			t.Fatal(err)
		}
		var line string
		for l := range strings.Lines(string(y)) {
			if strings.HasPrefix(l, "kind:") {
				line = strings.TrimSpace(l)
			}
		}
		if _, comment, _ := strings.Cut(line, "  "); strings.TrimSpace(comment) != want {
			t.Errorf("%s: %q: want the comment %q", name, line, want)
		}
	}
}

// TestProfileTopologies: every topology a run can start is a profile's to
// name.
func TestProfileTopologies(t *testing.T) {
	for _, topo := range []string{"single", "replica", "sentinel", "cluster"} {
		p, err := workloads.Parse([]byte("name: t\ntopology: "+topo+"\n"), ".yaml")
		if err != nil || p.Topology != topo {
			t.Errorf("topology %s: %v (%q)", topo, err, p.Topology)
		}
	}
}
