package tracecontext

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

// stepSpan is a span of trace tr carrying a step record.
func stepSpan(tr pcommon.TraceID, span, parent, start int, st genai.Step) Span {
	s := genSpan(tr, span, parent, start, start+1)
	s.Step = &st
	return s
}

func gen(output string, calls ...genai.ToolCall) genai.Step {
	return genai.Step{Kind: genai.StepGeneration, Output: output, ToolCalls: calls}
}

func toolStep(name, result string) genai.Step {
	return genai.Step{Kind: genai.StepTool, Name: name, Result: result}
}

// names lists the steps as "g:<output>", "t:<tool>" or "a:<agent>".
func names(steps []genai.Step) []string {
	var out []string
	for _, s := range steps {
		switch s.Kind {
		case genai.StepGeneration:
			out = append(out, "g:"+s.Output)
		case genai.StepTool:
			out = append(out, "t:"+s.Name)
		case genai.StepAgent:
			out = append(out, "a:"+s.Name)
		}
	}
	return out
}

// TestStepsBelowAnAgent builds an agent run: two model calls under a step
// span that arrives last, a tool below the agent, a tool whose own work
// (a model call, another tool) runs inside it, a nested agent with its
// own steps, a tool whose parent never arrives, and a step of another
// agent of the trace.
func TestStepsBelowAnAgent(t *testing.T) {
	tr := tid(20)
	ix, _ := newIndex(t, nil)
	const (
		agent, stepSpanID, genA, genB, toolA, toolB, insideGen, insideTool = 1, 2, 3, 4, 5, 6, 7, 8
		sub, subGen, orphan, otherAgent, otherGen                          = 9, 10, 11, 12, 13
	)
	ix.Add(stepSpan(tr, genA, stepSpanID, 10, gen("first", genai.ToolCall{ID: "c1", Name: "search"})))
	ix.Add(stepSpan(tr, toolA, agent, 20, toolStep("search", "found")))
	ix.Add(stepSpan(tr, insideGen, toolA, 21, gen("the tool's own model call")))
	ix.Add(stepSpan(tr, toolB, agent, 30, toolStep("summarise", "short")))
	ix.Add(stepSpan(tr, insideTool, toolB, 31, toolStep("fetch", "inside summarise")))
	ix.Add(stepSpan(tr, subGen, sub, 41, gen("sub's model call")))
	ix.Add(stepSpan(tr, sub, agent, 40, genai.Step{Kind: genai.StepAgent, Name: "billing", Result: "refunded"}))
	ix.Add(stepSpan(tr, orphan, 99, 45, toolStep("orphan", "parent never arrives")))
	ix.Add(stepSpan(tr, genB, stepSpanID, 50, gen("answer")))
	ix.Add(stepSpan(tr, genB, stepSpanID, 50, gen("answer"))) // delivered twice
	ix.Add(stepSpan(tr, otherGen, otherAgent, 5, gen("another agent's call")))
	ix.Add(genSpan(tr, otherAgent, -1, 0, 60))
	ix.Link(tr, sid(stepSpanID), sid(agent)) // a plain span, linked by LinkAll
	ix.Add(genSpan(tr, agent, -1, 0, 60))

	steps, dropped := ix.StepsBelow(tr, sid(agent))
	assert.Equal(t, []string{"g:first", "t:search", "t:summarise", "a:billing", "g:answer"}, names(steps))
	assert.Zero(t, dropped)
	assert.Equal(t, []genai.ToolCall{{ID: "c1", Name: "search"}}, steps[0].ToolCalls)

	sub2, _ := ix.StepsBelow(tr, sid(sub))
	assert.Equal(t, []string{"g:sub's model call"}, names(sub2), "the nested agent's own run")
	none, _ := ix.StepsBelow(tid(21), sid(agent))
	assert.Empty(t, none, "an unknown trace")
}

func TestStepsBelowSurviveCyclesAndDeepChains(t *testing.T) {
	tr := tid(22)
	ix, _ := newIndex(t, nil)
	ix.Add(genSpan(tr, 1, -1, 0, 9))
	ix.Add(stepSpan(tr, 2, 30, 1, gen("in a cycle")))
	ix.Link(tr, sid(30), sid(31))
	ix.Link(tr, sid(31), sid(30))
	for i := range 2*maxDepth + 10 { // a chain deeper than maxDepth below the agent
		ix.Link(tr, sid(100+i+1), sid(100+i))
	}
	ix.Link(tr, sid(100), sid(1))
	ix.Add(stepSpan(tr, 3, 100+2*maxDepth+10, 2, gen("too deep")))
	ix.Add(stepSpan(tr, 4, 100+5, 3, gen("deep enough")))
	steps, _ := ix.StepsBelow(tr, sid(1))
	assert.Equal(t, []string{"g:deep enough"}, names(steps))
}

// TestStepTextMarkerIsOursAlone checks that a step text that wrote the
// truncation marker itself is stored without it, so the scorers, which
// trust a trailing marker on a step text, see only this index's cuts.
func TestStepTextMarkerIsOursAlone(t *testing.T) {
	tr := tid(24)
	ix, _ := newIndex(t, func(c *Config) { c.MaxDocumentBytes = 100 })
	ix.Add(genSpan(tr, 1, -1, 0, 9))
	st := toolStep("lookup", "short result"+scoring.TruncationMarker)
	ix.Add(stepSpan(tr, 3, 1, 3, st))
	steps, _ := ix.StepsBelow(tr, sid(1))
	require.Len(t, steps, 1)
	assert.Equal(t, "short result [...]", steps[0].Result)
	assert.Zero(t, ix.Stats().TruncatedStepTexts)
}

func TestStepTextsAreCutAndInterned(t *testing.T) {
	tr := tid(23)
	ix, _ := newIndex(t, func(c *Config) { c.MaxDocumentBytes = 100 })
	huge := strings.Repeat("é", 500) // 2-byte runes: a cut must not split one
	ix.Add(genSpan(tr, 1, -1, 0, 9))
	ix.Add(ctxSpan(tr, 2, 1, 1, 2, genai.RoleTool, "same result"))
	before := ix.Stats().Bytes
	st := toolStep("lookup", "same result")
	st.Arguments = huge
	ix.Add(stepSpan(tr, 3, 1, 3, st))
	added := ix.Stats().Bytes - before
	steps, _ := ix.StepsBelow(tr, sid(1))
	require.Len(t, steps, 1)
	got := steps[0]
	assert.True(t, strings.HasSuffix(got.Arguments, scoring.TruncationMarker))
	assert.LessOrEqual(t, len(got.Arguments), 100+len(scoring.TruncationMarker))
	assert.True(t, utf8.ValidString(got.Arguments))
	assert.Equal(t, "same result", got.Result)
	assert.Equal(t, uint64(1), ix.Stats().TruncatedStepTexts)
	// The result is interned with the tool span's document: only the
	// span's link, the record, the name and the cut arguments are new bytes.
	assert.Equal(t, int64(linkBytes+stepOverhead+2*docOverhead+len("lookup")+len(got.Arguments)), added)
}

func TestStepsOfAFullTraceAreDroppedAndCounted(t *testing.T) {
	tr := tid(24)
	ix, _ := newIndex(t, func(c *Config) { c.MaxTraceBytes = 64 << 10 })
	ix.Add(genSpan(tr, 1, -1, 0, 9))
	for i := range 5000 {
		ix.Add(stepSpan(tr, 10+i, 1, i, toolStep("t", fmt.Sprintf("result %d", i))))
	}
	st := ix.Stats()
	assert.LessOrEqual(t, st.Bytes, int64(64<<10))
	assert.Positive(t, st.DroppedSteps)
	steps, dropped := ix.StepsBelow(tr, sid(1))
	assert.Equal(t, 5000, len(steps)+dropped, "every step is kept or counted")
	assert.Equal(t, int(st.DroppedSteps), dropped)
	assert.Equal(t, "result 0", steps[0].Result, "the first steps are kept")
}

func TestStepBytesAreReleasedOnEviction(t *testing.T) {
	ix, c := newIndex(t, nil)
	ix.Add(stepSpan(tid(25), 2, 1, 0, gen("a long answer "+strings.Repeat("x", 500), genai.ToolCall{Name: "t", Arguments: "{}"})))
	assert.Positive(t, ix.Stats().Bytes)
	c.now = c.now.Add(2 * testConfig(c).TTL)
	ix.Expire()
	assert.Zero(t, ix.Stats().Bytes)
	assert.Zero(t, ix.Stats().Traces)
}

// TestStepOverheadCoversTheRecord keeps the bookkeeping estimate honest.
func TestStepOverheadCoversTheRecord(t *testing.T) {
	assert.GreaterOrEqual(t, stepOverhead, int(unsafe.Sizeof(stepRecord{})))
	assert.GreaterOrEqual(t, callOverhead, int(unsafe.Sizeof(genai.ToolCall{})))
	assert.GreaterOrEqual(t, callOverhead, int(unsafe.Sizeof(genai.ToolResult{})))
	assert.GreaterOrEqual(t, toolOverhead, int(unsafe.Sizeof(genai.ToolDef{})))
}
