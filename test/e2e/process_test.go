//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startProcess runs cmd with its output in logPath until the test ends.
func startProcess(t testing.TB, cmd *exec.Cmd, logPath string) *collectorProc {
	t.Helper()
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	c := &collectorProc{cmd: cmd, exited: make(chan struct{}), log: logPath}
	go func() { _ = cmd.Wait(); _ = logFile.Close(); close(c.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.exited
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("%s:\n%s", logPath, tail(b, 200))
			}
		}
	})
	return c
}

// tail is the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(string(b), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... %d lines before", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// waitProcHealthy waits until the process's health check answers 200 and
// fails the test if it exits first.
func waitProcHealthy(t testing.TB, c *collectorProc, port int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		select {
		case <-c.exited:
			b, _ := os.ReadFile(c.log)
			t.Fatalf("%s exited at start:\n%s", c.log, tail(b, 60))
		default:
		}
		code, _, err := httpGet(context.Background(), fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err == nil && code == http.StatusOK {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not become healthy", c.log)
}
