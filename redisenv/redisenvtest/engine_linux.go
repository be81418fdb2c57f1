package redisenvtest

import "syscall"

// serviceAttr puts the engine service in a group of its own and kills it
// with the test binary, however that dies.
func serviceAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
