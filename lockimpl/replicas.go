package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/lockimpl/internal/wire"
)

// replicaRefresh is how long what INFO said about a primary's replicas is
// trusted. A WAIT that acknowledges a different number rereads it sooner.
const replicaRefresh = time.Second

// replication is what INFO says about one primary.
type replication struct {
	replicas int  // connected_slaves
	aof      bool // aof_enabled, and the server has WAITAOF (7.2+)
	cluster  bool // cluster_enabled
	at       time.Time
}

// replicaCache holds a replication per primary address ("" for a client
// that is not a cluster's), refreshed by one caller at a time while the
// others use what is there.
type replicaCache struct {
	nodes sync.Map // addr -> *replicaEntry
}

type replicaEntry struct {
	cur     atomic.Pointer[replication]
	reading sync.Mutex
	// loaded are the SHA1s of the scripts seen to run on the primary. A
	// replica-synced acquisition sends any other by EVAL: sent by EVALSHA
	// and refused with NOSCRIPT, its pipelined WAIT would still block for
	// its whole timeout before the EVAL and a second WAIT could be sent.
	loaded sync.Map
}

// knows reports whether s ran on the primary since it last lost its
// script cache.
func (e *replicaEntry) knows(s wire.Script) bool {
	_, ok := e.loaded.Load(s.Hash())
	return ok
}

// learn records that s ran on the primary.
func (e *replicaEntry) learn(s wire.Script) { e.loaded.Store(s.Hash(), struct{}{}) }

// forget records that the primary lost its script cache (a restart,
// failover or SCRIPT FLUSH).
func (e *replicaEntry) forget() { e.loaded.Clear() }

func (rc *replicaCache) entry(addr string) *replicaEntry {
	if e, ok := rc.nodes.Load(addr); ok {
		return e.(*replicaEntry)
	}
	e, _ := rc.nodes.LoadOrStore(addr, &replicaEntry{})
	return e.(*replicaEntry)
}

// get returns the primary's replication, reading INFO when it is unknown
// or older than replicaRefresh.
func (e *replicaEntry) get(ctx context.Context, node node) (replication, error) {
	r := e.cur.Load()
	if r != nil && time.Since(r.at) < replicaRefresh {
		return *r, nil
	}
	if r != nil {
		if !e.reading.TryLock() {
			return *r, nil // another caller is reading it
		}
	} else {
		e.reading.Lock()
		if r = e.cur.Load(); r != nil {
			e.reading.Unlock()
			return *r, nil
		}
	}
	defer e.reading.Unlock()
	// Sent once, like the acquisition waiting on it: go-redis's retries
	// would make an acquisition against a dead server fail four times
	// slower than one that found it dead itself.
	cmd := redis.NewCmd(ctx, "info")
	_ = node.Process(ctx, wire.Once(cmd))
	info, err := cmd.Text()
	var rerr redis.Error
	switch {
	case errors.As(err, &rerr):
		// INFO refused (renamed or forbidden): replicas cannot be counted,
		// so none is waited for, as on a server without replicas.
		info = ""
	case err != nil && r != nil:
		// Unreachable for now: keep what was known, so that a flaky
		// connection costs the acquisitions nothing they would not
		// have failed on anyway.
		return *r, nil
	case err != nil:
		return replication{}, err
	}
	fresh := parseReplication(info)
	fresh.at = time.Now()
	e.cur.Store(&fresh)
	return fresh, nil
}

// stale makes the next get read INFO again.
func (e *replicaEntry) stale() {
	if r := e.cur.Load(); r != nil {
		old := *r
		old.at = time.Time{}
		e.cur.Store(&old)
	}
}

// parseReplication reads connected_slaves, aof_enabled and redis_version
// from an INFO reply.
func parseReplication(info string) replication {
	var r replication
	var aof bool
	var major, minor int
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "connected_slaves":
			r.replicas, _ = strconv.Atoi(v)
		case "aof_enabled":
			aof = v == "1"
		case "cluster_enabled":
			r.cluster = v == "1"
		case "redis_version":
			parts := strings.SplitN(v, ".", 3)
			if len(parts) >= 2 {
				major, _ = strconv.Atoi(parts[0])
				minor, _ = strconv.Atoi(parts[1])
			}
		}
	}
	r.aof = aof && (major > 7 || major == 7 && minor >= 2)
	return r
}

// syncResult is what the WAIT after an acquisition found.
type syncResult struct {
	connected int // replicas connected when it was sent
	acked     int
	required  int  // acknowledgements it needed (0: no WAIT sent)
	min       bool // required is Options.MinReplicaAcks
	// refused is the server's error reply to the WAIT itself (a
	// renamed command, an ACL, WAITAOF with AOF turned off since INFO
	// was read): no acknowledgement, and the reason to say.
	refused error
}

// failed reports whether fewer replicas acknowledged than it needed.
func (s syncResult) failed() bool { return s.required > 0 && s.acked < s.required }

func (s syncResult) err(timeout time.Duration) error {
	if s.refused != nil {
		return fmt.Errorf("%w: the server refused the replica-sync command (%v); the acquisition was given back: allow the command, or set Options.SkipReplicaSync",
			ErrReplicaSync, s.refused)
	}
	if s.min {
		return fmt.Errorf("%w by %d of the %d replicas Options.MinReplicaAcks requires within %v (%d connected); the acquisition was given back",
			ErrReplicaSync, s.acked, s.required, timeout, s.connected)
	}
	return fmt.Errorf("%w within %v (%d connected); the acquisition was given back: raise Options.ReplicaSyncTimeout, or set Options.SkipReplicaSync",
		ErrReplicaSync, timeout, s.connected)
}

// required is how many acknowledgements an acquisition needs with
// replicas connected: one by default, MinReplicaAcks when set (even with
// none connected).
func (c *Client) required(replicas int) int {
	if c.opts.MinReplicaAcks > 0 {
		return c.opts.MinReplicaAcks
	}
	return min(replicas, 1)
}

// runAcquire sends an acquire command, never resent. On a primary with
// connected replicas, and unless Options.SkipReplicaSync, it is followed in
// the same round trip, on the same connection, by WAIT <replicas> <timeout>
// (WAITAOF 1 <replicas> <timeout> when the primary has AOF on), as
// Redisson's checkLockSyncedSlaves does; the result says how many
// acknowledged.
func (c *Client) runAcquire(ctx context.Context, name string, cmd command) (any, syncResult, error) {
	if c.opts.SkipReplicaSync {
		res, err := c.acquireOnce(ctx, cmd)
		return res, syncResult{}, err
	}
	node, addr, err := c.primaryFor(ctx, name)
	if err != nil {
		return nil, syncResult{}, err
	}
	e := c.repl.entry(addr)
	r, err := e.get(ctx, node)
	if err != nil {
		return nil, syncResult{}, err
	}
	if r.cluster && c.direct == nil && c.acq == nil {
		return nil, syncResult{}, errClusterPipeliner
	}
	need := c.required(r.replicas)
	if need == 0 {
		// Through the client itself, which follows cluster redirects.
		res, err := c.acquireOnce(ctx, cmd)
		return res, syncResult{}, err
	}
	// The WAITs of one acquisition share ReplicaSyncTimeout: a script the
	// primary no longer had is sent again with what is left of it.
	start := time.Now()
	// WAIT for every connected replica (it returns when all did), and
	// for as many as MinReplicaAcks asks even if INFO counts fewer.
	want := max(r.replicas, need)
	res, acked, refused, err := c.evalThenWait(ctx, node, cmd, r.aof, want, !e.knows(cmd.script), c.opts.ReplicaSyncTimeout)
	if wire.IsNoScript(err) {
		e.forget()
		res, acked, refused, err = c.evalThenWait(ctx, node, cmd, r.aof, want, true, c.opts.ReplicaSyncTimeout-time.Since(start))
	}
	if err == nil || errors.Is(err, redis.Nil) {
		e.learn(cmd.script)
	}
	if isRedirect(err) {
		// The slot moved while this client's map still points at the
		// old primary; the script did not run. Sent through the cluster
		// client, which follows the redirect, it cannot be followed by a
		// WAIT on its connection: during a slot move such an acquisition
		// goes unchecked, and the map is reread for the next one.
		if cc, ok := c.direct.(*redis.ClusterClient); ok {
			cc.ReloadState(c.base)
		}
		e.stale()
		res, err := c.acquireOnce(ctx, cmd)
		return res, syncResult{}, err
	}
	if err != nil && !errors.Is(err, redis.Nil) { // nil is an acquire's "acquired"
		return res, syncResult{}, err
	}
	if acked != r.replicas || refused != nil {
		e.stale() // replicas came or went, or AOF was turned off: read INFO again
	}
	return res, syncResult{connected: r.replicas, acked: acked, required: need, min: c.opts.MinReplicaAcks > 0, refused: refused}, err
}

// acquireOnce sends an acquire command: through Options.AcquireClient when
// set, else through cmds as a command go-redis never resends.
func (c *Client) acquireOnce(ctx context.Context, cmd command) (any, error) {
	if c.acq == nil {
		return c.eval(ctx, cmd, true)
	}
	n := cmd.args[2].(int)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = cmd.args[wire.KeyIndex(i)].(string)
	}
	return cmd.script.Run(ctx, c.acq, keys, cmd.args[wire.KeyIndex(n):]...).Result()
}

// isRedirect reports a cluster's MOVED or ASK reply.
func isRedirect(err error) bool {
	return err != nil && (strings.HasPrefix(err.Error(), "MOVED ") || strings.HasPrefix(err.Error(), "ASK "))
}

// evalThenWait pipelines the command (EVALSHA, or EVAL when load) and the
// WAIT for replicas (WAITAOF with aof), bounded by bound, on one
// connection. err is the command's error
// (redis.Nil included); a failed WAIT counts as no acknowledgement, and
// refused is the server's error reply to it, if that is why. The
// WAIT gets at least 1 ms (ms): WAIT 0 would block for ever.
func (c *Client) evalThenWait(ctx context.Context, node node, cmd command, aof bool, replicas int, load bool, bound time.Duration) (res any, acked int, refused, err error) {
	timeout := ms(bound)
	pipe := c.waitReader(node).Pipeline()
	args := cmd.args
	if load {
		args = make([]any, len(cmd.args))
		copy(args, cmd.args)
		args[0], args[1] = "eval", cmd.script.Source
	}
	acquire := redis.NewCmd(ctx, args...)
	_ = pipe.Process(ctx, wire.Once(acquire))
	var wait *redis.Cmd
	if aof {
		wait = pipe.Do(ctx, "WAITAOF", 1, replicas, timeout)
	} else {
		wait = pipe.Do(ctx, "WAIT", replicas, timeout)
	}
	_, _ = pipe.Exec(ctx)
	res, err = acquire.Result()
	var rerr redis.Error
	if werr := wait.Err(); werr != redis.Nil && errors.As(werr, &rerr) {
		refused = rerr
	}
	switch v := wait.Val().(type) {
	case int64:
		acked = int(v)
	case []any: // WAITAOF: {local, replicas}
		if len(v) == 2 {
			n, _ := v[1].(int64)
			acked = int(n)
		}
	}
	return res, acked, refused, err
}

// waitReadSlack is what a WAIT's reply may take beyond its timeout to
// arrive: the round trip and the server's scheduling.
const waitReadSlack = time.Second

// waitReader is n, or a twin of it (sharing its pool, its read and write
// timeouts raised) that waits for replies long enough for a WAIT of
// ReplicaSyncTimeout. go-redis reads a pipeline's replies within the
// client's ReadTimeout: shorter than the WAIT, it would cut the WAIT
// short and break the connection, so the acquisition would be given back
// before the replicas had the time the options give them. Only a
// *redis.Client (a primary, or a cluster's node) has a twin; through an
// autopipeliner or Options.AcquireClient the WAIT keeps their deadline.
func (c *Client) waitReader(n node) node {
	cl, ok := n.(*redis.Client)
	if !ok {
		return n
	}
	need := c.opts.ReplicaSyncTimeout + waitReadSlack
	if rt := cl.Options().ReadTimeout; rt <= 0 || rt >= need {
		return n // no deadline, or long enough
	}
	// One twin per address, replaced with the client it was made from (a
	// cluster's node clients are remade when its map changes).
	addr := cl.Options().Addr
	if t, ok := c.waitTwins.Load(addr); ok && t.(waitTwin).of == cl {
		return t.(waitTwin).twin
	}
	t := waitTwin{of: cl, twin: cl.WithTimeout(need)}
	c.waitTwins.Store(addr, t)
	return t.twin
}

// waitTwin is a client's twin for replica-sync WAITs.
type waitTwin struct{ of, twin *redis.Client }

// node is a client of one server (or an autopipeliner over one) that can
// pipeline and send any command.
type node interface {
	redis.Cmdable
	Process(ctx context.Context, cmd redis.Cmder) error
}

// primaryFor is the node an acquisition of name goes to, and its address
// ("" when not a cluster). An autopipeliner given as rdb pipelines through
// the client under it.
func (c *Client) primaryFor(ctx context.Context, name string) (node, string, error) {
	var via any = c.cmds
	switch {
	case c.acq != nil:
		via = c.acq
	case c.direct != nil:
		via = c.direct
	}
	switch a := via.(type) {
	case *redis.ClusterClient:
		m, err := a.MasterForKey(ctx, name)
		if err != nil {
			return nil, "", err
		}
		return m, m.Options().Addr, nil
	case node:
		return a, "", nil
	}
	return nil, "", errNoPipeline
}

var errNoPipeline = errors.New("lockimpl: replica sync needs Options.AcquireClient to be a go-redis client (redis.Cmdable), to send WAIT on the acquisition's connection; or set Options.SkipReplicaSync")

var errClusterPipeliner = errors.New("lockimpl: replica sync on a Redis Cluster cannot send WAIT on an acquisition's connection through an AutoPipeliner: give NewClient the *redis.ClusterClient with Options.AutoPipeline, or set Options.SkipReplicaSync")
