package redisenv

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// go-redis logs through a package-level logger (reconnects, pool dial
// failures, bad pub/sub connections) straight to stderr, where its lines
// tear through a progress line and read like lockbench's own. The programs
// route them here instead and attach them to the run's result.

// clientLogKeep bounds the lines kept: a dead server makes go-redis log
// once per failed dial, and the first lines say what the rest repeat.
const clientLogKeep = 200

var clientLog struct {
	once  sync.Once
	mu    sync.Mutex
	lines []string // the latest clientLogKeep lines
	first int64    // number of the first kept line
	total int64    // lines logged so far
}

// logPrefix is go-redis's own "redis: 2026/11/24 00:49:24 pool.go:770: "
// prefix: its date and source file say nothing to a reader of a result.
var logPrefix = regexp.MustCompile(`^(redis: )?\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? ([\w.-]+\.go:\d+: )?`)

type clientLogger struct{}

func (clientLogger) Printf(_ context.Context, format string, v ...any) {
	line := strings.TrimSpace(logPrefix.ReplaceAllString(fmt.Sprintf(format, v...), ""))
	c := &clientLog
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total++
	if len(c.lines) >= clientLogKeep {
		// Keep a sliding window of the latest lines; what fell out of it
		// is counted.
		c.lines = c.lines[1:]
		c.first++
	}
	c.lines = append(c.lines, line)
}

// engineLogger takes testcontainers' lines (its banner on connecting to an
// engine, wait-strategy notes) into the same buffer.
type engineLogger struct{}

func (engineLogger) Printf(format string, v ...any) {
	for _, line := range strings.Split(strings.TrimSpace(fmt.Sprintf(format, v...)), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			clientLogger{}.Printf(context.Background(), "testcontainers: %s", line)
		}
	}
}

// CaptureClientLog routes the log lines of the client libraries (go-redis,
// and testcontainers for the container backend) into a bounded buffer (see
// ClientLogSince) instead of stderr. It is idempotent.
func CaptureClientLog() {
	clientLog.once.Do(func() {
		redis.SetLogger(clientLogger{})
		tclog.SetDefault(engineLogger{})
	})
}

// ClientLogMark is the position of the next line go-redis will log: pass
// it to ClientLogSince to get what a run logged.
func ClientLogMark() int64 {
	clientLog.mu.Lock()
	defer clientLog.mu.Unlock()
	return clientLog.total
}

// ClientLogSince returns the lines logged since mark that are still kept,
// at most 200 of them, and how many lines after mark are not returned.
func ClientLogSince(mark int64) (lines []string, dropped int64) {
	c := &clientLog
	c.mu.Lock()
	defer c.mu.Unlock()
	from := max(mark, c.first)
	lines = append(lines, c.lines[from-c.first:]...)
	return lines, from - mark
}
