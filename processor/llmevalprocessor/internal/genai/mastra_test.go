package genai

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
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

// TestMastraMalformedInput checks model steps whose mastra.* values are
// not the JSON Mastra writes: read as far as they go, never a panic, and
// not scorable when no answer can be read.
func TestMastraMalformedInput(t *testing.T) {
	step := func(in, out any) map[string]any {
		a := map[string]any{"mastra.span.type": "model_step", "gen_ai.operation.name": "agent_step"}
		if in != nil {
			a["mastra.model_step.input"] = in
		}
		if out != nil {
			a["mastra.model_step.output"] = out
		}
		return a
	}
	tests := []struct {
		name          string
		attrs         map[string]any
		input, output string
		missing       string
	}{
		{"input cut mid-string", step(`[{"role":"user","content":"Where is my order 10`, `{"text":"It shipped."}`), "", "It shipped.", ""},
		{"input cut after a message", step(`[{"role":"user","content":"Where is my order?"},{"role":"assis`, `{"text":"It shipped."}`), "Where is my order?", "It shipped.", ""},
		{"output not JSON", step(`[{"role":"user","content":"Hi"}]`, `It shipped, plain text.`), "Hi", "It shipped, plain text.", ""},
		{"output text not a string", step(`[{"role":"user","content":"Hi"}]`, `{"text":42,"toolCalls":"nope"}`), "Hi", "",
			"mastra.model_step.output: its content is a number, not text"},
		{"output cut", step(`[{"role":"user","content":"Hi"}]`, `{"text":"It shipped on the 18th and`), "Hi", "It shipped on the 18th and", ""},
		{"input a number", step(int64(7), `{"text":"ok"}`), "", "ok", "mastra.model_step.input is a number, not text"},
		{"no output", step(`[{"role":"user","content":"Hi"}]`, nil), "Hi", "", MissingOutput},
		{"empty", step(nil, nil), "", "", MissingOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := newSpan(t, "agent_step a", tt.attrs)
			require.Equal(t, KindGeneration, Classify(pcommon.NewResource(), span))
			var g Generation
			require.NotPanics(t, func() { g = Read(span) })
			assert.Equal(t, tt.input, g.Input)
			assert.Equal(t, tt.output, g.Output)
			assert.Equal(t, tt.missing, g.Missing)
		})
	}
	t.Run("deeply nested and huge", func(t *testing.T) {
		span := newSpan(t, "agent_step a", step(strings.Repeat("[", 100000), strings.Repeat(`{"text":`, 500000)))
		var g Generation
		require.NotPanics(t, func() { g = Read(span) })
		assert.LessOrEqual(t, len(g.Input), maxFieldBytes, "taken as raw text, clipped")
		assert.LessOrEqual(t, len(g.Output), maxFieldBytes)
	})
}
