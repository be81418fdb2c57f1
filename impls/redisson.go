package impls

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// The names --impl gives Redisson: with its default configuration, with
// the tuned one (RedissonTuning), and running its load in the JVM itself
// (RedissonJVM).
const (
	RedissonName      = "redisson"
	RedissonTunedName = "redisson-tuned"
	RedissonJVMName   = "redisson-jvm"
)

// Redisson drives real Redisson: one JVM per run (package redisson's
// driver), in which each profile client is a RedissonClient of its own
// (Redisson's default connection pool and settings) and each owner one of
// its threads, as the run's lockimpl clients share one Go process. Every
// lock kind a profile names is Redisson's own (getLock, getFairLock,
// getReadWriteLock, getFencedLock, getSpinLock, getNonReentrantLock,
// getMultiLock), so nothing is emulated. Each call is timed inside the
// JVM (System.nanoTime), and an operation without nested acquisitions
// runs whole in its owner's thread, so latencies, holds and critical
// sections exclude the pipe between the harness and the JVM. Redisson
// tells a holder nothing when its hold is lost: its holders are measured
// as applications on Redisson's API behave, working on to their planned
// end. Use one Redisson value per run at a time.
type Redisson struct {
	// Watchdog is Redisson's lockWatchdogTimeout (0: its 30 s default).
	Watchdog time.Duration
	// HoldsPastLease accepts fixed-lease profiles whose holds outlive the
	// lease, which Check refuses otherwise: chaos runs them on purpose, to
	// measure what holders that cannot know cost.
	HoldsPastLease bool
	// Servers, when set, are where every client connects, in the mode an
	// application on Redisson would use for the deployment (sentinel,
	// cluster, master-slave); unset, each client connects to its go-redis
	// client's one server.
	Servers *redisson.Servers
	// Tuned runs Redisson with RedissonTuning's settings instead of its
	// defaults, and is called RedissonTunedName.
	Tuned bool
	// JFR, when set, is the file each run's JVM leaves a Java Flight
	// Recording in (the JDK's "profile" settings), a later run's replacing
	// it, with its top frames beside it (.top.txt); unset, a directory in
	// $LOCKBENCH_REDISSON_JFR gets one per JVM. Set it between runs.
	JFR string

	mu    sync.Mutex
	jvm   *redisson.Driver
	users int    // open clients on jvm
	jfr   string // jvm's flight recording, when one is made
}

// SyncsReplicas is true: where the deployment has replicas, Redisson runs
// in master-slave, sentinel or cluster mode (Servers) and waits after each
// lock for the replicas it counts, refusing a lock none acknowledged
// (checkLockSyncedSlaves, on when replica_sync is). Off, it still sends
// the WAIT, and keeps the lock whatever the answer.
func (*Redisson) SyncsReplicas() bool { return true }

// Name is RedissonName, or RedissonTunedName when Tuned.
func (r *Redisson) Name() string {
	if r.Tuned {
		return RedissonTunedName
	}
	return RedissonName
}

// Check needs Java and the driver's jar, and refuses a fixed-lease profile
// whose holds could outlive the lease (Redisson has no loss signal).
func (r *Redisson) Check(p workloads.Profile) (string, error) {
	jar, err := redisson.FindJar()
	if je := (*redisson.JarError)(nil); errors.As(err, &je) {
		return "", err // names the variable to fix, not --impl
	}
	if err != nil {
		return "", &workloads.FieldError{Field: "--impl", Value: r.Name(), Fix: err.Error()}
	}
	if !r.HoldsPastLease {
		if err := workloads.HoldsWithinLease(r.Name(), p); err != nil {
			return "", err
		}
	}
	if p.AutoPipeline {
		return "", workloads.Refuse(r.Name(), p, workloads.NeedAutoPipeline, "Redisson multiplexes its commands over its own connections; drop --auto-pipeline (or the profile's auto_pipeline: true)")
	}
	v := redisson.JarVersion(jar)
	if v == "" {
		v = "(version unknown)"
	}
	config := "the default pool and settings (new Config(), useSingleServer with the address and credentials only)"
	if r.Tuned {
		config = "the tuned settings, everything else Redisson's default: " + RedissonTuningNote(p)
	}
	return fmt.Sprintf("Redisson %s in one JVM %s, calls timed inside the JVM, no loss signal (holders work on to their planned end); a RedissonClient per client with %s", v, redisson.JVMOptions(), config), nil
}

// NewClient connects client number client on rdb's address, in the run's
// JVM (started by the first client).
func (r *Redisson) NewClient(ctx context.Context, rdb redis.UniversalClient, p workloads.Profile, client int) (workloads.ImplClient, error) {
	var o *redis.Options
	switch c := rdb.(type) {
	case *redis.Client:
		o = c.Options()
	case *redis.ClusterClient:
		if r.Servers != nil { // the credentials are the nodes'
			co := c.Options()
			o = &redis.Options{Username: co.Username, Password: co.Password, TLSConfig: co.TLSConfig}
		}
	}
	if o == nil {
		return nil, &workloads.FieldError{Field: "--impl", Value: r.Name(),
			Fix: "the Redisson driver connects to one server unless told the deployment's servers; run it with --topology single, replica or sentinel, or through bench run on a cluster"}
	}
	servers := redisson.Servers{Addr: o.Addr}
	if r.Servers != nil {
		servers = *r.Servers
	}
	cfg, err := RedissonConfig(o)
	if err != nil {
		return nil, err
	}
	cfg.Watchdog = r.Watchdog
	cfg.SkipReplicaSync = !p.ReplicaSync
	if r.Tuned {
		cfg.Tuning = RedissonTuned(p)
	}
	cfg.JFR = r.JFR
	if cfg.JFR == "" {
		cfg.JFR = jfrFile()
	}
	d, first, err := r.acquireJVM(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rc := &redissonClient{r: r, d: d, name: fmt.Sprintf("c%d", client), ids: newOwnerIDs(r.Name()), kind: p.Kind}
	if err := d.ConnectTo(ctx, rc.name, servers); err != nil {
		_ = rc.Close()
		return nil, err
	}
	if first { // the JIT's work is the JVM's, done once
		if err := warm(ctx, d, rc.name); err != nil {
			_ = rc.Close()
			return nil, err
		}
	}
	return rc, nil
}

// RedissonConfig is the driver's configuration for the server of a
// go-redis client's options o: its user, password and database, which
// every RedissonClient of the JVM uses. TLS is refused: the driver's
// clients connect without it, and would send the password in clear.
func RedissonConfig(o *redis.Options) (redisson.Config, error) {
	if o.TLSConfig != nil {
		return redisson.Config{}, &workloads.FieldError{Field: "--impl", Value: RedissonName,
			Fix: "the Redisson driver connects without TLS (it would send the password in clear); use a redis:// URL, or another --impl for a rediss:// one"}
	}
	return redisson.Config{Username: o.Username, Password: o.Password, DB: o.DB}, nil
}

// acquireJVM starts the JVM with cfg for the first client (first says so)
// and counts its users.
func (r *Redisson) acquireJVM(ctx context.Context, cfg redisson.Config) (d *redisson.Driver, first bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jvm == nil {
		d, err := redisson.Start(ctx, cfg)
		if err != nil {
			return nil, false, err
		}
		r.jvm, r.jfr, first = d, cfg.JFR, true
	}
	r.users++
	return r.jvm, first, nil
}

// releaseJVM stops the JVM when its last client closes, and returns how
// many locks it then still held that the run never learnt it took
// (redisson.Driver's HeldAtClose).
func (r *Redisson) releaseJVM() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.users--; r.users > 0 || r.jvm == nil {
		return 0, nil
	}
	d := r.jvm
	r.jvm = nil
	err := d.Close()
	writeTopFrames(r.jfr)
	return d.HeldAtClose(), err
}

// PID is the run's JVM's process id, 0 when none runs: the process a
// freeze stops.
func (r *Redisson) PID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jvm == nil {
		return 0
	}
	return r.jvm.PID()
}

// PIDs is the run's JVM, whose CPU is the load generator's as much as
// this process's (workloads.Processes).
func (r *Redisson) PIDs() []int {
	if pid := r.PID(); pid > 0 {
		return []int{pid}
	}
	return nil
}

// warmCycles is each of warmOwners' lock-unlock cycles when the JVM's
// first client connects: enough for the JIT to compile the lock path, which a
// long-running service has long done, before the profile's own warmup.
const warmCycles, warmOwners = 1500, 4

// warm runs the JIT warmup on scratch names of this process and client,
// which it leaves unlocked (so nothing is left in Redis).
func warm(ctx context.Context, d *redisson.Driver, client string) error {
	errs := make(chan error, warmOwners)
	for i := range warmOwners {
		go func() {
			errs <- d.Warm(ctx, fmt.Sprintf("%s/warmup-%d", client, i), fmt.Sprintf("lockbench:redisson-warmup:%s:%s:%d", processID, client, i), warmCycles)
		}()
	}
	var first error
	for range warmOwners {
		if err := <-errs; err != nil && first == nil {
			first = fmt.Errorf("redisson: JIT warmup: %w", err)
		}
	}
	return first
}

type redissonClient struct {
	r    *Redisson
	d    *redisson.Driver
	name string // the RedissonClient's name in the JVM
	ids  *ownerIDs
	kind workloads.Kind
	once sync.Once
	held int // the JVM's HeldAtClose, when this client closed it
}

func (c *redissonClient) NewOwner() workloads.Owner {
	id := c.ids.next()
	return &redissonOwner{c: c, id: id, thread: c.name + "/" + id}
}

// Close lets go of the JVM, which stops with the run's last client: its
// calls still in flight are cut short, and their holds released (see
// redisson.Driver's Close).
func (c *redissonClient) Close() error {
	var err error
	c.once.Do(func() { c.held, err = c.r.releaseJVM() })
	return err
}

// HeldAtClose is how many locks the JVM still held, unknown to the run,
// when this client's Close stopped it (0 for the other clients).
func (c *redissonClient) HeldAtClose() int { return c.held }

type redissonOwner struct {
	c      *redissonClient
	id     string
	thread string // the owner's name in the JVM: client/id
}

func (o *redissonOwner) ID() string { return o.id }

// Locker is the owner's handle on name in mode m: Redisson's lock of the
// kind the profile's kind takes in m.
func (o *redissonOwner) Locker(name string, m results.Mode) workloads.Locker {
	k, _ := o.c.kind.Lock(m)
	return &redissonLocker{o: o, kind: redisson.KindOf(k), name: name, fenced: k.Fenced()}
}

// MultiLocker is the owner's handle on a RedissonMultiLock of reentrant
// locks on names, sorted: Redisson takes them in the order given, and
// callers that overlap must agree on one order (lockimpl sorts them itself)
// or wait on each other until a round's per-lock wait runs out.
func (o *redissonOwner) MultiLocker(names []string) workloads.Locker {
	names = slices.Sorted(slices.Values(names))
	l := &redissonLocker{o: o, kind: redisson.Multi, name: strings.Join(names, ",")}
	for _, n := range names {
		if strings.Contains(n, ",") {
			l.err = fmt.Errorf("redisson: lock name %q: a multi-lock's names cannot contain commas", n)
		}
	}
	return l
}

type redissonLocker struct {
	o          *redissonOwner
	kind       redisson.Kind
	name       string
	fenced     bool // its acquisitions reply their fencing tokens
	err        error
	start, end int64 // the latest call's JVM times; 0 when it got no answer
	token      int64 // the latest acquisition's fencing token
}

func (l *redissonLocker) call(ctx context.Context, op string, wait, lease time.Duration) (redisson.Reply, error) {
	r, err := l.o.c.d.Call(ctx, op, l.o.thread, l.kind, l.name, wait, lease)
	l.start, l.end = r.Start, r.End
	return r, err
}

// Acquire takes the lock: lock() when wait is 0, else tryLock(wait).
func (l *redissonLocker) Acquire(ctx context.Context, wait, lease time.Duration) (bool, error) {
	if l.err != nil {
		return false, l.err
	}
	if wait <= 0 {
		wait = -1
	}
	r, err := l.call(ctx, "lock", wait, lease)
	if err != nil {
		return false, err
	}
	if l.fenced && r.Value != "0" {
		l.token, _ = strconv.ParseInt(r.Value, 10, 64)
	}
	return r.Value != "0", nil
}

// Token is the fencing token of the latest acquisition (kind fenced).
func (l *redissonLocker) Token() int64 { return l.token }

// Release unlocks once; Redisson's IllegalMonitorStateException (the
// owner holds nothing) is workloads.ErrNotHeld.
func (l *redissonLocker) Release(ctx context.Context) error {
	_, err := l.call(ctx, "unlock", 0, 0)
	var re *redisson.Error
	if errors.As(err, &re) && re.NotHeld() {
		return notHeld("redisson", err)
	}
	return err
}

// Section runs a whole critical section in the owner's JVM thread.
func (l *redissonLocker) Section(ctx context.Context, wait, lease, hold time.Duration) (workloads.SectionTimes, bool, error) {
	if l.err != nil {
		return workloads.SectionTimes{}, false, l.err
	}
	if wait <= 0 {
		wait = -1
	}
	s, err := l.o.c.d.Section(ctx, l.o.thread, l.kind, l.name, wait, lease, hold)
	l.start, l.end = 0, 0
	if s.End == 0 {
		return workloads.SectionTimes{}, false, err
	}
	t := workloads.SectionTimes{Start: redisson.Time(s.Start), End: redisson.Time(s.End)}
	if s.Acquired == 0 {
		return t, false, err // the acquisition failed
	}
	t.Acquired, t.Released, t.Cut = redisson.Time(s.Acquired), redisson.Time(s.Released), s.Cut
	if s.Value == "0" {
		return t, false, nil
	}
	var re *redisson.Error
	if errors.As(err, &re) && re.NotHeld() {
		err = notHeld("redisson", err)
	}
	return t, true, err
}

// Lost is never closed: Redisson has no loss signal.
func (l *redissonLocker) Lost() <-chan struct{} { return nil }

// LastCall is the latest call's start and end in the JVM.
func (l *redissonLocker) LastCall() (start, end time.Time) {
	if l.end == 0 {
		return time.Time{}, time.Time{}
	}
	return redisson.Time(l.start), redisson.Time(l.end)
}
