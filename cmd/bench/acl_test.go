package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/redisson"
)

// TestRunACLUser: every implementation --impl drives runs as a Redis ACL
// user named in --redis-url, on the URL's database, with the server's
// default user disabled, so that only the user's credentials work. The
// password shows in no output, no result file and no command line of a
// process the run starts (Redisson's JVM).
func TestRunACLUser(t *testing.T) {
	env := redisenvtest.Start(t)
	redisenvtest.ACLUser(t, env, "alice", "alicePW")
	url := "redis://alice:alicePW@" + env.Addr() + "/2"
	for _, impl := range impls.Names() {
		t.Run(impl, func(t *testing.T) {
			if _, err := redisson.FindJar(); impl == impls.RedissonName && errors.Is(err, redisson.ErrUnavailable) {
				t.Skip(err)
			}
			out := t.TempDir()
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var children []string
			wg.Add(1)
			go func() {
				defer wg.Done()
				children = childCmdlines(stop)
			}()
			code, stdout, stderr := runBench(t, "run", "--redis-url", url, "--impl", impl, "--profile", "mutex",
				"--clients", "2", "--owners", "2", "--duration", "1s", "--warmup", "0s", "--quiet", "--out", out)
			close(stop)
			wg.Wait()
			if code != cli.ExitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			res := readResult(t, out)
			if res.Throughput.Ops == 0 || res.Safety.Violations != 0 {
				t.Errorf("%d operations, %d violations; want some and none", res.Throughput.Ops, res.Safety.Violations)
			}
			texts := map[string]string{"stdout": stdout, "stderr": stderr}
			files, _ := filepath.Glob(filepath.Join(out, "*"))
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				texts[f] = string(b)
			}
			for i, c := range children {
				texts[fmt.Sprintf("the command line of child %d (%s)", i, c)] = c
			}
			if impl == impls.RedissonName && len(children) == 0 {
				t.Error("saw no JVM started by the run")
			}
			for where, text := range texts {
				if strings.Contains(text, "alicePW") {
					t.Errorf("the password shows in %s", where)
				}
			}
		})
	}
}

// childCmdlines collects, until stop closes, the command lines of this
// process's children (a run's JVM): what any local user can read in ps.
func childCmdlines(stop <-chan struct{}) []string {
	seen := map[int]string{}
	self := strconv.Itoa(os.Getpid())
	for {
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			stat, err := os.ReadFile(d + "/stat")
			if err != nil {
				continue
			}
			// The parent's pid is the 2nd field after the ")" that ends
			// the command name.
			f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			if len(f) < 2 || f[1] != self {
				continue
			}
			cmdline, err := os.ReadFile(d + "/cmdline")
			if pid, _ := strconv.Atoi(filepath.Base(d)); err == nil && len(cmdline) > 0 {
				seen[pid] = strings.ReplaceAll(string(cmdline), "\x00", " ")
			}
		}
		select {
		case <-stop:
			var all []string
			for _, c := range seen {
				all = append(all, c)
			}
			return all
		case <-time.After(20 * time.Millisecond):
		}
	}
}
