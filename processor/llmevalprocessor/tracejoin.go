package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/tracecontext"
	"github.com/llm-eval/llm_eval/scoring"
)

// Where a dispatched generation's context came from (context_joins).
const (
	joinSourceSpan  = "span"  // the span's own context only
	joinSourceTrace = "trace" // documents joined from other spans of the trace
	joinSourceNone  = "none"
)

// traceJoin remembers the retrieved documents and tool results of sampled
// traces and joins them into held generations' cases at dispatch. Context
// spans are only read: they pass through at once and unchanged.
type traceJoin struct {
	ix    *tracecontext.Index
	scope tracecontext.Scope
	// waiters are the scorers that read context (hallucination, a
	// criteria scorer with the context field) and take it from the
	// trace: only for them does a generation without context wait.
	waiters []ScorerConfig
	// maxChars bounds the joined documents' total length (max_input_chars;
	// 0: no bound beyond the index's own).
	maxChars int
	// trajectories are the scorers that judge agent runs' trajectories
	// (trajectory.go); only with one does the index keep step records.
	trajectories []ScorerConfig
	tel          *telemetry
}

func newTraceJoin(cfg *Config, tel *telemetry) (*traceJoin, error) {
	ix, err := tracecontext.New(cfg.TraceContext.indexConfig())
	if err != nil {
		return nil, err
	}
	j := &traceJoin{ix: ix, scope: cfg.TraceContext.scope(), maxChars: cfg.MaxInputChars, tel: tel,
		trajectories: trajectoryScorers(cfg.Scorers)}
	for _, sc := range cfg.Scorers {
		if scorerReadsContext(sc) && sc.takesContextFrom(contextSourceTrace) {
			j.waiters = append(j.waiters, sc)
		}
	}
	return j, nil
}

// scorerReadsContext says whether a scorer judges the answer against
// retrieved context.
func scorerReadsContext(sc ScorerConfig) bool {
	return sc.When.ContextPresent || slices.Contains(scoring.ContextNames(), sc.Name) || (sc.isCriteria() && slices.Contains(sc.Fields, string(scoring.FieldContext)))
}

// indexSpan adds a GenAI span of a sampled trace to the index, with its
// step record when a scorer judges trajectories, and reports whether its
// trace gained context or steps. A candidate (cand, else nil) read as a
// step keeps what was read, so it is read once.
func (j *traceJoin) indexSpan(kind genai.Kind, span ptrace.Span, cand *generationAt) bool {
	s := tracecontext.Span{
		TraceID: span.TraceID(), SpanID: span.SpanID(), ParentID: span.ParentSpanID(),
		Start: span.StartTimestamp(), End: span.EndTimestamp(),
	}
	if kind == genai.KindContext {
		src := genai.ReadContext(span)
		s.Role, s.Texts = src.Role, src.Texts
	}
	if j.readsSteps() {
		var st genai.Step
		ok := false
		if cand != nil {
			var gen genai.Generation
			if cand.agent {
				gen, st, ok = genai.ReadAgentWithStep(span)
			} else {
				gen, st, ok = genai.ReadWithStep(span)
			}
			cand.gen = &gen
		} else {
			st, ok = genai.ReadStep(kind, span)
		}
		if ok {
			s.Step = &st
		}
	}
	return j.ix.Add(s)
}

// readsSteps says whether spans are read as steps of agent runs: only
// when a scorer judges trajectories.
func (j *traceJoin) readsSteps() bool { return len(j.trajectories) > 0 }

// withTraceDocs appends the documents of the trace that count for the
// span under scope to own, de-duplicated and bounded by max_input_chars in
// total, and says where the context came from.
func (j *traceJoin) withTraceDocs(own, docs []string) ([]string, string) {
	out := own
	total := 0
	for _, d := range own {
		total += len(d)
	}
	joined := false
	for _, d := range docs {
		if j.maxChars > 0 && total >= j.maxChars {
			break
		}
		if slices.Contains(out, d) {
			continue
		}
		if !joined {
			out = slices.Clone(own)
			joined = true
		}
		out = append(out, d)
		total += len(d)
	}
	switch {
	case joined:
		return out, joinSourceTrace
	case len(own) > 0:
		return own, joinSourceSpan
	}
	return nil, joinSourceNone
}

// scope is the index scope of the span's query: an agent span gets
// everything below it, a generation the configured scope.
func (h *heldSpan) scope() tracecontext.Scope {
	if h.agent {
		return tracecontext.ScopeSubtree
	}
	return h.join.scope
}

// traceDocs are the documents of the span's trace in its scope. They are
// looked up at dispatch; once some were found they are kept, so every later
// case of the span sees the same context.
func (h *heldSpan) traceDocs() []string {
	if h.joined {
		return h.joinedDocs
	}
	docs := h.join.ix.ContextFor(h.of.traceID, h.of.spanID, h.parentID, h.end, h.scope())
	if len(docs) > 0 {
		h.joinedDocs, h.joined = docs, true
	}
	return docs
}

// caseContext is the context of the held span's case for a scorer: what it
// takes from the call itself, then, when it takes context from the trace,
// the trace's documents. Only scorers that read context count in
// context_joins.
func (h *heldSpan) caseContext(cfg ScorerConfig) []string {
	out, source := h.contextAndSource(cfg)
	if h.join != nil && scorerReadsContext(cfg) {
		h.join.tel.contextJoined(source)
	}
	return out
}

func (h *heldSpan) contextAndSource(cfg ScorerConfig) ([]string, string) {
	own := ownContext(h.gen, cfg)
	if h.join == nil || !cfg.takesContextFrom(contextSourceTrace) {
		if len(own) > 0 {
			return own, joinSourceSpan
		}
		return nil, joinSourceNone
	}
	return h.join.withTraceDocs(own, h.traceDocs())
}

// waitsForContext implements contextWaiter: a generation waits while a
// scorer that reads context from the trace has none of its own and the
// trace has none for it yet; an agent span judged on its trajectory also
// waits while its run looks unfinished (trajectory.Pending).
func (h *heldSpan) waitsForContext() (pcommon.TraceID, bool) {
	if h.join == nil {
		return h.of.traceID, false
	}
	if h.judgedOnTrajectory() && h.trajectoryPending() {
		return h.of.traceID, true
	}
	for _, sc := range h.join.waiters {
		if len(ownContext(h.gen, sc)) == 0 {
			return h.of.traceID, len(h.traceDocs()) == 0
		}
	}
	return h.of.traceID, false
}

// joinAttrs are the attribute sets of the join counters, by value.
type joinAttrs struct {
	source   map[string]metric.MeasurementOption
	arrived  metric.MeasurementOption
	timedOut metric.MeasurementOption
	cause    [3]metric.MeasurementOption // ttl, max_traces, max_bytes
	limit    [5]metric.MeasurementOption // document_truncated, document_dropped, link_dropped, step_truncated, step_dropped
}

func newJoinAttrs() joinAttrs {
	a := joinAttrs{source: map[string]metric.MeasurementOption{}}
	for _, s := range []string{joinSourceSpan, joinSourceTrace, joinSourceNone} {
		a.source[s] = metric.WithAttributeSet(attribute.NewSet(attribute.String("source", s)))
	}
	a.arrived = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "arrived")))
	a.timedOut = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "timed_out")))
	for i, c := range []string{"ttl", "max_traces", "max_bytes"} {
		a.cause[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("cause", c)))
	}
	for i, l := range []string{"document_truncated", "document_dropped", "link_dropped", "step_truncated", "step_dropped"} {
		a.limit[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("limit", l)))
	}
	return a
}

// contextJoined counts a dispatched generation by where its context came from.
func (t *telemetry) contextJoined(source string) {
	t.tb.ProcessorLlmEvalContextJoins.Add(context.Background(), 1, t.join.source[source])
}

// contextWaitEnded counts a generation that stopped waiting for context.
func (t *telemetry) contextWaitEnded(ctx context.Context, arrived bool) {
	opt := t.join.timedOut
	if arrived {
		opt = t.join.arrived
	}
	t.tb.ProcessorLlmEvalContextWaits.Add(ctx, 1, opt)
}

// observeIndex registers the observers of the trace context index; the
// step limits only when it keeps step records.
func (t *telemetry) observeIndex(ix *tracecontext.Index, steps bool) error {
	if err := t.tb.RegisterProcessorLlmEvalTraceContextTracesCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(ix.Stats().Traces))
		return nil
	}); err != nil {
		return err
	}
	if err := t.tb.RegisterProcessorLlmEvalTraceContextBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(ix.Stats().Bytes)
		return nil
	}); err != nil {
		return err
	}
	if err := t.tb.RegisterProcessorLlmEvalTraceContextEvictionsCallback(func(_ context.Context, o metric.Int64Observer) error {
		st := ix.Stats()
		for i, n := range []uint64{st.EvictedTTL, st.EvictedMaxTraces, st.EvictedMaxBytes} {
			o.Observe(int64(n), t.join.cause[i])
		}
		return nil
	}); err != nil {
		return err
	}
	// Cut or dropped context makes a case's context silently partial, so
	// it is counted where an alert can see it.
	return t.tb.RegisterProcessorLlmEvalTraceContextLimitedCallback(func(_ context.Context, o metric.Int64Observer) error {
		st := ix.Stats()
		counts := []uint64{st.TruncatedDocuments, st.DroppedDocuments, st.DroppedLinks}
		if steps {
			counts = append(counts, st.TruncatedStepTexts, st.DroppedSteps)
		}
		for i, n := range counts {
			o.Observe(int64(n), t.join.limit[i])
		}
		return nil
	})
}
