//go:build e2e

package e2e

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// heldForDamage is how many generation spans the first run holds when it
// is killed: enough records for a storage file of several hundred KiB.
const heldForDamage = 400

// TestDamagedStorageFileIsQuarantined: the built collector is killed with
// spans held in file_storage, its storage file is damaged, and it is
// started again on the damaged file. It must start, move the file aside,
// log one error naming the storage key and the file, count it, and
// evaluate new spans.
func TestDamagedStorageFileIsQuarantined(t *testing.T) {
	bin := collectortest.Binary(t)
	kinds := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"cut_short", func(t *testing.T, path string) {
			st, err := os.Stat(path)
			require.NoError(t, err)
			require.Greater(t, st.Size(), int64(200_000), "the held spans fill the file")
			require.NoError(t, os.Truncate(path, 200_000))
		}},
		{"random_bytes_in_data_pages", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			require.NoError(t, err)
			junk := make([]byte, 128<<10)
			_, _ = rand.Read(junk)
			_, err = f.WriteAt(junk, 16<<10)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}},
		{"zero_length", func(t *testing.T, path string) { require.NoError(t, os.Truncate(path, 0)) }},
		{"a_directory_in_its_place", func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.Mkdir(path, 0o700))
		}},
	}
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			r := holdAndKill(t, bin, heldForDamage)
			judge, sink, dir, p, cfg, path := r.judge, r.sink, r.dir, r.ports, r.cfg, r.path
			kind.damage(t, path)

			judge.SetLatency(0)
			logPath := filepath.Join(dir, "second.log")
			second := startKillable(t, bin, cfg, logPath)
			second.waitHealthy(t, p.health)

			moved, err := filepath.Glob(path + ".damaged-*")
			require.NoError(t, err)
			assert.Len(t, moved, 1, "the damaged file is kept, moved aside")
			log, err := os.ReadFile(logPath)
			require.NoError(t, err)
			var lines []string
			for _, l := range strings.Split(string(log), "\n") {
				if strings.Contains(l, "storage file could not be opened") {
					lines = append(lines, l)
				}
			}
			require.Len(t, lines, 1, "one error:\n%s", log)
			assert.Contains(t, lines[0], `"storage": "file_storage/llm_eval"`, "names the key")
			assert.Contains(t, lines[0], path, "names the file")
			assert.Contains(t, lines[0], "are not recovered", "says what was lost")
			assert.Contains(t, grepLines(scrape(t, p.telemetry), "storage_files_quarantined"), " 1")

			td, ids := durableBatchOf(100_000, 2)
			require.NoError(t, postTraces(p.otlp, td))
			require.Eventually(t, func() bool {
				_, ok := sink.resultTime(ids[0], "bias")
				_, ok2 := sink.resultTime(ids[1], "bias")
				return ok && ok2
			}, waitLimit, 100*time.Millisecond, "new spans are evaluated on the fresh file")
			second.stop(t)
		})
	}
}

// A storage file owned by another user is opened as usual when the
// collector may read it (root may): nothing is moved and the held spans
// come back.
func TestStorageFileOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the file to another user") // CI runs as root
	}
	r := holdAndKill(t, collectortest.Binary(t), 5)
	judge, sink, dir, p, cfg, path, bin := r.judge, r.sink, r.dir, r.ports, r.cfg, r.path, r.bin
	ids := r.ids
	require.NoError(t, os.Chown(path, 65534, 65534))
	require.NoError(t, os.Chmod(path, 0o600))

	judge.SetLatency(0)
	second := startKillable(t, bin, cfg, filepath.Join(dir, "second.log"))
	second.waitHealthy(t, p.health)
	moved, _ := filepath.Glob(path + ".damaged-*")
	assert.Empty(t, moved, fmt.Sprintf("a readable file is not moved: %v", moved))
	require.Eventually(t, func() bool {
		_, ok := sink.resultTime(ids[0], "bias")
		return ok
	}, waitLimit, 100*time.Millisecond, "the held spans are recovered and evaluated")
	second.stop(t)
}

// killedRun is a collector run killed with spans held in its storage file.
type killedRun struct {
	bin, dir, cfg, path string // path: the storage file
	ports               ports
	judge               *scoringtest.Server
	sink                *spanSink
	ids                 []string // of the held generation spans and their batches' other spans
}

// holdAndKill starts the built collector with file_storage and a judge that
// does not answer in time, sends n generation spans (a multiple of 5, in
// batches of up to 50), and kills it with -9 while every span is held.
func holdAndKill(t *testing.T, bin string, n int) killedRun {
	return holdAndKillOn(t, bin, n, nil)
}

// holdAndKillOn is holdAndKill with prepare run on the empty storage
// directory first (to mount a file system there).
func holdAndKillOn(t *testing.T, bin string, n int, prepare func(t *testing.T, storageDir string)) killedRun {
	t.Helper()
	r := killedRun{bin: bin, dir: t.TempDir(), judge: scoringtest.New(t), sink: newSpanSink(t)}
	storageDir := filepath.Join(r.dir, "storage")
	require.NoError(t, os.Mkdir(storageDir, 0o700))
	if prepare != nil {
		prepare(t, storageDir)
	}
	r.ports = ports{otlp: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	r.cfg = writeDurableConfig(t, r.dir, "collector.yaml", r.judge.URL, r.sink.srv.URL, storageDir, "60s", r.ports)
	r.path = filepath.Join(storageDir, "processor_llm_eval_")
	r.judge.SetLatency(time.Minute)
	first := startKillable(t, bin, r.cfg, filepath.Join(r.dir, "first.log"))
	first.waitHealthy(t, r.ports.health)
	for sent := 0; sent < n; sent += 50 {
		td, ids := durableBatchOf(sent, min(50, n-sent))
		require.NoError(t, postTraces(r.ports.otlp, td))
		r.ids = append(r.ids, ids...)
	}
	first.kill(t)
	return r
}
