package redisson

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/lockbench/lockbench/internal/infile"
)

// JarEnv names the environment variable that points at the driver's jar.
const JarEnv = "LOCKBENCH_REDISSON_JAR"

// jarPath is where `make redisson-driver` builds the jar, from the module root.
const jarPath = "redisson-driver/target/lockbench-redisson-driver.jar"

// ErrUnavailable is returned by FindJar when Java or the driver's jar is
// missing; its message says how to get them.
var ErrUnavailable = errors.New("redisson: driver unavailable")

// FindJar returns the driver's jar: $LOCKBENCH_REDISSON_JAR, or the one
// `make redisson-driver` builds, looked for from the working directory
// upwards, then from the program's own directory upwards. It also checks that java is on PATH, and that the jar is a
// regular file that starts as a jar does, so that nothing else reaches the
// JVM (a FIFO would block it, another file fail it only once a run began).
func FindJar() (string, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return "", fmt.Errorf("%w: java is not on PATH (make setup installs a JDK when root)", ErrUnavailable)
	}
	if p := os.Getenv(JarEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: $%s=%s: %v", ErrUnavailable, JarEnv, p, err)
		}
		if why := notJar(p); why != "" {
			return "", &JarError{Path: p, Reason: why}
		}
		return p, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	// A built program run outside the checkout (bin/chaos from elsewhere)
	// finds the jar beside where it was built.
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	return searchJar(starts...)
}

// searchJar looks for the jar `make redisson-driver` builds from each of
// starts upwards, in turn.
func searchJar(starts ...string) (string, error) {
	for _, dir := range starts {
		for {
			p := filepath.Join(dir, jarPath)
			if _, err := os.Stat(p); err == nil {
				if why := notJar(p); why != "" {
					return "", fmt.Errorf("%w: %s %s; rebuild it with make redisson-driver", ErrUnavailable, p, why)
				}
				return p, nil
			}
			up := filepath.Dir(dir)
			if up == dir {
				break
			}
			dir = up
		}
	}
	return "", fmt.Errorf("%w: %s not found from the working directory or the program's directory up; build it with make redisson-driver (needs Java 17 and Maven), or set $%s", ErrUnavailable, jarPath, JarEnv)
}

// JarError is a $LOCKBENCH_REDISSON_JAR that is no jar: bad input, found
// before the JVM starts. The CLIs exit 2 on it.
type JarError struct{ Path, Reason string }

func (e *JarError) Error() string {
	return fmt.Sprintf("redisson: $%s=%s: %s; point it at the driver's jar (make redisson-driver builds %s), or unset it", JarEnv, e.Path, e.Reason, jarPath)
}

// IsUsage marks the error as bad input.
func (e *JarError) IsUsage() bool { return true }

// zipMagic starts every jar: a jar is a zip file whose first entry is a
// local file header.
const zipMagic = "PK\x03\x04"

// notJar says why the file at p cannot be a jar ("" when it can): not a
// regular file, unreadable, or not starting as a zip file does.
func notJar(p string) string {
	head, err := infile.Head(p, len(zipMagic))
	switch {
	case err != nil:
		return infile.Reason(err)
	case string(head) != zipMagic:
		return "is not a jar (it does not start as a zip file does)"
	}
	return ""
}

// JarVersion is the Redisson version the driver's jar was built with, read
// from the redisson-<version>.jar the build copies beside it ("" when not
// found).
func JarVersion(jar string) string {
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(jar), "lib", "redisson-[0-9]*.jar"))
	if len(m) != 1 {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m[0]), "redisson-"), ".jar")
}
