package llmevalprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/scoring/taskcompletion"
	"github.com/llm-eval/llm_eval/scoring/tooluse"
)

// TestTaskCompletionRequirementsCachedByRequest: two runs of the same
// request are measured against one list of requirements, asked of the
// judge once; a third run of another request asks again.
func TestTaskCompletionRequirementsCachedByRequest(t *testing.T) {
	judge := scoringtest.New(t)
	answers := []string{"It shipped.", "I could not find it.", "Cancelled."}
	runs := []*agentRun{
		newAgentRun("Where is order 7?", answers[0]),
		newAgentRun("Where is order 7?", answers[1]),
		newAgentRun("Cancel order 9.", answers[2]),
	}
	for i, r := range runs {
		r.chat(pcommon.SpanID{}, answers[i])
	}
	res := agentResults(t, judge, []any{map[string]any{"name": "task_completion", "reason_mode": "summary"}}, nil, runs...)
	for _, r := range runs {
		require.Contains(t, res[r.agent], scoring.TaskCompletion)
	}
	assert.Equal(t, 2, callsOf(judge, taskcompletion.SchemaTask), "one requirements call per distinct request")
	assert.Equal(t, 3, callsOf(judge, taskcompletion.SchemaVerdicts), "every run is judged")
}

// TestToolUseJudgesARunWithoutToolCalls: an agent whose model was offered
// get_order_status for a question about an order, and answered without
// calling it, fails tool_use instead of being not scorable.
func TestToolUseJudgesARunWithoutToolCalls(t *testing.T) {
	judge := scoringtest.New(t)
	r := newAgentRun("Where is my order 7?", "It is on its way.")
	r.chat(pcommon.SpanID{}, "It is on its way.")
	r.spans.At(r.spans.Len()-1).Attributes().PutStr("gen_ai.tool.definitions",
		`[{"type":"function","name":"get_order_status","description":"Looks up an order."}]`)
	res := agentResults(t, judge, []any{map[string]any{"name": "tool_use", "reason_mode": "summary"}}, nil, r)[r.agent]
	require.Contains(t, res, scoring.ToolUse)
	assert.Equal(t, "fail", res[scoring.ToolUse][0], res[scoring.ToolUse][1])
	assert.Contains(t, res[scoring.ToolUse][1], "get_order_status")
	var tools []string
	for _, c := range judge.Calls() {
		if c.Step == tooluse.SchemaVerdicts {
			tools = append(tools, c.Block("TOOLS")...)
		}
	}
	assert.Equal(t, []string{`{"tool":"get_order_status","description":"Looks up an order."}`}, tools)
}
