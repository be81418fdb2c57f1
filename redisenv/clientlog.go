package redisenv

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// go-redis logs through a package-level logger (reconnects, pool dial
// failures, bad pub/sub connections) straight to stderr, where its lines
// tear through a progress line and read like lockbench's own. The programs
// route them here instead and attach them to the run's result.

// clientLogKeep bounds the lines kept. A dead server makes go-redis log
// once per failed dial, so the log of a long run is mostly repeats: the
// buffer keeps the latest lines and counts the ones that fell out of it.
const clientLogKeep = 200

// clientLogLineMax bounds one kept line (a recovered panic comes with its
// stack), so that the buffer is bounded in bytes too.
const clientLogLineMax = 2048

// lineLog is a bounded log: the latest keep lines, numbered from 0 in the
// order they were added.
type lineLog struct {
	mu    sync.Mutex
	keep  int
	ring  []string // line number n is at ring[n%keep] while kept
	total int64    // lines added so far
}

// add keeps line as one trimmed line: a message of several lines is
// joined with " | ", an overlong one cut, an empty one dropped uncounted.
func (l *lineLog) add(line string) {
	parts := strings.Split(strings.TrimSpace(line), "\n")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	line = strings.Join(parts, " | ")
	if line == "" {
		return
	}
	if len(line) > clientLogLineMax {
		cut := clientLogLineMax
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = fmt.Sprintf("%s… (%d bytes more)", line[:cut], len(line)-cut)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ring == nil {
		l.ring = make([]string, l.keep)
	}
	l.ring[l.total%int64(l.keep)] = line
	l.total++
}

// mark is the number of lines added so far.
func (l *lineLog) mark() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// since returns the kept lines numbered mark and up, and how many lines
// from mark on are no longer kept. A mark outside 0..mark() is clamped.
func (l *lineLog) since(mark int64) (lines []string, dropped int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	mark = min(max(mark, 0), l.total)
	first := max(l.total-int64(l.keep), 0) // the oldest line still kept
	from := max(mark, first)
	for n := from; n < l.total; n++ {
		lines = append(lines, l.ring[n%int64(l.keep)])
	}
	return lines, from - mark
}

var clientLog = struct {
	once sync.Once
	lineLog
}{lineLog: lineLog{keep: clientLogKeep}}

// logPrefix is the "redis: 2026/11/24 00:49:24 pool.go:770: " prefix of
// go-redis's default logger, should a line carry it: its date and source
// file say nothing to a reader of a result.
var logPrefix = regexp.MustCompile(`^(redis: )?\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? ([\w.-]+\.go:\d+: )?`)

type clientLogger struct{}

func (clientLogger) Printf(_ context.Context, format string, v ...any) {
	clientLog.add(logPrefix.ReplaceAllString(strings.TrimSpace(fmt.Sprintf(format, v...)), ""))
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

// ClientLogMark is the number of lines the client libraries have logged
// so far: pass it to ClientLogSince to get what was logged after it.
func ClientLogMark() int64 { return clientLog.mark() }

// ClientLogSince returns the lines logged after mark that are still kept
// (at most the latest 200 of all), oldest first, and how many lines logged
// after mark are no longer kept.
func ClientLogSince(mark int64) (lines []string, dropped int64) {
	return clientLog.since(mark)
}
