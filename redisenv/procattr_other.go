//go:build unix && !linux

package redisenv

import "syscall"

// procAttr puts redis-server in its own process group. Without Linux's
// parent-death signal, only Close and context cancellation stop it: a
// SIGKILLed lockbench leaves it running here.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// serviceAttr puts an engine service lockbench starts in a process group
// of its own; without a parent-death signal, a SIGKILLed lockbench leaves
// it running here.
func serviceAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
