package genai

import (
	"regexp"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// ConventionMastra is Generation.Convention for Mastra's AI tracing.
const ConventionMastra = "mastra"

// attrMastraType is the span type of Mastra's AI tracing
// (@mastra/otel-exporter): agent_run, model_generation, model_step,
// model_inference, model_chunk, tool_call, workflow_run, ... Releases
// before 1.x wrote the same names in upper case.
const attrMastraType = "mastra.span.type"

// mastraKind classifies a Mastra span by its type, before anything else:
// its model_inference span is named chat but only repeats its model
// step's answer, without the request.
//
//   - model_step: one LLM call of the agent loop, with its whole request
//     and answer: the generation scored;
//   - model_inference, model_chunk: the provider call and stream chunks
//     under a step, repeating part of it;
//   - model_generation: the whole loop, repeating its steps;
//   - agent_run, workflow_run: the agent or workflow around it;
//   - tool_call, mcp_tool_call: a tool execution, whose result is context.
func mastraKind(typ string) (Kind, bool) {
	switch strings.ToLower(typ) {
	case "model_step":
		return KindGeneration, true
	case "model_inference", "model_chunk":
		return KindOther, true
	case "model_generation", "agent_run", "workflow_run":
		return KindAggregate, true
	case "tool_call", "mcp_tool_call":
		return KindContext, true
	}
	return KindOther, false
}

// mastraPlaceholder matches what Mastra writes into a later step's input in
// place of an earlier step's tool call or tool result; the result itself is
// on the tool_call span.
var mastraPlaceholder = regexp.MustCompile(`^\[tool(-result)?: [^\]]*\]$`)

// readMastra reads the input and output Mastra records on its own span
// types: mastra.model_step.input (the step's messages) and .output
// ({"text", "toolCalls"}) of a model step, mastra.agent_run.input (the
// user's message, or messages) and .output ({"text"}) of an agent run.
// Placeholders of earlier tool calls and results are dropped.
func readMastra(attrs pcommon.Map) extraction {
	x := extraction{convention: ConventionMastra}
	typ := strings.ToLower(attrString(attrs, attrMastraType))
	if typ != "model_step" && typ != "agent_run" {
		return x
	}
	prefix := "mastra." + typ + "."
	if v, ok := attrs.Get(prefix + "input"); ok {
		x.hasInput, x.inAttr = true, prefix+"input"
		if x.inIssue = textIssue(v, true); x.inIssue == "" {
			d := decoded(v)
			if m, ok := d.(map[string]any); ok && m["messages"] != nil {
				d = m["messages"]
			}
			x.input = dropPlaceholders(parseMessages(d, "user"))
		}
	}
	if v, ok := attrs.Get(prefix + "output"); ok {
		out := message{role: "assistant"}
		if issue := textIssue(v, true); issue != "" {
			x.outAttr, x.outIssue, x.hasOutput = prefix+"output", issue, true
		} else {
			switch d := decodedOutput(v).(type) {
			case map[string]any:
				if p, ok := textField(d, "text"); ok {
					out.parts = append(out.parts, p)
				}
				out.parts = appendParts(out.parts, toolCallList(d["toolCalls"]))
			default:
				out.parts = appendParts(out.parts, d)
			}
		}
		if len(out.parts) > 0 {
			x.output, x.hasOutput, x.outAttr = []message{out}, true, prefix+"output"
		}
	}
	return x
}

// dropPlaceholders removes Mastra's placeholder parts, and messages left
// with nothing else.
func dropPlaceholders(ms []message) []message {
	out := ms[:0]
	for _, m := range ms {
		parts := m.parts[:0]
		for _, p := range m.parts {
			if (p.kind == partText || p.kind == partToolResult) && mastraPlaceholder.MatchString(strings.TrimSpace(p.text)) {
				continue
			}
			parts = append(parts, p)
		}
		m.parts = parts
		if len(parts) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// mastraModel is the model of a Mastra model step, from the model
// metadata it records ({"modelId": ...}).
func mastraModel(attrs pcommon.Map) string {
	v, ok := attrs.Get("mastra.metadata.modelMetadata")
	if !ok {
		return ""
	}
	if m, ok := decoded(v).(map[string]any); ok {
		return str(m, "modelId")
	}
	return ""
}
