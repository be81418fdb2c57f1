package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// Created is the directories an output check made, each parent before
// what it holds: those a command that wrote nothing takes away again
// (Prune). A directory that existed before the check is never in it.
type Created []string

// Prune removes each directory c made that holds no file (empty
// directories inside it, such as a sweep's points/, do not count), the
// innermost first. Deferred by a command, it leaves no empty --out behind
// a run that never started; a directory with results in it stays.
func (c Created) Prune() {
	for i := len(c) - 1; i >= 0; i-- {
		if !holdsFiles(c[i]) {
			_ = os.RemoveAll(c[i])
		}
	}
}

// holdsFiles reports whether anything but directories is under dir (true
// when it cannot tell: pruning must never remove what it did not see).
func holdsFiles(dir string) bool {
	found := false
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found || err != nil
}

// mkdirAll is os.MkdirAll, returning the directories it created.
func mkdirAll(dir string) (Created, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(missing)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return missing, nil
}

// CheckOutDir makes sure results can be written into dir, the value of
// flag, before any load starts: it creates dir (with its parents) when
// missing and proves it writable by creating and removing a file in it.
// A run that found out at its end would lose everything it measured. It
// returns what it created, for the caller to Prune when it ends.
func CheckOutDir(flag, dir string) (Created, error) {
	if dir == "" {
		return nil, Usagef("%s: empty; give a directory for the results, e.g. %s bench-results", flag, flag)
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, Usagef("%s %s: is a file, not a directory; give a directory", flag, dir)
	}
	made, err := mkdirAll(dir)
	if err != nil {
		return nil, Usagef("%s %s: cannot create it (%s); give a directory you can write", flag, dir, pathReason(err))
	}
	if err := probeWrite(dir); err != nil {
		made.Prune()
		return nil, Usagef("%s %s: cannot write into it (%s); give a directory you can write", flag, dir, pathReason(err))
	}
	return made, nil
}

// CheckOutFile makes sure the file path, the value of flag, can be written
// at the end of a run: it is not a directory, its directory exists (it is
// created when missing, as CheckOutDir creates an --out) and takes a new
// file, and its name fits the file system. It neither creates nor
// truncates path, and returns the directories it created, for the caller
// to Prune when it ends.
func CheckOutFile(flag, path string) (Created, error) {
	if path == "" {
		return nil, Usagef("%s: empty; give a file name", flag)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, Usagef("%s %s: is a directory; give a file name", flag, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case errors.Is(err, syscall.ENOTDIR):
		return nil, Usagef("%s %s: a parent of %s is a file, not a directory; give a path in a directory", flag, path, dir)
	case err != nil:
		return nil, Usagef("%s %s: %s; give a path in a directory you can write", flag, path, pathReason(err))
	case !st.IsDir():
		return nil, Usagef("%s %s: %s is a file, not a directory; give a path in a directory", flag, path, dir)
	}
	made, err := mkdirAll(dir)
	if err != nil {
		return nil, Usagef("%s %s: cannot create its directory %s (%s); give a path in a directory you can write", flag, path, dir, pathReason(err))
	}
	if err := probeWrite(dir); err != nil {
		made.Prune()
		return nil, Usagef("%s %s: cannot write into %s (%s); give a path in a directory you can write", flag, path, dir, pathReason(err))
	}
	if err := probeName(path); err != nil {
		made.Prune()
		return nil, Usagef("%s %s: %s; give a shorter name", flag, path, pathReason(err))
	}
	return made, nil
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
