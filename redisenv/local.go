package redisenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/infile"
)

// startLocal starts redis-server child processes under one temp dir.
func (e *Env) startLocal(ctx context.Context, cfg Config) error {
	bin, err := findServer(cfg.Server, cfg.lookupEnv)
	if err != nil {
		return err
	}
	e.bin = bin
	if cfg.FakeClock {
		if _, err := FindFaketime(); err != nil {
			return err
		}
	}
	// Dirs that killed runs could not remove go first (see stale.go).
	for _, d := range sweepStaleDirs(cfg.Dir, dirPattern) {
		cfg.Logf("redis: removed %s, %s", d, leftBy)
	}
	dir, err := os.MkdirTemp(cfg.Dir, "lockbench-redis-")
	if err != nil {
		return fmt.Errorf("redisenv: data dir: %w", err)
	}
	if !cfg.KeepDir { // a kept dir is the user's to remove, never a sweep's
		if err := writeOwner(dir); err != nil {
			_ = os.RemoveAll(dir)
			return fmt.Errorf("redisenv: data dir: %w", err)
		}
	}
	e.closers = append(e.closers, func() error {
		if cfg.KeepDir {
			cfg.Logf("redis: kept data and logs in %s", dir)
			return nil
		}
		return os.RemoveAll(dir)
	})

	if cfg.Topology == TopologyCluster {
		return e.startLocalCluster(ctx, cfg, bin, dir)
	}
	primary, err := e.startLocalNode(ctx, cfg, bin, dir, "primary", nil)
	if err != nil {
		return err
	}
	e.nodes = []Node{primary}
	_, password := cfg.serverPassword()
	e.opts = &redis.UniversalOptions{Addrs: []string{primary.Addr()}, Password: password}
	if cfg.Topology != TopologyReplica && cfg.Topology != TopologySentinel {
		return nil
	}
	replica, err := e.startLocalNode(ctx, cfg, bin, dir, "replica",
		[]string{"replicaof 127.0.0.1 " + strconv.Itoa(primary.port)})
	if err != nil {
		return err
	}
	e.nodes = append(e.nodes, replica)
	if err := waitReplicaReady(ctx, primary.Addr(), replica.Addr(), password, cfg.StartTimeout); err != nil {
		return err
	}
	if cfg.Topology == TopologySentinel {
		return e.startLocalSentinels(ctx, cfg, bin, dir, primary)
	}
	return nil
}

// waitReplicaReady waits until the replica has synced with its primary
// and acknowledges the primary's writes: for about a second after the link
// comes up a replica may not answer WAIT yet, and a run that starts then
// would see every replica-synced acquisition fail.
func waitReplicaReady(ctx context.Context, primaryAddr, replicaAddr, password string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: replicaAddr, MaxRetries: -1, Password: password})
	defer rdb.Close()
	if err := waitInfo(ctx, rdb, "replication", "master_link_status", "up", timeout); err != nil {
		return fmt.Errorf("redisenv: replica at %s: %w", replicaAddr, err)
	}
	prim := redis.NewClient(&redis.Options{Addr: primaryAddr, MaxRetries: -1, Password: password})
	defer prim.Close()
	for {
		// A PUBLISH is replicated and leaves no key behind.
		var wait *redis.Cmd
		_, err := prim.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Publish(ctx, "__lockbench:replica-probe", "1")
			wait = p.Do(ctx, "WAIT", 1, 100)
			return nil
		})
		if n, _ := wait.Int(); err == nil && n >= 1 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("redisenv: replica at %s does not acknowledge writes: %w", replicaAddr, ctx.Err())
		}
	}
}

func (e *Env) startLocalNode(ctx context.Context, cfg Config, bin, dir, name string, extra []string) (*localNode, error) {
	_, password := cfg.serverPassword()
	n := &localNode{
		name:         name,
		bin:          bin,
		dir:          filepath.Join(dir, name),
		directives:   append(cfg.serverDirectives(), extra...),
		startTimeout: cfg.StartTimeout,
		appendOnly:   cfg.AppendOnly,
		password:     password,
	}
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		return nil, fmt.Errorf("redisenv: %s data dir: %w", name, err)
	}
	if cfg.FakeClock {
		lib, err := FindFaketime()
		if err != nil {
			return nil, err
		}
		n.clock = &fakeClock{lib: lib, file: filepath.Join(n.dir, "faketime")}
		if err := n.clock.write(0); err != nil {
			return nil, fmt.Errorf("redisenv: %s clock: %w", name, err)
		}
	}
	// Registered before the start so that a start that fails half-way
	// still reaps its process.
	e.closers = append(e.closers, n.close)
	var err error
	for range 5 {
		pick := freePort
		if cfg.Topology == TopologyCluster {
			pick = freeClusterPort
		}
		if n.port, err = pick(); err != nil {
			return nil, err
		}
		if err = n.start(ctx); !errors.Is(err, errPortInUse) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// errPortInUse means another process took the free port first; the caller
// picks another.
var errPortInUse = errors.New("redisenv: port taken by another process")

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redisenv: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// localNode is one redis-server child process. Its process group and
// parent-death signal make sure it dies with us, whatever way we die.
type localNode struct {
	name         string
	bin          string
	dir          string
	directives   []string
	startTimeout time.Duration
	appendOnly   bool
	password     string // requirepass of ServerArgs: the readiness probe authenticates with it
	port         int
	sentinel     bool       // runs redis-server --sentinel
	clock        *fakeClock // under libfaketime (Config.FakeClock); nil on the real clock

	mu      sync.Mutex
	pid     int           // 0 when not running
	done    chan struct{} // closed when the current process has been reaped
	exitErr error
	closed  bool // Close ran: no more starts
}

// markPromoted drops the replicaof directive, so that a Restart after
// Promote brings the node back as a primary.
func (n *localNode) markPromoted() {
	n.mu.Lock()
	defer n.mu.Unlock()
	kept := n.directives[:0:0]
	for _, d := range n.directives {
		if !strings.HasPrefix(d, "replicaof ") {
			kept = append(kept, d)
		}
	}
	n.directives = kept
}

func (n *localNode) Name() string     { return n.name }
func (n *localNode) Addr() string     { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) }
func (n *localNode) confPath() string { return filepath.Join(n.dir, "redis.conf") }
func (n *localNode) logPath() string  { return filepath.Join(n.dir, "redis.log") }

func (n *localNode) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pid
}

func (n *localNode) proc() (int, chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pid, n.done
}

func (n *localNode) writeConf() error {
	n.mu.Lock()
	directives := append([]string(nil), n.directives...)
	n.mu.Unlock()
	if !n.appendOnly {
		// No persistence means none across restarts either: a replica's
		// full sync, or SHUTDOWN's save, must not come back as data.
		if err := os.Remove(filepath.Join(n.dir, "dump.rdb")); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	lines := []string{
		"bind 127.0.0.1",
		"port " + strconv.Itoa(n.port),
		"dir " + strconv.Quote(n.dir),
		"daemonize no",
		`logfile ""`, // stdout, which start sends to redis.log with early errors
		"always-show-logo no",
	}
	lines = append(lines, directives...)
	return os.WriteFile(n.confPath(), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// start runs redis-server on n.port and waits until it answers PING and
// reports our process id (so a stranger on the port is never mistaken for it).
func (n *localNode) start(ctx context.Context) error {
	if err := n.writeConf(); err != nil {
		return fmt.Errorf("redisenv: %s config: %w", n.name, err)
	}
	logf, err := os.OpenFile(n.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("redisenv: %s log: %w", n.name, err)
	}
	// Start errors are judged by this run's log lines only.
	var logStart int64
	if st, err := logf.Stat(); err == nil {
		logStart = st.Size()
	}
	started := make(chan error, 1)
	go n.supervise(logf, started)
	if err := <-started; err != nil {
		return fmt.Errorf("redisenv: start %s: %w", n.bin, err)
	}
	pid, done := n.proc()
	if err := n.waitReady(ctx, pid, done, logStart); err != nil {
		_ = n.kill(context.Background())
		return err
	}
	return nil
}

// supervise starts the process and reaps it. The parent-death signal is
// tied to the thread that forked the child, not to our process
// (golang/go#27505), so this goroutine keeps its thread for the child's life.
func (n *localNode) supervise(logf *os.File, started chan<- error) {
	runtime.LockOSThread()
	defer logf.Close()
	args := []string{n.confPath()}
	if n.sentinel {
		args = append(args, "--sentinel")
	}
	cmd := exec.Command(n.bin, args...)
	cmd.Dir = n.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if n.clock != nil {
		cmd.Env = n.clock.environ()
	}
	cmd.SysProcAttr = procAttr()
	// Checked under the lock Close takes, so a Restart racing Close
	// cannot start a server nobody reaps.
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		started <- errors.New("environment closed")
		return
	}
	if err := cmd.Start(); err != nil {
		n.mu.Unlock()
		started <- err
		return
	}
	done := make(chan struct{})
	n.pid, n.done, n.exitErr = cmd.Process.Pid, done, nil
	n.mu.Unlock()
	started <- nil

	err := cmd.Wait()
	n.mu.Lock()
	n.pid, n.exitErr = 0, err
	n.mu.Unlock()
	close(done)
}

func (n *localNode) waitReady(ctx context.Context, pid int, done <-chan struct{}, logStart int64) error {
	ctx, cancel := context.WithTimeout(ctx, n.startTimeout)
	defer cancel()
	var last error
	for {
		if last = probeServerAuth(ctx, n.Addr(), pid, n.password); last == nil {
			return nil
		}
		select {
		case <-done:
			tail := n.logSince(logStart, 20)
			if strings.Contains(tail, "Address already in use") {
				return errPortInUse
			}
			n.mu.Lock()
			exitErr := n.exitErr
			n.mu.Unlock()
			return fmt.Errorf("redisenv: %s server exited during start (%v); %s ends:\n%s", n.name, exitErr, n.logPath(), tail)
		case <-ctx.Done():
			return fmt.Errorf("redisenv: %s server at %s not ready (%v): %w; %s ends:\n%s", n.name, n.Addr(), last, ctx.Err(), n.logPath(), n.LogTail(20))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (n *localNode) Stop(ctx context.Context) error {
	pid, done := n.proc()
	if pid == 0 {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	_ = syscall.Kill(-pid, syscall.SIGCONT) // a paused server cannot act on SIGTERM
	t := time.NewTimer(DefaultStopTimeout)
	defer t.Stop()
	select {
	case <-done:
		_ = syscall.Kill(-pid, syscall.SIGKILL) // leftovers of its group (a forked saver)
		return nil
	case <-ctx.Done():
	case <-t.C:
	}
	return n.kill(context.Background())
}

func (n *localNode) Kill(ctx context.Context) error {
	if n.PID() == 0 {
		return ErrNotRunning
	}
	return n.kill(ctx)
}

// kill SIGKILLs the whole process group and waits until it is reaped.
func (n *localNode) kill(ctx context.Context) error {
	pid, done := n.proc()
	if pid == 0 {
		return nil
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	t := time.NewTimer(DefaultStopTimeout)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("redisenv: kill %s (pid %d): %w", n.name, pid, ctx.Err())
	case <-t.C:
		return fmt.Errorf("redisenv: kill %s (pid %d): not reaped after %v", n.name, pid, DefaultStopTimeout)
	}
}

func (n *localNode) signal(sig syscall.Signal) error {
	pid := n.PID()
	if pid == 0 {
		return ErrNotRunning
	}
	if err := syscall.Kill(-pid, sig); err != nil {
		return fmt.Errorf("redisenv: %v to %s (pid %d): %w", sig, n.name, pid, err)
	}
	return nil
}

func (n *localNode) Pause(context.Context) error  { return n.signal(syscall.SIGSTOP) }
func (n *localNode) Resume(context.Context) error { return n.signal(syscall.SIGCONT) }

func (n *localNode) Restart(ctx context.Context) error {
	if err := n.Stop(ctx); err != nil {
		return err
	}
	err := n.start(ctx)
	if errors.Is(err, errPortInUse) {
		return fmt.Errorf("redisenv: restart %s: port %d was taken by another process meanwhile", n.name, n.port)
	}
	return err
}

func (n *localNode) close() error {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	return n.kill(context.Background())
}

func (n *localNode) LogTail(lines int) string { return n.logSince(0, lines) }

// logTailBytes is how much of a log's end is read to quote its last
// lines: far more than they take, and a long log is not read whole.
const logTailBytes = 1 << 20

// logSince returns up to n last lines written after byte offset from.
func (n *localNode) logSince(from int64, lines int) string {
	b, err := infile.Tail(n.logPath(), from, logTailBytes)
	if err != nil {
		return ""
	}
	return tailLines(string(b), lines)
}

func tailLines(s string, n int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return strings.Join(all, "\n")
}

// probeServer checks that the server at addr answers PING and, when pid is
// not 0, that it is that process (INFO server process_id).
func probeServer(ctx context.Context, addr string, pid int) error {
	return probeServerAuth(ctx, addr, pid, "")
}

// probeServerAuth is probeServer for a server that requires password
// (none when it is ""): it authenticates first.
func probeServerAuth(ctx context.Context, addr string, pid int, password string) error {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	r := bufio.NewReader(c)
	if password != "" {
		// As a RESP array, so that a password with spaces or quotes is
		// sent as it is.
		if _, err := fmt.Fprintf(c, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(password), password); err != nil {
			return err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if line != "+OK\r\n" {
			return fmt.Errorf("AUTH answered %q", strings.TrimSpace(line))
		}
	}
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	if pid == 0 {
		return nil
	}
	if _, err := io.WriteString(c, "INFO server\r\n"); err != nil {
		return err
	}
	hdr, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(hdr, "$")))
	if err != nil || !strings.HasPrefix(hdr, "$") {
		return fmt.Errorf("INFO answered %q", strings.TrimSpace(hdr))
	}
	body := make([]byte, size+2)
	if _, err := io.ReadFull(r, body); err != nil {
		return err
	}
	if got := infoField(string(body), "process_id"); got != strconv.Itoa(pid) {
		return fmt.Errorf("%s is served by process %s, not ours (%d)", addr, got, pid)
	}
	return nil
}
