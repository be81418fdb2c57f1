package redisenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the name the Sentinels of TopologySentinel know the
// primary by (a sentinel URL's master_name).
const SentinelMaster = "lockbench"

// The Sentinels' settings: three of them, two to agree that the primary
// is down, and how long it must go unanswered first.
const (
	sentinels      = 3
	sentinelQuorum = 2
	// DefaultSentinelDownAfter is Config.SentinelDownAfter's default:
	// short, so that a killed primary is replaced in seconds, yet far
	// above a stall a loaded 2-core machine gives a healthy server.
	DefaultSentinelDownAfter = 2 * time.Second
)

// startLocalSentinels starts the Sentinels watching primary, waits until
// each sees the replica and the others, and points the Env's clients at
// them: go-redis then asks them for the primary, and follows a failover.
func (e *Env) startLocalSentinels(ctx context.Context, cfg Config, bin, dir string, primary *localNode) error {
	down := cfg.SentinelDownAfter
	if down <= 0 {
		down = DefaultSentinelDownAfter
	}
	raw, password := cfg.serverPassword()
	var addrs []string
	for i := range sentinels {
		directives := []string{
			fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d %d", SentinelMaster, primary.port, sentinelQuorum),
			fmt.Sprintf("sentinel down-after-milliseconds %s %d", SentinelMaster, down.Milliseconds()),
			// A failed election is retried after twice this: keep it short
			// too, as a run measures the failover.
			fmt.Sprintf("sentinel failover-timeout %s %d", SentinelMaster, max(5*down, 10*time.Second).Milliseconds()),
			fmt.Sprintf("sentinel parallel-syncs %s 1", SentinelMaster),
		}
		if password != "" {
			// As written in ServerArgs: quoted there, it is quoted here.
			directives = append(directives, fmt.Sprintf("sentinel auth-pass %s %s", SentinelMaster, raw))
		}
		n := &localNode{
			name:         "sentinel" + strconv.Itoa(i+1),
			bin:          bin,
			dir:          filepath.Join(dir, "sentinel"+strconv.Itoa(i+1)),
			directives:   directives,
			startTimeout: cfg.StartTimeout,
			sentinel:     true,
		}
		if err := os.MkdirAll(n.dir, 0o755); err != nil {
			return fmt.Errorf("redisenv: %s dir: %w", n.name, err)
		}
		e.closers = append(e.closers, n.close)
		var err error
		for range 5 {
			if n.port, err = freePort(); err != nil {
				return err
			}
			if err = n.start(ctx); !errors.Is(err, errPortInUse) {
				break
			}
		}
		if err != nil {
			return err
		}
		e.sentinels = append(e.sentinels, n)
		addrs = append(addrs, n.Addr())
	}
	for _, a := range addrs {
		if err := waitSentinelSees(ctx, a, cfg.StartTimeout); err != nil {
			return err
		}
	}
	e.opts = &redis.UniversalOptions{Addrs: addrs, MasterName: SentinelMaster, Password: password}
	return nil
}

// waitSentinelSees waits until the Sentinel at addr knows the primary,
// its replica and the other Sentinels: before that, a failover could not
// be elected.
func waitSentinelSees(ctx context.Context, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sc := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer sc.Close()
	var last map[string]string
	for {
		m, err := sc.Master(ctx, SentinelMaster).Result()
		if err == nil {
			last = m
			if m["num-slaves"] == "1" && m["num-other-sentinels"] == strconv.Itoa(sentinels-1) && m["flags"] == "master" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisenv: sentinel at %s does not see the primary, its replica and %d other sentinels (last %v): %w", addr, sentinels-1, last, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Sentinels are the Sentinels of TopologySentinel (nil otherwise).
func (e *Env) Sentinels() []Node {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Node(nil), e.sentinels...)
}

// followSentinels puts first among the nodes the one the Sentinels name
// primary now. It asks each Sentinel in turn, briefly: a caller must not
// hang on a Sentinel that was paused.
func (e *Env) followSentinels() {
	e.mu.Lock()
	if e.topology != TopologySentinel || len(e.sentinels) == 0 || len(e.nodes) < 2 {
		e.mu.Unlock()
		return
	}
	sentinels := append([]Node(nil), e.sentinels...)
	e.mu.Unlock()
	for _, s := range sentinels {
		addr, err := sentinelPrimary(s.Addr())
		if err != nil {
			continue
		}
		e.mu.Lock()
		for i, n := range e.nodes {
			if n.Addr() == addr && i != 0 {
				e.nodes[0], e.nodes[i] = e.nodes[i], e.nodes[0]
			}
		}
		e.mu.Unlock()
		return
	}
}

// sentinelPrimary is the primary's address as the Sentinel at addr names
// it.
func sentinelPrimary(addr string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	sc := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
	defer sc.Close()
	hp, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
	if err != nil {
		return "", err
	}
	if len(hp) != 2 {
		return "", fmt.Errorf("redisenv: sentinel at %s named the primary %v", addr, hp)
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}

// sentinelString describes the Sentinels for Env.String.
func sentinelString(ns []Node) string {
	addrs := make([]string, len(ns))
	for i, n := range ns {
		addrs[i] = n.Addr()
	}
	return fmt.Sprintf(", %d sentinels at %s (quorum %d, master %q)", len(ns), strings.Join(addrs, ","), sentinelQuorum, SentinelMaster)
}
