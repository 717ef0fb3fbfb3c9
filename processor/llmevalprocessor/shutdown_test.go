package llmevalprocessor

import (
	"testing"

	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/llm-eval/llm_eval/scoring"
)

func TestVerifyShutdown(t *testing.T) {
	processortest.VerifyShutdown(t, NewFactory(), testConfig(scoring.Bias, scoring.Hallucination))
}
