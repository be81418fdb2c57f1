package lockbench.driver;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;

import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RFuture;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.BaseMasterSlaveServersConfig;
import org.redisson.config.Config;
import org.redisson.config.SingleServerConfig;
import org.redisson.config.TransportMode;

/**
 * Redisson's locks on behalf of the lockbench harness, over standard streams.
 *
 * <p>Each request is one line of tab-separated fields:
 * {@code id op owner kind name wait_ms lease_ms}. Each owner is a Java thread
 * of its own (Redisson ties a hold to its thread), so one owner's requests run
 * in order and different owners' run concurrently. Each reply is one line:
 * {@code id status start_ns end_ns value}, where status is ok or err, the
 * times are {@link System#nanoTime()} (CLOCK_MONOTONIC on Linux, the clock the
 * harness reads too) around the Redisson call, and value is the call's result
 * or the error's message. The driver exits when its standard input closes, so
 * it never outlives the harness.
 *
 * <p>Ops: lock (wait_ms &lt; 0 waits for ever, else tryLock; lease_ms &lt;= 0
 * means the watchdog; value 1 acquired, 0 not, or the token for a fenced
 * lock), lock-and-get-token (a fenced lock's synchronous lockAndGetToken with
 * lease_ms, as an application calls it), unlock, force-unlock, is-locked,
 * hold-count, ttl (remainTimeToLive in
 * ms), token (a fenced lock's current token), id (the hash field Redisson
 * writes for this owner), section (lock, hold for an 8th field hold_ns,
 * unlock, all in the owner's thread), warm (wait_ms cycles of lock and unlock, so the JIT
 * has compiled the lock path before anything is measured). Kind multi takes comma-separated names: a
 * RedissonMultiLock of reentrant locks.
 *
 * <p>A call that takes a lock (lock, section, warm) can be cut short by the
 * line {@code id cancel - - - 0 0}, id being the call's. A section's hold
 * ends at once and it unlocks, its reply's value ending in {@code cut}. A
 * lock op or a section still waiting for its lock is answered at once with
 * status cancelled; its wait goes on in its thread (Redisson's waits are not
 * interrupted: an interrupt that lands while Redisson waits for a command's
 * reply drops the reply and can stall the connection), and a lock it then
 * takes is given back at once. Warm stops between cycles. When standard
 * input closes, every call is cut short in this way, the driver waits up to
 * a second for its threads, replies {@code 0 closed 0 0 N}, N being the locks
 * they still hold or could not give back (their unlock got no answer), and
 * exits.
 *
 * <p>An owner named {@code client/thread} belongs to the RedissonClient
 * connected as client by op connect (owner field: the client's name, name
 * field: its servers, as the config line's addr); an owner without a slash to
 * the first client's. A
 * JVM with several clients is several Redisson processes in one runtime,
 * as the harness's Go clients are.
 *
 * <p>Settings come on the first line of standard input, before the greeting,
 * never as arguments: any local user can read a process's arguments (ps,
 * /proc/PID/cmdline), and the password is one of them. The line is
 * {@code config} and tab-separated {@code key=value} fields, each value the
 * base64 of its UTF-8 text so that tabs, newlines or any other character in a
 * password survive: addr (the servers of a first client: host:port for
 * single-server mode, master-slave://PRIMARY@REPLICA,... for master-slave
 * mode, sentinel://MASTER@host:port,... for sentinel mode,
 * cluster://host:port,... for cluster mode), user and password (every
 * client's; no user: Redis's default user), db (every client's database),
 * watchdog-ms (Redisson's lockWatchdogTimeout; its 30 s default when left
 * out) and sync-slaves (on or off: every client's checkLockSyncedSlaves,
 * on by default as in Redisson), the tuning keys netty-threads, threads,
 * transport (nio or epoll), share-threads (on: one event loop group and one
 * executor for every client), pool-size, pool-min-idle, sub-pool-size and
 * ping-ms (each absent: Redisson's default), and jfr (a file a flight
 * recording of the run goes to at close). A first client that cannot
 * connect is answered with an err greeting, and the driver exits 1.
 *
 * <p>Op loop (a 9th field: its spec, see loop) runs a closed-loop workload
 * in the JVM itself, with no line per operation, and writes a record of
 * each operation to a file.
 *
 * <p>An error's value is one line: the exception's class and message, then
 * each cause's that adds to it, never a stack trace.
 */
public final class Driver {
    /** The protocol this driver speaks; lockbench's Go side refuses another (redisson.Protocol). */
    static final int PROTOCOL = 2;

    private static final PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    private String addr, user, password;
    private int db;
    private long watchdogMs;
    /**
     * Redisson's checkLockSyncedSlaves: fail a lock whose WAIT no replica
     * acknowledged (the WAIT is sent either way, but in single-server mode).
     */
    private boolean checkLockSyncedSlaves = true;
    /**
     * Settings that depart from Redisson's defaults (the config line's
     * tuning keys); each is left at Redisson's default when absent, so a
     * config line without them is Redisson as new Config() makes it.
     */
    private Integer nettyThreads, threads, poolSize, poolMinIdle, subPoolSize, pingMs;
    private TransportMode transport;
    /** One Netty event loop group and one executor for every client of the JVM. */
    private boolean shareThreads;
    /** Where a flight recording of the whole run goes when the driver closes; null: none. */
    private String jfr;
    private EventLoopGroup sharedGroup;
    private ExecutorService sharedExecutor;
    private final Map<String, RedissonClient> clients = new ConcurrentHashMap<>();
    private final Map<String, ExecutorService> owners = new ConcurrentHashMap<>();
    /** The calls dispatched to owners' threads and not yet answered, by id. */
    private final Map<String, Call> calls = new ConcurrentHashMap<>();

    /** Locks that calls answered as cancelled took and could not give back. */
    private final AtomicInteger strayHeld = new AtomicInteger();

    /** Where a call is, for cancel and for what the driver holds at its close. */
    private enum Stage { WAITING, HOLDING, RELEASING, OTHER }

    /**
     * A call in an owner's thread, which cancel cuts short. It is answered
     * once, by whichever of its thread and cancel comes first (see answer).
     */
    private static final class Call {
        final String id;
        volatile Thread thread;
        volatile boolean cancelled;
        private Stage stage;
        private boolean answered;
        private long start;

        Call(String id, String op) {
            this.id = id;
            // A lock or section op waits for its lock until it is taken.
            this.stage = op.equals("lock") || op.equals("section") ? Stage.WAITING : Stage.OTHER;
        }

        synchronized Stage stage() {
            return stage;
        }

        synchronized void begin() {
            thread = Thread.currentThread();
            start = System.nanoTime();
        }

        /** Answers the call unless it was answered already. */
        synchronized void answer(String status, long start, long end, String value) {
            if (!answered) {
                answered = true;
                reply(id, status, start, end, value);
            }
        }

        /**
         * Moves a call that took its lock on to stage s, unless it was
         * answered as cancelled meanwhile: then it must give the lock back,
         * and false says so.
         */
        synchronized boolean took(Stage s) {
            if (answered) {
                stage = Stage.RELEASING;
                return false;
            }
            stage = s;
            return true;
        }

        synchronized void enter(Stage s) {
            stage = s;
        }

        /** Marks it cancelled; one still waiting for its lock is answered so. */
        void cancel() {
            synchronized (this) {
                cancelled = true;
                if (stage == Stage.WAITING && !answered) {
                    answered = true;
                    long now = System.nanoTime();
                    reply(id, "cancelled", thread == null ? now : start, now, "");
                }
            }
            Thread t = thread;
            if (t != null) {
                LockSupport.unpark(t); // ends a hold; elsewhere a spurious wake-up, which every wait allows
            }
        }
    }

    /**
     * A RedissonClient on the servers of spec: host:port (single-server
     * mode), master-slave://PRIMARY@REPLICA,... (master-slave mode),
     * sentinel://MASTER@host:port,... (sentinel mode: the primary the
     * Sentinels name MASTER, found through them) or cluster://host:port,...
     * (cluster mode, the addresses its seeds).
     */
    private RedissonClient connect(String spec) {
        Config cfg = new Config();
        // The addresses carry no credentials: Redisson would print them in
        // its exceptions' "Redis client: [addr=...]".
        if (spec.startsWith("sentinel://")) {
            String rest = spec.substring("sentinel://".length());
            int at = rest.indexOf('@');
            if (at <= 0 || at == rest.length() - 1) {
                throw new IllegalArgumentException("want sentinel://MASTER@host:port,...");
            }
            cfg.useSentinelServers().setMasterName(rest.substring(0, at)).addSentinelAddress(redisURLs(rest.substring(at + 1)))
                    .setUsername(user).setPassword(password).setDatabase(db);
        } else if (spec.startsWith("master-slave://")) {
            String rest = spec.substring("master-slave://".length());
            int at = rest.indexOf('@');
            if (at <= 0 || at == rest.length() - 1) {
                throw new IllegalArgumentException("want master-slave://PRIMARY@REPLICA,...");
            }
            cfg.useMasterSlaveServers().setMasterAddress("redis://" + rest.substring(0, at)).addSlaveAddress(redisURLs(rest.substring(at + 1)))
                    .setUsername(user).setPassword(password).setDatabase(db);
        } else if (spec.startsWith("cluster://")) {
            cfg.useClusterServers().addNodeAddress(redisURLs(spec.substring("cluster://".length())))
                    .setUsername(user).setPassword(password);
        } else {
            cfg.useSingleServer().setAddress("redis://" + spec).setUsername(user).setPassword(password).setDatabase(db);
        }
        if (watchdogMs > 0) {
            cfg.setLockWatchdogTimeout(watchdogMs);
        }
        cfg.setCheckLockSyncedSlaves(checkLockSyncedSlaves);
        tune(cfg);
        return Redisson.create(cfg);
    }

    /** Applies the tuning keys of the config line to cfg; none: Redisson's defaults. */
    private synchronized void tune(Config cfg) {
        if (nettyThreads != null) {
            cfg.setNettyThreads(nettyThreads);
        }
        if (threads != null) {
            cfg.setThreads(threads);
        }
        if (transport != null) {
            cfg.setTransportMode(transport);
        }
        if (shareThreads) {
            // Redisson's docs: each client makes its own EventLoopGroup, and
            // several clients in one JVM should share one.
            if (sharedGroup == null) {
                int n = cfg.getNettyThreads() > 0 ? cfg.getNettyThreads() : Runtime.getRuntime().availableProcessors() * 2;
                DefaultThreadFactory tf = new DefaultThreadFactory("redisson-netty", true);
                sharedGroup = cfg.getTransportMode() == TransportMode.EPOLL ? new EpollEventLoopGroup(n, tf) : new NioEventLoopGroup(n, tf);
                int t = cfg.getThreads() > 0 ? cfg.getThreads() : Runtime.getRuntime().availableProcessors() * 2;
                sharedExecutor = Executors.newFixedThreadPool(t, new DefaultThreadFactory("redisson", true));
            }
            cfg.setEventLoopGroup(sharedGroup);
            cfg.setExecutor(sharedExecutor);
        }
        if (cfg.isSingleConfig()) {
            SingleServerConfig sc = cfg.useSingleServer();
            if (poolSize != null) {
                sc.setConnectionPoolSize(poolSize);
            }
            if (poolMinIdle != null) {
                sc.setConnectionMinimumIdleSize(poolMinIdle);
            }
            if (subPoolSize != null) {
                sc.setSubscriptionConnectionPoolSize(subPoolSize);
            }
            if (pingMs != null) {
                sc.setPingConnectionInterval(pingMs);
            }
            return;
        }
        BaseMasterSlaveServersConfig<?> ms = cfg.isClusterConfig() ? cfg.useClusterServers()
                : cfg.isSentinelConfig() ? cfg.useSentinelServers() : cfg.useMasterSlaveServers();
        if (poolSize != null) {
            ms.setMasterConnectionPoolSize(poolSize);
            ms.setSlaveConnectionPoolSize(poolSize);
        }
        if (poolMinIdle != null) {
            ms.setMasterConnectionMinimumIdleSize(poolMinIdle);
            ms.setSlaveConnectionMinimumIdleSize(poolMinIdle);
        }
        if (subPoolSize != null) {
            ms.setSubscriptionConnectionPoolSize(subPoolSize);
        }
        if (pingMs != null) {
            ms.setPingConnectionInterval(pingMs);
        }
    }

    /** The redis:// URLs of a comma-separated list of host:port. */
    private static String[] redisURLs(String list) {
        String[] addrs = list.split(",");
        for (int i = 0; i < addrs.length; i++) {
            addrs[i] = "redis://" + addrs[i];
        }
        return addrs;
    }

    /** The settings of the config line; an error names the key, never a value. */
    private static Driver configure(String line) {
        if (line == null) {
            throw new IllegalArgumentException("no config line on standard input");
        }
        String[] f = line.split("\t", -1);
        if (!f[0].equals("config")) {
            throw new IllegalArgumentException("the first line must be the config line");
        }
        Driver d = new Driver();
        for (int i = 1; i < f.length; i++) {
            int eq = f[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("config field " + i + ": want key=base64");
            }
            String key = f[i].substring(0, eq);
            String v;
            try {
                v = new String(Base64.getDecoder().decode(f[i].substring(eq + 1)), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("config " + key + ": want key=base64");
            }
            try {
                switch (key) {
                    case "addr" -> d.addr = v;
                    case "user" -> d.user = v;
                    case "password" -> d.password = v;
                    case "db" -> d.db = Integer.parseInt(v);
                    case "watchdog-ms" -> d.watchdogMs = Long.parseLong(v);
                    case "sync-slaves" -> d.checkLockSyncedSlaves = switch (v) {
                        case "on" -> true;
                        case "off" -> false;
                        default -> throw new IllegalArgumentException("config sync-slaves: want on or off");
                    };
                    case "netty-threads" -> d.nettyThreads = Integer.parseInt(v);
                    case "threads" -> d.threads = Integer.parseInt(v);
                    case "pool-size" -> d.poolSize = Integer.parseInt(v);
                    case "pool-min-idle" -> d.poolMinIdle = Integer.parseInt(v);
                    case "sub-pool-size" -> d.subPoolSize = Integer.parseInt(v);
                    case "ping-ms" -> d.pingMs = Integer.parseInt(v);
                    case "transport" -> d.transport = switch (v) {
                        case "nio" -> TransportMode.NIO;
                        case "epoll" -> TransportMode.EPOLL;
                        default -> throw new IllegalArgumentException("config transport: want nio or epoll");
                    };
                    case "share-threads" -> d.shareThreads = v.equals("on");
                    case "jfr" -> d.jfr = v;
                    default -> throw new IllegalArgumentException("config: unknown key " + key);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("config " + key + ": want an integer");
            }
        }
        return d;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Driver d;
        try {
            d = configure(in.readLine());
        } catch (IllegalArgumentException e) {
            System.err.println("driver: " + e.getMessage());
            System.err.flush();
            Runtime.getRuntime().halt(2);
            return;
        }
        jdk.jfr.Recording recording = null;
        if (d.jfr != null) {
            try {
                recording = new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration("profile"));
                recording.setDestination(java.nio.file.Path.of(d.jfr));
                recording.start();
            } catch (Exception e) {
                reply("0", "err", 0, 0, "jfr: " + describe(e));
                Runtime.getRuntime().halt(1);
            }
        }
        if (d.addr != null) {
            long start = System.nanoTime();
            try {
                d.clients.put("", d.connect(d.addr));
            } catch (Throwable t) {
                reply("0", "err", start, System.nanoTime(), describe(t));
                // Redisson's threads would keep a JVM that exits normally alive.
                Runtime.getRuntime().halt(1);
            }
        }
        reply("0", "ready", 0, 0, "redisson " + Redisson.class.getPackage().getImplementationVersion() + " protocol " + PROTOCOL);
        String line;
        while ((line = in.readLine()) != null) {
            d.dispatch(line);
        }
        // The harness is gone or done: cut every call short, so that the
        // holds end with an unlock instead of their leases, and say what
        // could not be released.
        int held = d.close(TimeUnit.SECONDS.toNanos(1));
        if (recording != null) {
            recording.stop(); // writes the destination: halt runs no shutdown hook
        }
        reply("0", "closed", 0, 0, Integer.toString(held));
        Runtime.getRuntime().halt(0);
    }

    /**
     * Cancels every call and waits up to waitNs for their threads; returns
     * how many locks they then still hold or could not give back.
     */
    private int close(long waitNs) {
        calls.values().forEach(Call::cancel);
        long until = System.nanoTime() + waitNs;
        while (!calls.isEmpty() && System.nanoTime() - until < 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        int held = strayHeld.get();
        for (Call c : calls.values()) {
            Stage s = c.stage();
            if (s == Stage.HOLDING || s == Stage.RELEASING) {
                held++;
            }
        }
        return held;
    }

    /** Gives back l, taken by a call already answered as cancelled. */
    private void giveBack(RLock l) {
        try {
            l.unlock();
        } catch (Throwable t) {
            strayHeld.incrementAndGet(); // Redis keeps it until its lease ends
        }
    }

    /** The client of an owner named client/thread; no slash: the --addr client. */
    private RedissonClient clientOf(String owner) {
        int slash = owner.indexOf('/');
        String name = slash < 0 ? "" : owner.substring(0, slash);
        RedissonClient c = clients.get(name);
        if (c == null) {
            throw new IllegalArgumentException("no client " + (name.isEmpty() ? "(--addr)" : name) + "; connect it first");
        }
        return c;
    }

    private void dispatch(String line) {
        String[] f = line.split("\t", -1);
        if (f.length != 7 && f.length != 8 && !(f.length == 9 && f[1].equals("loop"))) {
            reply(f[0], "err", 0, 0, "want 7 or 8 tab-separated fields (9 for loop), got " + f.length);
            return;
        }
        String id = f[0], op = f[1], owner = f[2], kind = f[3], name = f[4];
        long waitMs, leaseMs, holdNs;
        try {
            waitMs = Long.parseLong(f[5]);
            leaseMs = Long.parseLong(f[6]);
            holdNs = f.length == 8 ? Long.parseLong(f[7]) : 0;
        } catch (NumberFormatException e) {
            reply(id, "err", 0, 0, "wait_ms, lease_ms and hold_ns must be integers");
            return;
        }
        if (op.equals("cancel")) {
            Call c = calls.get(id);
            if (c != null) {
                c.cancel();
            }
            return;
        }
        if (op.equals("connect")) {
            // Connecting takes a while: off the reader's thread.
            new Thread(() -> {
                long start = System.nanoTime();
                try {
                    clients.computeIfAbsent(owner, o -> connect(name));
                    reply(id, "ok", start, System.nanoTime(), "1");
                } catch (Throwable t) {
                    reply(id, "err", start, System.nanoTime(), describe(t));
                }
            }, "connect-" + owner).start();
            return;
        }
        ExecutorService ex = owners.computeIfAbsent(owner, o -> Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "owner-" + o);
            t.setDaemon(true);
            return t;
        }));
        Call c = new Call(id, op);
        calls.put(id, c);
        ex.execute(() -> {
            c.begin();
            try {
                if (op.equals("section")) {
                    section(c, owner, kind, name, waitMs, leaseMs, holdNs);
                } else if (op.equals("loop")) {
                    loop(c, owner, kind, name, waitMs, leaseMs, f[8]);
                } else {
                    run(c, op, owner, kind, name, waitMs, leaseMs);
                }
            } finally {
                calls.remove(id);
            }
        });
    }

    private static RLock lock(RedissonClient redisson, String kind, String name) {
        return switch (kind) {
            case "reentrant" -> redisson.getLock(name);
            case "fair" -> redisson.getFairLock(name);
            case "read" -> redisson.getReadWriteLock(name).readLock();
            case "write" -> redisson.getReadWriteLock(name).writeLock();
            case "fenced" -> redisson.getFencedLock(name);
            case "spin" -> redisson.getSpinLock(name);
            case "non-reentrant" -> redisson.getNonReentrantLock(name);
            case "non-reentrant-fair" -> redisson.getNonReentrantFairLock(name);
            case "multi" -> {
                String[] names = name.split(",");
                RLock[] parts = new RLock[names.length];
                for (int i = 0; i < names.length; i++) {
                    parts[i] = redisson.getLock(names[i]);
                }
                yield redisson.getMultiLock(parts);
            }
            default -> throw new IllegalArgumentException("unknown kind " + kind);
        };
    }

    private void run(Call c, String op, String owner, String kind, String name, long waitMs, long leaseMs) {
        long start = System.nanoTime();
        if (c.cancelled && (op.equals("lock") || op.equals("warm"))) {
            c.answer("cancelled", start, start, "");
            return;
        }
        try {
            RedissonClient redisson = clientOf(owner);
            RLock l = lock(redisson, kind, name);
            String v = switch (op) {
                case "lock" -> {
                    String got = acquire(l, waitMs, leaseMs);
                    if (!got.equals("0") && !c.took(Stage.OTHER)) {
                        giveBack(l);
                        yield null;
                    }
                    yield got;
                }
                case "unlock" -> {
                    l.unlock();
                    yield "1";
                }
                case "force-unlock" -> l.forceUnlock() ? "1" : "0";
                case "is-locked" -> l.isLocked() ? "1" : "0";
                case "hold-count" -> Integer.toString(l.getHoldCount());
                case "ttl" -> Long.toString(l.remainTimeToLive());
                case "token" -> String.valueOf(((RFencedLock) l).getToken());
                case "lock-and-get-token" -> String.valueOf(((RFencedLock) l).lockAndGetToken(leaseMs, TimeUnit.MILLISECONDS));
                case "id" -> redisson.getId() + ":" + Thread.currentThread().getId();
                case "warm" -> {
                    long i = 0;
                    for (; i < waitMs && !c.cancelled; i++) {
                        l.lock();
                        l.unlock();
                    }
                    yield i < waitMs ? "" : Long.toString(waitMs);
                }
                default -> throw new IllegalArgumentException("unknown op " + op);
            };
            if (v != null) {
                c.answer(v.isEmpty() ? "cancelled" : "ok", start, System.nanoTime(), v);
            }
        } catch (Throwable t) {
            c.answer("err", start, System.nanoTime(), describe(t));
        }
    }

    /**
     * A whole critical section in the JVM: acquire, hold hold_ns, unlock,
     * with no round trip to the harness in between (which would lengthen
     * the hold). The reply's value is the acquire's value, then the
     * acquisition's and the unlock's start on System.nanoTime, and "cut"
     * when a cancel ended the hold early; a failed unlock replies err with
     * those after its message.
     */
    private void section(Call c, String owner, String kind, String name, long waitMs, long leaseMs, long holdNs) {
        long start = System.nanoTime();
        if (c.cancelled) {
            c.answer("cancelled", start, start, "");
            return;
        }
        String got;
        RLock l;
        try {
            l = lock(clientOf(owner), kind, name);
            got = acquire(l, waitMs, leaseMs);
        } catch (Throwable t) {
            c.answer("err", start, System.nanoTime(), describe(t));
            return;
        }
        long acquired = System.nanoTime();
        if (got.equals("0")) {
            c.answer("ok", start, acquired, "0 " + acquired + " " + acquired);
            return;
        }
        if (!c.took(Stage.HOLDING)) {
            giveBack(l);
            return;
        }
        long until = acquired + holdNs;
        for (long left = holdNs; left > 0 && !c.cancelled; left = until - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
        long released = System.nanoTime();
        String cut = until - released > 0 ? " cut" : "";
        c.enter(Stage.RELEASING);
        try {
            l.unlock();
        } catch (Throwable t) {
            c.answer("err", start, System.nanoTime(), describe(t) + "\u0001" + got + " " + acquired + " " + released + cut);
            return;
        }
        c.answer("ok", start, System.nanoTime(), got + " " + acquired + " " + released + cut);
    }

    /** A duration distribution of a loop spec: f:A (fixed), u:A:B (uniform) or e:MEAN (exponential), in ns. */
    private record Dist(char kind, long a, long b) {
        static Dist parse(String v) {
            String[] p = v.split(":");
            return new Dist(p[0].charAt(0), Long.parseLong(p[1]), p.length > 2 ? Long.parseLong(p[2]) : 0);
        }

        long sample(SplittableRandom r) {
            return switch (kind) {
                case 'u' -> b > a ? a + r.nextLong(b - a + 1) : a;
                case 'e' -> a <= 0 ? 0 : (long) (-Math.log(1 - r.nextDouble()) * a);
                default -> a;
            };
        }
    }

    /** Parks until deadline (System.nanoTime), or the call is cancelled. */
    private static void parkUntil(Call c, long deadline) {
        for (long left = deadline - System.nanoTime(); left > 0 && !c.cancelled; left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    /**
     * The loop op: the JVM runs a closed-loop workload itself, with no
     * round trip to the harness per operation. spec is comma-separated
     * key=value: threads (owners of the client), first (the first owner's
     * index in the run), locks (names to pick from uniformly; 0: one per
     * owner, name + "o" + index), read (the read lock's share, kind rw),
     * hold and think (Dist), end (System.nanoTime when to stop), seed and
     * out (the file the records go to). Each owner thread takes its lock
     * (as op lock), holds it, unlocks and thinks, until end or cancel; each
     * operation is one 42-byte big-endian record: owner, lock (int), mode
     * (byte: 0 exclusive, 1 read, 2 write), outcome (byte: 0 ok, 1 not
     * acquired, 2 error), called, acquired, released, done (long ns, 0 when
     * it did not happen). The reply's value is the records' count.
     */
    private void loop(Call c, String client, String kind, String name, long waitMs, long leaseMs, String spec) {
        long start = System.nanoTime();
        Map<String, String> kv = new java.util.HashMap<>();
        for (String f : spec.split(",")) {
            int eq = f.indexOf('=');
            if (eq > 0) {
                kv.put(f.substring(0, eq), f.substring(eq + 1));
            }
        }
        int threads, first, locks;
        double read;
        Dist hold, think;
        long end, seed;
        RedissonClient redisson;
        try {
            threads = Integer.parseInt(kv.get("threads"));
            first = Integer.parseInt(kv.get("first"));
            locks = Integer.parseInt(kv.get("locks"));
            read = Double.parseDouble(kv.get("read"));
            hold = Dist.parse(kv.get("hold"));
            think = Dist.parse(kv.get("think"));
            end = Long.parseLong(kv.get("end"));
            seed = Long.parseLong(kv.get("seed"));
            redisson = clientOf(client + "/loop");
        } catch (RuntimeException e) {
            c.answer("err", start, System.nanoTime(), "loop spec: " + describe(e));
            return;
        }
        String out = kv.get("out");
        java.util.List<long[][]> perThread = new java.util.ArrayList<>();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int owner = first + t;
            long[][] rec = new long[1][];
            perThread.add(rec);
            ts[t] = new Thread(() -> rec[0] = loopOwner(c, redisson, kind, name, owner, locks, read, hold, think, waitMs, leaseMs, end, new SplittableRandom(seed * 1_000_003L + owner)), "loop-" + client + "-" + owner);
            ts[t].setDaemon(true);
            ts[t].start();
        }
        long n = 0;
        try (DataOutputStream w = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(out), 1 << 16))) {
            for (int t = 0; t < threads; t++) {
                ts[t].join();
                long[] r = perThread.get(t)[0];
                for (int i = 0; i + 6 < r.length && r[i] >= 0; i += 7) {
                    w.writeInt((int) r[i]);
                    w.writeInt((int) r[i + 1]);
                    w.writeByte((int) (r[i + 2] >> 8));
                    w.writeByte((int) (r[i + 2] & 0xff));
                    w.writeLong(r[i + 3]);
                    w.writeLong(r[i + 4]);
                    w.writeLong(r[i + 5]);
                    w.writeLong(r[i + 6]);
                    n++;
                }
            }
        } catch (Throwable e) {
            c.answer("err", start, System.nanoTime(), "loop records: " + describe(e));
            return;
        }
        c.answer(c.cancelled ? "cancelled" : "ok", start, System.nanoTime(), Long.toString(n));
    }

    /**
     * One owner of a loop: its records, seven longs each (owner, lock,
     * mode << 8 | outcome, called, acquired, released, done), ended by -1.
     */
    private long[] loopOwner(Call c, RedissonClient redisson, String kind, String prefix, int owner, int locks, double read,
                             Dist hold, Dist think, long waitMs, long leaseMs, long end, SplittableRandom rnd) {
        long[] r = new long[7 * 4096];
        int n = 0;
        Map<String, RLock> handles = new java.util.HashMap<>();
        while (!c.cancelled && System.nanoTime() - end < 0) {
            int lock = locks <= 0 ? owner : rnd.nextInt(locks);
            String name = locks <= 0 ? prefix + "o" + owner : prefix + lock;
            String k = kind;
            int mode = 0;
            if (kind.equals("rw")) {
                boolean rd = rnd.nextDouble() < read;
                k = rd ? "read" : "write";
                mode = rd ? 1 : 2;
            }
            String kk = k;
            RLock l = handles.computeIfAbsent(k + " " + name, x -> lock(redisson, kk, name));
            long holdNs = hold.sample(rnd), thinkNs = think.sample(rnd);
            long called = System.nanoTime(), acquired = 0, released = 0, done;
            int outcome = 0;
            try {
                if (acquire(l, waitMs, leaseMs).equals("0")) {
                    outcome = 1;
                } else {
                    acquired = System.nanoTime();
                    parkUntil(c, acquired + holdNs);
                    released = System.nanoTime();
                    l.unlock();
                }
            } catch (Throwable e) {
                outcome = 2;
            }
            done = System.nanoTime();
            if (n + 8 > r.length) {
                r = java.util.Arrays.copyOf(r, r.length * 2);
            }
            r[n++] = owner;
            r[n++] = lock;
            r[n++] = (long) mode << 8 | outcome;
            r[n++] = called;
            r[n++] = acquired;
            r[n++] = released;
            r[n++] = done;
            if (thinkNs > 0) {
                parkUntil(c, done + thinkNs);
            }
        }
        r[n] = -1;
        return r;
    }

    private static String acquire(RLock l, long waitMs, long leaseMs) throws InterruptedException {
        if (l instanceof RFencedLock fl) {
            Long token;
            if (waitMs < 0) {
                // Redisson 4.7.0's lockAndGetToken(leaseTime, unit) drops the
                // lease and takes a watchdog one (op lock-and-get-token shows
                // it); its async twin passes the lease on.
                token = leaseMs > 0 ? await(fl.lockAndGetTokenAsync(leaseMs, TimeUnit.MILLISECONDS)) : fl.lockAndGetToken();
            } else {
                token = fl.tryLockAndGetToken(waitMs, leaseMs > 0 ? leaseMs : -1, TimeUnit.MILLISECONDS);
            }
            return token == null ? "0" : token.toString();
        }
        if (waitMs < 0) {
            if (leaseMs > 0) {
                l.lock(leaseMs, TimeUnit.MILLISECONDS);
            } else {
                l.lock();
            }
            return "1";
        }
        return l.tryLock(waitMs, leaseMs > 0 ? leaseMs : -1, TimeUnit.MILLISECONDS) ? "1" : "0";
    }

    private static <T> T await(RFuture<T> f) throws InterruptedException {
        try {
            return f.toCompletableFuture().get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    /**
     * The exception as one line: "Class: message", then ": Class: message"
     * of each cause that says something new, and always the root cause. Future wrappers (ExecutionException,
     * CompletionException, whose message is their cause's), and Redisson's
     * ". channel: [...]" tail (the Netty channel and the command, the
     * password masked), are left out.
     */
    static String describe(Throwable t) {
        StringBuilder b = new StringBuilder();
        int depth = 0;
        for (Throwable c = t; c != null && depth++ < 20 && b.length() < 2000; c = c.getCause()) {
            String msg = c.getMessage();
            Throwable cause = c.getCause();
            if (cause != null && (msg == null || msg.equals(cause.toString()))) {
                continue; // a wrapper that says nothing of its own
            }
            if (msg != null) {
                int tail = msg.indexOf(". channel: [");
                if (tail >= 0) {
                    msg = msg.substring(0, tail);
                }
            }
            String line = msg == null ? c.getClass().getSimpleName() : c.getClass().getSimpleName() + ": " + msg;
            // A cause that repeats what is said already is left out, but
            // never the root cause (unless word for word): it says why.
            if (msg != null && b.indexOf(cause == null ? line : msg) >= 0) {
                continue;
            }
            if (b.length() > 0) {
                b.append(": ");
            }
            b.append(line);
        }
        return b.toString();
    }

    private static void reply(String id, String status, long start, long end, String value) {
        String v = value == null ? "" : value.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
        synchronized (out) {
            out.print(id + "\t" + status + "\t" + start + "\t" + end + "\t" + v + "\n");
            out.flush();
        }
    }
}
