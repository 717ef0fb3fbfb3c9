package llmevalprocessor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// TestDurationsWithoutUnitFailNamingTheKey: every duration key of the
// processor refuses a number without a unit (decoded as nanoseconds) with
// its key path and the unit it most likely lacked, and keeps 0 where 0
// means off or the default.
func TestDurationsWithoutUnitFailNamingTheKey(t *testing.T) {
	tests := []struct {
		path  string // the key, sections separated by dots
		value any
		want  string // "" when the value is valid
	}{
		{path: "storage_check_timeout", value: 5, want: `storage_check_timeout: must be at least 1ms, got 5ns; a number without a unit is read as nanoseconds (write e.g. "5s")`},
		{path: "storage_check_timeout", value: 0, want: "storage_check_timeout: must be at least 1ms, got 0s"},
		{path: "storage_check_timeout", value: "5s"},
		{path: "trace_context.ttl", value: 120, want: `trace_context: ttl: must be at least 1ms, got 120ns; a number without a unit is read as nanoseconds (write e.g. "120s")`},
		{path: "trace_context.ttl", value: "2m"},
		{path: "trace_context.context_wait", value: 2, want: `trace_context: context_wait: must be at least 1ms, got 2ns; a number without a unit is read as nanoseconds (write e.g. "2s") (or 0 for no wait)`},
		{path: "trace_context.context_wait", value: 0},
		{path: "trace_context.context_wait", value: "-1s", want: "trace_context: context_wait: must be at least 1ms, got -1s (or 0 for no wait)"},
		{path: "log_events.join_window", value: 30, want: `log_events: join_window: must be at least 1ms, got 30ns; a number without a unit is read as nanoseconds (write e.g. "30s")`},
		{path: "log_events.join_window", value: "30s"},
		{path: "log_events.cross_signal_wait", value: 10, want: `log_events: cross_signal_wait: must be at least 1ms, got 10ns; a number without a unit is read as nanoseconds (write e.g. "10s") (or 0 to evaluate each signal on its own)`},
		{path: "log_events.cross_signal_wait", value: 0},
		{path: "conversation.idle_timeout", value: 300, want: `conversation: idle_timeout: must be at least 1ms, got 300ns; a number without a unit`},
		{path: "cache.ttl", value: 3600, want: `cache: ttl: must be at least 1s, got 3.6µs; a number without a unit`},
		{path: "max_wait", value: 30, want: `max_wait: must be at least 1ms, got 30ns; a number without a unit`},
		// The judge's HTTP client keys (confighttp), 0 being their default.
		{path: "judge.timeout", value: 30, want: `judge: timeout: must be at least 100ms, got 30ns; a number without a unit`},
		{path: "judge.http2_read_idle_timeout", value: 10, want: `judge: http2_read_idle_timeout: must be at least 1ms, got 10ns; a number without a unit is read as nanoseconds (write e.g. "10s") (or 0 for no health check)`},
		{path: "judge.http2_read_idle_timeout", value: 0},
		{path: "judge.http2_ping_timeout", value: 15, want: `judge: http2_ping_timeout: must be at least 1ms, got 15ns; a number without a unit is read as nanoseconds (write e.g. "15s") (or 0 for the default, 15s)`},
		{path: "judge.http2_ping_timeout", value: "15s"},
		{path: "judge.keepalive.idle_conn_timeout", value: 90, want: `judge: keepalive::idle_conn_timeout: must be at least 1ms, got 90ns; a number without a unit is read as nanoseconds (write e.g. "90s") (or 0 for no limit)`},
		{path: "judge.keepalive.idle_conn_timeout", value: "90s"},
		{path: "judge.fallback.http2_ping_timeout", value: 15, want: `judge::fallback: http2_ping_timeout: must be at least 1ms, got 15ns`},
		{path: "judge.retry.max_backoff", value: 10, want: `judge::retry: max_backoff: must be at least 1ms, got 10ns; a number without a unit`},
		{path: "judge.circuit_breaker.open_duration", value: 30, want: `judge::circuit_breaker: open_duration: must be at least 100ms, got 30ns; a number without a unit`},
	}
	for _, tt := range tests {
		t.Run(tt.path+"="+fmt.Sprint(tt.value), func(t *testing.T) {
			raw := rawConfig(map[string]any{"name": "bias"})
			setPath(raw, strings.Split(tt.path, "."), tt.value)
			assertConfigError(t, loadRawConfig(raw), tt.want)
		})
	}
}

// rawConfig is a configuration as YAML decodes it: a judge and scorers.
func rawConfig(scorers ...any) map[string]any {
	return map[string]any{
		"judge":   map[string]any{"endpoint": "http://localhost:1/v1", "model": "m"},
		"scorers": scorers,
	}
}

// loadRawConfig decodes and validates raw as the collector does.
func loadRawConfig(raw map[string]any) error {
	cfg := createDefaultConfig().(*Config)
	if err := cfg.Unmarshal(confmap.NewFromStringMap(raw)); err != nil {
		return err
	}
	return confmap.Validate(cfg)
}

// assertConfigError checks that err contains want, or that there is no
// error when want is "".
func assertConfigError(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		require.NoError(t, err)
		return
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
}

// setPath sets the key at path in raw, making the sections on the way.
func setPath(raw map[string]any, path []string, value any) {
	for _, k := range path[:len(path)-1] {
		next, ok := raw[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			raw[k] = next
		}
		raw = next
	}
	raw[path[len(path)-1]] = value
}
