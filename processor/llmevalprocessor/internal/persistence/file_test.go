//go:build linux

package persistence

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llm-eval/llm_eval/internal/diskfault"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/metadata"
)

var (
	self          = component.MustNewIDWithName("llm_eval", "prod")
	fileStorageID = component.MustNewIDWithName("file_storage", "llm_eval")
)

// heldSpans is how many spans fillFile stores: several hundred KiB.
const heldSpans = 300

// newExtension is a real file_storage extension keeping its files in dir.
func newExtension(t testing.TB, dir string) storage.Extension {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory, cfg.Compaction.Directory = dir, dir
	cfg.Timeout = 200 * time.Millisecond
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	return ext.(storage.Extension)
}

// host offers extensions to Keeper.Open.
type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }

// opened is a Keeper opened on an extension, with what it logged.
type opened struct {
	keeper *Keeper
	on     bool
	err    error
	logs   *observer.ObservedLogs
	tel    *componenttest.Telemetry
}

// active is the storage_active gauge of o, and whether it has a series.
func (o opened) active(t testing.TB) (int64, bool) {
	t.Helper()
	m, err := o.tel.GetMetric("otelcol_processor_llm_eval_storage_active")
	if err != nil {
		return 0, false
	}
	g, ok := m.Data.(metricdata.Gauge[int64])
	require.True(t, ok)
	require.Len(t, g.DataPoints, 1)
	return g.DataPoints[0].Value, true
}

// open opens a Keeper of self on ext, named id, as llm_eval's Start does.
func open(t testing.TB, id component.ID, ext component.Component, checkTimeout time.Duration) opened {
	t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	tb, err := metadata.NewTelemetryBuilder(tel.NewTelemetrySettings())
	require.NoError(t, err)
	log := zap.New(core)
	k := NewKeeper(id, self, checkTimeout, Counters{TB: tb, Log: log, LogFailure: func(_, msg string, f ...zap.Field) { log.Warn(msg, f...) }},
		func(s string) string { return s })
	on, err := k.Open(context.Background(), host{id: ext})
	t.Cleanup(func() { _ = k.Close(context.Background()) })
	return opened{keeper: k, on: on, err: err, logs: logs, tel: tel}
}

// fillFile stores heldSpans spans through the journal, as a run killed
// with spans held leaves them, and returns the storage file.
func fillFile(t testing.TB, dir string) string {
	t.Helper()
	client, err := newExtension(t, dir).GetClient(context.Background(), component.KindProcessor, self, "")
	require.NoError(t, err)
	j, _, _, err := OpenJournal(context.Background(), client, Hooks{})
	require.NoError(t, err)
	payload := make([]byte, 1500)
	for i := range heldSpans {
		td := oneSpan()
		_, _ = rand.Read(payload)
		td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("filler", fmt.Sprintf("%d %x", i, payload))
		rec, err := EncodeSpan(td, time.Now())
		require.NoError(t, err)
		_, err = j.Admit(context.Background(), rec)
		require.NoError(t, err)
	}
	require.NoError(t, j.Close(context.Background()))
	path := filepath.Join(dir, "processor_llm_eval_prod")
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(256<<10))
	return path
}

// logged returns the messages of the entries that contain text.
func logged(logs *observer.ObservedLogs, text string) []observer.LoggedEntry {
	return logs.FilterMessageSnippet(text).All()
}

func field(e observer.LoggedEntry, key string) string {
	return fmt.Sprint(e.ContextMap()[key])
}

func TestLocateFindsFileStorageFile(t *testing.T) {
	for _, tt := range []struct {
		self component.ID
		file string
	}{
		{self, "processor_llm_eval_prod"},
		{component.MustNewID("llm_eval"), "processor_llm_eval_"},
		{component.MustNewIDWithName("llm_eval", "a/b~"), "processor_llm_eval_a~002Fb~007E"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			dir := t.TempDir()
			path, err := locate(context.Background(), newExtension(t, dir), tt.self)
			require.NoError(t, err)
			real, err := filepath.EvalSymlinks(dir)
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(real, tt.file), path)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "the one-time file is removed")
			// It is where file_storage keeps the component's storage.
			client, err := newExtension(t, dir).GetClient(context.Background(), component.KindProcessor, tt.self, "")
			require.NoError(t, err)
			require.NoError(t, client.Close(context.Background()))
			_, err = os.Stat(path)
			assert.NoError(t, err)
		})
	}
}

// damages are the kinds of damage of a storage file that must not stop the
// collector: the file is moved aside and a fresh one used.
var damages = []struct {
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
	{"a_page_reached_twice", reachPageTwice},
}

// reachPageTwice points the second child of the root branch page of the
// data bucket at its first child: the storage library, following both,
// would walk that subtree twice (a loop, when the page is an ancestor).
func reachPageTwice(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	m, err := (&boltFile{r: bytes.NewReader(b), size: int64(len(b))}).meta()
	require.NoError(t, err)
	ps, rootBucket := int(m.pageSize), m.root
	// The root bucket's one leaf holds the data bucket, file_storage's
	// "default", whose root is a branch page when it holds this much.
	leaf := b[int(rootBucket)*ps:]
	require.Equal(t, uint16(leafPage), order.Uint16(leaf[8:]))
	e := leaf[pageHeaderSize:]
	value := e[order.Uint32(e[4:])+order.Uint32(e[8:]):]
	branch := b[int(order.Uint64(value))*ps:]
	require.Equal(t, uint16(branchPage), order.Uint16(branch[8:]), "the data bucket has a branch page at its root")
	require.GreaterOrEqual(t, order.Uint16(branch[10:]), uint16(2))
	first := order.Uint64(branch[pageHeaderSize+8:])
	binary.NativeEndian.PutUint64(branch[pageHeaderSize+elementSize+8:], first)
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func TestDamagedFileIsMovedAside(t *testing.T) {
	for _, tt := range damages {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := fillFile(t, dir)
			tt.damage(t, path)
			o := open(t, fileStorageID, newExtension(t, dir), time.Minute)
			require.NoError(t, o.err)
			require.True(t, o.on, "llm_eval runs with storage, on a fresh file")
			lines := logged(o.logs, "storage file could not be opened")
			require.Len(t, lines, 1)
			assert.Equal(t, zapcore.ErrorLevel, lines[0].Level)
			assert.Equal(t, path, field(lines[0], "file"))
			assert.Equal(t, fileStorageID.String(), field(lines[0], "storage"))
			assert.NotEmpty(t, field(lines[0], "cause"))
			moved := field(lines[0], "moved_to")
			assert.True(t, strings.HasPrefix(moved, path+".damaged-"), moved)
			_, err := os.Lstat(moved)
			assert.NoError(t, err, "the damaged file is kept for inspection")
			id, err := o.keeper.Journal().Admit(context.Background(), itemRecord(t, "new", time.Now()))
			require.NoError(t, err, "the fresh file works")
			assert.NotZero(t, id)
		})
	}
}

func TestSoundFileIsKept(t *testing.T) {
	dir := t.TempDir()
	path := fillFile(t, dir)
	o := open(t, fileStorageID, newExtension(t, dir), time.Minute)
	require.NoError(t, o.err)
	require.True(t, o.on)
	assert.Len(t, o.keeper.Take(KindSpan), heldSpans, "every held span comes back")
	checking := logged(o.logs, "checking the storage file")
	require.Len(t, checking, 1, "the check says what it checks")
	assert.Equal(t, path, field(checking[0], "file"))
	assert.Empty(t, logged(o.logs, "could not be opened"))
	matches, _ := filepath.Glob(path + ".damaged-*")
	assert.Empty(t, matches, "nothing is moved")
}

// TestUnusableFileIsLeftInPlace: a FIFO or a device where the storage file
// belongs is not damage: the collector does not start, says what is there
// and what to do, and moves nothing. Opening a FIFO would wait for a
// writer: the check does not open it.
func TestUnusableFileIsLeftInPlace(t *testing.T) {
	for _, tt := range []struct {
		name, kind string
		make       func(path string) error
	}{
		{"fifo", "a named pipe (FIFO)", func(path string) error { return syscall.Mkfifo(path, 0o600) }},
		{"socket", "a socket", func(path string) error {
			fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				return err
			}
			defer syscall.Close(fd)
			return syscall.Bind(fd, &syscall.SockaddrUnix{Name: path})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "processor_llm_eval_prod")
			require.NoError(t, tt.make(path))
			start := time.Now()
			o := open(t, fileStorageID, newExtension(t, dir), time.Minute)
			require.Error(t, o.err)
			assert.Less(t, time.Since(start), 30*time.Second, "it does not wait for a writer")
			assert.Contains(t, o.err.Error(), path)
			assert.Contains(t, o.err.Error(), "is "+tt.kind+", not a storage file")
			assert.Contains(t, o.err.Error(), "left it in place")
			assert.Contains(t, o.err.Error(), "remove or rename it")
			st, err := os.Lstat(path)
			require.NoError(t, err)
			assert.False(t, st.Mode().IsRegular(), "it is still there")
			matches, _ := filepath.Glob(path + ".damaged-*")
			assert.Empty(t, matches)
		})
	}
}

// TestSoundFileOnReadOnlyFileSystem: a sound file the collector may read
// but not write (here a read-only file system, which stops root too) is
// not damage: the collector does not start, says why, and the file with
// its spans stays where it is.
func TestSoundFileOnReadOnlyFileSystem(t *testing.T) {
	dir := t.TempDir()
	diskfault.MountTmpfs(t, dir, "8m")
	path := fillFile(t, dir)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput()
	require.NoError(t, err, "remount: %s", out)

	o := open(t, fileStorageID, newExtension(t, dir), time.Minute)
	require.Error(t, o.err)
	assert.False(t, o.on)
	assert.Contains(t, o.err.Error(), path)
	assert.Contains(t, o.err.Error(), "read-only file system")
	assert.Contains(t, o.err.Error(), "not damaged and was left in place")
	assert.Empty(t, logged(o.logs, "could not be opened, so"))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the file is untouched")

	out, err = exec.Command("mount", "-o", "remount,rw", dir).CombinedOutput()
	require.NoError(t, err, "remount: %s", out)
	o = open(t, fileStorageID, newExtension(t, dir), time.Minute)
	require.NoError(t, o.err)
	assert.Len(t, o.keeper.Take(KindSpan), heldSpans, "once writable, every held span comes back")
}

// TestDiskFullDuringQuarantine: a damaged file on a full disk cannot be
// replaced by a fresh one. The damaged file stays where it was, llm_eval
// runs without storage and says so, and every further start does the
// same: no crash loop, no pile of copies.
func TestDiskFullDuringQuarantine(t *testing.T) {
	dir := t.TempDir()
	diskfault.MountTmpfs(t, dir, "4m")
	path := fillFile(t, dir)
	require.NoError(t, os.Truncate(path, 200_000))
	diskfault.Fill(t, dir)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	for start := range 3 {
		o := open(t, fileStorageID, newExtension(t, dir), time.Minute)
		require.NoError(t, o.err, "start %d", start)
		assert.False(t, o.on, "start %d runs without storage", start)
		v, ok := o.active(t)
		assert.True(t, ok && v == 0, "storage_active is 0, for an alert to see (got %d, series %v)", v, ok)
		lines := logged(o.logs, "runs without storage")
		require.Len(t, lines, 1)
		assert.Equal(t, zapcore.ErrorLevel, lines[0].Level)
		assert.Equal(t, path, field(lines[0], "file"))
		assert.Contains(t, field(lines[0], "cause"), "no space left on device")
		assert.Contains(t, field(lines[0], "fix"), "free space")
		assert.Empty(t, logged(o.logs, "could not be opened"), "nothing was moved aside")
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, before, after, "the damaged file is where it was")
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.ElementsMatch(t, []string{"filler", "processor_llm_eval_prod"}, names, "no copies, no leftovers")
		// Without storage, the keeper takes nothing and writes nothing.
		assert.Empty(t, o.keeper.Take(KindSpan))
		o.keeper.Commit()
	}
}

// TestHungCheckIsBounded: opening the storage file hangs (a write lease
// held on it stands for a hung disk). The check logs when it starts and
// while it runs, gives up at storage_check_timeout, and llm_eval runs
// without storage, leaving the file and its spans for the next start.
func TestHungCheckIsBounded(t *testing.T) {
	old := checkProgressEvery
	checkProgressEvery = 300 * time.Millisecond
	t.Cleanup(func() { checkProgressEvery = old })
	dir := t.TempDir()
	path := fillFile(t, dir)
	release := diskfault.HoldLease(t, path)

	start := time.Now()
	o := open(t, fileStorageID, newExtension(t, dir), 2*time.Second)
	took := time.Since(start)
	require.NoError(t, o.err)
	assert.False(t, o.on)
	assert.Less(t, took, 30*time.Second, "bounded by storage_check_timeout, not by the hang")
	require.Len(t, o.logs.FilterMessage("storage: checking the storage file before opening it").All(), 1, "says which file it checks")
	assert.NotEmpty(t, logged(o.logs, "still checking the storage file"), "and that it still runs")
	lines := logged(o.logs, "runs without storage")
	require.Len(t, lines, 1)
	assert.Equal(t, path, field(lines[0], "file"))
	assert.Contains(t, field(lines[0], "cause"), "did not finish within 2s (storage_check_timeout)")
	assert.Contains(t, field(lines[0], "fix"), "raise storage_check_timeout")
	v, ok := o.active(t)
	assert.True(t, ok && v == 0, "storage_active is 0 (got %d, series %v)", v, ok)

	release()
	o = open(t, fileStorageID, newExtension(t, dir), time.Minute)
	require.NoError(t, o.err)
	require.True(t, o.on)
	v, ok = o.active(t)
	assert.True(t, ok && v == 1, "storage_active is 1 (got %d, series %v)", v, ok)
	assert.Len(t, o.keeper.Take(KindSpan), heldSpans, "the next start recovers every held span")
}

// TestFileLockedByAnotherCollector: a second collector on the same
// directory waits for file_storage's lock and does not start; the file
// is not judged, not moved.
func TestFileLockedByAnotherCollector(t *testing.T) {
	dir := t.TempDir()
	path := fillFile(t, dir)
	first, err := newExtension(t, dir).GetClient(context.Background(), component.KindProcessor, self, "")
	require.NoError(t, err)
	defer first.Close(context.Background())

	o := open(t, fileStorageID, newExtension(t, dir), time.Minute)
	require.Error(t, o.err)
	assert.Contains(t, o.err.Error(), "is another collector using the same storage directory?")
	_, err = os.Stat(path)
	assert.NoError(t, err, "the file stays where it is")
	matches, _ := filepath.Glob(path + ".damaged-*")
	assert.Empty(t, matches)
}

// panicking is a storage extension whose storage library panics.
type panicking struct{ component.Component }

func (panicking) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	panic("page 72 self identifies as 0")
}

// faulting is a storage extension whose client faults on memory mapped
// from a file that was cut short, as bbolt's does: with
// runtime/debug.SetPanicOnFault, a fault in the goroutine that opens the
// storage is caught there instead of ending the process.
type faulting struct {
	component.Component
	mapped []byte
}

func (f faulting) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return faultingClient{mapped: f.mapped}, nil
}

type faultingClient struct {
	storage.Client
	mapped []byte
}

func (c faultingClient) Walk(context.Context, storage.WalkFunc) error {
	if c.mapped[len(c.mapped)-1] != 0 { // past the end of the file: SIGBUS
		return errors.New("read a byte the file does not have")
	}
	return nil
}

func (faultingClient) Close(context.Context) error { return nil }

func TestStorageLibraryFailureNeverStopsTheCollector(t *testing.T) {
	other := component.MustNewIDWithName("db_storage", "x") // not file_storage: nothing to locate
	o := open(t, other, panicking{}, time.Minute)
	require.NoError(t, o.err)
	assert.False(t, o.on)
	lines := logged(o.logs, "runs without storage")
	require.Len(t, lines, 1)
	assert.Contains(t, field(lines[0], "cause"), "panic: page 72 self identifies as 0")

	f, err := os.Create(filepath.Join(t.TempDir(), "mapped"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Truncate(2*4096))
	mapped, err := syscall.Mmap(int(f.Fd()), 0, 2*4096, syscall.PROT_READ, syscall.MAP_SHARED)
	require.NoError(t, err)
	defer syscall.Munmap(mapped)
	require.NoError(t, f.Truncate(0))
	o = open(t, other, faulting{mapped: mapped}, time.Minute)
	require.NoError(t, o.err, "the fault is caught")
	assert.False(t, o.on)
	lines = logged(o.logs, "runs without storage")
	require.Len(t, lines, 1)
	assert.Contains(t, field(lines[0], "cause"), "panic: runtime error")
}

func TestStorageKeyErrors(t *testing.T) {
	o := open(t, fileStorageID, nil, time.Minute)
	require.Error(t, o.err)
	assert.Contains(t, o.err.Error(), `extension "file_storage/llm_eval" is not a storage extension`)
	k := NewKeeper(fileStorageID, self, time.Minute, Counters{}, nil)
	_, err := k.Open(context.Background(), host{})
	assert.ErrorContains(t, err, `extension "file_storage/llm_eval" not found`)
	assert.False(t, errors.Is(err, errDamaged))
}
