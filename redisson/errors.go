package redisson

import (
	"fmt"
	"strings"
)

// ConfigError is a Config the driver cannot use, found before the JVM
// starts; it names the field, never its value.
type ConfigError struct{ Field, Fix string }

func (e *ConfigError) Error() string { return "redisson: " + e.Field + ": " + e.Fix }

// IsUsage marks the error as bad input: the CLIs exit 2 on it.
func (e *ConfigError) IsUsage() bool { return true }

// Error is an exception Redisson threw in the driver.
type Error struct {
	Op   string
	Kind Kind
	// Name is the lock's name, Owner the thread's.
	Name, Owner string
	// Class is the exception's simple class name, such as
	// IllegalMonitorStateException (an unlock by an owner that does not
	// hold the lock).
	Class   string
	Message string
}

func (e *Error) Error() string {
	if e.Op != "connect" {
		return fmt.Sprintf("redisson: %s %s %q for %s: %s: %s", e.Op, e.Kind, e.Name, e.Owner, e.Class, e.Message)
	}
	client := e.Owner
	if client == "" {
		client = "the first client" // Config.Addr's
	}
	if reply, ok := e.authReply(); ok {
		return fmt.Sprintf("redisson: connect %s to %s: authentication failed (%s); check the user and password", client, e.Name, reply)
	}
	return fmt.Sprintf("redisson: connect %s to %s: %s: %s", client, e.Name, e.Class, e.Message)
}

// authMarkers start what Redis answers credentials it refuses with:
// WRONGPASS (a wrong user or password), NOAUTH (none given), and "ERR
// AUTH <password> called without any password configured" (a password
// for a server that has none).
var authMarkers = []string{"WRONGPASS", "NOAUTH", "ERR AUTH "}

// authReply is Redis's refusal of the credentials in the exception's
// message, if it is one.
func (e *Error) authReply() (string, bool) {
	for _, m := range authMarkers {
		if i := strings.Index(e.Message, m); i >= 0 {
			return e.Message[i:], true
		}
	}
	return "", false
}

// IsUsage reports a connect that Redis refused the credentials of: bad
// input, on which the CLIs exit 2 before any load, as for a Go client's.
func (e *Error) IsUsage() bool {
	_, auth := e.authReply()
	return e.Op == "connect" && auth
}

// Refused reports whether the exception is a safety setting refusing the
// acquisition: Redisson's replica check (checkLockSyncedSlaves) found
// fewer replicas synced than it counted, and gave the lock back
// (NoSyncedSlavesException), or the server refused the write for want of
// good replicas (NOREPLICAS).
func (e *Error) Refused() bool {
	return e.Class == "NoSyncedSlavesException" || strings.Contains(e.Message, "NoSyncedSlavesException") ||
		strings.Contains(e.Message, "NOREPLICAS")
}

// NotHeld reports whether the exception says the owner held nothing to
// unlock.
func (e *Error) NotHeld() bool { return e.Class == "IllegalMonitorStateException" }
