package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"

	"github.com/llm-eval/llm_eval/scoring"
)

// newJudgeScorers builds the judge client and one scorer per configured entry.
func newJudgeScorers(_ context.Context, _ *Config, _ component.Host, _ component.TelemetrySettings) ([]scoring.Scorer, error) {
	return nil, errors.New("judge: waiting for scoring.NewOpenAIJudge")
}
