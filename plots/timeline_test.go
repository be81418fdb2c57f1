package plots_test

import (
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
)

// render saves p as name.png and name.svg in dir and returns the decoded
// PNG and the SVG's text.
func render(t *testing.T, p *plot.Plot, dir, name string) (image.Image, string) {
	t.Helper()
	for _, ext := range []string{".png", ".svg"} {
		if err := plots.Save(p, filepath.Join(dir, name+ext)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(filepath.Join(dir, name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s.png: %v", name, err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
	if err != nil {
		t.Fatal(err)
	}
	return img, string(svg)
}

// count is the number of pixels of img for which is holds, below the
// title and legend (the top fifth): the legend's swatches must not pass
// for data.
func count(img image.Image, is func(r, g, b uint8) bool) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y + bd.Dy()/5; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if is(uint8(r>>8), uint8(g>>8), uint8(b>>8)) {
				n++
			}
		}
	}
	return n
}

// Colour classes, loose enough for anti-aliasing: the charts' saturated
// red (overlaps, SLO), blue (holds, first series), orange (held after
// told lost) and green (best under SLO).
func red(r, g, b uint8) bool    { return r > 180 && g < 90 && b < 90 }
func blue(r, g, b uint8) bool   { return b > 150 && r < 90 && g < 140 }
func orange(r, g, b uint8) bool { return r > 220 && g > 110 && g < 170 && b < 60 }
func green(r, g, b uint8) bool  { return g > 120 && r < 60 && b < 100 }

func mustContain(t *testing.T, name, svg string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if !strings.Contains(svg, s) {
			t.Errorf("%s.svg lacks %q", name, s)
		}
	}
}

func mustLack(t *testing.T, name, svg string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(svg, s) {
			t.Errorf("%s.svg has %q, want none", name, s)
		}
	}
}

// watchdogLoss is a chaos run's picture: A is paused, its lease runs out,
// B acquires while A still believes it holds the lock (told it lost, A
// carries on), C notices a loss and stops.
func watchdogLoss() (*results.Timeline, []results.Event) {
	tl := &results.Timeline{
		Lock: "orders",
		Holds: []results.Holder{
			{Owner: "A", Mode: "exclusive", Acquired: 0.5, Released: 3},
			{Owner: "B", Mode: "exclusive", Acquired: 3.1, Released: 4.5},
			{Owner: "A", Mode: "exclusive", Acquired: 4.8, Released: 25.2, LostIgnored: true},
			{Owner: "B", Mode: "exclusive", Acquired: 15.2, Released: 22},
			{Owner: "C", Mode: "exclusive", Acquired: 22.1, Released: 22.1},
			{Owner: "C", Mode: "exclusive", Acquired: 26, Released: 29, Lost: true},
		},
		Overlaps: []results.Window{{Start: 15.2, End: 25.2}},
	}
	evs := []results.Event{{Kind: "pause", Target: "client:0", Start: 5, End: 17}, {Kind: "kill", Target: "redis:primary", Start: 27, End: 27}}
	return tl, evs
}

func TestTimelineOverlap(t *testing.T) {
	tl, evs := watchdogLoss()
	p, err := plots.Timeline("watchdog-loss", tl, evs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	img, svg := render(t, p, dir, "timeline")
	checkFiles(t, dir, "timeline")
	mustContain(t, "timeline", svg, "watchdog-loss", "lock orders: 1 overlap, 10.00 s unsafe",
		"time since start (s)", "owner (by first acquisition)",
		">held<", "held after told lost", "lost (stopped)", "overlap (violation)", ">fault<",
		"pause client:0", "kill redis:primary", ">A<", ">B<", ">C<")
	if n := count(img, red); n < 200 {
		t.Errorf("%d red pixels: the overlap should be marked in red", n)
	}
	if n := count(img, orange); n < 200 {
		t.Errorf("%d orange pixels: A's hold after it was told it lost should show", n)
	}
	if n := count(img, blue); n < 200 {
		t.Errorf("%d blue pixels: the ordinary holds should show", n)
	}
}

func TestTimelineNoOverlap(t *testing.T) {
	// One owner, one zero-length hold among ordinary ones, no faults.
	tl := &results.Timeline{Lock: "solo", Holds: []results.Holder{
		{Owner: "only", Acquired: 1, Released: 1},
		{Owner: "only", Acquired: 2, Released: 5},
	}}
	p, err := plots.Timeline("calm", tl, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	img, svg := render(t, p, dir, "calm")
	checkFiles(t, dir, "calm")
	mustContain(t, "calm", svg, "lock solo: no overlap", ">held<", ">only<")
	mustLack(t, "calm", svg, "overlap (violation)", ">fault<", "held after told lost", "lost (stopped)")
	if n := count(img, red); n != 0 {
		t.Errorf("%d red pixels without an overlap; red is for violations", n)
	}
	if n := count(img, blue); n < 200 {
		t.Errorf("%d blue pixels: the holds should show", n)
	}
}

func TestTimelineZeroLengthHold(t *testing.T) {
	// A hold that took no time still happened: it must leave a mark.
	tl := &results.Timeline{Lock: "x", Holds: []results.Holder{{Owner: "a", Acquired: 3, Released: 3}}}
	p, err := plots.Timeline("instant", tl, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, _ := render(t, p, t.TempDir(), "instant")
	if n := count(img, blue); n == 0 {
		t.Error("a zero-length hold is invisible")
	}
}

func TestTimelineManyOwners(t *testing.T) {
	// 40 lockimpl owners ("<client UUID>:<n>") and 600 holds, some
	// omitted: the names are shortened but stay distinct.
	clients := []string{"3f2a9c1e-77b2-4c1d-9e0a-5d1c2e3f4a5b", "9b01d2aa-1c2d-4e5f-8a9b-0c1d2e3f4a5b"}
	var holds []results.Holder
	for i := range 600 {
		owner := fmt.Sprintf("%s:%d", clients[i%2], 1+i%40/2)
		a := float64(i) * 0.1
		holds = append(holds, results.Holder{Owner: owner, Acquired: a, Released: a + 0.05})
	}
	tl := &results.Timeline{Lock: "inventory", Holds: holds, Omitted: 66,
		Overlaps: []results.Window{{Start: 30, End: 30.000004}}}
	evs := []results.Event{{Kind: "latency", Target: "clients", Start: 10, End: 20}, {Kind: "latency", Target: "clients", Start: 40, End: 45}, {Kind: "blackhole", Target: "client:1", Start: 50, End: 52, Err: "iptables: permission denied"}}
	p, err := plots.Timeline("storm", tl, evs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	img, svg := render(t, p, dir, "storm")
	checkFiles(t, dir, "storm")
	mustContain(t, "storm", svg, "1 overlap, 4 µs unsafe", "(600 of 666 holds shown)",
		"3f2a9c1e…:1<", "3f2a9c1e…:2<", "blackhole client:1 (failed)")
	mustLack(t, "storm", svg, clients[0])
	if n := strings.Count(svg, ">latency clients<"); n != 1 {
		t.Errorf("the repeated latency fault is labelled %d times, want once", n)
	}
	if n := count(img, red); n < 50 {
		t.Errorf("%d red pixels: a 4 µs overlap must still be marked", n)
	}
}

func TestTimelineNoData(t *testing.T) {
	for _, tl := range []*results.Timeline{nil, {Lock: "x"}} {
		if _, err := plots.Timeline("none", tl, nil); !errors.Is(err, plots.ErrNoData) {
			t.Errorf("Timeline(%v): %v, want ErrNoData", tl, err)
		}
	}
}
