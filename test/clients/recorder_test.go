//go:build clients

package clients

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// recorder is an OTLP/HTTP endpoint in front of the collector: it decodes
// and keeps every traces and logs request an app sends, in arrival order,
// and forwards the request unchanged to the collector. Metrics are accepted
// and dropped (the collector under test has no metrics pipeline).
type recorder struct {
	url     string
	forward string // the collector's OTLP/HTTP base URL; "" to only record

	mu     sync.Mutex
	traces []ptrace.Traces
	logs   []plog.Logs
	errs   []string
}

func newRecorder(t *testing.T, forward string) *recorder {
	t.Helper()
	r := &recorder{forward: forward}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *recorder) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) serve(w http.ResponseWriter, req *http.Request) {
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		r.fail("%s: reading body: %v", req.URL.Path, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body := raw
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err == nil {
			body, err = io.ReadAll(zr)
		}
		if err != nil {
			r.fail("%s: gunzip: %v", req.URL.Path, err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	isJSON := strings.HasPrefix(req.Header.Get("Content-Type"), "application/json")
	switch req.URL.Path {
	case "/v1/traces":
		er := ptraceotlp.NewExportRequest()
		if isJSON {
			err = er.UnmarshalJSON(body)
		} else {
			err = er.UnmarshalProto(body)
		}
		if err != nil {
			r.fail("/v1/traces: %v", err)
		} else {
			r.mu.Lock()
			r.traces = append(r.traces, er.Traces())
			r.mu.Unlock()
		}
	case "/v1/logs":
		er := plogotlp.NewExportRequest()
		if isJSON {
			err = er.UnmarshalJSON(body)
		} else {
			err = er.UnmarshalProto(body)
		}
		if err != nil {
			r.fail("/v1/logs: %v", err)
		} else {
			r.mu.Lock()
			r.logs = append(r.logs, er.Logs())
			r.mu.Unlock()
		}
	case "/v1/metrics":
		w.Header().Set("Content-Type", req.Header.Get("Content-Type"))
		if isJSON {
			_, _ = w.Write([]byte("{}"))
		}
		return
	default:
		r.fail("unexpected path %s", req.URL.Path)
		http.NotFound(w, req)
		return
	}
	if r.forward == "" {
		w.Header().Set("Content-Type", req.Header.Get("Content-Type"))
		if isJSON {
			_, _ = w.Write([]byte("{}"))
		}
		return
	}
	out, err := http.NewRequestWithContext(req.Context(), http.MethodPost, r.forward+req.URL.Path, bytes.NewReader(raw))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for _, h := range []string{"Content-Type", "Content-Encoding"} {
		if v := req.Header.Get(h); v != "" {
			out.Header.Set(h, v)
		}
	}
	resp, err := http.DefaultClient.Do(out)
	if err != nil {
		r.fail("forwarding %s: %v", req.URL.Path, err)
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		r.fail("collector answered %s to %s", resp.Status, req.URL.Path)
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// sent returns copies of what was received so far.
func (r *recorder) sent() (traces []ptrace.Traces, logs []plog.Logs, errs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(traces, r.traces...), append(logs, r.logs...), append(errs, r.errs...)
}

// writeSamples stores what the app sent as OTLP/JSON lines, one export
// request a line in arrival order, under dir (traces.jsonl, logs.jsonl).
// A signal the app did not send has no file.
func (r *recorder) writeSamples(t *testing.T, dir string) {
	t.Helper()
	traces, logs, _ := r.sent()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var tm ptrace.JSONMarshaler
	var lm plog.JSONMarshaler
	write := func(name string, n int, line func(i int) ([]byte, error)) {
		path := filepath.Join(dir, name)
		if n == 0 {
			require.NoError(t, removeIfExists(path))
			return
		}
		var b bytes.Buffer
		for i := range n {
			l, err := line(i)
			require.NoError(t, err)
			b.Write(l)
			b.WriteByte('\n')
		}
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	}
	write("traces.jsonl", len(traces), func(i int) ([]byte, error) { return tm.MarshalTraces(traces[i]) })
	write("logs.jsonl", len(logs), func(i int) ([]byte, error) { return lm.MarshalLogs(logs[i]) })
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
