package redisenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestLineLogBounds: the buffer keeps the latest lines only, counts what
// fell out per mark, and keeps each line as one trimmed line.
func TestLineLogBounds(t *testing.T) {
	l := &lineLog{keep: clientLogKeep}
	if lines, dropped := l.since(0); len(lines) != 0 || dropped != 0 {
		t.Fatalf("empty log: %q, %d dropped", lines, dropped)
	}
	for i := range 50 {
		l.add(fmt.Sprintf("  line %d \n", i))
	}
	mark := l.mark()
	for i := 50; i < 300; i++ {
		l.add(fmt.Sprintf("line %d", i))
	}
	if l.mark() != 300 {
		t.Errorf("mark after 300 lines = %d", l.mark())
	}
	lines, dropped := l.since(mark)
	if len(lines) != clientLogKeep || dropped != 50 || lines[0] != "line 100" || lines[len(lines)-1] != "line 299" {
		t.Errorf("since(%d): %d lines %q..%q, %d dropped; want the latest %d (line 100..line 299), 50 dropped",
			mark, len(lines), lines[0], lines[len(lines)-1], dropped, clientLogKeep)
	}
	if lines, dropped := l.since(0); len(lines) != clientLogKeep || dropped != 100 {
		t.Errorf("since(0): %d lines, %d dropped; want %d, 100", len(lines), dropped, clientLogKeep)
	}
	if lines, dropped := l.since(290); len(lines) != 10 || dropped != 0 || lines[0] != "line 290" {
		t.Errorf("since(290): %q, %d dropped", lines, dropped)
	}
	// Marks that ClientLogMark never gives are clamped, not a panic.
	if lines, dropped := l.since(1000); len(lines) != 0 || dropped != 0 {
		t.Errorf("since(1000): %q, %d dropped", lines, dropped)
	}
	if lines, dropped := l.since(-5); len(lines) != clientLogKeep || dropped != 100 {
		t.Errorf("since(-5): %d lines, %d dropped", len(lines), dropped)
	}

	m := &lineLog{keep: 3}
	m.add("a\n  b  \r\nc")
	m.add("   ")
	m.add(strings.Repeat("x", 3*clientLogLineMax))
	lines, _ = m.since(0)
	if len(lines) != 2 || lines[0] != "a | b | c" || len(lines[1]) > clientLogLineMax+40 || !strings.HasSuffix(lines[1], fmt.Sprintf("(%d bytes more)", 2*clientLogLineMax)) {
		t.Errorf("multi-line, blank and long lines kept as %q", lines)
	}
}

// TestClientLoggerStripsPrefix: should a line carry the prefix of
// go-redis's default logger, its date and source file go.
func TestClientLoggerStripsPrefix(t *testing.T) {
	mark := ClientLogMark()
	clientLogger{}.Printf(context.Background(), "redis: 2026/11/24 00:49:24 pool.go:770: redis: connection pool: %s\n", "boom")
	lines, _ := ClientLogSince(mark)
	found := false
	for _, l := range lines { // other tests may log meanwhile
		if strings.Contains(l, "boom") {
			found = true
			if l != "redis: connection pool: boom" {
				t.Errorf("kept %q, want %q", l, "redis: connection pool: boom")
			}
		}
	}
	if !found {
		t.Errorf("the line is not kept: %q", lines)
	}
}
