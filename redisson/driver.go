package redisson

import (
	"bufio"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/lockbench/lockbench/lockimpl/kind"
)

// Config says which Redis the driver's Redisson client uses. The driver
// gets it on its standard input, never on its command line, which any
// local user can read.
type Config struct {
	// Servers are the first client's, whose owners' names have no slash;
	// none: clients only by Connect.
	Servers
	// Username and Password, when set, authenticate every client's
	// connections (AUTH username password; no Username: Redis's default
	// user). Both must be UTF-8: Redisson sends them as Java strings.
	Username, Password string
	// DB is every client's database (SELECT).
	DB int
	// Jar is the driver's jar (FindJar when empty).
	Jar string
	// Watchdog is Redisson's lockWatchdogTimeout (its 30 s default when
	// zero): how long a watchdog hold lasts unrenewed.
	Watchdog time.Duration
	// SkipReplicaSync turns Redisson's checkLockSyncedSlaves off for every
	// client. Redisson sends WAIT after a lock script in every mode but
	// single-server either way; on (its default), a lock that no replica
	// acknowledged, of those Redisson counts, is given back and fails
	// (NoSyncedSlavesException, Error.Refused); off, it is kept.
	SkipReplicaSync bool
	// Tuning departs from Redisson's defaults for every client; its zero
	// value is Redisson as new Config() makes it.
	Tuning Tuning
	// JFR, when set, is the file a Java Flight Recorder recording (the
	// JDK's "profile" settings) of the whole JVM goes to when it closes;
	// TopFrames reads it.
	JFR string
}

// Tuning is the settings of Redisson's Config an application can change
// for throughput; a zero field keeps Redisson's default.
type Tuning struct {
	// NettyThreads and Threads are Config's nettyThreads and threads.
	NettyThreads, Threads int
	// Transport is Config's transportMode: "nio" or "epoll".
	Transport string
	// ShareThreads gives every client of the JVM one Netty event loop
	// group and one executor instead of a pair each (Config's
	// eventLoopGroup and executor).
	ShareThreads bool
	// ConnectionPoolSize, ConnectionMinimumIdleSize and
	// SubscriptionConnectionPoolSize size the pools of each server
	// (master and slave pools alike in the modes with replicas).
	ConnectionPoolSize, ConnectionMinimumIdleSize, SubscriptionConnectionPoolSize int
	// PingConnectionInterval is how often each connection sends PING.
	PingConnectionInterval time.Duration
}

// fields are the config line's keys for t's settings.
func (t Tuning) fields() [][2]string {
	var f [][2]string
	num := func(key string, v int) {
		if v > 0 {
			f = append(f, [2]string{key, strconv.Itoa(v)})
		}
	}
	num("netty-threads", t.NettyThreads)
	num("threads", t.Threads)
	if t.Transport != "" {
		f = append(f, [2]string{"transport", t.Transport})
	}
	if t.ShareThreads {
		f = append(f, [2]string{"share-threads", "on"})
	}
	num("pool-size", t.ConnectionPoolSize)
	num("pool-min-idle", t.ConnectionMinimumIdleSize)
	num("sub-pool-size", t.SubscriptionConnectionPoolSize)
	num("ping-ms", int(t.PingConnectionInterval.Milliseconds()))
	return f
}

// Servers says where a RedissonClient finds Redis, in one of Redisson's
// modes. Set one of Addr (single-server mode, or master-slave mode with
// Replicas), Sentinels with Master (sentinel mode), or Cluster (cluster
// mode). Addresses are host:port, without credentials.
type Servers struct {
	// Addr is the server, or the primary of Replicas.
	Addr string
	// Replicas are Addr's replicas: Redisson then runs in master-slave
	// mode, and counts them when it waits for replicas after a lock.
	Replicas []string
	// Sentinels are the Sentinels that name the primary Master: Redisson
	// asks them for it and follows their failovers.
	Sentinels []string
	Master    string
	// Cluster are nodes of a Redis Cluster, the seeds Redisson reads the
	// slot map from.
	Cluster []string
}

// spec is the servers as the driver's protocol names them (see
// Driver.java): host:port, master-slave://PRIMARY@REPLICA,...,
// sentinel://MASTER@host:port,... or cluster://host:port,...; "" for none.
func (s Servers) spec() (string, error) {
	modes := 0
	for _, set := range []bool{s.Addr != "", len(s.Sentinels) > 0, len(s.Cluster) > 0} {
		if set {
			modes++
		}
	}
	switch {
	case modes > 1:
		return "", &ConfigError{Field: "servers", Fix: "set one of Addr, Sentinels or Cluster"}
	case len(s.Sentinels) > 0 && s.Master == "", s.Master != "" && len(s.Sentinels) == 0:
		return "", &ConfigError{Field: "servers", Fix: "sentinel mode needs both the Sentinels and the master's name"}
	case len(s.Replicas) > 0 && s.Addr == "":
		return "", &ConfigError{Field: "servers", Fix: "replicas need their primary's Addr"}
	}
	for _, a := range slices.Concat([]string{s.Addr, s.Master}, s.Replicas, s.Sentinels, s.Cluster) {
		if strings.ContainsAny(a, ",@ \t\n") {
			return "", &ConfigError{Field: "servers", Fix: fmt.Sprintf("%q: no commas, @ or white space in an address or master name", a)}
		}
	}
	switch {
	case len(s.Replicas) > 0:
		return "master-slave://" + s.Addr + "@" + strings.Join(s.Replicas, ","), nil
	case len(s.Sentinels) > 0:
		return "sentinel://" + s.Master + "@" + strings.Join(s.Sentinels, ","), nil
	case len(s.Cluster) > 0:
		return "cluster://" + strings.Join(s.Cluster, ","), nil
	}
	return s.Addr, nil
}

// Driver is one running JVM with RedissonClients (Config.Addr's and
// those of Connect), whose owners are its threads.
type Driver struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	version string

	mu      sync.Mutex
	nextID  int64
	pending map[int64]*pending
	failed  error // the JVM is gone: every call fails with it
	// heldAtClose is what the JVM said, as it closed, it still held
	// unknown to its callers (see HeldAtClose).
	heldAtClose int
	closed      bool // the JVM sent its closing line

	done     chan struct{}
	stderr   strings.Builder
	password string // kept out of every error the driver surfaces
	// closeWait is how long Close waits for the JVM to exit before killing
	// it: longer with a flight recording, which the JVM writes as it exits
	// and a kill would leave cut short.
	closeWait time.Duration
}

// Kind is the lock a call acts on, as the driver's protocol names it: a
// lock kind (KindOf), or Multi.
type Kind string

// Multi is a RedissonMultiLock of reentrant locks, whose names a call
// gives joined by commas.
const Multi Kind = "multi"

// KindOf is the driver's kind for lock kind k: the kind's own name, which
// the Java side's lockOf knows for every kind.
func KindOf(k kind.Kind) Kind { return Kind(k.String()) }

// Reply is one call's outcome. Start and End are the JVM's
// System.nanoTime around the Redisson call, comparable with Now.
type Reply struct {
	Start, End int64
	// Value is the call's result: for lock, "1" acquired or "0" not (or
	// the fencing token of a fenced lock); for unlock "1".
	Value string
}

// Now reads CLOCK_MONOTONIC in nanoseconds: the clock System.nanoTime
// reads in the driver.
func Now() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// monoBase and wallBase are one reading of CLOCK_MONOTONIC and of
// time.Now taken together, so that Time can place a JVM timestamp on this
// process's clock.
var monoBase, wallBase = Now(), time.Now()

// Time is the JVM's System.nanoTime reading ns as a time.Time of this
// process, with a monotonic reading (Go's monotonic clock is
// CLOCK_MONOTONIC too), so it orders and subtracts exactly against
// time.Now.
func Time(ns int64) time.Time { return wallBase.Add(time.Duration(ns - monoBase)) }

// Start starts the driver and waits until its Redisson client is
// connected, or ctx ends.
func Start(ctx context.Context, cfg Config) (*Driver, error) {
	config, err := configLine(cfg)
	if err != nil {
		return nil, err
	}
	servers, _ := cfg.spec() // configLine checked it
	if cfg.Jar == "" {
		j, err := FindJar()
		if err != nil {
			return nil, err
		}
		cfg.Jar = j
	} else if why := notJar(cfg.Jar); why != "" {
		return nil, fmt.Errorf("redisson: %s %s", cfg.Jar, why)
	}
	// No flags: the JVM's ergonomics pick its collector, heap and stacks,
	// as they do for an application started with java -jar.
	cmd := exec.Command("java", "-jar", cfg.Jar)
	cmd.Env = jvmEnv(os.Environ())
	// The kernel kills the JVM when the thread that started it dies, even
	// when the harness is SIGKILLed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	d := &Driver{cmd: cmd, pending: map[int64]*pending{}, done: make(chan struct{}), password: cfg.Password, closeWait: 5 * time.Second}
	if cfg.JFR != "" {
		d.closeWait = time.Minute
	}
	cmd.Stderr = &lockedWriter{mu: &d.mu, b: &d.stderr}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	d.stdin = stdin
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("redisson: start the driver: %w", err)
	}
	ready := make(chan error, 1)
	go d.read(stdout, servers, ready)
	// The pipe holds the line until the JVM reads it; a JVM that died
	// first is reported by read, with its stderr.
	_, _ = io.WriteString(stdin, config)
	select {
	case err := <-ready:
		if err != nil {
			d.Close()
			return nil, err
		}
		return d, nil
	case <-ctx.Done():
		d.Close()
		return nil, fmt.Errorf("redisson: driver not ready: %w", ctx.Err())
	}
}

// jvmVars are the variables the JVM is given of the harness's
// environment: what the java launcher and the JVM read (search path,
// locale, time zone, Java's own options), and none of the rest, where
// secrets live ($REDIS_URL with its password, tokens of other tools). A
// process's environment can be read in /proc/PID/environ, and a JVM's
// crash log (hs_err_pid*.log) copies some of it. LC_* are kept too.
var jvmVars = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR",
	"JAVA_HOME", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "LD_LIBRARY_PATH"}

// javaOptionVars are the variables of jvmVars in which the java launcher
// or the JVM finds options.
var javaOptionVars = []string{"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"}

// JVMOptions says, for a run's note, how Start starts the JVM: java -jar
// with no flags, so with the defaults an application gets, and which of
// the environment's option variables add to them, named but not quoted
// (they may hold secrets). It has no ": ", which notes use to set the
// settings they list apart.
func JVMOptions() string {
	s := "started as java -jar with no flags (the JVM's default collector, heap and stacks)"
	for _, v := range javaOptionVars {
		if os.Getenv(v) != "" {
			s += ", plus the options in $" + v
		}
	}
	return s
}

// jvmEnv keeps of environ (KEY=value entries) those of jvmVars and LC_*.
func jvmEnv(environ []string) []string {
	env := []string{}
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(jvmVars, k) || strings.HasPrefix(k, "LC_") {
			env = append(env, kv)
		}
	}
	return env
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.b.Len() < 64<<10 {
		w.b.Write(p)
	}
	return len(p), nil
}

// configLine is the driver's first input line: its settings as key=value
// fields, each value in base64 so that any character of a password
// survives the line's tabs and newline.
func configLine(cfg Config) (string, error) {
	for _, f := range []struct{ name, v string }{{"user", cfg.Username}, {"password", cfg.Password}} {
		if !utf8.ValidString(f.v) {
			return "", &ConfigError{Field: f.name, Fix: "not UTF-8 text, which Redisson cannot send (it sends Java strings); use a " + f.name + " of UTF-8 text or another implementation"}
		}
	}
	if cfg.DB < 0 {
		return "", &ConfigError{Field: "db", Fix: fmt.Sprintf("%d is negative", cfg.DB)}
	}
	line := "config"
	add := func(key, v string) {
		if v != "" {
			line += "\t" + key + "=" + base64.StdEncoding.EncodeToString([]byte(v))
		}
	}
	servers, err := cfg.spec()
	if err != nil {
		return "", err
	}
	add("addr", servers)
	add("user", cfg.Username)
	add("password", cfg.Password)
	if cfg.DB > 0 {
		add("db", strconv.Itoa(cfg.DB))
	}
	if cfg.Watchdog > 0 {
		add("watchdog-ms", strconv.FormatInt(cfg.Watchdog.Milliseconds(), 10))
	}
	if cfg.SkipReplicaSync {
		add("sync-slaves", "off")
	}
	if t := cfg.Tuning.Transport; t != "" && t != "nio" && t != "epoll" {
		return "", &ConfigError{Field: "transport", Fix: fmt.Sprintf("%q: want nio or epoll", t)}
	}
	for _, f := range cfg.Tuning.fields() {
		add(f[0], f[1])
	}
	add("jfr", cfg.JFR)
	return line + "\n", nil
}

// redact keeps the password out of text the driver surfaces (its stderr,
// an exception's message): neither Redis nor Redisson should echo it, and
// this makes sure.
func (d *Driver) redact(s string) string {
	if d.password == "" {
		return s
	}
	return strings.ReplaceAll(s, d.password, "xxxxx")
}

// stackless is the JVM's stderr without stack frames (lines that start
// with white space), as one line: an uncaught exception reads as its
// message and its causes'.
func stackless(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" && l[0] != ' ' && l[0] != '\t' {
			keep = append(keep, l)
		}
	}
	out := strings.Join(keep, "; ")
	if len(out) > 2000 {
		out = out[:2000] + "..."
	}
	return out
}

// newError is the *Error of an err reply's value ("Class: message").
func (d *Driver) newError(op, owner string, k Kind, name, value string) *Error {
	class, text, _ := strings.Cut(d.redact(value), ": ")
	return &Error{Op: op, Kind: k, Name: name, Owner: owner, Class: class, Message: text}
}

// PID is the JVM's process id.
func (d *Driver) PID() int { return d.cmd.Process.Pid }

// Protocol is the version of the lines lockbench and the driver's JVM
// exchange; the driver's greeting names its own, and a jar built from
// other sources is refused.
const Protocol = 2

// Version is the Redisson version the driver runs.
func (d *Driver) Version() string { return d.version }

// read delivers replies until the JVM's stdout closes; the first line is
// the greeting: ready, or err when the first client, on servers, could
// not connect.
func (d *Driver) read(stdout io.Reader, servers string, ready chan<- error) {
	defer close(d.done)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	greeted := false
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 5)
		if len(f) != 5 {
			continue
		}
		if !greeted {
			greeted = true
			if f[1] != "ready" {
				ready <- d.newError("connect", "", "-", servers, f[4])
				continue
			}
			version, proto, _ := strings.Cut(strings.TrimPrefix(f[4], "redisson "), " protocol ")
			if proto != strconv.Itoa(Protocol) {
				ready <- fmt.Errorf("%w: the driver's jar speaks protocol %q, this lockbench %d: it was built from other sources; rebuild it with make redisson-driver", ErrUnavailable, proto, Protocol)
				continue
			}
			d.version = version
			ready <- nil
			continue
		}
		if f[1] == "closed" {
			n, _ := strconv.Atoi(f[4])
			d.mu.Lock()
			d.heldAtClose, d.closed = n, true
			d.mu.Unlock()
			continue
		}
		id, _ := strconv.ParseInt(f[0], 10, 64)
		start, _ := strconv.ParseInt(f[2], 10, 64)
		end, _ := strconv.ParseInt(f[3], 10, 64)
		d.mu.Lock()
		p := d.pending[id]
		delete(d.pending, id)
		d.mu.Unlock()
		if p != nil {
			p.ch <- answer{Reply: Reply{Start: start, End: end, Value: f[4]}, status: f[1]}
		}
	}
	err := d.cmd.Wait()
	d.mu.Lock()
	d.failed = fmt.Errorf("redisson: driver exited (%v): %s", err, stackless(d.redact(d.stderr.String())))
	if !d.closed {
		// Killed, or dead, before it could say what it held: a section in
		// flight may hold its lock until the lease ends.
		for _, p := range d.pending {
			if p.op == "section" {
				d.heldAtClose++
			}
		}
	}
	for id, p := range d.pending {
		close(p.ch)
		delete(d.pending, id)
	}
	failed := d.failed
	d.mu.Unlock()
	if !greeted {
		ready <- failed
	}
}

// pending is a call waiting for its answer.
type pending struct {
	op string
	ch chan answer
}

// answer is a reply line: its status (ok, err or cancelled) and the rest.
type answer struct {
	Reply
	status string
}

// cancelWait bounds how long a call that takes a lock waits, once its ctx
// ended, for the JVM to cut it short and answer (see Call). It is longer
// than the runs' stall bounds, which close the driver first.
const cancelWait = 5 * time.Second

// Call runs op for owner on the lock of kind k and name: wait < 0 waits for
// ever (lock), else tryLock within wait; lease 0 is the watchdog. An error
// reply from Redisson (IllegalMonitorStateException and the like) is an
// error carrying its message. A ctx that ends cuts a call that takes a
// lock (lock, section, warm) short in the JVM, and Call waits for its
// answer (at most cancelWait), so that nothing it took is left behind
// unknown: a section's hold ends and it unlocks; a wait for the lock is
// answered at once with ctx's error, and goes on in the JVM (Redisson's
// waits are not interrupted), which gives back a lock it then takes; warm
// stops between cycles. Other ops are not cut short: a ctx that ends stops
// waiting for their reply, not the call in the JVM.
func (d *Driver) Call(ctx context.Context, op, owner string, k Kind, name string, wait, lease time.Duration) (Reply, error) {
	return d.call(ctx, op, owner, k, name, wait, lease, -1, "")
}

// Section is one critical section run whole in the JVM.
type Section struct {
	// Start and End bound the whole call; Acquired is when the lock was
	// taken (or the wait gave up), Released when the unlock was sent. All
	// are the JVM's System.nanoTime.
	Start, Acquired, Released, End int64
	// Value is the acquisition's: "0" not acquired, else "1" or the
	// fencing token.
	Value string
	// Cut says the hold ended before its time: ctx ended, or the driver
	// closed.
	Cut bool
}

// Section has owner take the lock (as Call's lock), hold it for hold and
// unlock it, all in the owner's thread with no round trip to the harness
// in between. An unlock that fails returns its *Error with the section's
// times filled in. A ctx that ends cuts it short, as Call says: a hold
// ends and is unlocked (Cut); a wait for the lock returns ctx's error.
func (d *Driver) Section(ctx context.Context, owner string, k Kind, name string, wait, lease, hold time.Duration) (Section, error) {
	r, err := d.call(ctx, "section", owner, k, name, wait, lease, max(hold, 0), "")
	s := Section{Start: r.Start, End: r.End}
	v := r.Value
	var re *Error
	if errors.As(err, &re) {
		msg, times, ok := strings.Cut(re.Message, "\x01")
		if !ok {
			return s, err // the acquisition failed
		}
		re.Message, v = msg, times
	} else if err != nil {
		return s, err
	}
	f := strings.Fields(v)
	if len(f) == 4 && f[3] == "cut" {
		s.Cut, f = true, f[:3]
	}
	if len(f) != 3 {
		return s, fmt.Errorf("redisson: section reply %q: want value, acquired and released", v)
	}
	s.Value = f[0]
	s.Acquired, _ = strconv.ParseInt(f[1], 10, 64)
	s.Released, _ = strconv.ParseInt(f[2], 10, 64)
	return s, err
}

// acquires says whether op takes a lock: the calls a ctx that ends cuts
// short in the JVM.
func acquires(op string) bool {
	switch op {
	case "lock", "section", "warm", "loop":
		return true
	}
	return false
}

// ErrClosing is the answer of a call the driver's Close cut short.
var ErrClosing = errors.New("redisson: the driver closed: call cut short")

// call sends one request; hold < 0 leaves the 8th field out, and a spec
// (op loop's) is the 9th.
func (d *Driver) call(ctx context.Context, op, owner string, k Kind, name string, wait, lease, hold time.Duration, spec string) (Reply, error) {
	for _, s := range []string{op, owner, string(k), name} {
		if strings.ContainsAny(s, "\t\n") {
			return Reply{}, fmt.Errorf("redisson: %q: no tabs or newlines in driver fields", s)
		}
	}
	if err := ctx.Err(); err != nil {
		return Reply{}, err
	}
	waitMs := int64(-1)
	if wait >= 0 {
		waitMs = wait.Milliseconds()
	}
	p := &pending{op: op, ch: make(chan answer, 1)}
	d.mu.Lock()
	if d.failed != nil {
		err := d.failed
		d.mu.Unlock()
		return Reply{}, err
	}
	d.nextID++
	id := d.nextID
	d.pending[id] = p
	line := fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%d\t%d", id, op, owner, k, name, waitMs, lease.Milliseconds())
	if hold >= 0 {
		line += "\t" + strconv.FormatInt(int64(hold), 10)
	}
	if spec != "" {
		line += "\t" + spec
	}
	_, err := io.WriteString(d.stdin, line+"\n")
	d.mu.Unlock()
	if err != nil {
		return Reply{}, fmt.Errorf("redisson: send to the driver: %w", err)
	}
	var a answer
	var ok bool
	select {
	case a, ok = <-p.ch:
	case <-ctx.Done():
		if !acquires(op) || !d.send(fmt.Sprintf("%d\tcancel\t-\t-\t-\t0\t0\n", id)) {
			d.forget(id)
			return Reply{}, ctx.Err()
		}
		t := time.NewTimer(cancelWait)
		defer t.Stop()
		select {
		case a, ok = <-p.ch:
		case <-t.C:
			d.forget(id)
			return Reply{}, ctx.Err()
		}
	}
	switch {
	case !ok:
		d.mu.Lock()
		defer d.mu.Unlock()
		return Reply{}, d.failed
	case a.status == "ok":
		return a.Reply, nil
	case a.status != "cancelled":
		return a.Reply, d.newError(op, owner, k, name, a.Value)
	case ctx.Err() != nil:
		return a.Reply, ctx.Err()
	}
	return a.Reply, ErrClosing
}

// send writes line to the JVM, reporting whether it could.
func (d *Driver) send(line string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failed != nil {
		return false
	}
	_, err := io.WriteString(d.stdin, line)
	return err == nil
}

// forget stops waiting for call id's answer.
func (d *Driver) forget(id int64) {
	d.mu.Lock()
	delete(d.pending, id)
	d.mu.Unlock()
}

// Connect adds a RedissonClient called client on the single server at
// addr: owners named "client/..." are its threads. Several clients in one
// JVM are several Redisson processes in one runtime.
func (d *Driver) Connect(ctx context.Context, client, addr string) error {
	return d.ConnectTo(ctx, client, Servers{Addr: addr})
}

// ConnectTo is Connect on servers, in the mode they say.
func (d *Driver) ConnectTo(ctx context.Context, client string, servers Servers) error {
	if client == "" || strings.Contains(client, "/") {
		return fmt.Errorf("redisson: client name %q: want a non-empty name without a slash", client)
	}
	spec, err := servers.spec()
	if err != nil {
		return err
	}
	if spec == "" {
		return &ConfigError{Field: "servers", Fix: "none given"}
	}
	_, err = d.Call(ctx, "connect", client, "-", spec, 0, 0)
	return err
}

// Warm runs cycles of lock and unlock of a reentrant lock on name for
// owner inside the JVM, so that its JIT compiler has compiled the lock
// path before a measurement (a JVM's first thousands of calls run
// interpreted).
func (d *Driver) Warm(ctx context.Context, owner, name string, cycles int) error {
	_, err := d.Call(ctx, "warm", owner, KindOf(kind.Reentrant), name, time.Duration(cycles)*time.Millisecond, 0)
	return err
}

// Close stops the JVM and waits for it: its input closes, which cuts
// every call short as a ctx that ends does (holds end with an unlock), it
// waits up to a second for them and exits; it is killed if still there
// after 5 s (a minute when it writes a flight recording). HeldAtClose then
// says what it could not release.
func (d *Driver) Close() error {
	d.mu.Lock()
	_ = d.stdin.Close()
	d.mu.Unlock()
	select {
	case <-d.done:
	case <-time.After(cmp.Or(d.closeWait, 5*time.Second)):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
	return nil
}

// HeldAtClose is, after Close, how many locks the driver still held when
// it closed that no caller knows it took: those of critical sections
// (Section) still running, and those that calls cut short took and could
// not give back; their unlock got no answer (Redis stalled), so Redis
// keeps them until their lease ends. A JVM that had to be killed could not
// say: every section then in flight is counted. Locks that Call's lock
// returned are not counted here: their caller knows of them.
func (d *Driver) HeldAtClose() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.heldAtClose
}
