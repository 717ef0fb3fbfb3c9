package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMastraAgentCapture reads the spans @mastra/otel-exporter sent for an
// agent with one tool (test/clients/apps/mastra-agent): only the model step
// that answers is a scorable generation; the step that calls the tool is
// tool calls only; the chat spans, the model generation and the agent run
// repeat those steps and are not generations.
func TestMastraAgentCapture(t *testing.T) {
	const (
		system = "You are the customer support assistant of Velo Nord, a bicycle shop. Answer in English. Keep the answer under 50 words. Cite the source of every fact in square brackets. Never promise a refund."
		answer = "Your order 1042 shipped on 2025-12-18 with DHL and should arrive on 2025-12-22 [get_order_status]."
	)
	spans := readClientSpans(t, "mastra-agent")
	kinds := map[Kind]int{}
	for _, list := range spans {
		for _, s := range list {
			kinds[Classify(s.resource, s.span)]++
		}
	}
	assert.Equal(t, 2, kinds[KindGeneration], "the two model steps")
	assert.Equal(t, 1, kinds[KindContext], "the tool execution")

	steps := spans["agent_step support-agent"]
	require.Len(t, steps, 2)
	var answered, toolStep Generation
	for _, s := range steps {
		require.Equal(t, KindGeneration, Classify(s.resource, s.span))
		g := Read(s.span)
		if g.Missing == "" {
			answered = g
		} else {
			toolStep = g
		}
	}
	assert.Equal(t, MissingToolCalls, toolStep.Missing, "step 0 only calls the tool")
	assert.Equal(t, Generation{
		Convention:         ConventionMastra,
		Input:              "Where is my order 1042?",
		Conversation:       "system: " + system + "\nuser: Where is my order 1042?",
		Output:             answer,
		SystemInstructions: []string{system},
		Model:              "gpt-4o-mini",
	}, answered, "the placeholders of the tool call and result are dropped")

	for _, name := range []string{"chat gpt-4o-mini", "model_generation gpt-4o-mini", "invoke_agent support-agent"} {
		for _, s := range spans[name] {
			assert.NotEqual(t, KindGeneration, Classify(s.resource, s.span), name)
		}
	}
	agent := spans["invoke_agent support-agent"]
	require.Len(t, agent, 1)
	require.True(t, IsAgent(agent[0].span))
	g := ReadAgent(agent[0].span)
	assert.Equal(t, "Where is my order 1042?", g.Input)
	assert.Equal(t, answer, g.Output)
	assert.Equal(t, []string{system}, g.SystemInstructions, "gen_ai.system_instructions of the agent span, a raw string")

	tool := spans["execute_tool get_order_status"]
	require.Len(t, tool, 1)
	src := ReadContext(tool[0].span)
	assert.Equal(t, RoleTool, src.Role)
	assert.Equal(t, []string{"Order 1042 shipped on 2025-12-18 with DHL, tracking number JD0142, expected delivery 2025-12-22."}, src.Texts)
}
