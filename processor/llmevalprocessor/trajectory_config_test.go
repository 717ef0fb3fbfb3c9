package llmevalprocessor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/scoring/taskcompletion"
	"github.com/llm-eval/llm_eval/scoring/tooluse"
)

// loadScorers decodes and validates a configuration whose scorers are given.
func loadScorers(t *testing.T, scorers []any) (*Config, error) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	conf := confmap.NewFromStringMap(map[string]any{
		"judge":   map[string]any{"endpoint": "http://judge.internal/v1", "model": "m"},
		"scorers": scorers,
	})
	if err := conf.Unmarshal(cfg); err != nil {
		return cfg, err
	}
	return cfg, confmap.Validate(cfg)
}

func TestTrajectoryScorerConfig(t *testing.T) {
	cfg, err := loadScorers(t, []any{
		map[string]any{"name": "task_completion"},
		map[string]any{"name": "tool_use", "threshold": 0.8, "reason_mode": "summary"},
		map[string]any{"name": "tool_errors", "rules": []any{map[string]any{"type": "tool_errors"}}},
		map[string]any{"name": "checks", "rules": []any{
			map[string]any{"type": "repeated_tool_calls", "max": 3},
			map[string]any{"type": "words", "max": 200},
		}},
		map[string]any{"name": "agent_loops", "targets": []any{"generation", "agent"}, "rules": []any{
			map[string]any{"type": "max_steps", "max": 40},
			map[string]any{"type": "required_tools", "tools": []any{"search"}},
			map[string]any{"type": "forbidden_tools", "tools": []any{"refund"}},
		}},
		map[string]any{"name": "bias"},
	})
	require.NoError(t, err)
	targets := map[string][]string{}
	for _, sc := range cfg.Scorers {
		targets[sc.Name] = sc.Targets
	}
	assert.Equal(t, map[string][]string{
		"task_completion": {"agent"},
		"tool_use":        {"agent"},
		"tool_errors":     {"agent"},      // only trajectory rules
		"checks":          {"generation"}, // an output rule too
		"agent_loops":     {"generation", "agent"},
		"bias":            {"generation"},
	}, targets)
	assert.True(t, cfg.Scorers[2].isChecks())
	assert.False(t, cfg.Scorers[2].isCriteria())
	assert.Equal(t, []*int{ptr(3), ptr(200)}, []*int{cfg.Scorers[3].Rules[0].Max, cfg.Scorers[3].Rules[1].Max})
	assert.Equal(t, []string{"search"}, cfg.Scorers[4].Rules[1].Tools)
}

func TestTrajectoryScorerConfigErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name    string
		scorers []any
		want    string
	}{
		{"trajectory scorer on generations", []any{map[string]any{"name": "task_completion", "targets": []any{"generation"}}},
			"scorers::0: targets: task_completion judges agent runs, so its targets must be [agent] (a generation span has no trajectory), got [generation]"},
		{"trajectory scorer on both", []any{map[string]any{"name": "tool_use", "targets": []any{"agent", "generation"}}},
			"scorers::0: targets: tool_use judges agent runs"},
		{"bad trajectory rule", []any{map[string]any{"name": "bias"}, map[string]any{"name": "loops", "rules": []any{map[string]any{"type": "max_steps"}}}},
			"scorers::1: rules::0::max: missing; set the most steps a run may take"},
		{"unknown key in a trajectory rule", []any{map[string]any{"name": "checks", "rules": []any{map[string]any{"type": "required_tools", "tool": []any{"x"}}}}},
			"scorers::0::rules::0::tool: unknown key (did you mean tools?)"},
		{"rules and criteria", []any{map[string]any{"name": "tool_health", "criteria": "Tools are used well.", "rules": []any{map[string]any{"type": "tool_errors"}}}},
			`scorers::0: rules: only checks scorers take rules; "tool_health" is a criteria scorer`},
		{"rules on a trajectory scorer", []any{map[string]any{"name": "tool_use", "rules": []any{map[string]any{"type": "tool_errors"}}}},
			`scorers::0: rules: only checks scorers take rules; "tool_use" is a built-in scorer`},
		{"neither rules nor criteria", []any{map[string]any{"name": "tool_health"}},
			`scorers::0: criteria: must be set: "tool_health" is not a built-in scorer (bias, hallucination, prompt_alignment, task_completion, tool_use, answer_relevancy, context_relevance, toxicity, conversation_completeness, knowledge_retention, role_adherence, conversation_relevancy), so it is a custom criteria scorer (or give it rules to make it a checks scorer)`},
		{"criteria named like a trajectory scorer", []any{map[string]any{"name": "task_completion", "criteria": "Done."}},
			"scorers::0: criteria: only custom criteria scorers take criteria"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadScorers(t, tc.scorers)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestTrajectoryScorersOnAgentSpans runs task_completion, tool_use and a
// checks scorer of trajectory rules, built by newJudge against the fake
// judge, on the semconv agent trace: the processor assembles the agent
// span's trajectory (its execute_tool span, then its chat span) and each
// scorer judges it, with the judge calls of its steps carrying the tool's
// call and result; the chat span gets none of them; every span leaves once.
func TestTrajectoryScorersOnAgentSpans(t *testing.T) {
	judge := scoringtest.New(t)
	cfg, err := loadScorers(t, []any{
		map[string]any{"name": "bias"},
		map[string]any{"name": "task_completion"},
		map[string]any{"name": "tool_use"},
		map[string]any{"name": "tool_errors", "rules": []any{map[string]any{"type": "tool_errors"}}},
	})
	require.NoError(t, err)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	h, _ := judgeHarness(t, cfg)

	byID := consumeAgentTrace(t, h)
	var agent, chat map[string]string // scorer -> label
	for _, s := range byID {
		labels := map[string]string{}
		for name, ev := range evaluationEvents(s.span) {
			labels[name] = mustStr(t, ev, evalconv.AttrScoreLabel)
		}
		switch s.span.Name() {
		case "invoke_agent support":
			agent = labels
		case "chat gpt-4o":
			chat = labels
		}
	}
	for _, name := range []string{"task_completion", "tool_use", "tool_errors"} {
		assert.Contains(t, []string{"pass", "fail"}, agent[name], "%s scores the agent run", name)
	}
	assert.Equal(t, "pass", agent["tool_errors"], "the run's one tool execution did not fail")
	assert.Equal(t, map[string]string{"bias": chat["bias"]}, chat, "the chat span gets only the generation scorer")
	steps := map[string]int{}
	for _, c := range judge.Calls() {
		steps[c.Step]++
		if c.Step == tooluse.SchemaVerdicts {
			run := strings.Join(c.Block("TRAJECTORY"), "\n")
			assert.Contains(t, run, `"tool":"lookup_order"`)
			assert.Contains(t, run, `\"status\": \"returned\"`, "the tool's result, from its execute_tool span")
		}
	}
	for _, step := range []string{taskcompletion.SchemaTask, taskcompletion.SchemaVerdicts, tooluse.SchemaVerdicts} {
		assert.Equal(t, 1, steps[step], "one %s call for the agent run", step)
	}
}

// consumeAgentTrace sends the semconv agent trace (its retrieval and tool
// spans first, then the chat and invoke_agent spans), waits for every span
// to leave exactly once and returns them by id.
func consumeAgentTrace(t *testing.T, h *harness) map[pcommon.SpanID]outSpan {
	t.Helper()
	return h.runOnce(loadTraceContextBatch(t, "semconv_agent_context.json"), loadTraceContextBatch(t, "semconv_agent_generation.json"))
}
