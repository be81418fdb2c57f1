package main

import (
	"context"
	"errors"
	"io"
)

func perfCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("perf: not yet")
}
