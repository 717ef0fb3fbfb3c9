package llmevalprocessor

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigMistakesSuggestTheFix: each typical mistake of a first
// configuration fails with a message that names the key and the fix.
func TestConfigMistakesSuggestTheFix(t *testing.T) {
	cm := resolveConfig(t, filepath.Join("testdata", "mistakes.yaml"))
	tests := []struct {
		name    string
		want    string
		notWant []string
	}{
		{name: "timeout_ms_no_unit", want: `judge: timeout: must be at least 100ms, got 30µs; a number without a unit is read as nanoseconds (write e.g. "30s" or "30000ms")`, notWant: []string{`"30000s"`}},
		{name: "timeout_s_no_unit", want: `judge: timeout: must be at least 100ms, got 30ns; a number without a unit is read as nanoseconds (write e.g. "30s")`},
		{name: "max_wait_no_unit", want: `max_wait: must be at least 1ms, got 60ns; a number without a unit is read as nanoseconds (write e.g. "60s")`},
		{name: "backoff_no_unit", want: `judge::retry: initial_backoff: must be at least 1ms, got 500ns; a number without a unit is read as nanoseconds (write e.g. "500ms")`},
		{name: "cache_ttl_no_unit", want: `cache: ttl: must be at least 1s, got 3.6µs; a number without a unit is read as nanoseconds (write e.g. "3600s")`},
		{name: "scorer_typo", want: `scorers::0: name: unknown scorer "halucination" (did you mean hallucination?)`, notWant: []string{"criteria: must be set"}},
		{name: "scorer_capitalised", want: `scorers::0: name: unknown scorer "Hallucination" (did you mean hallucination?)`, notWant: []string{"criteria: must be set"}},
		{name: "scorer_dashed", want: `scorers::0: name: unknown scorer "prompt-alignment" (did you mean prompt_alignment?)`},
		{name: "scorer_spaced", want: `scorers::0: name: unknown scorer "task completion" (did you mean task_completion?)`},
		{name: "judge_url", want: "judge::url: unknown key (did you mean endpoint?)"},
		{name: "judge_base_url", want: "judge::base_url: unknown key (did you mean endpoint?)"},
		{name: "judge_key", want: "judge::key: unknown key (did you mean api_key?)", notWant: []string{"sk-not-printed"}},
		{name: "judge_model_name", want: "judge::model_name: unknown key (did you mean model?)"},
		{name: "sampling_rate", want: "sampling::rate: unknown key (did you mean percentage?)"},
		{name: "scorers_singular", want: "scorer: unknown key (did you mean scorers?)"},
		{name: "threshhold", want: "scorers::0::threshhold: unknown key (did you mean threshold?)"},
		{name: "reason_mode_typo", want: `scorers::0: reason_mode: "sumary" is not one of llm, summary (did you mean summary?)`},
		{name: "structured_outputs_typo", want: `judge: structured_outputs: "json-schema" is not one of auto, json_schema, json_object, off (did you mean json_schema?)`},
		{name: "targets_plural", want: `targets[0]: "generations" is not one of generation, agent, conversation (did you mean generation?)`},
		{name: "context_sources_typo", want: `context_sources[0]: "traces" is not one of trace, tool_messages, system (did you mean trace?)`},
		{name: "late_results_typo", want: `late_results: "verdict" is not one of verdicts, all, none (did you mean verdicts?)`},
		{name: "endpoint_no_scheme", want: "judge: endpoint: has no scheme: want an absolute http or https URL (did you mean http://localhost:11434/v1?)"},
		{name: "criteria_scorer_without_criteria", want: `scorers::0: criteria: must be set: "helpfulness" is not a built-in scorer`, notWant: []string{"did you mean"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadTestConfig(cm, tt.name)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			for _, s := range tt.notWant {
				assert.NotContains(t, err.Error(), s)
			}
		})
	}
}

// TestOtherLibrariesScorerNamesSuggestOurs: a scorer named as another
// library names the metric fails naming ours, in both forms of an entry;
// a custom criteria scorer of that name stays valid.
func TestOtherLibrariesScorerNamesSuggestOurs(t *testing.T) {
	tests := []struct {
		name   string
		scorer map[string]any
		want   string // "" when valid
	}{
		{name: "deepeval_turn_relevancy", scorer: map[string]any{"name": "turn_relevancy"},
			want: `scorers::0: name: unknown scorer "turn_relevancy" (did you mean conversation_relevancy?)`},
		{name: "deepeval_class_name", scorer: map[string]any{"name": "TurnRelevancyMetric"},
			want: `scorers::0: name: unknown scorer "TurnRelevancyMetric" (did you mean conversation_relevancy?)`},
		{name: "typed", scorer: map[string]any{"type": "turn_relevancy", "name": "relevancy"},
			want: `scorers::0::type: "turn_relevancy" is not one of bias, hallucination`},
		{name: "typed_suggestion", scorer: map[string]any{"type": "turn_relevancy", "name": "relevancy"},
			want: `(did you mean conversation_relevancy?)`},
		{name: "mastra_tool_call_accuracy", scorer: map[string]any{"name": "tool_call_accuracy"},
			want: `scorers::0: name: unknown scorer "tool_call_accuracy" (did you mean tool_use?)`},
		{name: "custom_criteria_of_that_name", scorer: map[string]any{"name": "turn_relevancy", "criteria": "Each reply answers the user's last message."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertConfigError(t, loadRawConfig(rawConfig(tt.scorer)), tt.want)
		})
	}
}
