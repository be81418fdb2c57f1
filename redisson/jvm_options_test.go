package redisson_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/redisson"
)

// TestJVMRunsWithDefaults: the driver's JVM gets no flags of lockbench's,
// so its collector, heap and stacks are the defaults an application gets,
// and JVMOptions names an option variable that adds to them without
// quoting it.
func TestJVMRunsWithDefaults(t *testing.T) {
	const secret = "-Dlockbench.opt=s3cret"
	t.Setenv("JDK_JAVA_OPTIONS", secret)
	_, d := start(t)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", d.PID()))
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	jar, _ := redisson.FindJar()
	// The launcher puts $JDK_JAVA_OPTIONS's options among the arguments
	// the JVM sees; none other than -jar and the jar may be lockbench's.
	args = slices.DeleteFunc(args[1:], func(a string) bool { return a == secret })
	if !slices.Equal(args, []string{"-jar", jar}) {
		t.Errorf("JVM arguments %q, want only -jar %s", args, jar)
	}
	if o := redisson.JVMOptions(); !strings.Contains(o, "$JDK_JAVA_OPTIONS") || strings.Contains(o, "s3cret") || strings.Contains(o, ": ") {
		t.Errorf("JVMOptions %q: want $JDK_JAVA_OPTIONS named, its value not, and no \": \"", o)
	}
}
