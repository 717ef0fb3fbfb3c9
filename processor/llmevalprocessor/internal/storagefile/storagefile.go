// Package storagefile opens a processor's storage so that a storage file
// the storage library cannot open never stops the collector. The file is
// moved aside, kept for inspection, and a fresh one is used: a collector
// that exits at every start on a damaged file (a crash loop) would lose
// the file's spans all the same, and every span after them too.
package storagefile // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/storagefile"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Quarantine says which file was moved aside, where to, and why.
type Quarantine struct {
	Path    string // the file the storage library could not open
	MovedTo string // where it is kept
	Cause   string // the library's error, or its panic
}

// Open opens self's storage so that a damaged file never stops the
// collector. First, when self's file exists in the directory of a
// file_storage extension, a child process checks it (see Check): a file
// the storage library cannot read is moved to <file>.damaged-<time>
// before the library sees it, since some damage (a file cut short) makes
// it fault outside any goroutine this process could recover. Then open
// gets the client and reads it; when open panics, or fails for any reason
// but a lock that another collector holds or an ended context, the file is
// moved aside the same way and open is called once more on a fresh file.
func Open[T any](ctx context.Context, ext component.Component, self component.ID, now time.Time, open func() (T, error)) (T, *Quarantine, error) {
	var zero T
	path, located := File(ext, self)
	var q *Quarantine
	if located {
		if cause, bad := Check(ctx, path); bad {
			var err error
			if q, err = moveAside(path, cause, now); err != nil {
				return zero, nil, err
			}
		}
	}
	v, cause, err := call(open)
	if cause == "" && (err == nil || !damaged(ctx, err)) {
		return v, q, err
	}
	if cause == "" {
		cause = err.Error()
	}
	if !located || q != nil {
		// Nothing to move, or a fresh file failed: not the file's fault.
		if err == nil {
			err = fmt.Errorf("the storage library failed: %s", cause)
		}
		return v, q, err
	}
	if _, statErr := os.Lstat(path); statErr != nil {
		if err == nil {
			err = fmt.Errorf("the storage library failed on %s: %s", path, cause)
		}
		return v, nil, err
	}
	if q, err = moveAside(path, cause, now); err != nil {
		return v, nil, err
	}
	v, cause, err = call(open)
	if cause != "" {
		err = fmt.Errorf("a fresh storage file failed too: %s", cause)
	}
	return v, q, err
}

// moveAside renames the damaged file at path, keeping it for inspection.
func moveAside(path, cause string, now time.Time) (*Quarantine, error) {
	q := &Quarantine{Path: path, MovedTo: path + ".damaged-" + now.UTC().Format("20060102T150405.000Z"), Cause: cause}
	if err := os.Rename(path, q.MovedTo); err != nil {
		return nil, fmt.Errorf("%s could not be opened (%s) nor moved aside: %w", path, cause, err)
	}
	return q, nil
}

// call runs open, turning a panic into its text.
func call[T any](open func() (T, error)) (v T, panicked string, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprintf("panic: %v", r)
		}
	}()
	v, err = open()
	return v, "", err
}

// damaged reports whether err may be the file's: not a lock another
// collector holds (file_storage waits its timeout for it, then says
// "timeout"), and not the end of ctx.
func damaged(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return !strings.Contains(err.Error(), "timeout")
}

// File returns the path of self's storage file when ext is a file_storage
// extension, whose directory it reads from the extension's configuration.
// file_storage does not export it; the read is checked by this package's
// tests against the real extension, so a release that moves it fails them.
func File(ext component.Component, self component.ID) (string, bool) {
	v := reflect.ValueOf(ext)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "", false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return "", false
	}
	cfg := v.FieldByName("cfg")
	for cfg.IsValid() && cfg.Kind() == reflect.Pointer {
		if cfg.IsNil() {
			return "", false
		}
		cfg = cfg.Elem()
	}
	if !cfg.IsValid() || cfg.Kind() != reflect.Struct {
		return "", false
	}
	dir := cfg.FieldByName("Directory")
	if !dir.IsValid() || dir.Kind() != reflect.String || dir.String() == "" {
		return "", false
	}
	return filepath.Join(dir.String(), fileName(self)), true
}

// fileName is file_storage's name for a processor's client: kind, type
// and name joined by underscores, each character outside [0-9A-Za-z._-]
// written as ~ and its four hex digits (the tilde too).
func fileName(self component.ID) string {
	raw := fmt.Sprintf("processor_%s_%s", self.Type(), self.Name())
	var b strings.Builder
	for _, r := range raw {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "~%04X", r)
		}
	}
	return b.String()
}
