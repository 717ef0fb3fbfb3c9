package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"fmt"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
)

// Defaults of log_events. The window covers the model's answer time: the
// input events are sent before the call, the gen_ai.choice after it.
const (
	defaultJoinWindow      = 30 * time.Second
	defaultMaxPending      = 1000
	defaultMaxPendingBytes = 64 << 20
)

// LogEventsConfig bounds the joining of the per-message GenAI log events
// (semantic conventions ≤ 1.36) of one call in the logs pipeline.
type LogEventsConfig struct {
	// JoinWindow is how long the events of one call are waited for, from
	// its first event, before it is read with what came (default 30s).
	JoinWindow time.Duration `mapstructure:"join_window"`
	// MaxPending is the most calls being joined at once; beyond it the
	// oldest is given up (default 1000).
	MaxPending int `mapstructure:"max_pending"`
	// MaxPendingBytes caps the estimated size of the events held for
	// joining, in bytes (default 64 MiB).
	MaxPendingBytes int `mapstructure:"max_pending_bytes"`
}

func defaultLogEventsConfig() LogEventsConfig {
	return LogEventsConfig{
		JoinWindow:      defaultJoinWindow,
		MaxPending:      defaultMaxPending,
		MaxPendingBytes: defaultMaxPendingBytes,
	}
}

// Validate checks the joining bounds; the collector prefixes the errors
// with log_events.
func (c *LogEventsConfig) Validate() error { return joinFields(c.validate()) }

func (c LogEventsConfig) validate() []error {
	var errs []error
	if c.JoinWindow <= 0 {
		errs = append(errs, fmt.Errorf("join_window: must be positive, got %s", c.JoinWindow))
	}
	if c.MaxPending < 1 {
		errs = append(errs, fmt.Errorf("max_pending: must be at least 1, got %d", c.MaxPending))
	}
	if c.MaxPendingBytes < 1 {
		errs = append(errs, fmt.Errorf("max_pending_bytes: must be at least 1, got %d", c.MaxPendingBytes))
	}
	return errs
}

// joinerConfig is the joiner's configuration for these settings.
func (c LogEventsConfig) joinerConfig(now func() time.Time) logjoin.Config {
	return logjoin.Config{Window: c.JoinWindow, MaxCalls: c.MaxPending, MaxBytes: c.MaxPendingBytes, Now: now}
}
