package workloads_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lockbench/lockbench/workloads"
)

func TestDurationDistParsePrint(t *testing.T) {
	us := time.Microsecond
	for _, c := range []struct {
		in   string
		want workloads.DurationDist
		str  string
	}{
		{"200us", workloads.FixedDist(200 * us), "200µs"},
		{"200µs", workloads.FixedDist(200 * us), "200µs"},
		{"0", workloads.FixedDist(0), "0s"},
		{"0s", workloads.FixedDist(0), "0s"},
		{"1m30s", workloads.FixedDist(90 * time.Second), "1m30s"},
		{"fixed(1ms)", workloads.FixedDist(time.Millisecond), "1ms"},
		{"uniform(100us,1ms)", workloads.DurationDist{Kind: workloads.Uniform, A: 100 * us, B: time.Millisecond}, "uniform(100µs,1ms)"},
		{" uniform( 100us , 1ms ) ", workloads.DurationDist{Kind: workloads.Uniform, A: 100 * us, B: time.Millisecond}, "uniform(100µs,1ms)"},
		{"uniform(0,0)", workloads.DurationDist{Kind: workloads.Uniform}, "uniform(0s,0s)"},
		{"exp(500us)", workloads.DurationDist{Kind: workloads.Exp, A: 500 * us}, "exp(500µs)"},
		{"exp(2s)", workloads.DurationDist{Kind: workloads.Exp, A: 2 * time.Second}, "exp(2s)"},
	} {
		var d workloads.DurationDist
		if err := d.UnmarshalText([]byte(c.in)); err != nil {
			t.Errorf("UnmarshalText(%q): %v", c.in, err)
			continue
		}
		if d != c.want {
			t.Errorf("UnmarshalText(%q) = %+v, want %+v", c.in, d, c.want)
		}
		if d.String() != c.str {
			t.Errorf("%q prints as %q, want %q", c.in, d.String(), c.str)
		}
		b, err := d.MarshalText()
		if err != nil || string(b) != d.String() {
			t.Errorf("MarshalText(%+v) = %q, %v; want %q", d, b, err, d.String())
		}
		var again workloads.DurationDist
		if err := again.UnmarshalText(b); err != nil || again != d {
			t.Errorf("round trip of %q through %q: %+v, %v", c.in, b, again, err)
		}
	}
	for _, in := range []string{"", "soon", "5x", "exp(1ms", "exp()", "exp(1ms,2ms)", "uniform(1ms)", "uniform(1ms,2ms,3ms)",
		"fixed(1ms,2ms)", "gauss(1ms)", "uniform(a,b)", "(1ms)"} {
		var d workloads.DurationDist
		if err := d.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("UnmarshalText(%q) accepted it as %+v", in, d)
		}
	}
}

func TestDurationDistMean(t *testing.T) {
	ms := time.Millisecond
	if m := (workloads.DurationDist{Kind: workloads.Uniform, A: ms, B: 3 * ms}).Mean(); m != 2*ms {
		t.Errorf("uniform(1ms,3ms) mean %v", m)
	}
	if m := (workloads.DurationDist{Kind: workloads.Exp, A: 5 * ms}).Mean(); m != 5*ms {
		t.Errorf("exp(5ms) mean %v", m)
	}
	if m := workloads.FixedDist(7 * ms).Mean(); m != 7*ms {
		t.Errorf("fixed 7ms mean %v", m)
	}
}

func TestDurationDistSample(t *testing.T) {
	const n = 200_000
	r := rand.New(rand.NewPCG(1, 2))

	fixed := workloads.FixedDist(3 * time.Millisecond)
	for range 1000 {
		if v := fixed.Sample(r); v != 3*time.Millisecond {
			t.Fatalf("fixed 3ms sampled %v", v)
		}
	}

	a, b := 100*time.Microsecond, time.Millisecond
	uni := workloads.DurationDist{Kind: workloads.Uniform, A: a, B: b}
	lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
	var sum float64
	for range n {
		v := uni.Sample(r)
		if v < a || v > b {
			t.Fatalf("uniform(%v,%v) sampled %v", a, b, v)
		}
		lo, hi = min(lo, v), max(hi, v)
		sum += float64(v)
	}
	if span := b - a; lo > a+span/100 || hi < b-span/100 {
		t.Errorf("uniform(%v,%v) over %d draws covered only [%v, %v]", a, b, n, lo, hi)
	}
	if mean, want := sum/n, float64(uni.Mean()); math.Abs(mean-want) > 0.02*want {
		t.Errorf("uniform mean %v, want %v", time.Duration(mean), uni.Mean())
	}
	// A degenerate uniform is its one value.
	if v := (workloads.DurationDist{Kind: workloads.Uniform, A: b, B: b}).Sample(r); v != b {
		t.Errorf("uniform(%v,%v) sampled %v", b, b, v)
	}

	for _, mean := range []time.Duration{200 * time.Microsecond, 5 * time.Millisecond} {
		exp := workloads.DurationDist{Kind: workloads.Exp, A: mean}
		sum = 0
		var below int
		for range n {
			v := exp.Sample(r)
			if v < 0 || v > 20*mean {
				t.Fatalf("exp(%v) sampled %v: outside [0, 20 means]", mean, v)
			}
			if v < mean {
				below++
			}
			sum += float64(v)
		}
		if got := sum / n; math.Abs(got-float64(mean)) > 0.1*float64(mean) {
			t.Errorf("exp(%v): mean of %d draws %v, want within 10%%", mean, n, time.Duration(got))
		}
		// An exponential has 1-1/e ≈ 63% of its mass below the mean.
		if frac := float64(below) / n; math.Abs(frac-(1-1/math.E)) > 0.02 {
			t.Errorf("exp(%v): %.3f of draws below the mean, want about 0.632", mean, frac)
		}
	}
}

func TestDurationDistSampleRepeatable(t *testing.T) {
	d := workloads.DurationDist{Kind: workloads.Exp, A: time.Millisecond}
	r1, r2 := rand.New(rand.NewPCG(7, 7)), rand.New(rand.NewPCG(7, 7))
	for i := range 100 {
		if a, b := d.Sample(r1), d.Sample(r2); a != b {
			t.Fatalf("draw %d differs with the same seed: %v vs %v", i, a, b)
		}
	}
}

func TestIntDistSample(t *testing.T) {
	const n = 200_000
	r := rand.New(rand.NewPCG(3, 4))
	if v := workloads.FixedInt(4).Sample(r); v != 4 {
		t.Errorf("FixedInt(4) sampled %d", v)
	}
	for _, c := range []struct {
		d    workloads.IntDist
		want map[int]float64 // expected shares
	}{
		{workloads.IntDist{Values: []int{1, 2, 3}, Weights: []float64{0.7, 0.2, 0.1}}, map[int]float64{1: 0.7, 2: 0.2, 3: 0.1}},
		// Weights are normalized when drawn.
		{workloads.IntDist{Values: []int{2, 5}, Weights: []float64{1, 3}}, map[int]float64{2: 0.25, 5: 0.75}},
		// A zero weight is never drawn.
		{workloads.IntDist{Values: []int{1, 2, 3}, Weights: []float64{0.5, 0, 0.5}}, map[int]float64{1: 0.5, 2: 0, 3: 0.5}},
	} {
		counts := map[int]int{}
		for range n {
			counts[c.d.Sample(r)]++
		}
		for v, cnt := range counts {
			if _, ok := c.want[v]; !ok {
				t.Errorf("%v sampled %d, not one of its values", c.d, v)
			}
			_ = cnt
		}
		for v, share := range c.want {
			got := float64(counts[v]) / n
			if math.Abs(got-share) > 0.01 {
				t.Errorf("%v: value %d drawn %.4f of the time, want %.2f", c.d, v, got, share)
			}
			if share == 0 && counts[v] != 0 {
				t.Errorf("%v: zero-weight value %d drawn %d times", c.d, v, counts[v])
			}
		}
		if m := c.d.Max(); m != c.d.Values[len(c.d.Values)-1] {
			t.Errorf("%v: Max %d", c.d, m)
		}
	}
	if m := (workloads.IntDist{}).Max(); m != 0 {
		t.Errorf("empty IntDist Max %d", m)
	}
}

func TestIntDistText(t *testing.T) {
	for _, c := range []struct {
		in   string
		want workloads.IntDist
		str  string
	}{
		{"2", workloads.FixedInt(2), "2"},
		{" 5 ", workloads.FixedInt(5), "5"},
		{"1:0.7,2:0.3", workloads.IntDist{Values: []int{1, 2}, Weights: []float64{0.7, 0.3}}, "1:0.7,2:0.3"},
		{"3:1, 1:2", workloads.IntDist{Values: []int{1, 3}, Weights: []float64{2, 1}}, "1:2,3:1"}, // sorted by value
	} {
		var d workloads.IntDist
		if err := d.UnmarshalText([]byte(c.in)); err != nil {
			t.Errorf("UnmarshalText(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(d, c.want) || d.String() != c.str {
			t.Errorf("UnmarshalText(%q) = %+v (%q), want %+v (%q)", c.in, d, d.String(), c.want, c.str)
		}
		var again workloads.IntDist
		if err := again.UnmarshalText([]byte(d.String())); err != nil || !reflect.DeepEqual(again, d) {
			t.Errorf("text round trip of %q: %+v, %v", c.in, again, err)
		}
	}
	for _, in := range []string{"", "x", "1:", "1:a", "a:0.5", "1:0.5,,2:0.5", "1.5"} {
		var d workloads.IntDist
		if err := d.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("UnmarshalText(%q) accepted it as %+v", in, d)
		}
	}
}

func TestIntDistJSON(t *testing.T) {
	weighted := workloads.IntDist{Values: []int{1, 2}, Weights: []float64{0.7, 0.3}}
	for _, c := range []struct {
		in   string
		want workloads.IntDist
	}{
		{`3`, workloads.FixedInt(3)},
		{`{"1": 0.7, "2": 0.3}`, weighted},
		{`{"2": 0.3, "1": 0.7}`, weighted},
		{`{"4": 1}`, workloads.IntDist{Values: []int{4}, Weights: []float64{1}}},
	} {
		var d workloads.IntDist
		if err := json.Unmarshal([]byte(c.in), &d); err != nil {
			t.Errorf("json %s: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(d, c.want) {
			t.Errorf("json %s = %+v, want %+v", c.in, d, c.want)
		}
	}
	for _, in := range []string{`"x"`, `[1, 2]`, `1.5`, `{"a": 1}`, `{"1": "x"}`} {
		var d workloads.IntDist
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("json %s accepted as %+v", in, d)
		}
	}
	for _, d := range []workloads.IntDist{workloads.FixedInt(5), weighted} {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var again workloads.IntDist
		if err := json.Unmarshal(b, &again); err != nil || !reflect.DeepEqual(again, d) {
			t.Errorf("JSON round trip of %v via %s: %+v, %v", d, b, again, err)
		}
	}
	if b, _ := json.Marshal(workloads.FixedInt(5)); string(b) != "5" {
		t.Errorf("FixedInt(5) marshals as %s, want a number", b)
	}
	// Through a profile file.
	p, err := workloads.Parse([]byte(`{"depth": {"1": 0.7, "2": 0.3}}`), ".json")
	if err != nil || !reflect.DeepEqual(p.Depth, weighted) {
		t.Errorf("JSON profile depth mapping: %+v, %v", p.Depth, err)
	}
	p, err = workloads.Parse([]byte(`{"depth": 4}`), ".json")
	if err != nil || !reflect.DeepEqual(p.Depth, workloads.FixedInt(4)) {
		t.Errorf("JSON profile depth number: %+v, %v", p.Depth, err)
	}
}

func TestIntDistYAML(t *testing.T) {
	weighted := workloads.IntDist{Values: []int{1, 2}, Weights: []float64{0.7, 0.3}}
	for _, c := range []struct {
		in   string
		want workloads.IntDist
	}{
		{"depth: 3", workloads.FixedInt(3)},
		{"depth: '1:0.7,2:0.3'", weighted},
		{"depth: {1: 0.7, 2: 0.3}", weighted},
		{"depth:\n  2: 0.3\n  1: 0.7\n", weighted},
	} {
		var v struct {
			Depth workloads.IntDist `yaml:"depth"`
		}
		if err := yaml.Unmarshal([]byte(c.in), &v); err != nil {
			t.Errorf("yaml %q: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(v.Depth, c.want) {
			t.Errorf("yaml %q = %+v, want %+v", c.in, v.Depth, c.want)
		}
		p, err := workloads.Parse([]byte(c.in), ".yaml")
		if err != nil || !reflect.DeepEqual(p.Depth, c.want) {
			t.Errorf("profile %q: depth %+v, %v", c.in, p.Depth, err)
		}
	}
	for _, in := range []string{"depth: [1, 2]", "depth: {a: 1}", "depth: {1: x}", "depth: deep"} {
		var v struct {
			Depth workloads.IntDist `yaml:"depth"`
		}
		if err := yaml.Unmarshal([]byte(in), &v); err == nil {
			t.Errorf("yaml %q accepted as %+v", in, v.Depth)
		}
	}
	for _, d := range []workloads.IntDist{workloads.FixedInt(5), weighted} {
		b, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var again workloads.IntDist
		if err := yaml.Unmarshal(b, &again); err != nil || !reflect.DeepEqual(again, d) {
			t.Errorf("YAML round trip of %v via %q: %+v, %v", d, b, again, err)
		}
	}
}

func TestDurationAndLeaseText(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "30s": 30 * time.Second, "1m30s": 90 * time.Second, " 250ms ": 250 * time.Millisecond, "-1s": -time.Second} {
		var d workloads.Duration
		if err := d.UnmarshalText([]byte(in)); err != nil || time.Duration(d) != want {
			t.Errorf("Duration %q = %v, %v; want %v", in, time.Duration(d), err, want)
		}
		b, _ := d.MarshalText()
		var again workloads.Duration
		if err := again.UnmarshalText(b); err != nil || again != d {
			t.Errorf("Duration round trip of %q via %q: %v, %v", in, b, time.Duration(again), err)
		}
	}
	for _, in := range []string{"", "30", "5x", "soon"} {
		var d workloads.Duration
		if err := d.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("Duration %q accepted as %v", in, time.Duration(d))
		}
	}

	for in, want := range map[string]time.Duration{"watchdog": 0, "": 0, "10s": 10 * time.Second, "1m": time.Minute} {
		var l workloads.Lease
		l.Fixed = time.Hour // overwritten
		if err := l.UnmarshalText([]byte(in)); err != nil || l.Fixed != want {
			t.Errorf("Lease %q = %v, %v; want %v", in, l.Fixed, err, want)
		}
		b, _ := l.MarshalText()
		var again workloads.Lease
		if err := again.UnmarshalText(b); err != nil || again != l {
			t.Errorf("Lease round trip of %q via %q: %v, %v", in, b, again, err)
		}
	}
	if s := (workloads.Lease{}).String(); s != "watchdog" {
		t.Errorf("zero lease prints %q", s)
	}
	if s := (workloads.Lease{Fixed: 10 * time.Second}).String(); s != "10s" {
		t.Errorf("10s lease prints %q", s)
	}
	for _, in := range []string{"-5s", "0s", "forever", "10"} {
		var l workloads.Lease
		if err := l.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("Lease %q accepted as %v", in, l)
		}
	}
}
