// Package cli is the plumbing that cmd/bench and cmd/chaos share: the
// subcommand dispatcher, help and version, signal handling and exit codes.
// It holds no benchmark or fault logic.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/workloads"
)

// Version is the lockbench version, set at build time with
// -ldflags "-X github.com/lockbench/lockbench/internal/cli.Version=v1.2.3".
// Unset, it falls back to the VCS revision Go stamped into the binary.
var Version = ""

// Exit codes shared by the programs.
const (
	ExitOK          = 0
	ExitFailure     = 1   // the run failed, or a verdict differed from the expected one
	ExitUsage       = 2   // bad input: flags, profile, URL
	ExitInterrupted = 130 // Ctrl-C (128 + SIGINT)
)

// VersionString is "lockbench <version> (<go version> <os>/<arch>)".
func VersionString() string {
	v := Version
	if v == "" {
		v = "devel"
		if bi, ok := debug.ReadBuildInfo(); ok {
			if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			var rev, dirty string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					if s.Value == "true" {
						dirty = "+dirty"
					}
				}
			}
			if rev != "" {
				v += " " + rev[:min(12, len(rev))] + dirty
			}
		}
	}
	return fmt.Sprintf("lockbench %s (%s %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// UsageError is bad input: the program prints it and exits with ExitUsage.
type UsageError struct{ Err error }

// Error returns the underlying message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *UsageError) Unwrap() error { return e.Err }

// IsUsage marks the error as bad input.
func (e *UsageError) IsUsage() bool { return true }

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Exit runs p as the process: with this process's arguments and standard
// streams, Ctrl-C handled as NotifyContext does, and p's exit code.
func Exit(p Program) {
	tuneGC()
	ctx, stop := NotifyContext(context.Background(), os.Stderr)
	code := p.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// gcPercent is the programs' GOGC, unless the environment sets one. A run
// keeps a large record free of pointers (its operations, its histograms)
// for its whole length; Go's default of 100 lets the heap grow to twice
// that before collecting, doubling the harness's footprint for nothing.
// At 50 a collection costs little more, since there is little to scan.
const gcPercent = 50

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

// ExitCode maps an error to the process exit code. Any error in the chain
// with an IsUsage() bool method that returns true is bad input: every
// package's input errors carry one (UsageError, redisenv.ConfigError,
// faults.ConfigError, workloads.FieldError, report.InputError), so none
// of them needs to know of this package.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var u interface{ IsUsage() bool }
	if errors.As(err, &u) && u.IsUsage() {
		return ExitUsage
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	return ExitFailure
}

// Command is one subcommand of a program.
type Command struct {
	Summary string // one line for the program's help
	// Run parses args (everything after the subcommand name) and runs.
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// Program is a CLI made of subcommands.
type Program struct {
	Name     string // "bench"
	Synopsis string // what the program is for, one paragraph
	Examples string // shown at the end of the help
	Commands map[string]Command
}

// Main runs the subcommand named by args[0] and returns the exit code.
// "help", "-h", "--help" and no arguments print the help; "version" and
// "--version" the version.
func (p Program) Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// The Redis client library's log lines go into the results, never
	// onto the terminal.
	redisenv.CaptureClientLog()
	if len(args) == 0 {
		p.help(stderr)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[1] != "help" && args[1] != "version" {
			c, ok := p.Commands[args[1]]
			if !ok {
				return p.unknown(args[1], stderr)
			}
			return p.exit(c.Run(ctx, []string{"-h"}, stdout, stderr), stderr)
		}
		p.help(stdout)
		return ExitOK
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, VersionString())
		return ExitOK
	}
	c, ok := p.Commands[name]
	if !ok {
		return p.unknown(name, stderr)
	}
	return p.exit(c.Run(ctx, args[1:], stdout, stderr), stderr)
}

// unknown refuses a command name the program does not have.
func (p Program) unknown(name string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "%s: unknown command %q; commands: %s (see %s help)\n", p.Name, name, strings.Join(p.names(), ", "), p.Name)
	return ExitUsage
}

func (p Program) exit(err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	code := ExitCode(err)
	if err != nil {
		if code == ExitInterrupted {
			fmt.Fprintf(stderr, "%s: %s\n", p.Name, interruptLine(err))
		} else {
			fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		}
	}
	return code
}

// interruptLine is what a command a signal stopped ends with: one line
// saying so, with what its error adds (how far it got), less the
// cancelled context's "context canceled", which says it again in Go's
// words: "interrupted", "interrupted: after 2 of 5 scenarios".
func interruptLine(err error) string {
	var parts []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if i := strings.Index(line, context.Canceled.Error()); i >= 0 {
			line = line[:i] // and the signal's name after it: the handler printed it
		}
		if line = strings.TrimRight(strings.TrimSpace(line), ":"); line != "" {
			parts = append(parts, line)
		}
	}
	switch {
	case len(parts) == 0:
		return "interrupted"
	case strings.Contains(parts[0], "interrupted"):
		return strings.Join(parts, "; ")
	}
	return "interrupted: " + strings.Join(parts, "; ")
}

func (p Program) names() []string {
	var names []string
	for n := range p.Commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return append(names, "version", "help")
}

func (p Program) help(w io.Writer) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s <command> [flags]\n\nCommands:\n", p.Synopsis, p.Name)
	for _, n := range p.names() {
		sum := p.Commands[n].Summary
		switch n {
		case "version":
			sum = "print the lockbench version"
		case "help":
			sum = "print this help, or a command's: " + p.Name + " help <command>"
		}
		fmt.Fprintf(w, "  %-10s %s\n", n, sum)
	}
	if p.Examples != "" {
		fmt.Fprintf(w, "\nExamples:\n%s", p.Examples)
	}
	fmt.Fprintf(w, "\nExit codes: 0 ok, 1 failure, 2 bad input, 130 interrupted.\n")
}

// FlagSet returns a flag set for a subcommand whose -h prints usage (a
// paragraph of what the command does) and the flags, and whose parse errors
// become UsageErrors.
func FlagSet(prog, cmd, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(prog+" "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s %s [flags]\n\n%s\n\nFlags:\n", prog, cmd, strings.TrimSpace(usage))
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses args into fs, turning errors into one-line UsageErrors
// (see parse) and refusing stray positional arguments.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("%s: unexpected argument %q (flags go before it? see %s -h)", fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
}

// ParseArgs parses args into fs like Parse, but accepts positional
// arguments (scenario names) before, between and after the flags, and
// returns them in order.
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil // everything after -- is positional
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// parse parses args into fs without letting the flag package print: on
// a mistyped value it prints its message and then the whole usage, a
// hundred lines burying the one that matters. The error carries that
// line (Program prints it), as a UsageError; -h still prints the usage
// and returns flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string) error {
	fs.VisitAll(func(f *flag.Flag) {
		if b, ok := f.Value.(boolFlag); ok && b.IsBoolFlag() {
			if _, done := b.(strictBool); !done {
				f.Value = strictBool{b}
			}
		}
	})
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	case err != nil:
		// The set's name is "bench report RESULT_DIR_OR_FILE...": the help
		// is the command's.
		words := strings.Fields(fs.Name())
		return &UsageError{Err: fmt.Errorf("%v (see %s -h)", err, strings.Join(words[:min(2, len(words))], " "))}
	}
	return nil
}

// boolFlag is a flag.Value that stands alone on the command line
// (--quiet), as the flag package's bool flags are.
type boolFlag interface {
	flag.Value
	IsBoolFlag() bool
}

// strictBool reads a bool flag's value as a profile's yes/no fields are
// read (workloads.ParseBool), so that --quiet=1 and --auto-pipeline 1 get
// the same answer.
type strictBool struct{ boolFlag }

// String is the flag's value; the flag package also calls it on a zero
// strictBool to tell a default worth printing.
func (b strictBool) String() string {
	if b.boolFlag == nil {
		return "false"
	}
	return b.boolFlag.String()
}

func (b strictBool) Set(s string) error {
	v, err := workloads.ParseBool(s)
	if err != nil {
		return err
	}
	return b.boolFlag.Set(strconv.FormatBool(v))
}

// NotifyContext returns a context cancelled by the first SIGINT or SIGTERM,
// so the run stops, cleans up and writes what it has. A second signal exits
// at once with ExitInterrupted; started Redis servers still die with us,
// since they carry a parent-death signal. Once LoadEnded is called with the
// context, a first signal interrupts nothing; during ReadInputs it exits at
// once. The returned stop is for the end of the program: from then on the
// signals are ignored.
func NotifyContext(parent context.Context, stderr io.Writer) (context.Context, context.CancelFunc) {
	st := &signalState{handled: make(chan struct{})}
	ctx, cancel := context.WithCancelCause(context.WithValue(parent, signalKey{}, st))
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			st.mu.Lock()
			if st.reading > 0 {
				// Held while exiting, so the command cannot leave its
				// reading and start something meanwhile.
				fmt.Fprintf(stderr, "\n%v: stopped while reading the input files\n", s)
				os.Exit(ExitInterrupted)
			}
			st.mu.Unlock()
			if !st.ended.Load() {
				fmt.Fprintf(stderr, "\n%v: stopping and cleaning up (again to quit at once)\n", s)
				cancel(fmt.Errorf("%w by %v", context.Canceled, s))
			}
			close(st.handled)
		case <-done:
			return
		}
		select {
		case <-sigs:
			os.Exit(ExitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		// Stopped, the handler ignores the signals from here on instead of
		// restoring their default: a Ctrl-C in the moment between the end
		// of the command and the process's exit would kill it and lose the
		// exit code the command chose.
		signal.Ignore(os.Interrupt, syscall.SIGTERM)
		signal.Stop(sigs)
		close(done)
		cancel(context.Canceled)
	}
}

// signalState is what NotifyContext's context carries for LoadEnded: each
// context its own, so that contexts of unrelated callers (tests running in
// parallel) never share it.
type signalState struct {
	mu      sync.Mutex
	reading int // ReadInputs calls under way
	ended   atomic.Bool
	// handled is closed once the first signal has been acted on (or, after
	// LoadEnded, ignored): tests wait on it instead of on time.
	handled chan struct{}
}

type signalKey struct{}

// LoadEnded tells the signal handling of ctx (a context from
// NotifyContext; any other is left alone) that the load is over: a
// signal now would interrupt nothing but the writing of results, so the
// first one is ignored (no message, no cancel: the command finishes and
// exits with its own code), and a second still quits at once.
func LoadEnded(ctx context.Context) {
	if st, ok := ctx.Value(signalKey{}).(*signalState); ok {
		st.ended.Store(true)
	}
}

// ReadInputs runs read, a command's reading of its input files (and the
// checks on them) before anything starts, so that a signal meanwhile
// exits at once with ExitInterrupted and one line: there is nothing to
// clean up yet, and neither a read nor the parse of a large file watches
// ctx. ctx is a context from NotifyContext; with any other, read just
// runs.
func ReadInputs(ctx context.Context, read func() error) error {
	st, ok := ctx.Value(signalKey{}).(*signalState)
	if !ok {
		return read()
	}
	st.mu.Lock()
	st.reading++
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		st.reading--
		st.mu.Unlock()
	}()
	return read()
}

// lockedWriter serialises writes to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Locked returns w made safe for the several goroutines a run logs from
// (fault schedules, scenarios): each Write goes through whole.
func Locked(w io.Writer) io.Writer { return &lockedWriter{w: w} }
