//go:build linux

// Package diskfault makes, for tests, the disk faults that llm_eval's
// storage must survive: a full file system and an open that hangs. Both
// need Linux; mounting needs root (CI runs as root).
package diskfault // import "github.com/llm-eval/llm_eval/internal/diskfault"

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// MountTmpfs mounts a tmpfs of size (such as "4m") on dir until the test
// ends: a disk that can be filled. It skips the test when not root.
func MountTmpfs(t testing.TB, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a file system needs root; CI runs as root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
}

// Fill writes the file "filler" in dir until its file system is full.
func Fill(t testing.TB, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return
		}
	}
}

// HoldLease takes a write lease on path until release or the end of the
// test: opening path then blocks, in any process, until the lease is
// released or the kernel's lease-break-time (45 s by default) passes, as
// on a hung disk. No other descriptor of path may be open.
func HoldLease(t testing.TB, path string) (release func()) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	const setLease = 1024 // F_SETLEASE
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), setLease, syscall.F_WRLCK); errno != 0 {
		f.Close()
		t.Fatalf("F_SETLEASE on %s: %v", path, errno)
	}
	released := false
	release = func() {
		if !released {
			released = true
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), setLease, syscall.F_UNLCK)
			f.Close()
		}
	}
	t.Cleanup(release)
	return release
}
