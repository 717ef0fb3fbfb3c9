package llmevalprocessor

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// benchSystemPrompt is a support assistant's system prompt: a role, a
// background fact and six rules (the fake judge's split makes one
// instruction per sentence, eight in all).
const benchSystemPrompt = "You are Juniper, the support assistant of Alder Outdoor, a shop for hiking gear. " +
	"The returns desk is open on weekdays from 9:00 to 17:00. " +
	"Answer in the language the customer writes in. " +
	"Keep every answer under 120 words. " +
	"Never promise a refund; tell the customer the returns desk decides. " +
	"Quote order numbers exactly as the customer gave them. " +
	"Do not give medical advice about injuries on the trail. " +
	"End with a question that asks whether anything else is needed."

// BenchmarkInstructionSplitCalls measures what the instruction split adds
// to a prompt_alignment evaluation whose instructions come from the span's
// system prompt: judge calls (exact counts from the fake judge and from
// the results' usage) and the fake judge's token estimate, per
// evaluation. cold: every evaluation has a system prompt not seen before;
// warm: the split cache already holds it; off: split_instructions: false.
// The scorer is built by newJudge, so it is the processor's own stack
// (result cache off, so that only the split cache can save calls).
func BenchmarkInstructionSplitCalls(b *testing.B) {
	for _, reason := range []scoring.ReasonMode{scoring.ReasonLLM, scoring.ReasonSummary} {
		for _, mode := range []string{"off", "cold", "warm"} {
			b.Run(fmt.Sprintf("reason_mode=%s/split=%s", reason, mode), func(b *testing.B) {
				judge := scoringtest.New(b)
				cfg := testConfig(scoring.PromptAlignment)
				cfg.Judge.ClientConfig.Endpoint = judge.URL
				cfg.Cache.Enabled = false
				cfg.Scorers[0].ReasonMode = string(reason)
				split := mode != "off"
				cfg.Scorers[0].SplitInstructions = &split
				js, err := newJudge(context.Background(), cfg, componenttest.NewNopHost(), componenttest.NewNopTelemetrySettings(), judgeHooks{})
				if err != nil {
					b.Fatal(err)
				}
				s := js.scorers[0]
				prompt := func(i int) string {
					if mode == "cold" {
						return fmt.Sprintf("%s Ticket %d is yours.", benchSystemPrompt, i)
					}
					return benchSystemPrompt
				}
				ctx := context.Background()
				if mode == "warm" { // one evaluation fills the split cache
					s.Score(ctx, scoring.Case{Input: "Hi", Output: "Hello.", Instructions: []string{prompt(0)}})
				}
				before := len(judge.Calls())
				var usage scoring.Usage
				evals := 0
				for i := 0; b.Loop(); i++ {
					r := s.Score(ctx, scoring.Case{
						Input:        fmt.Sprintf("My order A-%d has not arrived. Can I get my money back?", i),
						Output:       "I am sorry your order is late. The returns desk decides on refunds. Is there anything else I can do?",
						Instructions: []string{prompt(i)},
					})
					if !r.Scored() {
						b.Fatalf("evaluation %d: %s %v", i, r.Label, r.Err)
					}
					usage.Add(r.Usage)
					evals++
				}
				calls := judge.Calls()[before:]
				splits := 0
				for _, c := range calls {
					if c.Step == scoring.SchemaInstructionSplit {
						splits++
					}
				}
				if len(calls) != usage.LLMCalls {
					b.Fatalf("the judge received %d calls, the results report %d", len(calls), usage.LLMCalls)
				}
				n := float64(evals)
				b.ReportMetric(float64(usage.LLMCalls)/n, "calls/eval")
				b.ReportMetric(float64(splits)/n, "split_calls/eval")
				b.ReportMetric(float64(usage.PromptTokens)/n, "prompt_tokens/eval")
				b.ReportMetric(float64(usage.CompletionTokens)/n, "completion_tokens/eval")
			})
		}
	}
}
