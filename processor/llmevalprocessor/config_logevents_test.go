package llmevalprocessor

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

func TestLogEventsConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*LogEventsConfig)
		want   []string // YAML keys named in the error; none for a valid config
	}{
		{name: "defaults", modify: func(*LogEventsConfig) {}},
		{name: "zero window", modify: func(c *LogEventsConfig) { c.JoinWindow = 0 }, want: []string{"join_window"}},
		{name: "negative window", modify: func(c *LogEventsConfig) { c.JoinWindow = -time.Second }, want: []string{"join_window"}},
		{name: "no pending calls", modify: func(c *LogEventsConfig) { c.MaxPending = 0 }, want: []string{"max_pending:"}},
		{name: "no bytes", modify: func(c *LogEventsConfig) { c.MaxPendingBytes = 0 }, want: []string{"max_pending_bytes"}},
		{name: "all wrong", modify: func(c *LogEventsConfig) { *c = LogEventsConfig{} },
			want: []string{"join_window", "max_pending:", "max_pending_bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := defaultLogEventsConfig()
			tt.modify(&c)
			err := errors.Join(c.validate()...)
			if len(tt.want) == 0 {
				require.NoError(t, err)
				assert.NoError(t, c.joinerConfig().Validate(), "a valid config makes a valid joiner")
				return
			}
			require.Error(t, err)
			for _, key := range tt.want {
				assert.Contains(t, err.Error(), key)
			}
			assert.Error(t, c.joinerConfig().Validate())
		})
	}
}

// TestLogEventsConfigPath checks that a bad log_events value fails the
// component's validation naming its key path.
func TestLogEventsConfigPath(t *testing.T) {
	cfg := testConfig("bias")
	cfg.LogEvents.MaxPending = 0
	err := confmap.Validate(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "log_events: max_pending: must be at least 1, got 0")
}

// The waiting area's bounds and the capture-off learning are validated,
// naming their keys; 0 for content_capture_off_after turns learning off.
func TestLogEventsWaitingAreaValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*LogEventsConfig)
		want   string // YAML key named in the error; "" for a valid config
	}{
		{name: "no waiting spans", modify: func(c *LogEventsConfig) { c.MaxWaitingSpans = 0 }, want: "max_waiting_spans"},
		{name: "no waiting bytes", modify: func(c *LogEventsConfig) { c.MaxWaitingBytes = -1 }, want: "max_waiting_bytes"},
		{name: "negative learning", modify: func(c *LogEventsConfig) { c.ContentCaptureOffAfter = -1 }, want: "content_capture_off_after"},
		{name: "learning off", modify: func(c *LogEventsConfig) { c.ContentCaptureOffAfter = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := defaultLogEventsConfig()
			tt.modify(&c)
			err := errors.Join(c.validate()...)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	w := eventWaits(defaultLogEventsConfig())
	assert.Equal(t, defaultMaxWaitingSpans, w.MaxSpans)
	assert.Equal(t, defaultMaxWaitingBytes, w.MaxBytes)
	assert.Equal(t, defaultContentCaptureOffAfter, w.LearnAfter)
}
