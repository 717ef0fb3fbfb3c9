package tracecontext

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

// Estimated bytes of a step record beyond its texts, counted against the
// limits like the other bookkeeping (unsafe.Sizeof of the structs, checked
// by a test).
const (
	stepOverhead = 208 // one stepRecord: ids, start time, genai.Step headers
	callOverhead = 48  // one genai.ToolCall or genai.ToolResult of a generation step
	toolOverhead = 32  // one genai.ToolDef a generation step offered
)

// stepRecord is one step of an agent run: a generation, tool or nested
// agent span of a known trace (genai.ReadStep).
type stepRecord struct {
	span, parent pcommon.SpanID
	start        pcommon.Timestamp
	step         genai.Step
}

// addStep keeps a step record, its texts each cut to MaxDocumentBytes
// (marked with scoring.TruncationMarker) and interned per trace. A record
// that does not fit in its trace's MaxTraceBytes is dropped whole and
// counted. It reports whether the record was kept.
func (ix *Index) addStep(t *trace, s Span) bool {
	st := *s.Step
	st.ToolCalls = slices.Clone(st.ToolCalls)
	st.ToolResults = slices.Clone(st.ToolResults)
	st.Tools = slices.Clone(st.Tools)
	texts := stepTexts(&st)
	need := int64(stepOverhead + callOverhead*(len(st.ToolCalls)+len(st.ToolResults)) + toolOverhead*len(st.Tools))
	cut := 0
	for _, p := range texts {
		// Only this cut may end a step text with the marker, which the
		// scorers trust at the end of a step text.
		*p = scoring.NeutralizeTruncationMarkers(*p)
		if len(*p) > ix.cfg.MaxDocumentBytes {
			*p = cutRunes(*p, ix.cfg.MaxDocumentBytes) + scoring.TruncationMarker
			cut++
		}
		if _, ok := t.interned[*p]; !ok && *p != "" {
			need += docOverhead + int64(len(*p))
		}
	}
	if !ix.grow(t, need) {
		ix.stats.DroppedSteps++
		t.droppedSteps++
		return false
	}
	ix.stats.TruncatedStepTexts += uint64(cut)
	for _, p := range texts {
		if *p == "" {
			continue
		}
		if kept, ok := t.interned[*p]; ok {
			*p = kept
			continue
		}
		// Copy, so the index never pins the batch's (or a larger) string.
		*p = strings.Clone(*p)
		if t.interned == nil {
			t.interned = make(map[string]string)
		}
		t.interned[*p] = *p
	}
	t.steps = append(t.steps, stepRecord{span: s.SpanID, parent: s.ParentID, start: s.Start, step: st})
	return true
}

// stepTexts returns pointers to every text of st.
func stepTexts(st *genai.Step) []*string {
	out := []*string{&st.Output, &st.Name, &st.CallID, &st.Arguments, &st.Result, &st.Error}
	for i := range st.ToolCalls {
		c := &st.ToolCalls[i]
		out = append(out, &c.ID, &c.Name, &c.Arguments)
	}
	for i := range st.ToolResults {
		r := &st.ToolResults[i]
		out = append(out, &r.CallID, &r.Name, &r.Result)
	}
	// Every model call of a run offers the same tools, so interning keeps
	// their texts once per trace.
	for i := range st.Tools {
		d := &st.Tools[i]
		out = append(out, &d.Name, &d.Description)
	}
	return out
}

// StepsBelow returns the steps of the agent run of span agent, ordered by
// start time (arrival order among equal starts): the step records below it
// in its trace, each once, except those inside a tool execution or a
// nested agent below it, whose work is theirs and not the run's. A step
// whose parent chain does not reach agent (a parent that never arrived)
// is not part of the run. It also returns how many step records the trace
// could not keep because it reached MaxTraceBytes, wherever they were.
//
// The steps share their texts and slices with the index: callers must not
// change them.
func (ix *Index) StepsBelow(traceID pcommon.TraceID, agent pcommon.SpanID) (steps []genai.Step, dropped int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	t := ix.traces[traceID]
	if t == nil {
		return nil, 0
	}
	if len(t.steps) == 0 {
		return nil, t.droppedSteps
	}
	parents := make(map[pcommon.SpanID]pcommon.SpanID, len(t.links))
	for _, l := range t.links {
		parents[l.span] = l.parent
	}
	// Spans whose subtree is not the run's: tool executions and nested agents.
	closed := make(map[pcommon.SpanID]struct{})
	for i := range t.steps {
		if k := t.steps[i].step.Kind; k == genai.StepTool || k == genai.StepAgent {
			closed[t.steps[i].span] = struct{}{}
		}
	}
	inRun := make(map[pcommon.SpanID]bool) // memo: walking up from this span reaches agent through open spans
	var path []pcommon.SpanID
	reaches := func(span pcommon.SpanID) bool {
		path = path[:0]
		found := false
		for range maxDepth {
			if span == agent {
				found = true
				break
			}
			if v, ok := inRun[span]; ok {
				found = v
				break
			}
			if _, ok := closed[span]; ok {
				break
			}
			path = append(path, span)
			p, ok := parents[span]
			if !ok || p.IsEmpty() {
				break
			}
			span = p
		}
		for _, s := range path {
			inRun[s] = found
		}
		return found
	}
	var picked []*stepRecord
	seen := make(map[pcommon.SpanID]struct{})
	for i := range t.steps {
		r := &t.steps[i]
		if r.span == agent {
			continue
		}
		if _, dup := seen[r.span]; dup {
			continue // a span delivered twice
		}
		if reaches(r.parent) {
			seen[r.span] = struct{}{}
			picked = append(picked, r)
		}
	}
	sortByStart(picked, func(r *stepRecord) pcommon.Timestamp { return r.start })
	steps = make([]genai.Step, len(picked))
	for i, r := range picked {
		steps[i] = r.step
	}
	return steps, t.droppedSteps
}
