// Package clitest helps the programs' tests watch what a command prints
// while it runs, so a test can act on an event (a line) instead of
// sleeping.
package clitest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
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

// Interrupt runs main with args as Ctrl-C would stop it: its context is
// cancelled at the first line on stderr that contains at. It waits at
// most within for the command to return, failing t otherwise, and gives
// the exit code and what was printed.
func Interrupt(t testing.TB, main func(ctx context.Context, args []string, stdout, stderr io.Writer) int, args []string, at string, within time.Duration) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	errOut := &LineWriter{OnLine: func(l string) {
		if strings.Contains(l, at) {
			cancel()
		}
	}}
	done := make(chan int, 1)
	go func() { done <- main(ctx, args, &out, errOut) }()
	select {
	case code = <-done:
	case <-time.After(within):
		t.Fatalf("%s did not stop within %v of the interrupt at %q:\n%s", strings.Join(args, " "), within, at, errOut.String())
	}
	return code, out.String(), errOut.String()
}

// Help runs "cmd -h" through main and fails t unless it exits 0 with a
// help that says every string of want and none of notWant; it returns
// the help.
func Help(t testing.TB, main func(ctx context.Context, args []string, stdout, stderr io.Writer) int, cmd string, want, notWant []string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := main(context.Background(), []string{cmd, "-h"}, &out, &errOut); code != 0 {
		t.Errorf("%s -h: exit %d", cmd, code)
	}
	help := errOut.String()
	for _, w := range want {
		if !strings.Contains(help, w) {
			t.Errorf("%s -h lacks %q:\n%s", cmd, w, help)
		}
	}
	for _, w := range notWant {
		if strings.Contains(help, w) {
			t.Errorf("%s -h says %q:\n%s", cmd, w, help)
		}
	}
	return help
}
