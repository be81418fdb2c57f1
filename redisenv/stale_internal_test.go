package redisenv

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
)

// TestLeftOverHereOnly: what a process that has exited made is left over,
// but only when it was made here: the same pid on another host, or in
// another container sharing the engine, is not this process's to judge.
func TestLeftOverHereOnly(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(cmd.Process.Pid)
	for _, tc := range []struct {
		labels map[string]string
		left   bool
	}{
		{map[string]string{OwnerLabel: dead + " 1", OwnerSpaceLabel: pidSpace()}, true},
		{map[string]string{OwnerLabel: dead + " 1"}, true}, // made by a lockbench that records no place
		{map[string]string{OwnerLabel: dead + " 1", OwnerSpaceLabel: "elsewhere/4026531836"}, false},
		{ownerLabels(), false},
		{map[string]string{OwnerLabel: strconv.Itoa(os.Getpid()) + " 1", OwnerSpaceLabel: pidSpace()}, true}, // a reused pid
		{map[string]string{}, false},
		{map[string]string{OwnerLabel: "x 1"}, false},
	} {
		if got := leftOver(tc.labels); got != tc.left {
			t.Errorf("leftOver(%q) = %v, want %v", tc.labels, got, tc.left)
		}
	}
	if runtime.GOOS == "linux" && pidSpace() == "" {
		t.Error("no host or pid namespace: every engine's leftovers would be judged as made here")
	}
}
