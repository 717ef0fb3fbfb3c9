package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

// Why a sampled span left without any score.
const (
	reasonQueueFull   = "queue_full"
	reasonMaxWait     = "max_wait"
	reasonShutdown    = "shutdown"
	reasonNotScorable = "not_scorable"
	reasonError       = "error"
)

// heldSpan is one sampled generation span, moved out of its batch together
// with a copy of its resource and scope, waiting for its evaluations.
type heldSpan struct {
	of       evaluatedSpan
	gen      genai.Generation
	deadline time.Time // no evaluation of this span runs past it

	mu      sync.Mutex
	td      ptrace.Traces // the span; handed to the next consumer when it leaves
	results []*evalResult // by scorer index; nil while unfinished
	pending int           // evaluations not finished
	left    bool          // forwarded: results go out as late child spans
	late    ptrace.Traces // resource and scope of late child spans
	timer   *time.Timer   // max_wait
}

// evalJob is one (span, scorer) evaluation for the worker pool.
type evalJob struct {
	held *heldSpan
	slot int
}

func newHeldSpan(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span, gen genai.Generation, scorers int, deadline time.Time) *heldSpan {
	td := lateTemplate(rs, ss)
	model := gen.Model
	if v, ok := span.Attributes().Get(evalconv.AttrRequestModel); ok && v.Str() != "" {
		model = v.Str()
	}
	h := &heldSpan{
		of: evaluatedSpan{
			traceID:    span.TraceID(),
			spanID:     span.SpanID(),
			model:      model,
			responseID: gen.ResponseID,
		},
		gen:      gen,
		deadline: deadline,
		td:       td,
		results:  make([]*evalResult, scorers),
		pending:  scorers,
	}
	span.MoveTo(td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty())
	return h
}

// span returns the held span; only valid until it leaves.
func (h *heldSpan) span() ptrace.Span {
	return h.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

// caseFor builds what the scorer evaluates.
func (h *heldSpan) caseFor(cfg ScorerConfig) scoring.Case {
	c := scoring.Case{
		Input:   h.gen.Input,
		Output:  h.gen.Output,
		Context: h.gen.Context,
		Metadata: map[string]string{
			"trace_id":   h.of.traceID.String(),
			"span_id":    h.of.spanID.String(),
			"convention": h.gen.Convention,
		},
	}
	if c.Input == "" {
		c.Input = h.gen.Conversation
	}
	switch {
	case len(cfg.Instructions) > 0:
		c.Instructions = cfg.Instructions
	case cfg.UseSystemInstructions:
		c.Instructions = h.gen.SystemInstructions
	}
	return c
}

// work runs evaluations until the job channel is closed.
func (p *llmEvalProcessor) work(jobs <-chan evalJob) {
	defer p.workers.Done()
	for job := range jobs {
		p.evaluate(job)
	}
}

// evaluate runs one evaluation, bounded by the span's deadline.
func (p *llmEvalProcessor) evaluate(job evalJob) {
	h, slot := job.held, p.slots[job.slot]
	var res scoring.Result
	switch {
	case p.runCtx.Err() != nil:
		res = errorResult(scoring.ErrorCanceled, fmt.Errorf("processor shutting down"))
	case !p.now().Before(h.deadline):
		res = errorResult(scoring.ErrorJudgeTimeout, fmt.Errorf("evaluation deadline passed before a worker was free"))
	default:
		ctx, cancel := context.WithDeadline(p.runCtx, h.deadline)
		res = safeScore(ctx, slot.scorer, h.caseFor(slot.cfg))
		cancel()
	}
	p.complete(h, job.slot, evalResult{scorer: slot.cfg.Name, result: res, at: p.now(), ran: true})
}

// safeScore calls the scorer, turning a panic into an error result.
func safeScore(ctx context.Context, s scoring.Scorer, c scoring.Case) (res scoring.Result) {
	defer func() {
		if r := recover(); r != nil {
			res = errorResult(scoring.ErrorInvalidCase, fmt.Errorf("scorer panicked: %v", r))
		}
	}()
	return s.Score(ctx, c)
}

func errorResult(t scoring.ErrorType, err error) scoring.Result {
	return scoring.Result{Label: scoring.LabelError, Err: &scoring.Error{Type: t, Err: err}}
}

// complete files a finished evaluation: onto the held span, or as a late
// child span when the span has already left. The last one releases the
// span's slot in the store.
func (p *llmEvalProcessor) complete(h *heldSpan, slot int, r evalResult) {
	if p.stopping.Load() {
		// Shutting down: the span leaves with the results it had.
		if td, ok := p.finish(h, reasonShutdown); ok {
			p.forward(td)
		}
		return
	}
	p.tel.recordResult(context.Background(), r)

	h.mu.Lock()
	if h.left {
		late, of := h.late, h.of
		h.mu.Unlock()
		p.tel.lateResult(context.Background(), r.scorer)
		p.forward(newLateSpan(late, of, r, p.redact))
		p.finish(h, "")
		return
	}
	h.results[slot] = &r
	h.mu.Unlock()
	if td, ok := p.finish(h, ""); ok {
		p.forward(td)
	}
}

// finish counts one evaluation done. When it was the last, the span leaves
// (if still held) and releases its slot.
func (p *llmEvalProcessor) finish(h *heldSpan, why string) (ptrace.Traces, bool) {
	h.mu.Lock()
	h.pending--
	last := h.pending == 0
	h.mu.Unlock()
	if !last {
		return ptrace.Traces{}, false
	}
	td, ok := p.leave(h, why)
	p.mu.Lock()
	delete(p.held, h)
	p.mu.Unlock()
	return td, ok
}

// expire lets a span go when max_wait has passed.
func (p *llmEvalProcessor) expire(h *heldSpan) {
	if td, ok := p.leave(h, reasonMaxWait); ok {
		p.forward(td)
	}
}

// leave annotates the span with the results it has and returns it for
// forwarding. Only the first call for a span returns ok: a span leaves
// exactly once. why is the reason counted when it leaves unscored with
// evaluations still pending.
func (p *llmEvalProcessor) leave(h *heldSpan, why string) (ptrace.Traces, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.left {
		return ptrace.Traces{}, false
	}
	h.left = true
	if h.timer != nil && h.timer.Stop() {
		p.timers.Done()
	}
	td := h.td
	span := h.span()
	scored, notScorable := false, false
	for _, r := range h.results {
		if r == nil {
			continue
		}
		annotateSpan(span, *r, h.of.responseID, p.redact)
		switch r.label() {
		case scoring.LabelPass, scoring.LabelFail:
			scored = true
		case scoring.LabelNotScorable:
			notScorable = true
		}
	}
	if h.pending > 0 {
		h.late = lateTemplate(td.ResourceSpans().At(0), td.ResourceSpans().At(0).ScopeSpans().At(0))
	}
	h.td = ptrace.Traces{}
	p.heldNow.Add(-1)
	if !scored {
		switch {
		case h.pending > 0 || why == reasonShutdown:
			p.tel.spanUnscored(context.Background(), why)
		case notScorable:
			p.tel.spanUnscored(context.Background(), reasonNotScorable)
		default:
			p.tel.spanUnscored(context.Background(), reasonError)
		}
	}
	return td, true
}
