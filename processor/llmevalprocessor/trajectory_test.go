package llmevalprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/scoring/tooluse"
)

// agentRun builds a semconv agent trace span by span: an invoke_agent root
// and, below it, chat and execute_tool spans one millisecond apart.
type agentRun struct {
	td    ptrace.Traces
	spans ptrace.SpanSlice
	trace pcommon.TraceID
	agent pcommon.SpanID
	at    int
}

func newAgentRun(question, answer string) *agentRun {
	r := &agentRun{td: ptrace.NewTraces(), trace: randomTraceID(), agent: nextSpanID()}
	rs := r.td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "support-agent")
	r.spans = rs.ScopeSpans().AppendEmpty().Spans()
	a := r.add(r.agent, pcommon.SpanID{}, "invoke_agent support")
	a.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	a.Attributes().PutStr(evalconv.AttrAgentName, "support")
	if question != "" {
		a.Attributes().PutStr("gen_ai.input.messages", mustJSON([]any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": question}}}}))
	}
	if answer != "" {
		a.Attributes().PutStr("gen_ai.output.messages", mustJSON([]any{map[string]any{"role": "assistant", "parts": []any{map[string]any{"type": "text", "content": answer}}}}))
	}
	return r
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (r *agentRun) add(id, parent pcommon.SpanID, name string) ptrace.Span {
	s := r.spans.AppendEmpty()
	s.SetTraceID(r.trace)
	s.SetSpanID(id)
	s.SetParentSpanID(parent)
	s.SetName(name)
	r.at++
	s.SetStartTimestamp(pcommon.Timestamp(1_766_400_000_000_000_000 + int64(r.at)*1_000_000))
	s.SetEndTimestamp(pcommon.Timestamp(1_766_400_000_000_000_000 + int64(r.at)*1_000_000 + 500_000))
	return s
}

// chat adds a model call below parent (the agent when zero) that answers
// text and asks for the given calls (id, name, arguments triples).
func (r *agentRun) chat(parent pcommon.SpanID, text string, calls ...[3]string) pcommon.SpanID {
	if parent.IsEmpty() {
		parent = r.agent
	}
	id := nextSpanID()
	s := r.add(id, parent, "chat gpt-4o")
	parts := []any{}
	if text != "" {
		parts = append(parts, map[string]any{"type": "text", "content": text})
	}
	for _, c := range calls {
		parts = append(parts, map[string]any{"type": "tool_call", "id": c[0], "name": c[1], "arguments": c[2]})
	}
	s.Attributes().PutStr("gen_ai.operation.name", "chat")
	s.Attributes().PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"go on"}]}]`)
	s.Attributes().PutStr("gen_ai.output.messages", mustJSON([]any{map[string]any{"role": "assistant", "parts": parts}}))
	return id
}

// tool adds an execute_tool span below parent (the agent when zero).
func (r *agentRun) tool(parent pcommon.SpanID, callID, name, args, result string) ptrace.Span {
	if parent.IsEmpty() {
		parent = r.agent
	}
	s := r.add(nextSpanID(), parent, "execute_tool "+name)
	s.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
	s.Attributes().PutStr("gen_ai.tool.name", name)
	if callID != "" {
		s.Attributes().PutStr("gen_ai.tool.call.id", callID)
	}
	s.Attributes().PutStr("gen_ai.tool.call.arguments", args)
	s.Attributes().PutStr("gen_ai.tool.call.result", result)
	return s
}

// agentResults sends td through a processor with the given scorers
// against the fake judge and returns the agent span's results by scorer
// (label and explanation), once every span left exactly once.
func agentResults(t *testing.T, judge *scoringtest.Server, scorers []any, mutate func(*Config), runs ...*agentRun) map[pcommon.SpanID]map[string][2]string {
	t.Helper()
	cfg, err := loadScorers(t, scorers)
	require.NoError(t, err)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	cfg.MaxWait = 30 * time.Second
	if mutate != nil {
		mutate(cfg)
	}
	h, _ := judgeHarness(t, cfg)
	var batches []ptrace.Traces
	for _, r := range runs {
		batches = append(batches, r.td)
	}
	byID := h.runOnce(batches...)
	out := map[pcommon.SpanID]map[string][2]string{}
	for _, r := range runs {
		res := map[string][2]string{}
		for name, ev := range evaluationEvents(byID[r.agent].span) {
			label, _ := ev.Get(evalconv.AttrScoreLabel)
			reason, _ := ev.Get(evalconv.AttrExplanation)
			res[name] = [2]string{label.Str(), reason.Str()}
		}
		out[r.agent] = res
	}
	return out
}

// runOnce sends the batches, waits until every span has left and every
// evaluation finished, shuts the processor down and checks that each span
// left exactly once; it returns them by id.
func (h *harness) runOnce(batches ...ptrace.Traces) map[pcommon.SpanID]outSpan {
	h.t.Helper()
	spans := 0
	for _, td := range batches {
		spans += td.SpanCount()
		h.consume(td)
	}
	h.waitSpans(spans)
	h.drain()
	byID, count := sinkSpans(h.sink)
	require.Len(h.t, count, spans)
	for id, n := range count {
		require.Equal(h.t, 1, n, "span %s leaves once", id)
	}
	return byID
}

// withTaskCompletion adds task_completion on agent spans to cfg, answered
// by a fake scorer that passes at once.
func withTaskCompletion(cfg *Config, scorers []scoring.Scorer) []scoring.Scorer {
	tc := defaultScorerConfig(scoring.TaskCompletion)
	tc.Targets = []string{targetAgent}
	cfg.Scorers = append(cfg.Scorers, tc)
	return append(scorers, fixedScorer(scoring.TaskCompletion, 1, scoring.LabelPass))
}

// trajectoryLines are the TRAJECTORY lines the judge got in its calls of
// one step.
func trajectoryLines(judge *scoringtest.Server, step string) [][]string {
	var out [][]string
	for _, c := range judge.Calls() {
		if c.Step == step {
			out = append(out, c.Block("TRAJECTORY"))
		}
	}
	return out
}

// TestTrajectoryOfFiveThousandSteps: a run of 2,500 model calls and 2,500
// tool executions is judged on a bounded trajectory (the judge sees at
// most 50 steps), the checks rules count every step, and nothing is lost.
func TestTrajectoryOfFiveThousandSteps(t *testing.T) {
	judge := scoringtest.New(t)
	r := newAgentRun("Poll the export job until it finishes.", "The export finished.")
	for i := range 2500 {
		id := fmt.Sprint("call_", i)
		r.chat(pcommon.SpanID{}, "", [3]string{id, "poll_export", fmt.Sprintf(`{"job":"exp-7","attempt":%d}`, i)})
		r.tool(pcommon.SpanID{}, id, "poll_export", fmt.Sprintf(`{"job":"exp-7","attempt":%d}`, i), "running")
	}
	r.chat(pcommon.SpanID{}, "The export finished.")
	res := agentResults(t, judge, []any{
		map[string]any{"name": "task_completion"},
		map[string]any{"name": "tool_use", "reason_mode": "summary"},
		map[string]any{"name": "loops", "rules": []any{map[string]any{"type": "max_steps", "max": 100}, map[string]any{"type": "tool_errors"}}},
	}, nil, r)[r.agent]

	assert.Contains(t, []string{"pass", "fail"}, res["task_completion"][0])
	assert.Contains(t, []string{"pass", "fail"}, res["tool_use"][0])
	assert.Equal(t, "fail", res["loops"][0], "max_steps counts the omitted steps: %s", res["loops"][1])
	for _, lines := range trajectoryLines(judge, tooluse.SchemaVerdicts) {
		assert.LessOrEqual(t, len(lines), scoring.DefaultMaxTrajectorySteps+1, "the judge sees a bounded run")
		assert.Contains(t, strings.Join(lines, "\n"), `"omitted_steps"`, "and is told what it does not see")
	}
	require.NotEmpty(t, trajectoryLines(judge, tooluse.SchemaVerdicts))
}

// TestTrajectoryBadInput: arguments that are not JSON, a tool span whose
// parent never arrives, an agent without tools, an agent whose spans hold
// no content, an agent whose run never arrives: each is judged on what
// there is, or not_scorable with the reason, never an error.
func TestTrajectoryBadInput(t *testing.T) {
	judge := scoringtest.New(t)
	scorers := []any{
		map[string]any{"name": "bias", "targets": []any{"agent"}},
		map[string]any{"name": "task_completion"},
		map[string]any{"name": "tool_use"},
		map[string]any{"name": "loops", "rules": []any{map[string]any{"type": "repeated_tool_calls", "max": 2}}},
	}

	notJSON := newAgentRun("Find flights to Rome.", "I found none.")
	for i := range 3 {
		id := fmt.Sprint("c", i)
		notJSON.chat(pcommon.SpanID{}, "", [3]string{id, "search", "to=Rome; date=tomorrow"})
		notJSON.tool(pcommon.SpanID{}, id, "search", "to=Rome; date=tomorrow", "no results")
	}
	notJSON.chat(pcommon.SpanID{}, "I found none.")

	orphan := newAgentRun("Where is order 7?", "It shipped.")
	orphan.tool(nextSpanID(), "c9", "lookup", `{"order":7}`, "shipped") // its parent never arrives
	orphan.chat(pcommon.SpanID{}, "It shipped.")

	noTools := newAgentRun("Say hello.", "Hello!")
	noTools.chat(pcommon.SpanID{}, "Hello!")

	noContent := newAgentRun("", "") // the agent span records no input or output
	noContent.chat(pcommon.SpanID{}, "", [3]string{"c1", "lookup", `{"order":7}`})
	noContent.tool(pcommon.SpanID{}, "c1", "lookup", `{"order":7}`, "shipped")
	noContent.chat(pcommon.SpanID{}, "Order 7 shipped.")

	toolsOnly := newAgentRun("Book a table.", "") // the agent's recorded answer is only a tool call
	toolsOnly.spans.At(0).Attributes().PutStr("gen_ai.output.messages",
		`[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"book","arguments":"{}"}]}]`)
	toolsOnly.chat(pcommon.SpanID{}, "", [3]string{"c1", "book", "{}"})
	toolsOnly.tool(pcommon.SpanID{}, "c1", "book", "{}", "booked")
	toolsOnly.chat(pcommon.SpanID{}, "Booked.")

	noRun := newAgentRun("Where is order 8?", "It shipped.")
	noRun.tool(nextSpanID(), "c8", "lookup", `{"order":8}`, "shipped") // below a span that never arrives

	res := agentResults(t, judge, scorers, func(cfg *Config) { cfg.TraceContext.ContextWait = 200 * time.Millisecond },
		notJSON, orphan, noTools, noContent, toolsOnly, noRun)

	got := res[notJSON.agent]
	assert.Equal(t, "fail", got["loops"][0], "the same arguments three times, compared as text: %s", got["loops"][1])
	assert.Contains(t, []string{"pass", "fail"}, got["tool_use"][0])
	seen := false
	for _, lines := range trajectoryLines(judge, tooluse.SchemaVerdicts) {
		seen = seen || strings.Contains(strings.Join(lines, "\n"), `"arguments":"to=Rome; date=tomorrow"`)
	}
	assert.True(t, seen, "the judge sees the arguments as the text they are")

	got = res[orphan.agent]
	assert.Equal(t, "not_scorable", got["tool_use"][0], "the orphaned tool is not part of the run")
	assert.Contains(t, got["tool_use"][1], "made no tool calls")
	assert.Contains(t, []string{"pass", "fail"}, got["task_completion"][0])

	got = res[noTools.agent]
	assert.Contains(t, []string{"pass", "fail"}, got["task_completion"][0])
	assert.Equal(t, "not_scorable", got["tool_use"][0])
	assert.Contains(t, got["tool_use"][1], "made no tool calls")
	assert.Equal(t, "pass", got["loops"][0], "a run without tool calls repeats none: %s", got["loops"][1])

	got = res[noContent.agent]
	assert.Equal(t, [2]string{"not_scorable", "no output content"}, got["bias"], "no content for a scorer of answers")
	assert.Contains(t, []string{"pass", "fail"}, got["tool_use"][0], "the run is judged on its steps")
	// task_completion goes to the judge too; without the user's request the
	// offline judge finds no task in it, which it says.
	assert.NotContains(t, got["task_completion"][1], "no output content")
	assert.NotContains(t, got["task_completion"][1], "has no trajectory")

	got = res[toolsOnly.agent]
	assert.NotContains(t, got, "bias", "an answer of tool calls only is no answer: no result, as for a generation")
	assert.Contains(t, []string{"pass", "fail"}, got["tool_use"][0])

	got = res[noRun.agent]
	for _, name := range []string{"task_completion", "tool_use", "loops"} {
		assert.Equal(t, "not_scorable", got[name][0], "%s: %s", name, got[name][1])
		assert.Contains(t, got[name][1], "has no trajectory", name)
	}
}

// TestLateResultOfAnAgentKeepsItsName: a trajectory scorer's result that
// arrives after the agent span left is a child span carrying the agent's
// gen_ai.agent.name, so its metrics keep the agent label.
func TestLateResultOfAnAgentKeepsItsName(t *testing.T) {
	gate := make(chan struct{})
	cfg := trajectoryConfig()
	cfg.MaxWait = 30 * time.Millisecond
	h := newHarness(t, cfg, gatedScorer(scoring.TaskCompletion, gate, false))
	r := newAgentRun("Say hello.", "Hello!")
	r.chat(pcommon.SpanID{}, "Hello!")
	h.consume(r.td)
	h.waitSpans(2)
	close(gate)
	h.waitSpans(3)
	byID, _ := sinkSpans(h.sink)
	var late *outSpan
	for _, s := range byID {
		if s.span.Name() == evalconv.LateSpanName {
			late = &s
		}
	}
	require.NotNil(t, late)
	assert.Equal(t, r.agent, late.span.ParentSpanID())
	assert.Equal(t, "support", mustStr(t, late.span.Attributes(), evalconv.AttrAgentName))
	assert.Equal(t, "pass", mustStr(t, late.span.Attributes(), evalconv.FlatLabel(scoring.TaskCompletion)))
}

// TestAgentWaitsForItsRunThenGoesWithWhatItHas: an agent span whose model
// call asked for a tool that never shows up waits context_wait, then is
// judged on the steps that came.
func TestAgentWaitsForItsRunThenGoesWithWhatItHas(t *testing.T) {
	var rec caseRecorder
	cfg := trajectoryConfig()
	cfg.TraceContext.ContextWait = 150 * time.Millisecond
	h := newHarness(t, cfg, rec.scorers(scoring.TaskCompletion)...)
	r := newAgentRun("Where is order 7?", "Let me check.")
	r.chat(pcommon.SpanID{}, "Let me check.", [3]string{"c1", "lookup", `{"order":7}`})
	start := time.Now()
	h.consume(r.td)
	h.waitSpans(2)
	h.drain()
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond, "it waited for the tool's execution")
	cases := rec.get(scoring.TaskCompletion)
	require.Len(t, cases, 1)
	require.NotNil(t, cases[0].Trajectory)
	assert.Equal(t, []scoring.Step{{Kind: scoring.StepGeneration, Output: "Let me check.",
		ToolCalls: []scoring.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"order":7}`}}}}, cases[0].Trajectory.Steps)
}

// TestNoStepRecordsWithoutATrajectoryScorer: the index keeps step records
// only when a scorer judges trajectories.
func TestNoStepRecordsWithoutATrajectoryScorer(t *testing.T) {
	for _, withTrajectory := range []bool{false, true} {
		cfg := testConfig(scoring.Bias)
		cfg.Scorers[0].Targets = []string{targetAgent}
		scorers := []scoring.Scorer{fixedScorer(scoring.Bias, 0, scoring.LabelPass)}
		if withTrajectory {
			scorers = withTaskCompletion(cfg, scorers)
		}
		h := newHarness(t, cfg, scorers...)
		r := newAgentRun("Say hello.", "Hello!")
		r.chat(pcommon.SpanID{}, "Hello!")
		h.consume(r.td)
		h.waitSpans(2)
		steps, _ := h.p.join.Index.StepsBelow(r.trace, r.agent)
		if withTrajectory {
			assert.Len(t, steps, 1)
		} else {
			assert.Empty(t, steps, "no step records without a trajectory scorer")
		}
		h.drain()
	}
}

// TestAgentOfAFullTraceDoesNotWait: once an agent's trace reached its byte
// bound, the step records still to come are dropped, so its run can never
// look finished: the agent span is judged at once on the steps kept and the
// omitted ones, not after context_wait.
func TestAgentOfAFullTraceDoesNotWait(t *testing.T) {
	var rec caseRecorder
	cfg := trajectoryConfig()
	cfg.TraceContext.MaxBytes = 256 << 10 // the trace's bound too
	cfg.TraceContext.ContextWait = time.Hour
	cfg.MaxWait = time.Hour
	h := newHarness(t, cfg, rec.scorers(scoring.TaskCompletion)...)
	r := newAgentRun("Export every report.", "All reports exported.")
	page := strings.Repeat(" report row", 4000) // 44 KB a page, cut to 32 KiB by the index
	for i := range 20 {
		id := fmt.Sprint("c", i)
		r.chat(pcommon.SpanID{}, "", [3]string{id, "export", fmt.Sprintf(`{"report":%d}`, i)})
		r.tool(pcommon.SpanID{}, id, "export", fmt.Sprintf(`{"report":%d}`, i), fmt.Sprint(i, page))
	}
	r.chat(pcommon.SpanID{}, "All reports exported.")
	spans := r.td.SpanCount()
	h.consume(r.td)
	h.waitSpans(spans)
	h.drain()

	cases := rec.get(scoring.TaskCompletion)
	require.Len(t, cases, 1)
	steps := cases[0].Trajectory.Steps
	require.NotEmpty(t, steps)
	last := steps[len(steps)-1]
	assert.Equal(t, scoring.StepOmitted, last.Kind, "the records the full trace dropped are an omitted step")
	assert.Equal(t, 41, cases[0].Trajectory.StepCount(), "every step counts, kept or omitted")
}

// TestRecoveredAgentKeepsWhatItLacks: an agent span held only for its
// trajectory scorers (its recorded answer is only a tool call) is read
// back from storage after a crash as it was admitted: bias, which has no
// answer to judge, still writes nothing on it and is not called, and the
// trajectory scorer runs again.
func TestRecoveredAgentKeepsWhatItLacks(t *testing.T) {
	dir := t.TempDir()
	cfg := storageConfig(time.Minute, scoring.Bias, scoring.TaskCompletion)
	for i := range cfg.Scorers {
		cfg.Scorers[i].Targets = []string{targetAgent}
	}
	cfg.TraceContext.ContextWait = 0

	first := mustStartLife(t, cfg, fileStorageOn(t, dir), fixedScorer(scoring.Bias, 0, scoring.LabelPass), hangingScorer(scoring.TaskCompletion))
	r := newAgentRun("Book a table.", "") // the agent's recorded answer is only a tool call
	r.spans.At(0).Attributes().PutStr("gen_ai.output.messages",
		`[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"book","arguments":"{}"}]}]`)
	require.NoError(t, first.p.ConsumeTraces(context.Background(), r.td))
	require.Equal(t, int64(1), first.storageWrites(persistence.OpAdmit))
	before := first.crash()

	bias := fixedScorer(scoring.Bias, 0, scoring.LabelPass)
	tc := fixedScorer(scoring.TaskCompletion, 1, scoring.LabelPass)
	second := mustStartLife(t, cfg, fileStorageOn(t, dir), bias, tc)
	require.Eventually(t, func() bool { return second.sink.SpanCount() == 1 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, second.p.Shutdown(context.Background()))
	byID, after := sinkSpans(second.sink)
	exactlyOnce(t, []pcommon.SpanID{r.agent}, before, after)

	events := evaluationEvents(byID[r.agent].span)
	assert.NotContains(t, events, scoring.Bias, "an answer of tool calls only is no answer, after a restart too")
	assert.Zero(t, bias.calls.Load())
	assert.Contains(t, events, scoring.TaskCompletion)
	assert.Equal(t, int64(1), tc.calls.Load())
}
