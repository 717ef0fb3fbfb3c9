package tracecontext

// This file turns the step records of one agent run (StepsBelow) into the
// scoring.Trajectory the task_completion and tool_use scorers and the
// checks scorer's trajectory rules judge, and says whether a run still
// looks unfinished.
//
// It is where the conventions' tool shapes meet: a tool execution is taken
// from its own span when the trace has one (semconv execute_tool,
// OpenInference TOOL, Vercel ai.toolCall, Mastra tool_call, OpenLLMetry
// tool spans) and otherwise from the tool result the next model call got
// in its input, so no execution is counted twice. A nested agent becomes
// one tool step named after it.

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

// MaxTrajectorySteps bounds an assembled trajectory: a longer run keeps its first and
// last MaxTrajectorySteps/2 steps with one omitted step between them, which tells
// the scorers how many they do not see. The scorers cut further
// (scoring.DefaultMaxTrajectorySteps) for the judge; the checks scorer's
// trajectory rules see these.
const MaxTrajectorySteps = 500

// buildTrajectory assembles the trajectory of a run from its ordered step records;
// dropped is the number of step records its trace could not keep, added as
// an omitted step at the end (spans arrive as they end, so what a full
// trace drops is its latest work). It returns nil when there is no step at
// all, and whether it cut anything.
func buildTrajectory(records []genai.Step, dropped int) (*scoring.Trajectory, bool) {
	executed, callOf, toolSpans := spanExecuted(records)
	var steps []scoring.Step
	names := map[string]string{} // call id -> tool name, from the calls seen so far
	for i, r := range records {
		switch r.Kind {
		case genai.StepGeneration:
			for _, res := range r.ToolResults {
				if !fromInput(res, executed, toolSpans) {
					continue
				}
				if res.CallID != "" {
					executed[res.CallID] = true // once, however many later inputs repeat it
				}
				name := res.Name
				if name == "" {
					name = names[res.CallID]
				}
				steps = append(steps, scoring.Step{Kind: scoring.StepTool, Tool: name, CallID: res.CallID, Result: res.Result})
			}
			st := scoring.Step{Kind: scoring.StepGeneration, Output: r.Output, Error: r.Error}
			for _, c := range r.ToolCalls {
				st.ToolCalls = append(st.ToolCalls, scoring.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
				if c.ID != "" {
					names[c.ID] = c.Name
				}
			}
			steps = append(steps, st)
		case genai.StepTool, genai.StepAgent:
			id := r.CallID
			if id == "" {
				id = callOf[i]
			}
			steps = append(steps, scoring.Step{Kind: scoring.StepTool, Tool: r.Name, CallID: id,
				Arguments: r.Arguments, Result: r.Result, Error: r.Error})
		}
	}
	cut := false
	if len(steps) > MaxTrajectorySteps {
		half := MaxTrajectorySteps / 2
		bounded := make([]scoring.Step, 0, MaxTrajectorySteps+1)
		bounded = append(bounded, steps[:half]...)
		bounded = append(bounded, scoring.Step{Kind: scoring.StepOmitted, Count: len(steps) - MaxTrajectorySteps})
		steps = append(bounded, steps[len(steps)-half:]...)
		cut = true
	}
	if dropped > 0 {
		steps = append(steps, scoring.Step{Kind: scoring.StepOmitted, Count: dropped})
		cut = true
	}
	if len(steps) == 0 {
		return nil, false
	}
	t := &scoring.Trajectory{Steps: steps}
	for _, r := range records {
		if r.Kind == genai.StepGeneration {
			AddTools(t, r.Tools)
		}
	}
	return t, cut
}

// MaxTrajectoryTools bounds the tools of an assembled trajectory; the tool_use
// scorer shows the judge at most as many.
const MaxTrajectoryTools = 64

// AddTools adds to t's tools those of defs it does not name yet, in
// order, up to MaxTrajectoryTools: the tools the run's model calls were offered, and
// the tools its agent span lists (Mastra records them there). Tools of a
// nested agent are its own and never added. A nil t stays nil.
func AddTools(t *scoring.Trajectory, defs []genai.ToolDef) {
	if t == nil {
		return
	}
	for _, d := range defs {
		if len(t.Tools) == MaxTrajectoryTools {
			return
		}
		if d.Name == "" || slices.ContainsFunc(t.Tools, func(have scoring.ToolDefinition) bool { return have.Name == d.Name }) {
			continue
		}
		t.Tools = append(t.Tools, scoring.ToolDefinition{Name: d.Name, Description: d.Description})
	}
}

// spanExecuted returns the call ids that tool spans executed: a tool
// span's own call id, or, for a span without one, the id of the earliest
// call of its tool not executed yet (OpenInference TOOL spans often record
// no tool.id while their model calls record call ids). A span without an
// id whose name no waiting call has (the span named after the function,
// the call after the tool) executes the earliest waiting call whose result
// a later model call got with the same text as the span's; callOf gives
// that call id by the span's record index, so the execution is not counted
// again from that input. It also reports whether the run has tool spans
// at all.
func spanExecuted(records []genai.Step) (executed map[string]bool, callOf map[int]string, toolSpans bool) {
	executed, callOf = map[string]bool{}, map[int]string{}
	inputResult := map[string]string{} // call id -> its result in a model call's input
	for _, r := range records {
		if (r.Kind == genai.StepTool || r.Kind == genai.StepAgent) && r.CallID != "" {
			executed[r.CallID] = true
		}
		for _, res := range r.ToolResults {
			if _, seen := inputResult[res.CallID]; res.CallID != "" && !seen {
				inputResult[res.CallID] = res.Result
			}
		}
	}
	waiting := map[string][]string{} // tool name -> ids of its calls, oldest first
	var order []string               // the ids of waiting calls, oldest first
	for i, r := range records {
		switch r.Kind {
		case genai.StepGeneration:
			for _, c := range r.ToolCalls {
				if c.ID != "" && !executed[c.ID] {
					waiting[c.Name] = append(waiting[c.Name], c.ID)
					order = append(order, c.ID)
				}
			}
		case genai.StepTool, genai.StepAgent:
			toolSpans = true
			if r.CallID != "" {
				continue
			}
			q := waiting[r.Name]
			for len(q) > 0 && executed[q[0]] {
				q = q[1:] // executed meanwhile by its result
			}
			if len(q) > 0 {
				executed[q[0]] = true
				waiting[r.Name] = q[1:]
				continue
			}
			waiting[r.Name] = q
			if r.Result == "" {
				continue
			}
			for _, id := range order {
				if res, ok := inputResult[id]; ok && !executed[id] && res == r.Result {
					executed[id], callOf[i] = true, id
					break
				}
			}
		}
	}
	return executed, callOf, toolSpans
}

// fromInput says whether a tool result in a model call's input becomes a
// tool step: only when no tool span recorded that execution, that is when
// it names a call id no tool span (or earlier input) has, or, without an
// id, when the run has no tool spans at all.
func fromInput(res genai.ToolResult, executed map[string]bool, toolSpans bool) bool {
	if res.CallID != "" {
		return !executed[res.CallID]
	}
	return !toolSpans
}

// runPending reports whether a run looks unfinished, so that its scorers wait
// for more of its trace (trace_context.context_wait). A run ends with the
// model call that answers, after every tool call it asked for was
// executed; so it is pending while its last step is not a model call, or
// a tool call has no execution yet. An execution is a tool span or a
// result in a later model call's input; it answers the call of its call
// id, else (no id, or an id no call has) one call of the same tool, as
// scoring pairs them. A run that really ends otherwise (on a tool, on a
// step limit) only waits longer.
//
// dropped is the number of step records the run's trace could not keep
// (as for buildTrajectory). A trace that dropped one is full: the rest of the run
// would be dropped too, so it never looks finished, and waiting for it
// gains nothing. Such a run is not pending.
func runPending(records []genai.Step, dropped int) bool {
	if dropped > 0 {
		return false
	}
	if len(records) == 0 || records[len(records)-1].Kind != genai.StepGeneration {
		return true
	}
	var calls []genai.ToolCall
	var done []genai.ToolResult
	for _, r := range records {
		switch r.Kind {
		case genai.StepGeneration:
			calls = append(calls, r.ToolCalls...)
			done = append(done, r.ToolResults...)
		case genai.StepTool, genai.StepAgent:
			done = append(done, genai.ToolResult{CallID: r.CallID, Name: r.Name})
		}
	}
	if len(calls) == 0 {
		return false
	}
	callIDs := map[string]bool{}
	for _, c := range calls {
		if c.ID != "" {
			callIDs[c.ID] = true
		}
	}
	doneIDs, byName := map[string]bool{}, map[string]int{}
	for _, d := range done {
		if d.CallID != "" && callIDs[d.CallID] {
			doneIDs[d.CallID] = true
		} else {
			byName[d.Name]++
		}
	}
	for _, c := range calls {
		switch {
		case c.ID != "" && doneIDs[c.ID]:
		case byName[c.Name] > 0:
			byName[c.Name]--
		default:
			return true
		}
	}
	return false
}

// Trajectory is the trajectory of the run below the agent span of the
// trace, assembled from the steps the index holds; nil when it has none.
func (ix *Index) Trajectory(traceID pcommon.TraceID, agent pcommon.SpanID) *scoring.Trajectory {
	t, _ := buildTrajectory(ix.StepsBelow(traceID, agent))
	return t
}

// RunPending reports whether the run below the agent span of the trace
// looks unfinished in the index (runPending), for the wait before
// dispatch.
func (ix *Index) RunPending(traceID pcommon.TraceID, agent pcommon.SpanID) bool {
	return runPending(ix.StepsBelow(traceID, agent))
}
