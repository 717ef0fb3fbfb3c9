//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/internal/diskfault"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// Storage faults that are not damage (issue 37): a file the collector may
// read but not write, a full disk while a damaged file is moved aside, a
// FIFO where the file belongs, a check that hangs, and an environment
// variable that once turned the collector into its own file checker.

// nobody is the user the collector runs as where root's rights would hide
// a file's mode.
const nobody = 65534

// genIDs are the span ids of the generation spans 0..n-1 that holdAndKill
// sends.
func genIDs(n int) map[string]bool {
	ids := map[string]bool{}
	for i := range n {
		ids[spanIDOf(uint64(i)+1).String()] = true
	}
	return ids
}

// runToExit runs cmd for at most limit and returns its output and whether
// it exited by itself (then err is its exit status).
func runToExit(t *testing.T, cmd *exec.Cmd, limit time.Duration) (out string, exited bool, err error) {
	t.Helper()
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
		return buf.String(), true, err
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		return buf.String(), false, nil
	}
}

// logLines returns the lines of the log at path that contain text.
func logLines(t *testing.T, path, text string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			lines = append(lines, l)
		}
	}
	return lines
}

// storageActive is the storage_active sample of a telemetry page ("" when
// it has none).
func storageActive(page string) string {
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "otelcol_processor_llm_eval_storage_active{") || strings.HasPrefix(l, "otelcol_processor_llm_eval_storage_active ") {
			f := strings.Fields(l)
			return f[len(f)-1]
		}
	}
	return ""
}

// evaluates checks that the collector evaluates new spans.
func evaluates(t *testing.T, r killedRun, first int) {
	t.Helper()
	td, ids := durableBatchOf(first, 2)
	require.NoError(t, postTraces(r.ports.otlp, td))
	require.Eventually(t, func() bool {
		_, ok := r.sink.resultTime(ids[0], "bias")
		_, ok2 := r.sink.resultTime(ids[1], "bias")
		return ok && ok2
	}, waitLimit, 100*time.Millisecond, "new spans are evaluated")
}

// TestReadOnlyStorageFileIsLeftInPlace: a sound storage file that the
// collector may read but not write (mode 0444, the collector not root) is
// not damage. The collector does not start, naming the file, the cause
// and the fix; the file stays where it is; once it is writable, every span
// it held comes out.
func TestReadOnlyStorageFileIsLeftInPlace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the collector as another user; CI runs as root")
	}
	const held = 300
	r := holdAndKill(t, collectortest.Binary(t), held)
	// The collector runs as nobody, who may reach its binary, its
	// configuration and the storage directory.
	bin := filepath.Join(r.dir, "otelcol")
	copyFile(t, r.bin, bin, 0o755)
	require.NoError(t, os.Chmod(filepath.Dir(r.dir), 0o755))
	require.NoError(t, os.Chmod(r.dir, 0o755))
	require.NoError(t, os.Chmod(r.cfg, 0o644))
	require.NoError(t, os.Chown(filepath.Dir(r.path), nobody, nobody))
	require.NoError(t, os.Chown(r.path, nobody, nobody))
	require.NoError(t, os.Chmod(r.path, 0o444))
	asNobody := func(cmd *exec.Cmd) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	r.judge.SetLatency(0)

	cmd := exec.Command(bin, "--config", r.cfg)
	asNobody(cmd)
	out, exited, err := runToExit(t, cmd, 30*time.Second)
	require.True(t, exited, "the collector must not start on a storage file it may not write; it ran:\n%s", out)
	require.Error(t, err)
	assert.Contains(t, out, r.path, "names the file")
	assert.Contains(t, out, "permission denied", "names the cause")
	assert.Contains(t, out, "not damaged and was left in place")
	assert.Contains(t, out, "uid "+strconv.Itoa(nobody), "says who must be able to write it")
	st, err := os.Stat(r.path)
	require.NoError(t, err, "the file stays where it is")
	assert.Equal(t, os.FileMode(0o444), st.Mode().Perm())
	moved, _ := filepath.Glob(r.path + ".damaged-*")
	assert.Empty(t, moved, "a sound file is never moved aside")

	require.NoError(t, os.Chmod(r.path, 0o644))
	second := startKillableWith(t, bin, r.cfg, filepath.Join(r.dir, "second.log"), asNobody)
	second.waitHealthy(t, r.ports.health)
	want := genIDs(held)
	require.Eventually(t, func() bool { return r.sink.missing(want) == 0 }, waitLimit, 100*time.Millisecond,
		"every held span comes out once the file is writable")
	second.stop(t)
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

// TestDiskFullDuringQuarantine: a damaged storage file on a full disk
// cannot be replaced by a fresh one. The collector starts all the same,
// says that it runs without storage, leaves the damaged file where it was
// and evaluates; every further start does the same, with no pile of
// copies.
func TestDiskFullDuringQuarantine(t *testing.T) {
	r := holdAndKillOn(t, collectortest.Binary(t), heldForDamage, func(t *testing.T, dir string) { diskfault.MountTmpfs(t, dir, "4m") })
	require.NoError(t, os.Truncate(r.path, 200_000))
	storageDir := filepath.Dir(r.path)
	diskfault.Fill(t, storageDir)
	before, err := os.ReadFile(r.path)
	require.NoError(t, err)
	r.judge.SetLatency(0)

	for start := range 2 {
		logPath := filepath.Join(r.dir, fmt.Sprintf("start-%d.log", start))
		c := startKillable(t, r.bin, r.cfg, logPath)
		c.waitHealthy(t, r.ports.health)
		lines := logLines(t, logPath, "runs without storage")
		require.Len(t, lines, 1, "says that it runs without storage")
		assert.Contains(t, lines[0], r.path)
		assert.Contains(t, lines[0], "no space left on device")
		assert.Empty(t, logLines(t, logPath, "moved aside and llm_eval started on a fresh one"))
		assert.Equal(t, "0", storageActive(scrape(t, r.ports.telemetry)), "storage_active says so to an alert")
		after, err := os.ReadFile(r.path)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(before, after), "the damaged file is where it was, as it was")
		entries, err := os.ReadDir(storageDir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.ElementsMatch(t, []string{"filler", filepath.Base(r.path)}, names, "no copies pile up")
		evaluates(t, r, 100_000+10*start)
		c.stop(t)
	}
}

// TestFIFOInPlaceOfStorageFile: a FIFO where the storage file belongs is
// not opened (that would wait for a writer): the collector does not start,
// at once, naming the file and the fix, and the FIFO stays.
func TestFIFOInPlaceOfStorageFile(t *testing.T) {
	bin := collectortest.Binary(t)
	dir := t.TempDir()
	storageDir := filepath.Join(dir, "storage")
	require.NoError(t, os.Mkdir(storageDir, 0o700))
	path := filepath.Join(storageDir, "processor_llm_eval_")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	p := ports{otlp: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	cfg := writeDurableConfig(t, dir, "collector.yaml", "http://127.0.0.1:1", "http://127.0.0.1:1", storageDir, "30s", p)

	out, exited, err := runToExit(t, exec.Command(bin, "--config", cfg), 30*time.Second)
	require.True(t, exited, "start-up must not wait on the FIFO; after 30s:\n%s", out)
	require.Error(t, err)
	assert.Contains(t, out, path)
	assert.Contains(t, out, "is a named pipe (FIFO), not a storage file")
	assert.Contains(t, out, "remove or rename it")
	st, err := os.Lstat(path)
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&os.ModeNamedPipe, "the FIFO is left in place")
}

// withCheckTimeout writes a copy of the configuration at cfg with
// storage_check_timeout set.
func withCheckTimeout(t *testing.T, cfg, timeout string) string {
	t.Helper()
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	out := strings.Replace(string(b), "    storage: file_storage/llm_eval\n",
		"    storage: file_storage/llm_eval\n    storage_check_timeout: "+timeout+"\n", 1)
	require.NotEqual(t, string(b), out)
	path := strings.TrimSuffix(cfg, ".yaml") + "-check.yaml"
	require.NoError(t, os.WriteFile(path, []byte(out), 0o600))
	return path
}

// TestHungStorageCheckIsBounded: opening the storage file hangs (a lease
// held on it stands for a hung disk). The collector logs which file it
// checks, gives up at storage_check_timeout, says that it runs without
// storage and evaluates; the file is left for the next start, which
// recovers its spans.
func TestHungStorageCheckIsBounded(t *testing.T) {
	const held = 20
	r := holdAndKill(t, collectortest.Binary(t), held)
	release := diskfault.HoldLease(t, r.path)
	cfg := withCheckTimeout(t, r.cfg, "2s")
	r.judge.SetLatency(0)

	logPath := filepath.Join(r.dir, "hung.log")
	c := startKillable(t, r.bin, cfg, logPath)
	c.waitHealthy(t, r.ports.health)
	checking := logLines(t, logPath, "checking the storage file before opening it")
	require.NotEmpty(t, checking, "logs while the check runs")
	assert.Contains(t, checking[0], r.path)
	lines := logLines(t, logPath, "runs without storage")
	require.Len(t, lines, 1)
	assert.Equal(t, "0", storageActive(scrape(t, r.ports.telemetry)))
	assert.Contains(t, lines[0], "did not finish within 2s (storage_check_timeout)", "the bound ended the wait, not the lease")
	assert.Contains(t, lines[0], r.path)
	evaluates(t, r, 100_000)
	release()
	c.stop(t)

	second := startKillable(t, r.bin, r.cfg, filepath.Join(r.dir, "second.log"))
	second.waitHealthy(t, r.ports.health)
	assert.Equal(t, "1", storageActive(scrape(t, r.ports.telemetry)), "storage is in use again")
	want := genIDs(held)
	require.Eventually(t, func() bool { return r.sink.missing(want) == 0 }, waitLimit, 100*time.Millisecond,
		"the next start recovers the spans the file held")
	second.stop(t)
}

// descendants lists the processes started by pid, and theirs.
func descendants(pid int) []int {
	var kids []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		for _, f := range strings.Fields(string(b)) {
			if kid, err := strconv.Atoi(f); err == nil {
				kids = append(kids, kid)
				kids = append(kids, descendants(kid)...)
			}
		}
	}
	return kids
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestKillDuringStorageCheckLeavesNothingBehind: the collector killed while
// its start-up waits on the storage file leaves no process of its own
// running (a checker orphaned on the hung file).
func TestKillDuringStorageCheckLeavesNothingBehind(t *testing.T) {
	r := holdAndKill(t, collectortest.Binary(t), 5)
	diskfault.HoldLease(t, r.path)
	logPath := filepath.Join(r.dir, "killed.log")
	c := startKillable(t, r.bin, r.cfg, logPath)
	// Wait until start-up is stuck on the file: a process started for it,
	// or the check says that it runs.
	var kids []int
	require.Eventually(t, func() bool {
		kids = descendants(c.cmd.Process.Pid)
		b, _ := os.ReadFile(logPath)
		return len(kids) > 0 || bytes.Contains(b, []byte("checking the storage file"))
	}, 30*time.Second, 50*time.Millisecond, "start-up reaches the storage file")
	time.Sleep(500 * time.Millisecond) // a process started for the check has started
	kids = descendants(c.cmd.Process.Pid)
	code, _, err := httpGet(context.Background(), fmt.Sprintf("http://127.0.0.1:%d/", r.ports.health))
	require.False(t, err == nil && code == 200, "the collector is still starting")
	t.Cleanup(func() {
		for _, kid := range kids {
			_ = syscall.Kill(kid, syscall.SIGKILL)
		}
	})
	c.kill(t)
	time.Sleep(2 * time.Second)
	var left []int
	for _, kid := range kids {
		if alive(kid) {
			left = append(left, kid)
		}
	}
	assert.Empty(t, left, "processes the collector started outlive it")
}

// TestStrayCheckerVariableIsIgnored: LLMEVAL_CHECK_STORAGE_FILE in the
// environment does not change what the binary is: the collector starts and
// evaluates.
func TestStrayCheckerVariableIsIgnored(t *testing.T) {
	bin := collectortest.Binary(t)
	r := killedRun{bin: bin, dir: t.TempDir(), sink: newSpanSink(t)}
	r.judge = scoringtest.New(t)
	storageDir := filepath.Join(r.dir, "storage")
	require.NoError(t, os.Mkdir(storageDir, 0o700))
	r.ports = ports{otlp: collectortest.FreePort(t), health: collectortest.FreePort(t), telemetry: collectortest.FreePort(t)}
	r.cfg = writeDurableConfig(t, r.dir, "collector.yaml", r.judge.URL, r.sink.srv.URL, storageDir, "30s", r.ports)
	stray := filepath.Join(r.dir, "any-file")
	require.NoError(t, os.WriteFile(stray, []byte("not a storage file"), 0o600))
	c := startKillableWith(t, bin, r.cfg, filepath.Join(r.dir, "collector.log"), func(cmd *exec.Cmd) {
		cmd.Env = append(os.Environ(), "LLMEVAL_CHECK_STORAGE_FILE="+stray)
	})
	c.waitHealthy(t, r.ports.health)
	evaluates(t, r, 0)
	c.stop(t)
	b, err := os.ReadFile(stray)
	require.NoError(t, err)
	assert.Equal(t, "not a storage file", string(b), "the file it names is not touched")
}

// TestValidateChecksStorageExtension: validate, not only start, refuses an
// llm_eval whose storage extension is not configured, or not enabled,
// naming the key.
func TestValidateChecksStorageExtension(t *testing.T) {
	bin := collectortest.Binary(t)
	dir := t.TempDir()
	for _, tt := range []struct {
		name, extensions, want string
	}{
		{"not_configured", "", `processors::llm_eval::storage: extension "file_storage/llm_eval" is not configured: configure it under extensions and list it in service::extensions`},
		{"not_enabled", "extensions:\n  file_storage/llm_eval:\n    directory: " + dir + "\n",
			`processors::llm_eval::storage: extension "file_storage/llm_eval" is configured but not listed in service::extensions`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(dir, tt.name+".yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:4318
processors:
  llm_eval:
    storage: file_storage/llm_eval
    judge:
      endpoint: http://127.0.0.1:1/v1
      model: e2e-judge
exporters:
  debug: {}
`+tt.extensions+`service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [llm_eval]
      exporters: [debug]
`), 0o600))
			out, err := exec.Command(bin, "validate", "--config", cfg).CombinedOutput()
			require.Error(t, err, "validate must refuse it:\n%s", out)
			assert.Contains(t, string(out), tt.want)
		})
	}
}
