package redisson

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestGreetingProtocol: a driver whose greeting names another protocol,
// or none (a jar built from older sources), is refused as unavailable
// with the command that rebuilds it; the matching one is ready.
func TestGreetingProtocol(t *testing.T) {
	for _, tc := range []struct {
		greeting string
		ok       bool
	}{
		{"redisson 4.7.0 protocol " + strconv.Itoa(Protocol), true},
		{"redisson 4.7.0", false},
		{"redisson 4.7.0 protocol " + strconv.Itoa(Protocol+1), false},
	} {
		cmd := exec.Command("printf", "%s\\n", "0\tready\t0\t0\t"+tc.greeting)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		d := &Driver{cmd: cmd, pending: map[int64]*pending{}, done: make(chan struct{})}
		ready := make(chan error, 1)
		d.read(stdout, "127.0.0.1:6379", ready)
		err = <-ready
		switch {
		case tc.ok && (err != nil || d.version != "4.7.0"):
			t.Errorf("%q: %v, version %q; want ready, 4.7.0", tc.greeting, err, d.version)
		case !tc.ok && (!errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "make redisson-driver")):
			t.Errorf("%q: %v; want ErrUnavailable naming make redisson-driver", tc.greeting, err)
		}
	}
}
