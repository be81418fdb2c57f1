// Package clitest helps the programs' tests watch what a command prints
// while it runs, so a test can act on an event (a line) instead of
// sleeping.
package clitest

import (
	"bytes"
	"strings"
	"sync"
)

// LineWriter keeps everything written and calls OnLine with each complete
// line; it is safe for the several goroutines a command prints from.
type LineWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	all    strings.Builder
	OnLine func(string)
}

// Write records p and reports each line it completes.
func (w *LineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line) // an unfinished line waits for its end
			return len(p), nil
		}
		if w.OnLine != nil {
			w.OnLine(line)
		}
	}
}

// String is everything written so far.
func (w *LineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.String()
}
