package scoring_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/checks"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/openai"
	"github.com/llm-eval/llm_eval/scoring/scorers"
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
	// Five conversations of ten messages each, with a system prompt.
	scoring.ConversationCompleteness: "conversations.jsonl",
	scoring.KnowledgeRetention:       "conversations.jsonl",
	scoring.RoleAdherence:            "conversations.jsonl",
	scoring.ConversationRelevancy:    "conversations.jsonl",
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

// costCriteria is the custom criteria scorer the cost benchmark measures:
// one criterion without steps, so the judge writes its steps once, on the
// scorer's first evaluation.
var costCriteria = criteria.Config{
	Name:     "answers_the_question",
	Criteria: "The answer responds to the question asked, is correct and gives nothing the question did not ask for.",
}

// costScorer is one configurable scorer of the cost benchmark: its name in
// the benchmark, how it is built and the fixture it scores.
type costScorer struct {
	name  string
	file  string
	build func(scoring.Judge, scoring.Options) (scoring.Scorer, error)
	// cases, when set, makes the benchmark's cases of the fixture's.
	cases func([]scoring.Case) []scoring.Case
}

// longContextChars is the length of the long contexts the cost benchmark
// gives hallucination, in characters: three times the processor's default
// max_input_chars (20,000), so that they are judged in chunks.
const (
	longContextChars    = 60000
	longContextMaxInput = 20000
)

// withLongContext gives each case a context of about longContextChars:
// the other cases' passages, repeated, then the case's own passage last,
// so that claims the passage supports are found only in the last chunk
// and every chunk is judged (the worst case for claims that hold).
func withLongContext(cases []scoring.Case) []scoring.Case {
	out := make([]scoring.Case, len(cases))
	for i, c := range cases {
		var ctx []string
		n := 0
		for k := 1; n < longContextChars-len(strings.Join(c.Context, "")); k++ {
			other := cases[(i+k)%len(cases)]
			if (i+k)%len(cases) == i {
				continue
			}
			for _, d := range other.Context {
				ctx = append(ctx, d)
				n += len(d)
			}
		}
		c.Context = append(ctx, c.Context...)
		out[i] = c
	}
	return out
}

// costScorers are every scorer a user can configure: the built-in ones,
// one criteria scorer and one checks scorer (which calls no judge).
func costScorers() []costScorer {
	var out []costScorer
	for _, name := range scorers.Names() {
		out = append(out, costScorer{name: name, file: costCases[name], build: func(j scoring.Judge, o scoring.Options) (scoring.Scorer, error) {
			return scorers.New(name, j, o)
		}})
	}
	out = append(out,
		costScorer{name: scoring.Criteria, file: "hallucination_halueval_qa.jsonl", build: func(j scoring.Judge, o scoring.Options) (scoring.Scorer, error) {
			return criteria.New(costCriteria, j, o)
		}},
		costScorer{name: scoring.Checks, file: "prompt_alignment_ifeval.jsonl", build: func(_ scoring.Judge, o scoring.Options) (scoring.Scorer, error) {
			maxWords := 300
			return checks.New([]checks.Rule{{Type: "words", Max: &maxWords}}, o)
		}},
		// hallucination over a context three times max_input_chars,
		// judged in chunks (at most DefaultMaxContextChunks).
		costScorer{name: "hallucination_long_context", file: costCases[scoring.Hallucination], cases: withLongContext,
			build: func(j scoring.Judge, o scoring.Options) (scoring.Scorer, error) {
				o.MaxInputChars = longContextMaxInput
				return scorers.New(scoring.Hallucination, j, o)
			}},
	)
	return out
}

// BenchmarkEvaluationCost measures what one evaluation costs per scorer and
// reason mode: judge calls and the tokens the fake judge reports (about four
// characters per token of the messages sent and of the reply); per step,
// the share of its prompt tokens in the prefix every call of the step
// shares (<step>_prefix_%, and prefix_% over the evaluation's calls); and
// what an evaluation costs at judgePrices, in USD per 1,000 evaluations,
// at the list price and with OpenAI's cached-input price for the tokens
// its prompt caching would serve from the prefixes. One op is
// one evaluation; the samples are scored round robin over HTTP, so a
// -benchtime that is a multiple of 10 (20x) scores every sample equally
// often. A criteria scorer is measured in its steady state: its first
// evaluation, made before the measured ones, also has the judge write the
// criterion's steps, and first_eval_calls and first_eval_prompt_tokens
// report what that evaluation cost. The prefix figures need several
// samples per step: a step called once shares its whole prompt.
func BenchmarkEvaluationCost(b *testing.B) {
	modes := []struct {
		name string
		opts scoring.Options
	}{
		{"llm", scoring.Options{ReasonMode: scoring.ReasonLLM}},
		{"summary", scoring.Options{ReasonMode: scoring.ReasonSummary}},
		{"none", scoring.Options{OmitReason: true}},
	}
	for _, sc := range costScorers() {
		cases := loadCases(b, sc.file)
		if sc.cases != nil {
			cases = sc.cases(cases)
		}
		for _, m := range modes {
			b.Run(sc.name+"/"+m.name, func(b *testing.B) {
				srv := scoringtest.New(b)
				j, err := openai.NewJudge(openai.Config{
					BaseURL: srv.URL, Model: "judge-model", HTTPClient: srv.Client(),
					StructuredOutputs: openai.StructuredOutputsJSONSchema,
				})
				if err != nil {
					b.Fatal(err)
				}
				s, err := sc.build(j, m.opts)
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				var first scoring.Usage
				if sc.name == scoring.Criteria {
					res := s.Score(ctx, cases[0])
					if !res.Scored() {
						b.Fatalf("first evaluation: %s %v", res.Label, res.Err)
					}
					first = res.Usage
				}
				var total scoring.Usage
				evals, chunks := 0, 0
				for i := 0; b.Loop(); i++ {
					res := s.Score(ctx, cases[i%len(cases)])
					if res.Label == scoring.LabelError {
						b.Fatalf("case %d: %v", i%len(cases), res.Err)
					}
					if v, ok := res.Steps.Analyze.(hallucination.Verdicts); ok {
						chunks += v.Chunks
					}
					total.Add(res.Usage)
					evals++
				}
				if got, want := len(srv.Calls()), first.LLMCalls+total.LLMCalls; got != want {
					b.Fatalf("the judge received %d calls, the results report %d", got, want)
				}
				n := float64(evals)
				if sc.name == scoring.Criteria { // after b.Loop, which clears metrics
					b.ReportMetric(float64(first.LLMCalls), "first_eval_calls")
					b.ReportMetric(float64(first.PromptTokens), "first_eval_prompt_tokens")
				}
				if sc.cases != nil {
					b.ReportMetric(float64(chunks)/n, "chunks_judged/eval")
				}
				b.ReportMetric(float64(total.LLMCalls)/n, "calls/eval")
				b.ReportMetric(float64(total.PromptTokens)/n, "prompt_tokens/eval")
				b.ReportMetric(float64(total.CompletionTokens)/n, "completion_tokens/eval")
				reportPrefixCache(b, srv.Calls()[first.LLMCalls:], total, n)
			})
		}
	}
}

// reportPrefixCache reports the prefix figures of the measured calls of
// one sub-benchmark (see BenchmarkEvaluationCost); total is their usage
// and n the evaluations they made.
func reportPrefixCache(b *testing.B, calls []scoringtest.Call, total scoring.Usage, n float64) {
	b.Helper()
	prefixes := sharedPrefixes(calls)
	prompt, prefix := 0, 0
	for step, p := range prefixes {
		b.ReportMetric(100*p.share(), step+"_prefix_%")
		prompt += p.promptTokens
		prefix += p.calls * p.prefixTokens()
	}
	if prompt != total.PromptTokens {
		b.Fatalf("the calls hold %d prompt tokens, the results report %d", prompt, total.PromptTokens)
	}
	if prompt == 0 {
		return
	}
	b.ReportMetric(100*float64(prefix)/float64(prompt), "prefix_%")
	cached := cachedTokens(calls, prefixes)
	b.ReportMetric(float64(cached)/n, "openai_cached_tokens/eval")
	for _, p := range judgePrices {
		b.ReportMetric(1000*p.cost(total.PromptTokens, 0, total.CompletionTokens)/n, "usd/1k_evals_"+p.model)
		b.ReportMetric(1000*p.cost(total.PromptTokens, cached, total.CompletionTokens)/n, "usd_cached/1k_evals_"+p.model)
	}
}
