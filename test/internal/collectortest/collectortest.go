// Package collectortest holds what the tests that run the built collector
// as a process share (test/e2e, test/clients): where the binary is, and
// free ports to give it.
package collectortest // import "github.com/llm-eval/llm_eval/test/internal/collectortest"

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Binary is bin/otelcol-llmeval of the repository, two levels above the
// calling test's package, or $LLMEVAL_COLLECTOR. It fails the test when
// the binary is missing.
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("LLMEVAL_COLLECTOR")
	if bin == "" {
		bin = filepath.Join("..", "..", "bin", "otelcol-llmeval")
	}
	abs, err := filepath.Abs(bin)
	require.NoError(t, err)
	_, err = os.Stat(abs)
	require.NoError(t, err, "collector binary missing: run `make build` first (make e2e and make e2e-clients build it)")
	return abs
}

// FreePort is a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}
