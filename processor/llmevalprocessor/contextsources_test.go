package llmevalprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// TestContextSources checks what each scorers[].context_sources list puts
// into a hallucination or context_relevance case: a generation whose system prompt holds a
// document, whose input holds a tool result, which records a retrieved
// document itself, under an agent whose retrieval span holds another.
func TestContextSources(t *testing.T) {
	const (
		system  = "Use this document: Refunds take 5 business days."
		tool    = `{"order":"A-1","status":"shipped"}`
		ownDoc  = "Shipping is free above 50 EUR."
		traceDo = "Returns are accepted within 30 days."
	)
	tests := []struct {
		name    string
		sources []string
		want    []string
	}{
		{"default", nil, []string{tool, ownDoc, traceDo}},
		{"tool messages", []string{contextSourceToolMessages}, []string{tool}},
		{"trace", []string{contextSourceTrace}, []string{ownDoc, traceDo}},
		{"system", []string{contextSourceSystem}, []string{system}},
		{"all", []string{contextSourceTrace, contextSourceToolMessages, contextSourceSystem}, []string{tool, ownDoc, system, traceDo}},
	}
	for _, scorer := range scorers.ContextNames() {
		for _, tt := range tests {
			t.Run(scorer+"/"+tt.name, func(t *testing.T) {
				cases := make(chan scoring.Case, 1)
				cfg := testConfig(scorer)
				if tt.sources != nil {
					cfg.Scorers[0].ContextSources = tt.sources
				}
				h := newHarness(t, cfg, &fakeScorer{name: scorer, fn: func(_ context.Context, c scoring.Case) scoring.Result {
					cases <- c
					return scoring.Result{Label: scoring.LabelPass}
				}})
				trace := randomTraceID()
				b := newBatch()
				agent := b.spans.AppendEmpty()
				agent.SetTraceID(trace)
				agent.SetSpanID(nextSpanID())
				agent.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
				retrieval := b.spans.AppendEmpty()
				retrieval.SetTraceID(trace)
				retrieval.SetSpanID(nextSpanID())
				retrieval.SetParentSpanID(agent.SpanID())
				retrieval.Attributes().PutStr("gen_ai.operation.name", "retrieval")
				retrieval.Attributes().PutStr("gen_ai.retrieval.documents", `[{"id":"r1","content":"`+traceDo+`"}]`)
				b.generation(trace, "Where is my order?", "It shipped.")
				gen := b.spans.At(b.spans.Len() - 1)
				gen.SetParentSpanID(agent.SpanID())
				a := gen.Attributes()
				a.Remove("gen_ai.system_instructions")
				a.PutStr("gen_ai.input.messages", `[{"role":"system","parts":[{"type":"text","content":"`+system+`"}]},`+
					`{"role":"user","parts":[{"type":"text","content":"Where is my order?"}]},`+
					`{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"order_status","arguments":{"id":"A-1"}}]},`+
					`{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":`+tool+`}]}]`)
				a.PutStr("gen_ai.retrieval.documents", `[{"id":"d1","content":"`+ownDoc+`"}]`)
				h.consume(b.td)
				select {
				case c := <-cases:
					assert.Equal(t, tt.want, c.Context)
				case <-time.After(10 * time.Second):
					t.Fatal("no evaluation")
				}
			})
		}
	}
}

// TestSystemContextDoesNotWait checks that a scorer taking its context
// from the system prompt alone is dispatched at once, even when its trace
// has no retrieval span and context_wait is long, and that with the
// default sources the same span waits: its documents can only come from
// the trace.
func TestSystemContextDoesNotWait(t *testing.T) {
	for _, scorer := range scorers.ContextNames() {
		for _, withSystem := range []bool{true, false} {
			cases := make(chan scoring.Case, 1)
			cfg := testConfig(scorer)
			cfg.MaxWait = time.Hour
			cfg.TraceContext.ContextWait = time.Hour
			if withSystem {
				cfg.Scorers[0].ContextSources = []string{contextSourceTrace, contextSourceToolMessages, contextSourceSystem}
			}
			h := newHarness(t, cfg, &fakeScorer{name: scorer, fn: func(_ context.Context, c scoring.Case) scoring.Result {
				cases <- c
				return scoring.Result{Label: scoring.LabelPass}
			}})
			b := newBatch()
			b.generation(randomTraceID(), "How fast are refunds?", "Within 5 days.")
			h.consume(b.td)
			if !withSystem {
				parked := h.p.store.Stats().WaitingForContext
				assert.Equal(t, 1, parked, "%s: with the default sources the generation waits for its trace", scorer)
				continue
			}
			select {
			case c := <-cases:
				assert.Equal(t, []string{"Answer in English."}, c.Context, "the system instructions are the context")
			case <-time.After(10 * time.Second):
				t.Fatal("the generation waited for trace context it does not need")
			}
		}
	}
}
