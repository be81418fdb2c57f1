package workloads

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as "250ms" in profiles.
type Duration time.Duration

// MarshalText writes the Go duration syntax.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads the Go duration syntax ("30s", "1m30s", "0").
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	*d = Duration(v)
	return err
}

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil && durationSyntax.MatchString(s) {
		return 0, &durationRangeError{s}
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (write e.g. 250ms, 30s, 1m)", s)
	}
	return v, nil
}

// durationSyntax is what time.ParseDuration reads; a string of that form
// it refuses is out of its range.
var durationSyntax = regexp.MustCompile(`^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$`)

// durationRangeError is a duration longer than a time.Duration holds
// (about 292 years). A field with a bound of its own says that bound
// instead (fieldDecodeError).
type durationRangeError struct{ s string }

func (e *durationRangeError) Error() string {
	return fmt.Sprintf("%q is longer than any duration can be (at most %v)", e.s, fmtHours(time.Duration(math.MaxInt64).Truncate(time.Hour)))
}

// DistKind is the shape of a DurationDist.
type DistKind string

// The duration distributions.
const (
	Fixed   DistKind = "fixed"
	Uniform DistKind = "uniform"
	Exp     DistKind = "exp"
)

// DurationDist is a hold or think time distribution, written as
// "200us" (fixed), "uniform(100us,1ms)" or "exp(500us)" (exponential with
// that mean).
type DurationDist struct {
	Kind DistKind
	A, B time.Duration // fixed: A; uniform: [A, B]; exp: mean A
}

// FixedDist returns a fixed duration.
func FixedDist(d time.Duration) DurationDist { return DurationDist{Kind: Fixed, A: d} }

// String writes the profile syntax.
func (d DurationDist) String() string {
	switch d.Kind {
	case Uniform:
		return fmt.Sprintf("uniform(%v,%v)", d.A, d.B)
	case Exp:
		return fmt.Sprintf("exp(%v)", d.A)
	}
	return d.A.String()
}

// Mean is the distribution's mean.
func (d DurationDist) Mean() time.Duration {
	if d.Kind == Uniform {
		return (d.A + d.B) / 2
	}
	return d.A
}

// Max is the longest duration Sample returns.
func (d DurationDist) Max() time.Duration {
	switch d.Kind {
	case Uniform:
		return max(d.A, d.B)
	case Exp:
		return expCap * d.A
	}
	return d.A
}

// expCap caps exponential draws, in means.
const expCap = 20

// Sample draws one duration.
func (d DurationDist) Sample(r *rand.Rand) time.Duration {
	switch d.Kind {
	case Uniform:
		if d.B <= d.A {
			return d.A
		}
		return d.A + time.Duration(r.Int64N(int64(d.B-d.A)+1))
	case Exp:
		// Capped at expCap means so one draw cannot stall an owner for long.
		return time.Duration(math.Min(r.ExpFloat64(), expCap) * float64(d.A))
	}
	return d.A
}

// MarshalText writes the profile syntax.
func (d DurationDist) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads the profile syntax.
func (d *DurationDist) UnmarshalText(b []byte) error {
	s := strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "")
	name, args, ok := strings.Cut(s, "(")
	if !ok {
		v, err := parseDuration(s)
		if err != nil {
			return fmt.Errorf("%q: want a duration (200us), uniform(MIN,MAX) or exp(MEAN)", s)
		}
		*d = FixedDist(v)
		return nil
	}
	if !strings.HasSuffix(args, ")") {
		return fmt.Errorf("%q: missing closing parenthesis", s)
	}
	parts := strings.Split(strings.TrimSuffix(args, ")"), ",")
	var vals []time.Duration
	for _, p := range parts {
		v, err := parseDuration(p)
		if err != nil {
			return fmt.Errorf("%q: %v", s, err)
		}
		vals = append(vals, v)
	}
	switch DistKind(name) {
	case Fixed:
		if len(vals) == 1 {
			*d = FixedDist(vals[0])
			return nil
		}
	case Uniform:
		if len(vals) == 2 {
			*d = DurationDist{Kind: Uniform, A: vals[0], B: vals[1]}
			return nil
		}
	case Exp:
		if len(vals) == 1 {
			*d = DurationDist{Kind: Exp, A: vals[0]}
			return nil
		}
	default:
		return fmt.Errorf("%q: unknown distribution %q (use fixed, uniform or exp)", s, name)
	}
	return fmt.Errorf("%q: %s takes %s", s, name, map[DistKind]string{Fixed: "one duration", Uniform: "two durations (min,max)", Exp: "one duration (the mean)"}[DistKind(name)])
}

func (d DurationDist) check() string {
	switch {
	case d.A < 0 || d.B < 0:
		return "must not be negative"
	case d.Kind == Uniform && d.B < d.A:
		return "uniform(MIN,MAX) needs MIN <= MAX"
	}
	return ""
}

// IntDist is the reentrancy depth: a fixed count ("depth: 2") or weights
// per count ("depth: {1: 0.7, 2: 0.2, 3: 0.1}"), normalized when drawn.
type IntDist struct {
	Values  []int
	Weights []float64
}

// FixedInt returns a distribution that is always n.
func FixedInt(n int) IntDist { return IntDist{Values: []int{n}, Weights: []float64{1}} }

// Sample draws one value.
func (d IntDist) Sample(r *rand.Rand) int {
	if len(d.Values) == 1 {
		return d.Values[0]
	}
	var total float64
	for _, w := range d.Weights {
		total += w
	}
	x := r.Float64() * total
	for i, w := range d.Weights {
		if x < w {
			return d.Values[i]
		}
		x -= w
	}
	return d.Values[len(d.Values)-1]
}

// Max is the largest value d can draw.
func (d IntDist) Max() int {
	if len(d.Values) == 0 {
		return 0
	}
	return slices.Max(d.Values)
}

// String writes "2" or "1:0.7,2:0.3".
func (d IntDist) String() string {
	if len(d.Values) == 1 {
		return strconv.Itoa(d.Values[0])
	}
	var parts []string
	for i, v := range d.Values {
		parts = append(parts, fmt.Sprintf("%d:%g", v, d.Weights[i]))
	}
	return strings.Join(parts, ",")
}

func (d IntDist) asMap() map[int]float64 {
	m := map[int]float64{}
	for i, v := range d.Values {
		m[v] = d.Weights[i]
	}
	return m
}

func (d *IntDist) fromMap(m map[int]float64) {
	d.Values, d.Weights = nil, nil
	for _, v := range slices.Sorted(maps.Keys(m)) {
		d.Values = append(d.Values, v)
		d.Weights = append(d.Weights, m[v])
	}
}

// MarshalYAML writes a number or a mapping.
func (d IntDist) MarshalYAML() (any, error) {
	if len(d.Values) == 1 {
		return d.Values[0], nil
	}
	return d.asMap(), nil
}

// UnmarshalYAML reads a number or a mapping of value → weight.
func (d *IntDist) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return d.UnmarshalText([]byte(n.Value))
	}
	var m map[int]float64
	if err := n.Decode(&m); err != nil {
		return fmt.Errorf("want a number or a mapping like {1: 0.7, 2: 0.3}")
	}
	d.fromMap(m)
	return nil
}

// MarshalJSON writes a number or an object.
func (d IntDist) MarshalJSON() ([]byte, error) {
	if len(d.Values) == 1 {
		return json.Marshal(d.Values[0])
	}
	return json.Marshal(d.asMap())
}

// UnmarshalJSON reads a number or an object of value → weight.
func (d *IntDist) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*d = FixedInt(n)
		return nil
	}
	var m map[int]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("want a number or an object like {\"1\": 0.7, \"2\": 0.3}")
	}
	d.fromMap(m)
	return nil
}

// UnmarshalText reads "2" or "1:0.7,2:0.3" (the --depth flag).
func (d *IntDist) UnmarshalText(b []byte) error {
	s := strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "")
	if n, err := strconv.Atoi(s); err == nil {
		*d = FixedInt(n)
		return nil
	}
	m := map[int]float64{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, ":")
		n, err1 := strconv.Atoi(k)
		w, err2 := strconv.ParseFloat(v, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("%q: want a number (2) or value:weight pairs (1:0.7,2:0.3)", s)
		}
		m[n] = w
	}
	d.fromMap(m)
	return nil
}

func (d IntDist) check(lo, hi int) string {
	if len(d.Values) == 0 {
		return "is empty"
	}
	var total float64
	for i, v := range d.Values {
		if v < lo || v > hi {
			return fmt.Sprintf("value %d is outside %d..%d", v, lo, hi)
		}
		if d.Weights[i] < 0 || math.IsNaN(d.Weights[i]) || math.IsInf(d.Weights[i], 0) {
			return fmt.Sprintf("weight of %d must be a finite number, not negative", v)
		}
		total += d.Weights[i]
	}
	if total <= 0 {
		return "weights must add up to more than 0"
	}
	// A sum other than 1 is almost always a typo, which drawing would
	// silently normalize into a different workload than the one written.
	if len(d.Values) > 1 && math.Abs(total-1) > 1e-9 {
		return fmt.Sprintf("weights add up to %g; they must add up to 1", total)
	}
	return ""
}

// Lease is "watchdog" (renewed while held, Redisson's lock()) or a fixed
// lease duration (lock(leaseTime), never renewed).
type Lease struct {
	Fixed time.Duration // 0: watchdog
}

// String writes the profile syntax.
func (l Lease) String() string {
	if l.Fixed == 0 {
		return "watchdog"
	}
	return l.Fixed.String()
}

// MarshalText writes the profile syntax.
func (l Lease) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads "watchdog" or a duration.
func (l *Lease) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "watchdog" || s == "" {
		l.Fixed = 0
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q: want watchdog or a lease duration such as 10s", s)
	}
	if v <= 0 {
		return fmt.Errorf("%q: a fixed lease must be positive (or write watchdog)", s)
	}
	if v < MinLease {
		return fmt.Errorf("%q: a fixed lease must be at least %v (or write watchdog): Redis leases are whole milliseconds", s, MinLease)
	}
	l.Fixed = v
	return nil
}

// MinLease is the shortest fixed lease: Redis takes leases in whole
// milliseconds, so a shorter one would become 0.
const MinLease = time.Millisecond
