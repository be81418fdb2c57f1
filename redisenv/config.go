package redisenv

import (
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Backend names where Redis comes from.
type Backend string

// The backends. BackendAuto is the default for the CLIs.
const (
	// BackendAuto picks external when a URL is given (Config.URL or $REDIS_URL),
	// else container when a Docker engine answers, else local.
	BackendAuto Backend = "auto"
	// BackendLocal starts redis-server child processes on 127.0.0.1.
	BackendLocal Backend = "local"
	// BackendContainer starts Redis containers with testcontainers-go.
	BackendContainer Backend = "container"
	// BackendExternal connects to a Redis the user runs, named by a URL.
	BackendExternal Backend = "external"
)

// Topology names the shape of the Redis deployment a backend starts.
type Topology string

// The topologies.
const (
	// TopologySingle is one primary.
	TopologySingle Topology = "single"
	// TopologyReplica is a primary plus one replica that Env.Promote can
	// turn into the primary (the failover scenarios need it).
	TopologyReplica Topology = "replica"
	// TopologyCluster is a Redis Cluster: Config.Shards primaries, each
	// with Config.Replicas replicas, every slot covered.
	TopologyCluster Topology = "cluster"
	// TopologySentinel is a primary, one replica and three Sentinels
	// (quorum 2) watching them: clients find the primary through the
	// Sentinels, which elect the replica when the primary fails.
	TopologySentinel Topology = "sentinel"
)

// Defaults used when the matching Config field is zero.
const (
	// DefaultStartTimeout bounds how long a started server may take to answer PING.
	DefaultStartTimeout = 15 * time.Second
	// DefaultDialTimeout bounds the first PING to an external Redis.
	DefaultDialTimeout = 5 * time.Second
	// DefaultStopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	DefaultStopTimeout = 10 * time.Second
	// DefaultImage is the container image of the container backend.
	DefaultImage = "redis:7.4"
	// DefaultValkeyImage is the container backend's image with Config.Server
	// ServerValkey.
	DefaultValkeyImage = "valkey/valkey:9"
	// DefaultServerPath is the redis-server binary looked up on $PATH.
	DefaultServerPath = "redis-server"
	// DefaultValkeyPath is the valkey-server binary looked up on $PATH.
	DefaultValkeyPath = "valkey-server"
	// EnvURL is the environment variable read when Config.URL is empty.
	EnvURL = "REDIS_URL"
	// DefaultShards is the number of cluster primaries.
	DefaultShards = 3
	// DefaultReplicas is the number of replicas per cluster primary.
	DefaultReplicas = 1
	// MaxShards bounds Config.Shards: every node is a process on this host.
	MaxShards = 16
	// MaxReplicas bounds Config.Replicas.
	MaxReplicas = 4
	// DefaultClusterNodeTimeout is cluster-node-timeout in started clusters:
	// short, so that a killed primary is failed over in seconds, yet far
	// above any stall a loaded 2-core machine gives a healthy node.
	DefaultClusterNodeTimeout = 2 * time.Second
	// EnvServer names the redis-server binary when Config.Server is
	// empty or "redis" (make setup honours it too).
	EnvServer = "REDIS_SERVER"
	// EnvValkey names the valkey-server binary when Config.Server is
	// "valkey" (make setup honours it too).
	EnvValkey = "VALKEY_SERVER"
)

// The servers Config.Server names by name; any other value is a path.
const (
	ServerRedis  = "redis"
	ServerValkey = "valkey"
)

// Config says which Redis to start or connect to. The zero value is valid:
// auto backend, single topology, persistence off.
type Config struct {
	// Backend is where Redis comes from (flag --redis). Empty means auto.
	Backend Backend
	// Topology is single, replica, sentinel or cluster (flag --topology). Empty
	// means single; a cluster-list URL means cluster.
	Topology Topology
	// Shards is the number of cluster primaries (flag --shards); zero means
	// DefaultShards. Only with TopologyCluster.
	Shards int
	// SentinelDownAfter is the Sentinels' down-after-milliseconds with
	// TopologySentinel: how long a primary goes unanswered before they
	// call it down and elect its replica. Zero means
	// DefaultSentinelDownAfter.
	SentinelDownAfter time.Duration
	// Replicas is the number of replicas per cluster primary (flag
	// --replicas); zero means DefaultReplicas, and NoReplicas means none.
	// Only with TopologyCluster.
	Replicas int
	// URL names an external Redis (flag --redis-url): redis://, rediss://,
	// a comma list of cluster nodes, or a redis-sentinel:// URL; see ParseURL.
	// Empty means $REDIS_URL.
	URL string
	// URLFrom names where URL came from, for messages, when that is not
	// --redis-url: "$VAR" for a variable, or words for a URL lockbench
	// made itself (Env.URL), whose failures are then lockbench's, not bad
	// input.
	URLFrom string

	// Server is the server binary the local backend starts and
	// LocalImage holds (flag --server): ServerRedis ($REDIS_SERVER, else
	// DefaultServerPath on $PATH), ServerValkey ($VALKEY_SERVER, else
	// DefaultValkeyPath), or a path. Empty means ServerRedis.
	Server string
	// AppendOnly turns on AOF persistence (flag --appendonly), so that a
	// restarted server reloads its data.
	AppendOnly bool
	// AppendFsync is always, everysec or no (flag --appendfsync); it matters
	// only with AppendOnly. Empty means everysec, Redis's own default.
	AppendFsync string
	// ServerArgs are extra redis.conf directives ("name value"), one per
	// element, for the local and container backends. The local backend
	// honours a requirepass among them: its readiness check, replicas
	// (masterauth unless given) and the Env's clients authenticate with it.
	ServerArgs []string
	// Image is the container backend's image (flag --image), pulled
	// when the engine lacks it. Empty means DefaultImage; LocalImage makes
	// one from Server.
	Image string

	// FakeClock runs each local redis-server under libfaketime (Debian's
	// faketime) with a wall clock of its own, which Env.JumpClock moves
	// while the server runs. Local backend only: auto picks local, and
	// container or external is refused.
	FakeClock bool

	// StartTimeout bounds a server start; zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// DialTimeout bounds the first contact with an external Redis; zero
	// means DefaultDialTimeout.
	DialTimeout time.Duration
	// Dir is where the local backend makes its data directories. Empty
	// means os.TempDir().
	Dir string
	// KeepDir keeps the local backend's data directory and logs after Close,
	// for post-mortems. A kept dir records no owner, so no later start
	// sweeps it either (see Start), even when this process is killed.
	KeepDir bool
	// Logf receives one line per notable event (which backend was chosen and
	// why). Nil means silent.
	Logf func(format string, args ...any)

	// lookupEnv reads environment variables; tests replace it.
	lookupEnv func(string) (string, bool)
	// urlFromEnv: URL came from $REDIS_URL, so errors about it name that.
	urlFromEnv bool
	// imageChosen: Image was given, not defaulted.
	imageChosen bool
}

// NoReplicas in Config.Replicas starts a cluster of primaries only.
const NoReplicas = -1

// Values the flags store for input Validate refuses, so that its message
// can echo what was typed: --shards 0 (0 would read as the default) and
// --replicas -1 (which would read as NoReplicas).
const (
	shardsZero       = -1 << 30
	replicasMinusOne = -1<<30 + 1
)

// typed is n as the user typed it, undoing the stand-ins above.
func typed(n int) string {
	switch n {
	case shardsZero:
		return "0"
	case replicasMinusOne:
		return "-1"
	}
	return strconv.Itoa(n)
}

// ConfigError is bad input: it names the field (and its flag) and the fix.
// CLIs exit with code 2 on it.
type ConfigError struct {
	Field string // the flag name, e.g. "redis"
	Value string // the offending value, already redacted
	Fix   string // what to do instead
	Err   error  // the cause, for errors.Is; Fix already says it
}

// Error names the flag (or the environment variable, for a Field
// starting with "$"), the value and the fix.
func (e *ConfigError) Error() string {
	name := "--" + e.Field
	if strings.HasPrefix(e.Field, "$") {
		name = e.Field
	}
	if e.Value == "" {
		return fmt.Sprintf("redisenv: %s: %s", name, e.Fix)
	}
	return fmt.Sprintf("redisenv: %s %q: %s", name, e.Value, e.Fix)
}

// IsUsage marks ConfigError as bad input for the CLIs' exit-code mapping.
func (e *ConfigError) IsUsage() bool { return true }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// ErrServerNotFound is returned when the server binary is missing.
var ErrServerNotFound = errors.New("redisenv: server binary not found")

// InstallHint says how to get redis-server on this machine.
const InstallHint = "install it with: sudo apt-get install -y redis-server (or run: make setup); or point at your own Redis with --redis-url / REDIS_URL"

// ValkeyInstallHint says how to get valkey-server on this machine.
const ValkeyInstallHint = "install it with: make setup (as root), or sudo scripts/install-valkey.sh, or apt-get install -y valkey-server where the distribution has it; or set " + EnvValkey

// ServerBinary is the binary server names ("redis", "valkey" or a path;
// "" is "redis"), read from $REDIS_SERVER or $VALKEY_SERVER when set.
func ServerBinary(server string) string {
	bin, _ := serverBinary(server, osLookupEnv)
	return bin
}

// serverBinary is ServerBinary, and the environment variable it came
// from ("" when none).
func serverBinary(server string, lookupEnv func(string) (string, bool)) (bin, from string) {
	env, def := EnvServer, DefaultServerPath
	switch strings.TrimSpace(server) {
	case "", ServerRedis:
	case ServerValkey:
		env, def = EnvValkey, DefaultValkeyPath
	default:
		return strings.TrimSpace(server), ""
	}
	if v, ok := lookupEnv(env); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v), env
	}
	return def, ""
}

// FindServer looks up the binary server names (see ServerBinary) and
// returns its path, or ErrServerNotFound with the way to install it.
func FindServer(server string) (string, error) {
	return findServer(server, osLookupEnv)
}

func findServer(server string, lookupEnv func(string) (string, bool)) (string, error) {
	bin, from := serverBinary(server, lookupEnv)
	notFound := fmt.Errorf("%w (looked for %s): %s", ErrServerNotFound, lookedFor(bin, from), serverFix(server, bin))
	path := bin
	if !strings.ContainsRune(bin, filepath.Separator) {
		// A name is looked up on $PATH; a path is taken as it is, so that
		// one that is there but unusable is told apart from one missing.
		p, err := exec.LookPath(bin)
		if err != nil {
			return "", notFound
		}
		path = p
	}
	switch why, missing := checkServerFile(path); {
	case missing:
		return "", notFound
	case why != "":
		return "", &NotAServerError{Path: path, From: from, Why: why}
	}
	return path, nil
}

// lookedFor names the binary looked for, and the variable that named it.
func lookedFor(bin, from string) string {
	if from != "" {
		return fmt.Sprintf("%q from $%s", bin, from)
	}
	return fmt.Sprintf("%q", bin)
}

// serverFix says how to get the server named server (resolved to bin).
func serverFix(server, bin string) string {
	switch {
	case server == ServerValkey || strings.HasSuffix(filepath.Base(bin), DefaultValkeyPath):
		return ValkeyInstallHint
	case server == "" || server == ServerRedis || strings.HasSuffix(filepath.Base(bin), DefaultServerPath):
		return InstallHint
	}
	return "name a server (redis or valkey) or the path of a redis-server or valkey-server binary"
}

// TopologyUsage is the --topology flag's help, ending with what decides
// the topology when the flag is not given (which differs by command).
func TopologyUsage(otherwise string) string {
	return "Redis topology to start: single, replica (primary + replica), sentinel (primary + replica watched by 3 Sentinels, quorum 2; clients find the primary through them) or cluster (Redis Cluster: --shards primaries with --replicas replicas each); " + otherwise
}

// RegisterFlags binds c's fields to flags on fs, so every CLI spells the
// Redis options the same way.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.Func("redis", "where Redis comes from: auto (default), local, container, external, or a redis:// URL (same as --redis-url); cluster is short for --topology cluster", func(s string) error {
		if strings.Contains(s, "://") {
			c.Backend, c.URL = BackendExternal, s
			return nil
		}
		if s == string(TopologyCluster) { // --redis cluster: a cluster from the auto backend
			c.Topology = TopologyCluster
			return nil
		}
		c.Backend = Backend(s)
		return nil
	})
	fs.Func("topology", TopologyUsage("single when not given"), func(s string) error {
		c.Topology = Topology(s)
		return nil
	})
	fs.Func("shards", fmt.Sprintf("cluster primaries with --topology cluster (default %d, at most %d)", DefaultShards, MaxShards), func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("want a whole number of primaries, e.g. --shards 3")
		}
		c.Shards = n
		if n == 0 {
			c.Shards = shardsZero // refused by Validate, not taken for the default
		}
		return nil
	})
	fs.Func("replicas", fmt.Sprintf("replicas per cluster primary with --topology cluster (default %d; 0 for none)", DefaultReplicas), func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("want a whole number of replicas per primary, e.g. --replicas 1")
		}
		c.Replicas = n
		if n == 0 {
			c.Replicas = NoReplicas
		} else if n == NoReplicas {
			c.Replicas = replicasMinusOne // -1 as typed, not "none": refused by Validate
		}
		return nil
	})
	fs.StringVar(&c.URL, "redis-url", "", "external Redis URL: redis://[user:pass@]host:port/db, rediss://..., host1:port,host2:port (cluster) or redis-sentinel://host:26379?master_name=NAME (default $REDIS_URL)")
	fs.StringVar(&c.Server, "server", "", "the server the local backend starts (and --image local holds): redis ($REDIS_SERVER, else redis-server on $PATH; the default), valkey ($VALKEY_SERVER, else valkey-server), or the path of a binary")
	fs.BoolVar(&c.AppendOnly, "appendonly", false, "turn on AOF persistence in started servers")
	fs.StringVar(&c.AppendFsync, "appendfsync", "", "AOF fsync policy with --appendonly: always, everysec (default) or no")
	fs.StringVar(&c.Image, "image", "", "image for the container backend (default "+DefaultImage+", pulled if missing; valkey/valkey:9 for Valkey); "+LocalImage+" makes one from the --server binary, for an engine that can pull nothing")
}

// PlannedReplicas is how many replicas each primary of the topology c starts
// will have, and whether that is known before starting: an external Redis
// (a URL, or $REDIS_URL) has the replicas it has.
func (c Config) PlannedReplicas() (perPrimary int, known bool) {
	d, err := c.withDefaults()
	switch {
	case err != nil || d.URL != "" || d.Backend == BackendExternal:
		return 0, false
	case d.Topology == TopologyReplica || d.Topology == TopologySentinel:
		return 1, true
	case d.Topology == TopologyCluster && d.Replicas != NoReplicas:
		return d.Replicas, true
	}
	return 0, true
}

// Validate reports the first bad field of c as a *ConfigError, so a CLI can
// refuse bad input before it starts anything.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults validates c and fills in defaults. It does not resolve auto.
func (c Config) withDefaults() (Config, error) {
	if c.lookupEnv == nil {
		c.lookupEnv = osLookupEnv
	}
	switch c.Backend {
	case "":
		c.Backend = BackendAuto
	case BackendAuto, BackendLocal, BackendContainer, BackendExternal:
	default:
		return c, &ConfigError{Field: "redis", Value: string(c.Backend), Fix: "unknown backend; use auto, local, container or external"}
	}
	switch c.Topology {
	case "":
		c.Topology = TopologySingle
	case TopologySingle, TopologyReplica, TopologyCluster:
	case TopologySentinel:
		if c.Backend == BackendContainer {
			return c, &ConfigError{Field: "topology", Value: string(c.Topology), Fix: "Sentinel runs on the local backend; use --redis local (or your own Sentinel by URL: redis-sentinel://host:26379?master_name=NAME)"}
		}
	default:
		return c, &ConfigError{Field: "topology", Value: string(c.Topology), Fix: "unknown topology; use single, replica, sentinel or cluster"}
	}
	if c.FakeClock {
		if c.Backend == BackendContainer || c.Backend == BackendExternal {
			return c, &ConfigError{Field: "redis", Value: string(c.Backend), Fix: "a server clock that jumps needs libfaketime preloaded into redis-server, which only the local backend starts; use --redis local"}
		}
	}
	if c.Topology != TopologyCluster {
		if c.Shards != 0 {
			return c, &ConfigError{Field: "shards", Value: typed(c.Shards), Fix: "primaries are counted only in a cluster; add --topology cluster"}
		}
		if c.Replicas != 0 {
			v := typed(c.Replicas)
			if c.Replicas == NoReplicas {
				v = "0"
			}
			return c, &ConfigError{Field: "replicas", Value: v, Fix: "replicas per primary are counted only in a cluster; add --topology cluster (the replica topology always has one)"}
		}
	} else {
		switch {
		case c.Shards == 0:
			c.Shards = DefaultShards
		case c.Shards < 1 || c.Shards > MaxShards:
			return c, &ConfigError{Field: "shards", Value: typed(c.Shards), Fix: fmt.Sprintf("a cluster needs 1 to %d primaries", MaxShards)}
		}
		switch {
		case c.Replicas == 0:
			c.Replicas = DefaultReplicas
		case c.Replicas == NoReplicas:
		case c.Replicas < 1 || c.Replicas > MaxReplicas:
			return c, &ConfigError{Field: "replicas", Value: typed(c.Replicas), Fix: fmt.Sprintf("use 0 to %d replicas per primary", MaxReplicas)}
		}
	}
	switch strings.ToLower(c.AppendFsync) {
	case "":
		if c.AppendOnly {
			c.AppendFsync = "everysec"
		}
	case "always", "everysec", "no":
		c.AppendFsync = strings.ToLower(c.AppendFsync)
		if !c.AppendOnly {
			return c, &ConfigError{Field: "appendfsync", Value: c.AppendFsync, Fix: "sets the AOF's fsync, and started servers keep no AOF without --appendonly; add --appendonly"}
		}
	default:
		return c, &ConfigError{Field: "appendfsync", Value: c.AppendFsync, Fix: "use always, everysec or no"}
	}
	// $REDIS_URL only fills in for auto and external: an explicit
	// --redis local or container means "not that one".
	if c.URL == "" && (c.Backend == BackendAuto || c.Backend == BackendExternal) {
		if v, ok := c.lookupEnv(EnvURL); ok {
			c.URL = strings.TrimSpace(v)
			c.urlFromEnv = c.URL != ""
		}
	}
	if c.URL != "" && (c.Backend == BackendAuto || c.Backend == BackendExternal) {
		// A URL that cannot be parsed is bad input: refuse it here, so
		// Validate catches it before anything starts.
		if _, err := ParseURL(c.URL); err != nil {
			return c, c.namedURLError(err)
		}
	}
	if c.URL != "" && (c.Backend == BackendAuto || c.Backend == BackendExternal) && c.AppendOnly {
		return c, &ConfigError{Field: "appendonly", Fix: "turns on AOF in servers lockbench starts, and an external Redis keeps the persistence it has; drop --appendonly"}
	}
	if c.URL != "" && c.FakeClock && (c.Backend == BackendAuto || c.Backend == BackendExternal) {
		return c, &ConfigError{Field: c.urlField(), Value: Redact(c.URL), Fix: "a server clock that jumps needs libfaketime preloaded into redis-server, which only the local backend starts; use --redis local"}
	}
	if c.Backend == BackendExternal && c.URL == "" {
		return c, &ConfigError{Field: "redis-url", Fix: "the external backend needs a URL: pass --redis-url redis://host:6379/0 or set " + EnvURL}
	}
	if c.URL != "" && (c.Backend == BackendLocal || c.Backend == BackendContainer) {
		return c, &ConfigError{Field: "redis-url", Value: Redact(c.URL), Fix: fmt.Sprintf("a URL selects the external backend, but --redis is %s; drop one of them", c.Backend)}
	}
	if err := c.checkServer(); err != nil {
		return c, err
	}
	c.imageChosen = c.imageChosen || c.Image != ""
	switch {
	case c.Image != "":
	case c.Server == ServerValkey:
		c.Image = DefaultValkeyImage
	default:
		c.Image = DefaultImage
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return c, nil
}

// checkServer refuses a Server that cannot be what runs: one named on
// purpose that is not installed (before anything starts; the default
// one's absence is reported when a local start needs it), or one beside
// an external Redis or an image, which decide the server themselves.
func (c *Config) checkServer() error {
	c.Server = strings.TrimSpace(c.Server)
	if c.Server == "" {
		return nil
	}
	external := c.URL != "" && (c.Backend == BackendAuto || c.Backend == BackendExternal)
	switch {
	case external:
		return &ConfigError{Field: "server", Value: c.Server, Fix: "picks the binary lockbench starts, and an external Redis (" + c.urlName() + ") runs the server it runs; drop --server"}
	case c.Backend == BackendContainer && c.Image != "" && c.Image != LocalImage:
		return &ConfigError{Field: "server", Value: c.Server, Fix: "the container backend runs what --image " + c.Image + " holds; drop --server, or use --image " + LocalImage + " to make an image of the --server binary"}
	case c.Backend == BackendAuto && c.Image != "" && c.Image != LocalImage:
		// auto would run one and drop the other, depending on whether a
		// container engine answers.
		return &ConfigError{Field: "server", Value: c.Server, Fix: "beside --image " + c.Image + " it is ambiguous: a container runs what the image holds, the local backend the binary; drop one of them, or use --image " + LocalImage + " to make an image of the --server binary"}
	case c.Backend == BackendContainer && c.Image == "" && c.Server != ServerRedis && c.Server != ServerValkey:
		return &ConfigError{Field: "server", Value: c.Server, Fix: "a binary runs in a container only from an image made of it: add --image " + LocalImage}
	case c.Backend == BackendContainer && c.Image == "":
		return nil // the server's image, pulled if missing
	}
	if _, err := findServer(c.Server, c.lookupEnv); err != nil {
		bin, from := serverBinary(c.Server, c.lookupEnv)
		fix := fmt.Sprintf("no such binary (looked for %s); %s", lookedFor(bin, from), serverFix(c.Server, bin))
		if ns := (*NotAServerError)(nil); errors.As(err, &ns) {
			fix = fmt.Sprintf("%s %s; %s", ns.named(), ns.Why, serverFix(c.Server, bin))
		}
		return &ConfigError{Field: "server", Value: c.Server, Err: err, Fix: fix}
	}
	return nil
}

// urlName is how messages name the URL: the flag, or $REDIS_URL when the
// URL was read from there (the user never typed a --redis-url then).
func (c Config) urlName() string {
	switch {
	case c.URLFrom != "":
		return c.URLFrom
	case c.urlFromEnv:
		return "$" + EnvURL
	}
	return "--redis-url"
}

// madeURL reports whether URL is one lockbench made, not the user's.
func (c Config) madeURL() bool {
	return c.URLFrom != "" && !strings.HasPrefix(c.URLFrom, "$") && !strings.HasPrefix(c.URLFrom, "--")
}

// urlError is fix said of the URL: bad input naming where the user gave
// it, or, for a URL lockbench made, a failure of lockbench's own.
func (c Config) urlError(fix string) error {
	if c.madeURL() {
		return fmt.Errorf("redisenv: %s %q: %s", c.URLFrom, Redact(c.URL), fix)
	}
	return &ConfigError{Field: c.urlField(), Value: Redact(c.URL), Fix: fix}
}

// urlField is urlName as a ConfigError's Field.
func (c Config) urlField() string {
	return strings.TrimPrefix(c.urlName(), "--")
}

// namedURLError makes a ParseURL error name where the URL came from.
func (c Config) namedURLError(err error) error {
	var ce *ConfigError
	if c.madeURL() && errors.As(err, &ce) {
		return c.urlError(ce.Fix)
	}
	if errors.As(err, &ce) && ce.Field == "redis-url" {
		ce.Field = c.urlField()
	}
	return err
}

// serverPassword is the password started servers require: the value of
// the last requirepass directive in ServerArgs (a later directive wins in
// redis.conf too), raw as written there and as the server reads it.
func (c Config) serverPassword() (raw, password string) {
	for _, d := range c.ServerArgs {
		name, v, _ := strings.Cut(strings.TrimSpace(d), " ")
		if strings.EqualFold(name, "requirepass") {
			raw = strings.TrimSpace(v)
		}
	}
	return raw, confUnquote(raw)
}

// confUnquote reads a redis.conf argument: "double quoted" with escapes,
// 'single quoted' verbatim, else as written.
func confUnquote(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return v[1 : len(v)-1]
	}
	return v
}

// serverDirectives is the redis.conf shared by the local and container
// backends: persistence off unless asked, then the caller's extra lines.
func (c Config) serverDirectives() []string {
	lines := []string{`save ""`}
	if c.Topology == TopologyReplica || c.Topology == TopologySentinel || c.Topology == TopologyCluster && c.Replicas > 0 {
		// Redis waits 5 s by default before a diskless full sync, hoping
		// more replicas join; ours is the only one. A replica loads the sync
		// from the socket instead of writing dump.rdb, so that "persistence
		// off" holds for replicas too.
		lines = append(lines, "repl-diskless-sync-delay 0", "repl-diskless-load on-empty-db")
	}
	if c.Topology == TopologyCluster {
		lines = append(lines,
			"cluster-enabled yes",
			"cluster-config-file nodes.conf",
			"cluster-node-timeout "+strconv.Itoa(int(DefaultClusterNodeTimeout.Milliseconds())),
		)
	}
	if raw, _ := c.serverPassword(); raw != "" {
		// Replicas authenticate to their primary with the password every
		// server requires (ServerArgs may still set masterauth itself).
		lines = append(lines, "masterauth "+raw)
	}
	if c.AppendOnly {
		lines = append(lines, "appendonly yes", "appendfsync "+c.AppendFsync)
	} else {
		lines = append(lines, "appendonly no")
	}
	return append(lines, c.ServerArgs...)
}
