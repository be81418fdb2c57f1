package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// CheckOutDir makes sure results can be written into dir, the value of
// flag, before any load starts: it creates dir (with its parents) when
// missing and proves it writable by creating and removing a file in it.
// A run that found out at its end would lose everything it measured.
func CheckOutDir(flag, dir string) error {
	if dir == "" {
		return Usagef("%s: empty; give a directory for the results, e.g. %s bench-results", flag, flag)
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return Usagef("%s %s: is a file, not a directory; give a directory", flag, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Usagef("%s %s: cannot create it (%s); give a directory you can write", flag, dir, pathReason(err))
	}
	if err := probeWrite(dir); err != nil {
		return Usagef("%s %s: cannot write into it (%s); give a directory you can write", flag, dir, pathReason(err))
	}
	return nil
}

// CheckOutFile makes sure the file path, the value of flag, can be written
// at the end of a run: it is not a directory, its directory exists and
// takes a new file, and its name fits the file system. It neither creates
// nor truncates path.
func CheckOutFile(flag, path string) error {
	if path == "" {
		return Usagef("%s: empty; give a file name", flag)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return Usagef("%s %s: is a directory; give a file name", flag, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return Usagef("%s %s: directory %s does not exist; give a path in an existing directory", flag, path, dir)
	case err != nil:
		return Usagef("%s %s: %s; give a path in a directory you can write", flag, path, pathReason(err))
	case !st.IsDir():
		return Usagef("%s %s: %s is a file, not a directory; give a path in an existing directory", flag, path, dir)
	}
	if err := probeWrite(dir); err != nil {
		return Usagef("%s %s: cannot write into %s (%s); give a path in a directory you can write", flag, path, dir, pathReason(err))
	}
	if err := probeName(path); err != nil {
		return Usagef("%s %s: %s; give a shorter name", flag, path, pathReason(err))
	}
	return nil
}

// probeWrite creates and removes a temporary file in dir.
func probeWrite(dir string) error {
	f, err := os.CreateTemp(dir, ".lockbench-probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// probeName reports a name the file system refuses (too long), without
// creating the file: Lstat answers ENAMETOOLONG for such a name and
// ENOENT for one that merely does not exist yet.
func probeName(path string) error {
	_, err := os.Lstat(path)
	if err == nil || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// pathReason is err without the path the caller already names.
func pathReason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return fmt.Sprint(err)
}
