package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/llm-eval/llm_eval/scoring"
)

// judgeHooks lets the judge report to the processor's telemetry.
type judgeHooks struct {
	onRetry func()
}

// newJudgeScorers builds the judge client from the confighttp settings and
// one scorer per configured entry, all sharing that judge. Nothing is dialed
// here: an unreachable judge shows up as failed evaluations, not as a
// collector that does not start.
func newJudgeScorers(ctx context.Context, cfg *Config, host component.Host, set component.TelemetrySettings, hooks judgeHooks) ([]scoring.Scorer, error) {
	client, err := cfg.Judge.ToClient(ctx, host.GetExtensions(), set)
	if err != nil {
		return nil, fmt.Errorf("judge HTTP client: %w", err)
	}
	mode, err := scoring.ParseStructuredOutputs(cfg.Judge.StructuredOutputs)
	if err != nil {
		return nil, err
	}
	oc := scoring.OpenAIConfig{
		BaseURL:           cfg.Judge.Endpoint,
		APIKey:            string(cfg.Judge.APIKey),
		Model:             cfg.Judge.Model,
		HTTPClient:        client, // carries headers, TLS, proxy and timeout
		MaxTokens:         cfg.Judge.MaxTokens,
		Seed:              cfg.Judge.Seed,
		StructuredOutputs: mode,
	}
	if hooks.onRetry != nil {
		oc.OnRetry = func(int, error, time.Duration) { hooks.onRetry() }
	}
	openAI, err := scoring.NewOpenAIJudge(oc)
	if err != nil {
		return nil, err
	}
	var judge scoring.Judge = openAI
	if rpm := cfg.Judge.RequestsPerMinute; rpm > 0 {
		judge = newPacedJudge(judge, time.Minute/time.Duration(rpm))
	}
	scorers := make([]scoring.Scorer, 0, len(cfg.Scorers))
	for i, sc := range cfg.Scorers {
		s, err := scoring.New(sc.Name, judge, scorerOptions(sc))
		if err != nil {
			return nil, fmt.Errorf("scorers[%d]: %w", i, err)
		}
		scorers = append(scorers, s)
	}
	return scorers, nil
}

// scorerOptions maps a scorer's configuration onto the library's options.
func scorerOptions(sc ScorerConfig) scoring.Options {
	return scoring.Options{
		Scale:      sc.Scale,
		Threshold:  sc.Threshold,
		StrictMode: sc.StrictMode,
		OmitReason: !sc.IncludeReason,
		ReasonMode: scoring.ReasonMode(sc.ReasonMode),
	}
}

// pacedJudge spaces calls at least interval apart (requests_per_minute).
type pacedJudge struct {
	inner    scoring.Judge
	interval time.Duration

	mu   sync.Mutex
	next time.Time // earliest start of the next call
}

func newPacedJudge(inner scoring.Judge, interval time.Duration) *pacedJudge {
	return &pacedJudge{inner: inner, interval: interval}
}

// Complete waits for the call's slot, or fails when ctx ends first.
func (j *pacedJudge) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	j.mu.Lock()
	now := time.Now()
	slot := j.next
	if slot.Before(now) {
		slot = now
	}
	j.next = slot.Add(j.interval)
	j.mu.Unlock()
	if wait := time.Until(slot); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return scoring.Response{}, &scoring.Error{Type: scoring.ErrorJudgeTimeout, Err: fmt.Errorf("waiting for a requests_per_minute slot: %w", ctx.Err())}
		}
	}
	return j.inner.Complete(ctx, req)
}
