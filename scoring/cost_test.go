package scoring_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// costCases are the realistic samples of the judge fixtures
// (testdata/judge/cases at the repository root), per scorer (the agent
// runs are hand-made).
var costCases = map[string]string{
	scoring.Bias:            "bias_crows_pairs.jsonl",
	scoring.Hallucination:   "hallucination_halueval_qa.jsonl",
	scoring.PromptAlignment: "prompt_alignment_ifeval.jsonl",
	scoring.TaskCompletion:  "agent_runs.jsonl",
	scoring.ToolUse:         "agent_runs.jsonl",
	// The QA cases have a question, an answer and a retrieved passage.
	scoring.AnswerRelevancy:  "hallucination_halueval_qa.jsonl",
	scoring.ContextRelevance: "hallucination_halueval_qa.jsonl",
	scoring.Toxicity:         "bias_crows_pairs.jsonl",
}

func loadCases(tb testing.TB, file string) []scoring.Case {
	tb.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "judge", "cases", file))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cases []scoring.Case
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c scoring.Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("%s line %d: %v", file, len(cases)+1, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(cases) == 0 {
		tb.Fatalf("%s: no cases", file)
	}
	return cases
}

// BenchmarkEvaluationCost measures what one evaluation costs per scorer and
// reason mode: judge calls and the tokens the fake judge reports (about four
// characters per token of the messages sent and of the reply). One op is
// one evaluation; the samples are scored round robin over HTTP.
func BenchmarkEvaluationCost(b *testing.B) {
	modes := []struct {
		name string
		opts scoring.Options
	}{
		{"llm", scoring.Options{ReasonMode: scoring.ReasonLLM}},
		{"summary", scoring.Options{ReasonMode: scoring.ReasonSummary}},
		{"none", scoring.Options{OmitReason: true}},
	}
	for _, name := range scoring.Names() {
		cases := loadCases(b, costCases[name])
		for _, m := range modes {
			b.Run(name+"/"+m.name, func(b *testing.B) {
				srv := scoringtest.New(b)
				j, err := openai.NewJudge(openai.Config{
					BaseURL: srv.URL, Model: "judge-model", HTTPClient: srv.Client(),
					StructuredOutputs: openai.StructuredOutputsJSONSchema,
				})
				if err != nil {
					b.Fatal(err)
				}
				s, err := scoring.New(name, j, m.opts)
				if err != nil {
					b.Fatal(err)
				}
				var total scoring.Usage
				evals := 0
				ctx := context.Background()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					res := s.Score(ctx, cases[i%len(cases)])
					if res.Label == scoring.LabelError {
						b.Fatalf("case %d: %v", i%len(cases), res.Err)
					}
					total.Add(res.Usage)
					evals++
				}
				n := float64(evals)
				b.ReportMetric(float64(total.LLMCalls)/n, "calls/eval")
				b.ReportMetric(float64(total.PromptTokens)/n, "prompt_tokens/eval")
				b.ReportMetric(float64(total.CompletionTokens)/n, "completion_tokens/eval")
			})
		}
	}
}
