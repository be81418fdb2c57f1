package redisenv

import "syscall"

// procAttr puts redis-server in a session of its own, and so in its own
// process group (a terminal's Ctrl-C reaches us, not it, and Kill takes
// its forked children too) and, where the kernel groups CPU time by
// session (sched_autogroup), in its own scheduling group: a server
// sharing ours would compete with the load generator's threads for the
// group's share, as a server on its own host never does. The kernel
// SIGKILLs it when the thread that started it dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// serviceAttr puts an engine service lockbench starts in a process group
// of its own and kills it with lockbench, however that dies.
func serviceAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
