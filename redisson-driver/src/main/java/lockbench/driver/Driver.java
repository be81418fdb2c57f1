package lockbench.driver;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

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
 * lock), unlock, force-unlock, is-locked, hold-count, ttl (remainTimeToLive in
 * ms), token (a fenced lock's current token), id (the hash field Redisson
 * writes for this owner).
 */
public final class Driver {
    private static final PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    private final RedissonClient redisson;
    private final Map<String, ExecutorService> owners = new ConcurrentHashMap<>();

    private Driver(RedissonClient redisson) {
        this.redisson = redisson;
    }

    public static void main(String[] args) throws Exception {
        String addr = null;
        String password = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--addr" -> addr = args[i + 1];
                case "--password" -> password = args[i + 1];
                default -> {
                    System.err.println("driver: unknown argument " + args[i]);
                    System.exit(2);
                }
            }
        }
        if (addr == null) {
            System.err.println("driver: usage: --addr host:port [--password P]");
            System.exit(2);
        }
        Config cfg = new Config();
        cfg.useSingleServer().setAddress("redis://" + addr).setPassword(password);
        RedissonClient redisson = Redisson.create(cfg);
        Driver d = new Driver(redisson);
        reply("0", "ready", 0, 0, "redisson " + Redisson.class.getPackage().getImplementationVersion());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            d.dispatch(line);
        }
        // The harness is gone or done: stop at once, holds left to their leases.
        Runtime.getRuntime().halt(0);
    }

    private void dispatch(String line) {
        String[] f = line.split("\t", -1);
        if (f.length != 7) {
            reply(f[0], "err", 0, 0, "want 7 tab-separated fields, got " + f.length);
            return;
        }
        String id = f[0], op = f[1], owner = f[2], kind = f[3], name = f[4];
        long waitMs, leaseMs;
        try {
            waitMs = Long.parseLong(f[5]);
            leaseMs = Long.parseLong(f[6]);
        } catch (NumberFormatException e) {
            reply(id, "err", 0, 0, "wait_ms and lease_ms must be integers");
            return;
        }
        ExecutorService ex = owners.computeIfAbsent(owner, o -> Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "owner-" + o);
            t.setDaemon(true);
            return t;
        }));
        ex.execute(() -> run(id, op, kind, name, waitMs, leaseMs));
    }

    private RLock lock(String kind, String name) {
        return switch (kind) {
            case "reentrant" -> redisson.getLock(name);
            case "fair" -> redisson.getFairLock(name);
            case "read" -> redisson.getReadWriteLock(name).readLock();
            case "write" -> redisson.getReadWriteLock(name).writeLock();
            case "fenced" -> redisson.getFencedLock(name);
            case "spin" -> redisson.getSpinLock(name);
            case "non-reentrant" -> redisson.getNonReentrantLock(name);
            case "non-reentrant-fair" -> redisson.getNonReentrantFairLock(name);
            default -> throw new IllegalArgumentException("unknown kind " + kind);
        };
    }

    private void run(String id, String op, String kind, String name, long waitMs, long leaseMs) {
        long start = System.nanoTime();
        try {
            RLock l = lock(kind, name);
            String v = switch (op) {
                case "lock" -> acquire(l, waitMs, leaseMs);
                case "unlock" -> {
                    l.unlock();
                    yield "1";
                }
                case "force-unlock" -> l.forceUnlock() ? "1" : "0";
                case "is-locked" -> l.isLocked() ? "1" : "0";
                case "hold-count" -> Integer.toString(l.getHoldCount());
                case "ttl" -> Long.toString(l.remainTimeToLive());
                case "token" -> String.valueOf(((RFencedLock) l).getToken());
                case "id" -> redisson.getId() + ":" + Thread.currentThread().getId();
                default -> throw new IllegalArgumentException("unknown op " + op);
            };
            reply(id, "ok", start, System.nanoTime(), v);
        } catch (Throwable t) {
            String msg = t.getClass().getSimpleName() + ": " + t.getMessage();
            reply(id, "err", start, System.nanoTime(), msg);
        }
    }

    private static String acquire(RLock l, long waitMs, long leaseMs) throws InterruptedException {
        if (l instanceof RFencedLock fl) {
            Long token;
            if (waitMs < 0) {
                token = leaseMs > 0 ? fl.lockAndGetToken(leaseMs, TimeUnit.MILLISECONDS) : fl.lockAndGetToken();
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

    private static void reply(String id, String status, long start, long end, String value) {
        String v = value == null ? "" : value.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
        synchronized (out) {
            out.print(id + "\t" + status + "\t" + start + "\t" + end + "\t" + v + "\n");
            out.flush();
        }
    }
}
