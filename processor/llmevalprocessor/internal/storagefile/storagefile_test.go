package storagefile

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

var self = component.MustNewIDWithName("llm_eval", "prod")

// newExtension is a real file_storage extension keeping its files in dir.
func newExtension(t *testing.T, dir string) storage.Extension {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory, cfg.Compaction.Directory = dir, dir
	cfg.Timeout = 200 * time.Millisecond
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	return ext.(storage.Extension)
}

// openAndRead is what the processor does at start: get the client and
// read every record.
func openAndRead(ext storage.Extension) func() (storage.Client, error) {
	return func() (storage.Client, error) {
		client, err := ext.GetClient(context.Background(), component.KindProcessor, self, "")
		if err != nil {
			return nil, err
		}
		if w, ok := client.(storage.Walker); ok {
			if err := w.Walk(context.Background(), func(string, []byte) ([]*storage.Operation, error) { return nil, nil }); err != nil {
				_ = client.Close(context.Background())
				return nil, err
			}
		}
		return client, nil
	}
}

// fillFile writes a storage file of several hundred KiB, as held spans do.
func fillFile(t *testing.T, dir string) string {
	t.Helper()
	ext := newExtension(t, dir)
	client, err := openAndRead(ext)()
	require.NoError(t, err)
	value := make([]byte, 2000)
	for i := range 300 {
		_, _ = rand.Read(value)
		require.NoError(t, client.Set(context.Background(), fmt.Sprintf("i%06d", i), value))
	}
	require.NoError(t, client.Close(context.Background()))
	path, ok := File(ext, self)
	require.True(t, ok)
	st, err := os.Stat(path)
	require.NoError(t, err, "File names the file file_storage wrote")
	require.Greater(t, st.Size(), int64(256<<10))
	return path
}

func TestFileIsWhereFileStorageWrites(t *testing.T) {
	dir := t.TempDir()
	fillFile(t, dir)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "processor_llm_eval_prod", entries[0].Name())
	assert.Equal(t, "processor_llm_eval_a~002Fb~007E", fileName(component.MustNewIDWithName("llm_eval", "a/b~")))
	_, ok := File(struct{ component.Component }{}, self)
	assert.False(t, ok, "another extension has no file to move")
}

func TestDamagedFileIsMovedAside(t *testing.T) {
	now := time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"cut_short", func(t *testing.T, path string) { require.NoError(t, os.Truncate(path, 200_000)) }},
		{"random_bytes_in_data_pages", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			require.NoError(t, err)
			junk := make([]byte, 64<<10)
			_, _ = rand.Read(junk)
			_, err = f.WriteAt(junk, 16<<10) // past the two meta pages
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}},
		{"random_bytes_everywhere", func(t *testing.T, path string) {
			st, err := os.Stat(path)
			require.NoError(t, err)
			junk := make([]byte, st.Size())
			_, _ = rand.Read(junk)
			require.NoError(t, os.WriteFile(path, junk, 0o600))
		}},
		{"zero_length", func(t *testing.T, path string) { require.NoError(t, os.Truncate(path, 0)) }},
		{"a_directory_in_its_place", func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.Mkdir(path, 0o700))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := fillFile(t, dir)
			tt.damage(t, path)
			ext := newExtension(t, dir)
			client, q, err := Open(context.Background(), ext, self, now, openAndRead(ext))
			require.NoError(t, err)
			require.NotNil(t, q, "the damaged file is quarantined")
			defer client.Close(context.Background())
			assert.Equal(t, path, q.Path)
			assert.Equal(t, path+".damaged-20261125T140000.000Z", q.MovedTo)
			assert.NotEmpty(t, q.Cause)
			_, err = os.Lstat(q.MovedTo)
			assert.NoError(t, err, "the damaged file is kept for inspection")
			require.NoError(t, client.Set(context.Background(), "k", []byte("v")), "the fresh file works")
			got, err := client.Get(context.Background(), "k")
			require.NoError(t, err)
			assert.Equal(t, []byte("v"), got)
		})
	}
}

func TestHealthyFileIsKept(t *testing.T) {
	dir := t.TempDir()
	path := fillFile(t, dir)
	cause, bad := Check(context.Background(), path)
	assert.False(t, bad, cause)
	ext := newExtension(t, dir)
	client, q, err := Open(context.Background(), ext, self, time.Now(), openAndRead(ext))
	require.NoError(t, err)
	defer client.Close(context.Background())
	assert.Nil(t, q, "nothing is moved")
	got, err := client.Get(context.Background(), "i000299")
	require.NoError(t, err)
	assert.Len(t, got, 2000, "the records are still there")
}

// TestCheckNamesTheDamage: the checker's first line says what is wrong,
// and a crash of the checker (a fault in the mapped file) is damage too.
func TestCheckNamesTheDamage(t *testing.T) {
	dir := t.TempDir()
	path := fillFile(t, dir)
	require.NoError(t, os.Truncate(path, 200_000))
	cause, bad := Check(context.Background(), path)
	assert.True(t, bad)
	assert.NotEmpty(t, cause)
	assert.NotContains(t, cause, "\n")
	_, bad = Check(context.Background(), filepath.Join(dir, "none"))
	assert.False(t, bad, "no file, nothing to check")
}

func TestOpenLeavesOtherFailuresAlone(t *testing.T) {
	dir := t.TempDir()
	path := fillFile(t, dir)
	ext := newExtension(t, dir)
	tests := []struct {
		name string
		ctx  func() context.Context
		err  error
	}{
		{"lock_held_by_another_collector", context.Background, errors.New("timeout")},
		{"context_ended", func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, q, err := Open(tt.ctx(), ext, self, time.Now(), func() (int, error) { return 0, tt.err })
			assert.ErrorIs(t, err, tt.err)
			assert.Nil(t, q)
			_, statErr := os.Stat(path)
			assert.NoError(t, statErr, "the file stays where it is")
		})
	}
	t.Run("no_file_to_move", func(t *testing.T) {
		missing := newExtension(t, filepath.Join(dir, "missing"))
		_, q, err := Open(context.Background(), missing, self, time.Now(), func() (int, error) { return 0, errors.New("permission denied") })
		assert.EqualError(t, err, "permission denied")
		assert.Nil(t, q)
	})
	t.Run("fresh_file_fails_too", func(t *testing.T) {
		calls := 0
		_, q, err := Open(context.Background(), ext, self, time.Now(), func() (int, error) {
			calls++
			panic("page 72 self identifies as 0")
		})
		require.Error(t, err)
		assert.True(t, strings.Contains(err.Error(), "a fresh storage file failed too: panic: page 72"), err.Error())
		assert.Equal(t, 2, calls, "one more try on a fresh file, no more")
		require.NotNil(t, q)
	})
}
