//go:build clients

package clients

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/clients/appmodel"
)

// The official OTel JS OpenAI instrumentation with content capture off
// (its default) through the collector at defaults: its chat spans carry
// no content, and its GenAI log events (0.22 still sends them) carry none
// either. The collector says so in one warning line naming the variable
// that turns content on, no judge call is made, and every result is
// not_scorable with the same advice.
func TestContentCaptureOffWarning(t *testing.T) {
	const variable = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true"
	sc := loadScenario(t)
	model := appmodel.New(sc.script())
	t.Cleanup(model.Close)
	judge := scoringtest.New(t)
	col := startCollector(t, judge.URL, "")
	rec := newRecorder(t, col.otlpURL)
	a := clientApp{name: "otel-openai", node: 22, flow: toolFlow, captureOff: true}
	require.Contains(t, runApp(t, a, model.URL, rec.url), sc.Tool.Answer)

	sentTraces, sentLogs, recErrs := rec.sent()
	require.Empty(t, recErrs)
	sent := index(sentTraces, sentLogs)
	require.NotEmpty(t, sent.spans)
	t.Logf("with content capture off the app sent %d spans and %d log records", len(sent.spans), len(sent.logs))
	waitSettled(t, col, judge, sent)
	col.stop()

	outTraces, outLogs := col.output(t)
	results := collectResults(outTraces, outLogs)
	require.NotEmpty(t, results, "the chat spans get not_scorable results")
	for _, r := range results {
		assert.Equal(t, "not_scorable", r.label, "%s", r.scorer)
		assert.Contains(t, r.explanation, variable, "%s: the reason says how to turn content on", r.scorer)
	}
	assert.Empty(t, judge.Calls(), "nothing to judge")

	logBytes, err := os.ReadFile(col.logPath)
	require.NoError(t, err)
	var warnings []string
	for _, line := range strings.Split(string(logBytes), "\n") {
		if strings.Contains(line, "content capture is off") {
			warnings = append(warnings, line)
		}
	}
	require.Len(t, warnings, 1, "one warning line for the service and library")
	assert.Contains(t, warnings[0], variable)
	assert.Contains(t, warnings[0], `"service": "otel-openai"`)
	assert.Contains(t, warnings[0], `"library": "@opentelemetry/instrumentation-openai"`)
	t.Logf("warning: %s", warnings[0])
}
