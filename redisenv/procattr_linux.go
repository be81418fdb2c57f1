package redisenv

import "syscall"

// procAttr puts redis-server in its own process group (so a terminal's
// Ctrl-C reaches us, not it, and Kill takes its forked children too) and
// has the kernel SIGKILL it when the thread that started it dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
