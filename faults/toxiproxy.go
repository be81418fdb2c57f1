package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	tpclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Toxiproxy makes the TCP proxies that network faults act on: an
// in-process toxiproxy server by default (nothing to install, listeners on
// 127.0.0.1:0), or an external toxiproxy server reached through its HTTP
// API (for users who run it as a container or a service).
type Toxiproxy struct {
	srv    *toxiproxy.ApiServer // embedded
	client *tpclient.Client     // external
	url    string               // external API, as given
	host   string               // where new proxies listen

	mu      sync.Mutex
	proxies []*Proxy
	closed  bool
}

// ConfigError is bad input naming its flag and the fix; the CLIs exit 2 on it.
type ConfigError struct {
	Field, Value, Fix string
}

// Error names the flag, the value and the fix.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("faults: --%s %q: %s", e.Field, e.Value, e.Fix)
}

// IsUsage marks ConfigError as bad input for the CLIs' exit-code mapping.
func (e *ConfigError) IsUsage() bool { return true }

// NewEmbedded starts nothing yet: proxies are created on demand inside
// this process and listen on 127.0.0.1 ephemeral ports.
func NewEmbedded() *Toxiproxy {
	// Toxics log through zerolog's global logger, not the server's; a
	// benchmark's terminal is no place for their trace lines.
	zerolog.SetGlobalLevel(zerolog.Disabled)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	return &Toxiproxy{srv: srv, host: "127.0.0.1"}
}

// Connect uses the external toxiproxy server whose HTTP API is at rawURL
// (e.g. http://127.0.0.1:8474). New proxies listen on the URL's host at
// ephemeral ports, so the server must run where this process can reach
// those ports (a host-network container, or a local service).
func Connect(ctx context.Context, rawURL string) (*Toxiproxy, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ConfigError{Field: "toxiproxy", Value: rawURL, Fix: "give the toxiproxy HTTP API as a URL, e.g. http://127.0.0.1:8474"}
	}
	host := u.Hostname()
	t := &Toxiproxy{client: tpclient.NewClient(u.Scheme + "://" + u.Host), url: rawURL, host: host}
	done := make(chan error, 1)
	go func() { _, err := t.client.Version(); done <- err }()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	case <-time.After(5 * time.Second):
		err = errors.New("no answer in 5s")
	}
	if err != nil {
		return nil, fmt.Errorf("faults: toxiproxy at %s: %w (start it, e.g. docker run --net=host ghcr.io/shopify/toxiproxy, or drop --toxiproxy to use the embedded one)", rawURL, err)
	}
	return t, nil
}

// String says which toxiproxy this is.
func (t *Toxiproxy) String() string {
	if t.srv != nil {
		return "embedded toxiproxy"
	}
	return "toxiproxy at " + t.url
}

// NewProxy makes a proxy named name (unique among this Toxiproxy's
// proxies) in front of upstream and starts it.
func (t *Toxiproxy) NewProxy(name, upstream string) (*Proxy, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errors.New("faults: toxiproxy is closed")
	}
	listen := net.JoinHostPort(t.host, "0")
	p := &Proxy{t: t, name: name, upstream: upstream}
	if t.srv != nil {
		p.emb = toxiproxy.NewProxy(t.srv, name, listen, upstream)
		if err := t.srv.Collection.Add(p.emb, true); err != nil {
			return nil, fmt.Errorf("faults: proxy %s: %w", name, err)
		}
		p.emb.Lock()
		p.listen = p.emb.Listen
		p.emb.Unlock()
	} else {
		ext, err := t.client.CreateProxy(name, listen, upstream)
		if err != nil {
			return nil, fmt.Errorf("faults: proxy %s on %s: %w", name, t.url, err)
		}
		p.ext, p.listen = ext, ext.Listen
	}
	t.proxies = append(t.proxies, p)
	return p, nil
}

// Close removes every proxy this Toxiproxy made (closing their
// connections). It is idempotent.
func (t *Toxiproxy) Close() error {
	t.mu.Lock()
	ps := t.proxies
	t.proxies, t.closed = nil, true
	t.mu.Unlock()
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.remove())
	}
	return errors.Join(errs...)
}

// Remove stops p, closes its connections and forgets it.
func (t *Toxiproxy) Remove(p *Proxy) error {
	t.mu.Lock()
	i := slices.Index(t.proxies, p)
	if i >= 0 {
		t.proxies = slices.Delete(t.proxies, i, i+1)
	}
	t.mu.Unlock()
	if i < 0 {
		return nil
	}
	return p.remove()
}

// Proxy is one TCP proxy in front of one Redis server: the path of one
// client's connections, so a fault can hit that client alone.
type Proxy struct {
	t        *Toxiproxy
	name     string
	emb      *toxiproxy.Proxy
	ext      *tpclient.Proxy
	mu       sync.Mutex // guards listen, upstream and the external proxy's fields
	listen   string
	upstream string
}

// Name is the proxy's name.
func (p *Proxy) Name() string { return p.name }

// Addr is where clients connect instead of Redis.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.listen
}

// Upstream is the Redis address the proxy forwards to.
func (p *Proxy) Upstream() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.upstream
}

// Toxic is one toxiproxy toxic: Type is latency, bandwidth, slow_close,
// timeout, reset_peer, slicer or limit_data; Stream is upstream
// (client→Redis) or downstream (Redis→client); Attributes are the type's
// integer attributes (milliseconds, KB/s, bytes; slicer's delay is µs).
type Toxic struct {
	Name       string           `json:"name"`
	Type       string           `json:"type"`
	Stream     string           `json:"stream"`
	Toxicity   float32          `json:"toxicity"`
	Attributes map[string]int64 `json:"attributes"`
}

// AddToxic adds t to the proxy; it acts on new and existing connections.
func (p *Proxy) AddToxic(t Toxic) error {
	if t.Toxicity == 0 {
		t.Toxicity = 1
	}
	if p.emb != nil {
		body, err := json.Marshal(t)
		if err != nil {
			return err
		}
		if _, err := p.emb.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
			return fmt.Errorf("faults: proxy %s: add %s: %w", p.name, t.Name, err)
		}
		return nil
	}
	attrs := tpclient.Attributes{}
	for k, v := range t.Attributes {
		attrs[k] = v
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.ext.AddToxic(t.Name, t.Type, t.Stream, t.Toxicity, attrs); err != nil {
		return fmt.Errorf("faults: proxy %s: add %s: %w", p.name, t.Name, err)
	}
	return nil
}

// RemoveToxic removes the toxic called name. Removing a timeout toxic
// closes the connections it held (toxiproxy's cleanup).
func (p *Proxy) RemoveToxic(ctx context.Context, name string) error {
	var err error
	if p.emb != nil {
		err = p.emb.Toxics.RemoveToxic(ctx, name)
	} else {
		p.mu.Lock()
		err = p.ext.RemoveToxic(name)
		p.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("faults: proxy %s: remove %s: %w", p.name, name, err)
	}
	return nil
}

// SetEnabled turns the proxy off (it closes every connection and refuses
// new ones: the link is down) or back on, on the same address.
func (p *Proxy) SetEnabled(on bool) error {
	if p.emb != nil {
		if on {
			if err := p.emb.Start(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
				return fmt.Errorf("faults: proxy %s: start: %w", p.name, err)
			}
			return nil
		}
		p.emb.Stop()
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	if on {
		err = p.ext.Enable()
	} else {
		err = p.ext.Disable()
	}
	if err != nil {
		return fmt.Errorf("faults: proxy %s: enabled=%v: %w", p.name, on, err)
	}
	return nil
}

// SetUpstream points the proxy at another server (as a Sentinel or DNS
// switch does after a failover); existing connections are dropped.
func (p *Proxy) SetUpstream(addr string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.emb != nil {
		p.emb.Lock()
		in := &toxiproxy.Proxy{Name: p.name, Listen: p.emb.Listen, Upstream: addr, Enabled: p.emb.Enabled}
		p.emb.Unlock()
		if err := p.emb.Update(in); err != nil {
			return fmt.Errorf("faults: proxy %s: upstream %s: %w", p.name, addr, err)
		}
	} else {
		p.ext.Upstream = addr
		if err := p.ext.Save(); err != nil {
			return fmt.Errorf("faults: proxy %s: upstream %s: %w", p.name, addr, err)
		}
	}
	p.upstream = addr
	return nil
}

func (p *Proxy) remove() error {
	if p.emb != nil {
		err := p.t.srv.Collection.Remove(p.name)
		if err != nil && !strings.Contains(err.Error(), "not found") {
			return fmt.Errorf("faults: remove proxy %s: %w", p.name, err)
		}
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ext.Delete(); err != nil {
		return fmt.Errorf("faults: remove proxy %s: %w", p.name, err)
	}
	return nil
}
