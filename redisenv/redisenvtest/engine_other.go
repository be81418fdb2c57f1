//go:build !linux

package redisenvtest

import "syscall"

// serviceAttr puts the engine service in a group of its own.
func serviceAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
