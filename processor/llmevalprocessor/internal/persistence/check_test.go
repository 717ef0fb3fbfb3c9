//go:build linux

package persistence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
	"go.opentelemetry.io/collector/component"
)

// writeBolt writes a bbolt file of the given shape with the storage
// library itself: n keys with values of up to maxValue bytes spread over
// buckets nested depth deep, then a share of them deleted (freed pages).
func writeBolt(t testing.TB, path string, rng *mathrand.Rand, n, maxValue, depth int, syncFreelist bool) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: !syncFreelist, FreelistType: bolt.FreelistMapType})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("default"))
		return err
	}))
	value := make([]byte, maxValue)
	for i := 0; i < n; {
		require.NoError(t, db.Update(func(tx *bolt.Tx) error {
			for end := min(n, i+50); i < end; i++ {
				b, err := tx.CreateBucketIfNotExists([]byte("default"))
				if err != nil {
					return err
				}
				for d := range rng.IntN(depth + 1) {
					if b, err = b.CreateBucketIfNotExists(fmt.Appendf(nil, "nested-%d-%d", d, rng.IntN(3))); err != nil {
						return err
					}
				}
				size := rng.IntN(maxValue + 1)
				for j := range size {
					value[j] = byte(rng.Uint32())
				}
				if err := b.Put(fmt.Appendf(nil, "k%08d", rng.IntN(n*2)), value[:size]); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte("default")).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v != nil && rng.IntN(3) == 0 {
				if err := c.Delete(); err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

func checkPath(t testing.TB, path string) error {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	return checkBolt(context.Background(), f, st.Size(), new(atomic.Int64))
}

// TestCheckPassesWhatTheLibraryWrites: every file the storage library
// writes is sound to the check, whatever its shape: a false alarm would
// move a sound file, and its spans, aside.
func TestCheckPassesWhatTheLibraryWrites(t *testing.T) {
	rng := mathrand.New(mathrand.NewPCG(1, 2))
	shapes := []struct{ n, maxValue, depth int }{
		{0, 0, 0},         // a new file: one empty bucket
		{10, 100, 0},      // inline values
		{2000, 300, 0},    // several levels of branch pages
		{300, 20_000, 0},  // values in overflow pages
		{500, 2000, 3},    // nested and inline buckets
		{5000, 60, 2},     // many small keys
		{50, 200_000, 1},  // large values, nested
		{3000, 1500, 0},   // file_storage's held spans
		{1, 3_000_000, 0}, // one value of several MB
	}
	for _, sh := range shapes {
		for _, sync := range []bool{false, true} {
			t.Run(fmt.Sprintf("n%d_v%d_d%d_freelist%t", sh.n, sh.maxValue, sh.depth, sync), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "db")
				writeBolt(t, path, rng, sh.n, sh.maxValue, sh.depth, sync)
				assert.NoError(t, checkPath(t, path))
			})
		}
	}
	t.Run("file_storage", func(t *testing.T) {
		dir := t.TempDir()
		assert.NoError(t, checkPath(t, fillFile(t, dir)))
	})
}

// TestCheckSeesDamageTheLibraryWouldFaultOn: what makes the storage
// library fault or panic in a goroutine of its own is damage to the check.
func TestCheckSeesDamageTheLibraryWouldFaultOn(t *testing.T) {
	for _, tt := range damages {
		if tt.name == "a_directory_in_its_place" {
			continue // not a file to read
		}
		t.Run(tt.name, func(t *testing.T) {
			path := fillFile(t, t.TempDir())
			tt.damage(t, path)
			err := checkPath(t, path)
			require.Error(t, err)
			assert.True(t, errors.Is(err, errDamaged), err.Error())
		})
	}
}

// TestCheckNeverPanics: whatever bytes the file holds, the check returns
// (a panic would stop the collector it protects). A file it passes opens
// in the storage library, read and write, without ending this process.
func TestCheckNeverPanics(t *testing.T) {
	rng := mathrand.New(mathrand.NewPCG(3, 4))
	dir := t.TempDir()
	good := fillFile(t, dir)
	original, err := os.ReadFile(good)
	require.NoError(t, err)
	sound := 0
	for i := range 300 {
		b := bytes.Clone(original)
		// Flip a few bytes, or write a run of junk, or zero a range.
		switch i % 3 {
		case 0:
			for range 1 + rng.IntN(8) {
				b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
			}
		case 1:
			at := rng.IntN(len(b))
			for j := at; j < min(len(b), at+rng.IntN(20_000)); j++ {
				b[j] = byte(rng.Uint32())
			}
		case 2:
			at := rng.IntN(len(b))
			clear(b[at:min(len(b), at+rng.IntN(50_000))])
		}
		err := checkBolt(context.Background(), bytes.NewReader(b), int64(len(b)), new(atomic.Int64))
		if err != nil {
			require.True(t, errors.Is(err, errDamaged), err.Error())
			continue
		}
		sound++
		if sound > 30 {
			continue // enough opened
		}
		sub := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(sub, "processor_llm_eval_prod"), b, 0o600))
		o := open(t, fileStorageID, newExtension(t, sub), time.Minute)
		require.NoError(t, o.err)
		assert.True(t, o.on, "a file the check passes opens")
		assert.Empty(t, logged(o.logs, "could not be opened"), "and is not moved aside")
	}
	t.Logf("%d of 300 damaged copies passed the check (damage in values or free pages) and opened", sound)
}

func TestCheckReadsLockedFilesNot(t *testing.T) {
	dir := t.TempDir()
	path := fillFile(t, dir)
	first, err := newExtension(t, dir).GetClient(context.Background(), component.KindProcessor, self, "")
	require.NoError(t, err)
	defer first.Close(context.Background())
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	busy, err := lockedByAnother(f)
	require.NoError(t, err)
	assert.True(t, busy, "file_storage holds the file")
}

// BenchmarkCheckFile measures the check of a storage file of held spans
// (values of up to 3,000 bytes, a third of them deleted), read from the
// page cache:
// go test -run '^$' -bench BenchmarkCheckFile -benchtime 3x ./processor/llmevalprocessor/internal/persistence/
func BenchmarkCheckFile(b *testing.B) {
	for _, keys := range []int{10_000, 150_000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "db")
			writeBolt(b, path, mathrand.New(mathrand.NewPCG(5, 6)), keys, 3000, 0, false)
			st, err := os.Stat(path)
			require.NoError(b, err)
			b.SetBytes(st.Size())
			b.ResetTimer()
			for b.Loop() {
				if err := checkPath(b, path); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.Size())/1e6, "file-MB")
		})
	}
}
