package faults

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Stream says which direction of a proxied connection a toxic acts on.
type Stream string

// The directions: client→Redis, Redis→client, or both.
const (
	Upstream   Stream = "upstream"
	Downstream Stream = "downstream"
	Both       Stream = "both"
)

func (s Stream) streams() []string {
	switch s {
	case Upstream, Downstream:
		return []string{string(s)}
	}
	return []string{string(Upstream), string(Downstream)}
}

// toxicFault adds the same toxic to every proxy of a target, in each
// direction asked, and removes them all on revert.
type toxicFault struct {
	kind, target, detail string
	proxies              []*Proxy
	stream               Stream
	attrs                map[string]int64
	toxicity             float32
}

// seq makes toxic names unique, so overlapping faults never collide.
var seq atomic.Int64

func (f *toxicFault) Kind() string   { return f.kind }
func (f *toxicFault) Target() string { return f.target }
func (f *toxicFault) Detail() string { return f.detail }

func (f *toxicFault) Inject(ctx context.Context) (func(context.Context) error, error) {
	typ := f.kind
	if typ == "blackhole" {
		typ = "timeout"
	}
	type added struct {
		p    *Proxy
		name string
	}
	var done []added
	revert := func(ctx context.Context) error {
		var errs []error
		for _, a := range done {
			errs = append(errs, a.p.RemoveToxic(ctx, a.name))
		}
		return errors.Join(errs...)
	}
	n := seq.Add(1)
	for _, p := range f.proxies {
		for _, s := range f.stream.streams() {
			name := fmt.Sprintf("%s_%s_%d", f.kind, s, n)
			if err := p.AddToxic(Toxic{Name: name, Type: typ, Stream: s, Toxicity: f.toxicity, Attributes: f.attrs}); err != nil {
				return nil, errors.Join(err, revert(ctx))
			}
			done = append(done, added{p, name})
		}
	}
	return revert, nil
}

func millis(d time.Duration) int64 { return d.Milliseconds() }

// Latency delays every chunk of data by latency ± jitter (uniform).
func Latency(target string, ps []*Proxy, latency, jitter time.Duration, s Stream) Fault {
	return &toxicFault{kind: "latency", target: target, proxies: ps, stream: s,
		detail: fmt.Sprintf("%v ±%v %s", latency, jitter, s),
		attrs:  map[string]int64{"latency": millis(latency), "jitter": millis(jitter)}}
}

// Bandwidth limits throughput to kbps kilobytes per second.
func Bandwidth(target string, ps []*Proxy, kbps int64, s Stream) Fault {
	return &toxicFault{kind: "bandwidth", target: target, proxies: ps, stream: s,
		detail: fmt.Sprintf("%d KB/s %s", kbps, s), attrs: map[string]int64{"rate": kbps}}
}

// Blackhole drops all data while connections stay open: requests vanish
// and callers wait for their timeouts, as in a network partition. When it
// is reverted, toxiproxy closes the connections it held.
func Blackhole(target string, ps []*Proxy, s Stream) Fault {
	return &toxicFault{kind: "blackhole", target: target, proxies: ps, stream: s,
		detail: fmt.Sprintf("drop all data %s", s), attrs: map[string]int64{"timeout": 0}}
}

// ResetPeer resets (TCP RST) each connection after after on its first data.
func ResetPeer(target string, ps []*Proxy, after time.Duration) Fault {
	return &toxicFault{kind: "reset_peer", target: target, proxies: ps, stream: Upstream,
		detail: fmt.Sprintf("RST after %v", after), attrs: map[string]int64{"timeout": millis(after)}}
}

// Slicer cuts data into chunks of about avg bytes (± variation), each
// delayed by delay: stresses partial reads in the client's protocol parser.
func Slicer(target string, ps []*Proxy, avg, variation int64, delay time.Duration, s Stream) Fault {
	return &toxicFault{kind: "slicer", target: target, proxies: ps, stream: s,
		detail: fmt.Sprintf("%d±%d B chunks every %v %s", avg, variation, delay, s),
		attrs:  map[string]int64{"average_size": avg, "size_variation": variation, "delay": delay.Microseconds()}}
}

// SlowClose delays the close of each connection by delay after EOF.
func SlowClose(target string, ps []*Proxy, delay time.Duration) Fault {
	return &toxicFault{kind: "slow_close", target: target, proxies: ps, stream: Downstream,
		detail: fmt.Sprintf("close delayed %v", delay), attrs: map[string]int64{"delay": millis(delay)}}
}

// downFault disables proxies: connections close, new ones are refused.
type downFault struct {
	target  string
	proxies []*Proxy
}

// Down takes the link down: every connection is closed and new ones are
// refused until it is reverted (a partition that clients notice at once,
// unlike Blackhole).
func Down(target string, ps []*Proxy) Fault { return &downFault{target, ps} }

func (f *downFault) Kind() string   { return "down" }
func (f *downFault) Target() string { return f.target }
func (f *downFault) Detail() string { return "connections closed, new ones refused" }

func (f *downFault) Inject(context.Context) (func(context.Context) error, error) {
	revert := func(context.Context) error {
		var errs []error
		for _, p := range f.proxies {
			errs = append(errs, p.SetEnabled(true))
		}
		return errors.Join(errs...)
	}
	for _, p := range f.proxies {
		if err := p.SetEnabled(false); err != nil {
			return nil, errors.Join(err, revert(context.Background()))
		}
	}
	return revert, nil
}
