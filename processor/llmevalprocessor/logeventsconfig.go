package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"fmt"
	"time"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
)

// Defaults of log_events. The window covers the model's answer time: the
// input events are sent before the call, the gen_ai.choice after it.
const (
	defaultJoinWindow      = 30 * time.Second
	defaultMaxPending      = 1000
	defaultMaxPendingBytes = 64 << 20
	// defaultCrossSignalWait covers the export delays of the SDKs: the
	// batch span processors of OpenTelemetry SDKs flush every 5s by
	// default, their log record processors every 1s to 5s.
	defaultCrossSignalWait = 10 * time.Second
	// The area of spans without content waiting for their events: a
	// content-less span holds about 1 to 2 KiB.
	defaultMaxWaitingSpans = 10000
	defaultMaxWaitingBytes = 32 << 20
	// defaultContentCaptureOffAfter: spans of a service in a row whose
	// events never came before its spans stop waiting.
	defaultContentCaptureOffAfter = 50
)

// Bounds of the memory of calls that left, by which a half of a call
// arriving after its call left is recognised (signaljoin.go).
const (
	crossSignalRemember    = 2 * time.Minute
	crossSignalRememberPer = 8 // halves remembered per queue_size
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
	// CrossSignalWait is how long, with the component in a traces and a
	// logs pipeline, a span without content waits for its GenAI log
	// events and a call read from log events waits for its span, so the
	// call is evaluated once with its results on the span (default 10s;
	// at most half of max_wait; 0 evaluates each signal on its own).
	CrossSignalWait time.Duration `mapstructure:"cross_signal_wait"`
	// MaxWaitingSpans bounds the spans without content waiting for their
	// log events; they take no queue_size slot. A span finding the area
	// full is not_scorable at once (default 10000).
	MaxWaitingSpans int `mapstructure:"max_waiting_spans"`
	// MaxWaitingBytes bounds the estimated bytes of those spans (default
	// 32 MiB).
	MaxWaitingBytes int `mapstructure:"max_waiting_bytes"`
	// ContentCaptureOffAfter is how many spans of one service in a row
	// must wait in vain before its spans stop waiting (not_scorable at
	// once, "content capture is off") until an event of the service
	// arrives (default 50; 0 never stops waiting).
	ContentCaptureOffAfter int `mapstructure:"content_capture_off_after"`
}

func defaultLogEventsConfig() LogEventsConfig {
	return LogEventsConfig{
		JoinWindow:      defaultJoinWindow,
		MaxPending:      defaultMaxPending,
		MaxPendingBytes: defaultMaxPendingBytes,
		CrossSignalWait: defaultCrossSignalWait,

		MaxWaitingSpans:        defaultMaxWaitingSpans,
		MaxWaitingBytes:        defaultMaxWaitingBytes,
		ContentCaptureOffAfter: defaultContentCaptureOffAfter,
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
	if c.CrossSignalWait < 0 {
		errs = append(errs, fmt.Errorf("cross_signal_wait: must not be negative, got %s", c.CrossSignalWait))
	}
	if c.MaxWaitingSpans < 1 {
		errs = append(errs, fmt.Errorf("max_waiting_spans: must be at least 1, got %d", c.MaxWaitingSpans))
	}
	if c.MaxWaitingBytes < 1 {
		errs = append(errs, fmt.Errorf("max_waiting_bytes: must be at least 1, got %d", c.MaxWaitingBytes))
	}
	if c.ContentCaptureOffAfter < 0 {
		errs = append(errs, fmt.Errorf("content_capture_off_after: must not be negative (0 never stops waiting), got %d", c.ContentCaptureOffAfter))
	}
	return errs
}

// effectiveCrossSignalWait is how long a half waits for its other half:
// cross_signal_wait, at most half of max_wait, so the evaluation has time.
func (c LogEventsConfig) effectiveCrossSignalWait(maxWait time.Duration) time.Duration {
	return min(c.CrossSignalWait, maxWait/2)
}

// eventWaits bounds the store's area of spans waiting for their events.
func (c LogEventsConfig) eventWaits() evalstore.EventWaits {
	return evalstore.EventWaits{MaxSpans: c.MaxWaitingSpans, MaxBytes: c.MaxWaitingBytes, LearnAfter: c.ContentCaptureOffAfter}
}

// joinerConfig is the joiner's configuration for these settings.
func (c LogEventsConfig) joinerConfig(now func() time.Time) logjoin.Config {
	return logjoin.Config{Window: c.JoinWindow, MaxCalls: c.MaxPending, MaxBytes: c.MaxPendingBytes, Now: now}
}
