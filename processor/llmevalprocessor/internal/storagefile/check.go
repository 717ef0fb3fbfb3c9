package storagefile // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/storagefile"

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// checkEnv, when set in a process's environment, makes that process check
// the storage file it names and exit instead of running: the collector
// binary re-executed as its own file checker (see Check).
const checkEnv = "LLMEVAL_CHECK_STORAGE_FILE"

// Exit codes of the checker process.
const (
	checkHealthy = 0
	checkDamaged = 3
	checkLocked  = 4 // another process holds the file: not ours to judge
)

// checkTimeout bounds the checker; a file so large that reading it takes
// longer is left to the storage library.
const checkTimeout = 2 * time.Minute

func init() {
	if path := os.Getenv(checkEnv); path != "" {
		os.Exit(checkFile(path))
	}
}

// Check reads the storage file at path in a child process, the running
// binary started again with checkEnv set, and reports whether the file is
// damaged, with the checker's words. A child is needed because the
// storage library maps the file into memory: reading a page past the end
// of a file cut short is a fault that ends the whole process, which no
// recover can catch. A checker that cannot be started, is stopped by ctx,
// or finds the file locked reports the file as sound: the storage library
// then opens it as it always did.
func Check(ctx context.Context, path string) (cause string, damaged bool) {
	if _, err := os.Lstat(path); err != nil {
		return "", false
	}
	self, err := os.Executable()
	if err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), checkEnv+"="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "", false
	case ctx.Err() != nil || !errors.As(err, &exit):
		return "", false
	case exit.ExitCode() == checkLocked:
		return "", false
	}
	words := strings.TrimSpace(out.String())
	if i := strings.IndexByte(words, '\n'); i >= 0 {
		words = words[:i] // a crash's first line, not its stack
	}
	if words == "" {
		words = exit.String()
	}
	return words, true
}

// checkFile opens the file read-only, runs the storage library's
// consistency check and reads every key and value. It prints what it found
// wrong and returns the process's exit code.
func checkFile(path string) int {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return checkLocked
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot open: %v\n", err)
		return checkDamaged
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return readBucket(b) })
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "inconsistent: %v\n", err)
		return checkDamaged
	}
	return checkHealthy
}

// readBucket touches every key and value of b and its nested buckets.
func readBucket(b *bolt.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			if nested := b.Bucket(k); nested != nil {
				return readBucket(nested)
			}
		}
		return nil
	})
}
