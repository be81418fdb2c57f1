//go:build !linux

package workloads

import (
	"errors"
	"time"
)

// hrClock needs Linux's timerfd; elsewhere waits sleep on Go timers.
type hrClock struct{}

func newHRClock() (*hrClock, error) { return nil, errors.New("no timerfd on this system") }

func (c *hrClock) add(*due)           {}
func (c *hrClock) cancel(*due)        {}
func (c *hrClock) close()             {}
func (c *hrClock) cpu() time.Duration { return 0 }
