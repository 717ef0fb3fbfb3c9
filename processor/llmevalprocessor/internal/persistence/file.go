package persistence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// This file opens the storage so that a storage file the storage library
// cannot open never stops the collector, and one that is sound but cannot
// be used is never thrown away:
//
//   - a damaged file is moved aside, kept for inspection, and a fresh one is
//     used: a collector that exits at every start on a damaged file (a
//     crash loop) would lose the file's spans all the same, and every span
//     after them too;
//   - a file that is not damaged but cannot be read or written (its mode, a
//     read-only file system, a FIFO or a device in its place) stops the
//     collector with what to fix, and is left where it is;
//   - when the file cannot be moved aside, a fresh one cannot be written
//     (a full disk), or its check does not finish in time, llm_eval runs
//     without storage until the next start and leaves the file in place.

// fileStorage is the type of contrib's file_storage extension, the storage
// whose file llm_eval checks before the storage library opens it.
var fileStorage = component.MustNewType("file_storage")

// DefaultCheckTimeout bounds the check of the storage file at start
// (storage_check_timeout). The check reads every page the storage library
// would walk: a file of 398 MB took 0.23-0.41 s from the page cache
// (BenchmarkCheckFile, BENCHMARKS.md); a minute leaves room for a slow
// disk.
const DefaultCheckTimeout = time.Minute

// checkProgressEvery is how often a check still running says so (a
// variable for tests).
var checkProgressEvery = 5 * time.Second

// Quarantine says which file was moved aside, where to, and why.
type Quarantine struct {
	Path    string // the damaged file
	MovedTo string // where it is kept
	Cause   string // what the check found, or the storage library's panic
}

// fileState is what the check of a storage file found.
type fileState int

const (
	// fileUnlocated: not a file_storage extension, or its file could not
	// be found; nothing is checked.
	fileUnlocated fileState = iota
	fileAbsent              // no file yet: the library creates one
	fileSound
	fileLocked  // another process has it open: the library waits for it
	fileDamaged // moved aside
	// fileUnusable: not damaged, but not something the library can use
	// (a FIFO, a device, a file the collector may not read).
	fileUnusable
	fileUnchecked // the check did not finish in time
)

// verdict is what the check found and where.
type verdict struct {
	path  string // "" when the file could not be located
	state fileState
	cause string // what is wrong (damaged, unusable, unchecked, unlocated)
	fix   string // what the user can do (unusable, unchecked)
}

// runWithout is the error that makes llm_eval run without storage until
// the next start.
type runWithout struct {
	file, cause, fix string
}

func (e runWithout) Error() string { return "running without storage: " + e.cause }

// openFile opens the storage: the check of the file, then the storage
// client and what the last run left in it.
func (st *Keeper) openFile(ctx context.Context, se storage.Extension) (openedStorage, *Quarantine, error) {
	v := verdict{state: fileUnlocated, cause: "the storage is not file_storage"}
	if st.extension.Type() == fileStorage {
		v = inspect(ctx, se, st.self, st.checkTimeout, st.tel.Log)
	}
	var q *Quarantine
	switch v.state {
	case fileUnlocated:
		if st.extension.Type() == fileStorage {
			st.tel.Log.Warn("storage: the storage file was not found, so it is opened without being checked first",
				zap.String("storage", st.extension.String()), zap.String("cause", v.cause))
		}
	case fileUnusable:
		return openedStorage{}, nil, fmt.Errorf("storage: the storage file %s of extension %q %s; it is not damaged, so llm_eval left it in place and did not start: %s",
			v.path, st.extension, v.cause, v.fix)
	case fileUnchecked:
		return openedStorage{}, nil, runWithout{file: v.path, cause: v.cause, fix: v.fix}
	case fileDamaged:
		var err error
		if q, err = moveAside(v.path, v.cause, time.Now()); err != nil {
			return openedStorage{}, nil, runWithout{file: v.path, cause: err.Error(),
				fix: "make the storage directory writable, or move the damaged file away yourself"}
		}
	}
	o, panicked, err := st.readGuarded(ctx, se)
	if panicked != "" && q == nil && v.path != "" {
		// Damage the check did not see: the library says so by
		// panicking in this goroutine.
		if _, statErr := os.Lstat(v.path); statErr == nil {
			if q, err = moveAside(v.path, panicked, time.Now()); err != nil {
				return openedStorage{}, nil, runWithout{file: v.path, cause: err.Error(),
					fix: "make the storage directory writable, or move the damaged file away yourself"}
			}
			o, panicked, err = st.readGuarded(ctx, se)
		}
	}
	switch {
	case panicked == "" && err == nil:
		return o, q, nil
	case q != nil:
		// A fresh file failed too (a full disk): quarantine cannot
		// complete, so the damaged file goes back where it was.
		failed := panicked
		if failed == "" {
			failed = err.Error()
		}
		cause := fmt.Sprintf("the storage file is damaged (%s), and a fresh file in its place could not be opened: %s", q.Cause, failed)
		if rerr := os.Rename(q.MovedTo, q.Path); rerr != nil {
			cause += fmt.Sprintf("; putting the damaged file back failed too, it is at %s: %v", q.MovedTo, rerr)
		}
		return openedStorage{}, nil, runWithout{file: q.Path, cause: cause,
			fix: "free space on the storage volume (or fix the error above); the next start moves the damaged file aside and starts on a fresh one"}
	case panicked != "":
		return openedStorage{}, nil, runWithout{file: v.path, cause: "the storage library failed: " + panicked,
			fix: "move the storage file away; the next start creates a fresh one"}
	}
	return openedStorage{}, nil, err
}

// readGuarded is read with a panic of the storage library, or a fault on
// the file it maps into memory, caught in this goroutine and returned as
// text (runtime/debug.SetPanicOnFault).
func (st *Keeper) readGuarded(ctx context.Context, se storage.Extension) (o openedStorage, panicked string, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprintf("panic: %v", r)
			if i := strings.IndexByte(panicked, '\n'); i >= 0 {
				panicked = panicked[:i]
			}
		}
	}()
	o, err = st.read(ctx, se)
	return o, "", err
}

// moveAside renames the damaged file at path, keeping it for inspection.
func moveAside(path, cause string, now time.Time) (*Quarantine, error) {
	q := &Quarantine{Path: path, MovedTo: path + ".damaged-" + now.UTC().Format("20060102T150405.000Z"), Cause: cause}
	if err := os.Rename(path, q.MovedTo); err != nil {
		return nil, fmt.Errorf("the storage file is damaged (%s) and could not be moved aside: %w", cause, err)
	}
	return q, nil
}

// inspect locates self's storage file in se and checks it, within timeout.
// It logs when it starts checking a file and, every checkProgressEvery,
// while it still runs. A check that does not finish in time is left to
// end on its own (it stops at its next read) and the file is reported
// unchecked; it runs in this process, so it never outlives the collector.
func inspect(ctx context.Context, se storage.Extension, self component.ID, timeout time.Duration, log *zap.Logger) verdict {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		path  atomic.Pointer[string]
		pages atomic.Int64
		done  = make(chan verdict, 1)
		start = time.Now()
	)
	go func() {
		p, err := locate(ctx, se, self)
		if err != nil {
			done <- verdict{state: fileUnlocated, cause: err.Error()}
			return
		}
		path.Store(&p)
		done <- check(ctx, p, timeout, &pages, log)
	}()
	tick := time.NewTicker(checkProgressEvery)
	defer tick.Stop()
	v := verdict{state: fileUnchecked}
wait:
	for {
		select {
		case v = <-done:
			if ctx.Err() == nil || v.state != fileUnlocated && v.state != fileUnchecked {
				return v
			}
			break wait // cut short by the bound
		case <-tick.C:
			file := ""
			if p := path.Load(); p != nil {
				file = *p
			}
			log.Warn("storage: still checking the storage file before opening it",
				zap.String("file", file), zap.Duration("elapsed", time.Since(start).Round(time.Second)),
				zap.Int64("pages_read", pages.Load()), zap.Duration("storage_check_timeout", timeout))
		case <-ctx.Done():
			break wait
		}
	}
	v = verdict{state: fileUnchecked, fix: "if the disk is slow rather than stuck, raise storage_check_timeout"}
	if p := path.Load(); p != nil {
		v.path = *p
	}
	v.cause = fmt.Sprintf("the check of the storage file did not finish within %s (storage_check_timeout): the disk or file system may be hung, or the file very large", timeout)
	if errors.Is(ctx.Err(), context.Canceled) {
		v.cause, v.fix = "the start was cancelled while the storage file was being checked", ""
	}
	return v
}

// check examines the storage file at path.
func check(ctx context.Context, path string, timeout time.Duration, pages *atomic.Int64, log *zap.Logger) verdict {
	v := verdict{path: path}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		// No file yet, or a directory that cannot be searched or is not
		// one: nothing to check; the library creates the file or says
		// what stops it.
		v.state = fileAbsent
		return v
	case fi.IsDir():
		v.state, v.cause = fileDamaged, "a directory is in its place"
		return v
	case !fi.Mode().IsRegular():
		v.state, v.cause = fileUnusable, fmt.Sprintf("is %s, not a storage file", kindOf(fi.Mode()))
		v.fix = "remove or rename it; the next start then creates a fresh storage file in its place"
		return v
	}
	log.Info("storage: checking the storage file before opening it",
		zap.String("file", path), zap.Int64("bytes", fi.Size()), zap.Duration("storage_check_timeout", timeout))
	f, err := os.Open(path)
	if err != nil {
		return unusable(v, fmt.Sprintf("cannot be read (%v)", err))
	}
	defer f.Close()
	if busy, err := lockedByAnother(f); err != nil || busy {
		// Another process (a second collector on the same directory)
		// writes it: not ours to judge. The library waits for its lock
		// and says so.
		v.state = fileLocked
		return v
	}
	switch err := checkBolt(ctx, f, fi.Size(), pages); {
	case err == nil:
		v.state = fileSound
	case ctx.Err() != nil:
		v.state = fileUnchecked
	default:
		// Damage, or a read the disk failed: the library could not read
		// it either.
		v.state, v.cause = fileDamaged, strings.TrimPrefix(err.Error(), errDamaged.Error()+": ")
	}
	return v
}

// unusable is a verdict on a file the collector may not read.
func unusable(v verdict, cause string) verdict {
	v.state, v.cause = fileUnusable, cause
	v.fix = fmt.Sprintf("make it and its directory readable and writable by the user the collector runs as (uid %d); the next start recovers what it holds", os.Geteuid())
	return v
}

// kindOf names what a file that is not a regular file is.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return fmt.Sprintf("a special file (%s)", m.Type())
}

// locate finds the file in which se keeps the storage of self. Neither the
// storage API nor file_storage says where that is; so locate asks se for a
// client under a one-time name, finds the file that client opened among
// the files this process has open, and takes self's file from its name:
// file_storage names a client's file after the component, then the client.
// The one-time file is removed.
func locate(ctx context.Context, se storage.Extension, self component.ID) (string, error) {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	name := "llmevalprobe" + hex.EncodeToString(nonce[:])
	suffix := "_" + name
	client, err := se.GetClient(ctx, component.KindProcessor, self, name)
	if err != nil {
		// A fresh file that could not be written (a full disk) names
		// itself in the error.
		var pe *fs.PathError
		if errors.As(err, &pe) && strings.HasSuffix(pe.Path, suffix) {
			_ = os.Remove(pe.Path)
			return strings.TrimSuffix(pe.Path, suffix), nil
		}
		return "", fmt.Errorf("file_storage gave no client to find its directory: %w", err)
	}
	path, found := openFileEndingIn(suffix)
	_ = client.Close(ctx)
	if !found {
		return "", errors.New("the file of file_storage's client is not among the files this process has open")
	}
	_ = os.Remove(path)
	return strings.TrimSuffix(path, suffix), nil
}
