//go:build linux

package persistence

import (
	"context"
	"os"
	"os/exec"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
	"go.opentelemetry.io/collector/component"
)

// openCutShortEnv names, in this test binary run again as a child, the
// directory whose cut-short storage file the child opens as file_storage
// does, with runtime/debug.SetPanicOnFault set and a recover in place.
const openCutShortEnv = "PERSISTENCE_TEST_OPEN_CUT_SHORT"

func TestMain(m *testing.M) {
	if dir := os.Getenv(openCutShortEnv); dir != "" {
		debug.SetPanicOnFault(true)
		func() {
			defer func() { _ = recover() }()
			_, _ = newExtension(&testing.T{}, dir).GetClient(context.Background(), component.KindProcessor, self, "")
		}()
		os.Exit(0) // reached only when the fault was caught (or none came)
	}
	os.Exit(m.Run())
}

// TestSetPanicOnFaultReach: why the storage file is checked with plain
// reads before the storage library opens it. SetPanicOnFault turns a fault
// on a file cut short into a panic in the goroutine that set it, but
// file_storage's open faults (or panics) in a goroutine the library
// starts, and the process ends all the same.
func TestSetPanicOnFaultReach(t *testing.T) {
	dir := t.TempDir()
	path := fillFile(t, dir)
	require.NoError(t, os.Truncate(path, 200_000))

	t.Run("in_this_goroutine", func(t *testing.T) {
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
		require.NoError(t, err)
		defer db.Close()
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		var caught any
		sum := 0
		func() {
			defer func() { caught = recover() }()
			_ = db.View(func(tx *bolt.Tx) error {
				return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
					return b.ForEach(func(_, v []byte) error {
						for _, c := range v {
							sum += int(c)
						}
						return nil
					})
				})
			})
		}()
		assert.NotNil(t, caught, "the fault is a panic here (read %d)", sum)
	})
	t.Run("in_the_library's_goroutine", func(t *testing.T) {
		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), openCutShortEnv+"="+dir)
		out, err := child.CombinedOutput()
		require.Error(t, err, "file_storage's open of a file cut short ends the process:\n%s", out)
		// A fault past the end of the file, or the library's panic on a
		// page it reads as zeros: either in the goroutine of its page walk.
		assert.Contains(t, string(out), "created by go.etcd.io/bbolt.(*DB).freepages")
	})
}
