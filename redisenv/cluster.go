package redisenv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Slots is the number of hash slots of Redis Cluster.
const Slots = 16384

// SlotRange is an inclusive range of hash slots.
type SlotRange struct{ From, To int }

// Shard is one primary of a cluster, the slots it serves and its replicas,
// as the cluster itself sees them now.
type Shard struct {
	ID       string // the primary's cluster node ID
	Primary  Node
	Replicas []Node
	Slots    []SlotRange
}

// SlotCount is how many slots the shard serves.
func (s Shard) SlotCount() int {
	n := 0
	for _, r := range s.Slots {
		n += r.To - r.From + 1
	}
	return n
}

// Owns reports whether the shard serves slot.
func (s Shard) Owns(slot int) bool {
	for _, r := range s.Slots {
		if slot >= r.From && slot <= r.To {
			return true
		}
	}
	return false
}

// nodeView is one line of CLUSTER NODES.
type nodeView struct {
	id, addr, flags, replicaOf string
	slots                      []SlotRange
}

func (v nodeView) has(flag string) bool { return slices.Contains(strings.Split(v.flags, ","), flag) }
func (v nodeView) fail() bool           { return v.has("fail") || v.has("fail?") }
func (v nodeView) primary() bool        { return v.has("master") }

// parseClusterNodes reads CLUSTER NODES. Slot entries being migrated
// ("[slot->-id]") are not ownership and are skipped.
func parseClusterNodes(s string) []nodeView {
	var out []nodeView
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		v := nodeView{id: f[0], flags: f[2]}
		v.addr, _, _ = strings.Cut(f[1], "@")
		if i := strings.IndexByte(v.addr, ','); i >= 0 { // "ip:port@bus,hostname"
			v.addr = v.addr[:i]
		}
		if f[3] != "-" {
			v.replicaOf = f[3]
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue
			}
			a, b, isRange := strings.Cut(r, "-")
			from, err1 := strconv.Atoi(a)
			to := from
			var err2 error
			if isRange {
				to, err2 = strconv.Atoi(b)
			}
			if err1 == nil && err2 == nil {
				v.slots = append(v.slots, SlotRange{from, to})
			}
		}
		out = append(out, v)
	}
	return out
}

// ErrNotCluster is returned by the cluster operations of an Env that is
// not a Redis Cluster.
var ErrNotCluster = errors.New("redisenv: not a Redis Cluster (use --topology cluster, or a comma list of cluster seeds)")

// clusterView asks the nodes of e, in turn, for CLUSTER NODES, and returns
// the first answer from a node that is not failed in its own view.
func (e *Env) clusterView(ctx context.Context) ([]nodeView, error) {
	if e.topology != TopologyCluster {
		return nil, ErrNotCluster
	}
	var lastErr error
	for _, n := range e.Nodes() {
		c := e.nodeClient(n.Addr())
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		s, err := c.ClusterNodes(cctx).Result()
		cancel()
		_ = c.Close()
		if err != nil {
			lastErr = err
			continue
		}
		views := parseClusterNodes(s)
		self := slices.IndexFunc(views, func(v nodeView) bool { return v.has("myself") })
		if self >= 0 && views[self].fail() {
			continue
		}
		return views, nil
	}
	return nil, fmt.Errorf("redisenv: cluster: no node answered CLUSTER NODES: %v", lastErr)
}

// nodeClient is a one-connection, no-retry client to one node of e.
func (e *Env) nodeClient(addr string) *redis.Client {
	e.mu.Lock()
	dial := e.opts.Dialer
	tls := e.opts.TLSConfig
	user, pass := e.opts.Username, e.opts.Password
	e.mu.Unlock()
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: 2, PoolSize: 1,
		Dialer: dial, TLSConfig: tls, Username: user, Password: pass})
}

// nodeByAddr returns e's handle for the node the cluster knows as addr,
// or an unmanaged handle when e did not start it.
func (e *Env) nodeByAddr(addr string) Node {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, n := range e.nodes {
		if n.Addr() == addr {
			return n
		}
		if c, ok := n.(interface{ clusterAddr() string }); ok && c.clusterAddr() == addr {
			return n
		}
	}
	return externalNode{addr: addr}
}

// Shards returns the cluster's shards as the cluster sees them now, in
// slot order: after a failover the promoted replica is its shard's
// primary, and a failed node is left out.
func (e *Env) Shards(ctx context.Context) ([]Shard, error) {
	views, err := e.clusterView(ctx)
	if err != nil {
		return nil, err
	}
	var shards []Shard
	byID := map[string]int{}
	for _, v := range views {
		if v.primary() && len(v.slots) > 0 && !v.fail() {
			byID[v.id] = len(shards)
			shards = append(shards, Shard{ID: v.id, Primary: e.nodeByAddr(v.addr), Slots: v.slots})
		}
	}
	for _, v := range views {
		if i, ok := byID[v.replicaOf]; ok && !v.fail() {
			shards[i].Replicas = append(shards[i].Replicas, e.nodeByAddr(v.addr))
		}
	}
	slices.SortFunc(shards, func(a, b Shard) int { return a.Slots[0].From - b.Slots[0].From })
	return shards, nil
}

// ShardOf returns the shard serving slot now.
func (e *Env) ShardOf(ctx context.Context, slot int) (Shard, error) {
	shards, err := e.Shards(ctx)
	if err != nil {
		return Shard{}, err
	}
	for _, s := range shards {
		if s.Owns(slot) {
			return s, nil
		}
	}
	return Shard{}, fmt.Errorf("redisenv: cluster: no live primary serves slot %d", slot)
}

// KeySlot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of the
// key, or of its hash tag (the text between the first "{" and the next
// "}", when not empty), modulo 16384.
func KeySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key)) % Slots
}

// crc16 is CRC-16/XMODEM (poly 0x1021, init 0), the one Redis Cluster uses.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
