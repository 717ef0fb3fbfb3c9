package persistence

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// openFileEndingIn returns the path of a file this process has open whose
// path ends in suffix, read from /proc/self/fd.
func openFileEndingIn(suffix string) (string, bool) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return "", false
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && filepath.IsAbs(target) && strings.HasSuffix(target, suffix) {
			return target, true
		}
	}
	return "", false
}

// lockedByAnother reports whether another process holds the storage
// library's exclusive lock on f. Otherwise f holds a shared lock until it
// is closed, as the library's read-only opening does.
func lockedByAnother(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}
