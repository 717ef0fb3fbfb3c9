package llmevalprocessor

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/instructions"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// threeRules is a system prompt with three instructions; the fake judge's
// default split makes one instruction per sentence.
const threeRules = "Answer in French. Keep the answer under 30 words. Name the opening hours."

// instructionItems returns the INSTRUCTIONS block of a prompt_alignment
// call, one decoded item per line.
func instructionItems(c scoringtest.Call) []string {
	m := regexp.MustCompile(`(?s)<<<INSTRUCTIONS\n(.*?)\nINSTRUCTIONS>>>`).FindStringSubmatch(c.Text())
	if m == nil {
		return nil
	}
	return strings.Split(m[1], "\n")
}

// alignmentJudge is a fake judge whose prompt_alignment verdicts say an
// instruction mentioning French is broken and every other one followed,
// like an answer in English would. Other steps get the default replies.
func alignmentJudge(t *testing.T) *scoringtest.Server {
	judge := scoringtest.New(t)
	judge.Handle(func(c scoringtest.Call) scoringtest.Reply {
		if c.Step != promptalignment.SchemaVerdicts {
			return scoringtest.Reply{}
		}
		var vs []string
		for _, it := range instructionItems(c) {
			v := "yes"
			if strings.Contains(it, "French") {
				v = "no"
			}
			vs = append(vs, fmt.Sprintf(`{"verdict": %q, "reason": "checked"}`, v))
		}
		return scoringtest.JSON(`{"verdicts": [` + strings.Join(vs, ",") + `]}`)
	})
	return judge
}

// splitConfig is one prompt_alignment scorer (summary reasons: one
// analyze call per evaluation) against judge.
func splitConfig(judge *scoringtest.Server) *Config {
	cfg := testConfig(scoring.PromptAlignment)
	cfg.Judge.ClientConfig.Endpoint = judge.URL
	cfg.Scorers[0].ReasonMode = string(scoring.ReasonSummary)
	return cfg
}

// systemGeneration adds a generation span whose system prompt is system.
func (b *batchBuilder) systemGeneration(traceID pcommon.TraceID, output, system string) pcommon.SpanID {
	id := b.generation(traceID, "When are you open?", output)
	s := b.spans.At(b.spans.Len() - 1)
	s.Attributes().PutStr("gen_ai.system_instructions", `[{"type":"text","content":`+fmt.Sprintf("%q", system)+`}]`)
	return id
}

// callsOf counts the fake judge's calls of one step.
func callsOf(judge *scoringtest.Server, step string) int {
	n := 0
	for _, c := range judge.Calls() {
		if c.Step == step {
			n++
		}
	}
	return n
}

// scoreOne sends one generation with system prompt and waits for it.
func scoreOne(h *harness, output, system string) pcommon.Map {
	h.t.Helper()
	return evaluateSpan(h, func(b *batchBuilder) pcommon.SpanID {
		return b.systemGeneration(randomTraceID(), output, system)
	})[scoring.PromptAlignment]
}

// TestSystemPromptJudgedInstructionByInstruction is issue 21's item 6: a
// system prompt with three instructions, one of them broken, scores 2/3
// rather than 0 or 1; the second span with the same prompt costs no
// split call.
func TestSystemPromptJudgedInstructionByInstruction(t *testing.T) {
	judge := alignmentJudge(t)
	h, _ := judgeHarness(t, splitConfig(judge))

	first := scoreOne(h, "We open at nine.", threeRules)
	assert.Equal(t, 0.67, mustDouble(t, first, evalconv.AttrScoreValue), "two of three instructions followed, rounded to two decimals")
	assert.Equal(t, "pass", mustStr(t, first, evalconv.AttrScoreLabel))
	second := scoreOne(h, "Open from nine to six.", threeRules)
	assert.Equal(t, 0.67, mustDouble(t, second, evalconv.AttrScoreValue))

	assert.Equal(t, 1, callsOf(judge, scoring.SchemaInstructionSplit), "the second span's prompt comes from the split cache")
	require.Equal(t, 2, callsOf(judge, promptalignment.SchemaVerdicts))
	for _, c := range judge.Calls() {
		if c.Step == promptalignment.SchemaVerdicts {
			assert.Len(t, instructionItems(c), 3)
		}
	}
	h.waitIdle()
	assert.Equal(t, int64(1), sumOf(t, h.tel, "otelcol_processor_llm_eval_instruction_splits", attribute.String("outcome", "split")))
	assert.Equal(t, int64(1), sumOf(t, h.tel, "otelcol_processor_llm_eval_instruction_split_cache_hits"))
	assert.Equal(t, int64(3), sumOf(t, h.tel, "otelcol_processor_llm_eval_judge_calls"), "one split and two analyze calls")
}

// TestSplitFailureFallsBackToTheWholePrompt: an unusable split reply is
// re-asked once, then the whole prompt is one instruction, as without the
// step; the failure is counted and never cached.
func TestSplitFailureFallsBackToTheWholePrompt(t *testing.T) {
	judge := alignmentJudge(t)
	bad := scoringtest.Content("Sure! The prompt wants French.")
	judge.Script(scoring.SchemaInstructionSplit, bad, bad, bad, bad)
	h, _ := judgeHarness(t, splitConfig(judge))

	for _, out := range []string{"We open at nine.", "Nine to six."} {
		ev := scoreOne(h, out, threeRules)
		assert.Equal(t, 0.0, mustDouble(t, ev, evalconv.AttrScoreValue), "the whole prompt mentions French: one broken instruction")
	}
	assert.Equal(t, 4, callsOf(judge, scoring.SchemaInstructionSplit), "a split and its re-ask per span: failures are not cached")
	for _, c := range judge.Calls() {
		if c.Step == promptalignment.SchemaVerdicts {
			assert.Len(t, instructionItems(c), 1)
		}
	}
	h.waitIdle()
	assert.Equal(t, int64(2), sumOf(t, h.tel, "otelcol_processor_llm_eval_instruction_splits",
		attribute.String("outcome", "fallback"), attribute.String("error_type", string(scoring.ErrorJudgeParse))))
	assert.Equal(t, int64(0), sumOf(t, h.tel, "otelcol_processor_llm_eval_instruction_split_cache_hits"))
}

// TestSplitGoesThroughTheJudgeGuards: the system prompt is redacted and
// cut to max_input_chars before the split call, and the split call passes
// the circuit breaker: a 401 on it suspends the judge, so the scorer's own
// call is never sent.
func TestSplitGoesThroughTheJudgeGuards(t *testing.T) {
	t.Run("redaction and max_input_chars", func(t *testing.T) {
		judge := alignmentJudge(t)
		cfg := splitConfig(judge)
		cfg.Redaction.Enabled = true
		cfg.MaxInputChars = 60
		h, _ := judgeHarness(t, cfg)
		scoreOne(h, "We open at nine.", "Write to help@shop.example for refunds. "+threeRules)
		var split string
		for _, c := range judge.Calls() {
			if c.Step == scoring.SchemaInstructionSplit {
				split = c.Text()
			}
		}
		assert.NotContains(t, split, "help@shop.example")
		assert.Contains(t, split, "[REDACTED:email]")
		assert.Contains(t, split, strings.TrimSpace(scoring.TruncationMarker))
		assert.NotContains(t, split, "Name the opening hours", "the prompt's tail is cut")
		h.drain()
		assert.Equal(t, int64(1), sumOf(t, h.tel, "otelcol_processor_llm_eval_instruction_split_limited", attribute.String("limit", "prompt_truncated")))
	})
	t.Run("circuit breaker", func(t *testing.T) {
		judge := alignmentJudge(t)
		judge.Script(scoring.SchemaInstructionSplit, scoringtest.Status(http.StatusUnauthorized, ""))
		h, _ := judgeHarness(t, splitConfig(judge))
		ev := scoreOne(h, "We open at nine.", threeRules)
		assert.Equal(t, string(scoring.ErrorCircuitOpen), mustStr(t, ev, evalconv.AttrErrorType), "the split's 401 suspended the judge")
		assert.Equal(t, 1, len(judge.Calls()), "after the split's 401 the breaker sends nothing more")
		h.drain()
		assert.Equal(t, int64(1), sumOf(t, h.tel, "otelcol_processor_llm_eval_instruction_splits",
			attribute.String("outcome", "fallback"), attribute.String("error_type", string(scoring.ErrorJudgeAuth))))
		assert.Equal(t, int64(1), sumOf(t, h.tel, "otelcol_processor_llm_eval_judge_calls_refused"))
	})
}

// TestSplitRunsInTheWorkers: while a split call hangs, ConsumeTraces
// returns, other spans pass and the store's lock is free.
func TestSplitRunsInTheWorkers(t *testing.T) {
	judge := scoringtest.New(t)
	entered, release := make(chan struct{}), make(chan struct{})
	judge.Handle(func(c scoringtest.Call) scoringtest.Reply {
		if c.Step == scoring.SchemaInstructionSplit {
			close(entered)
			<-release
		}
		return scoringtest.Reply{}
	})
	h, p := judgeHarness(t, splitConfig(judge))
	b := newBatch()
	b.systemGeneration(randomTraceID(), "We open at nine.", threeRules)
	h.consume(b.td)
	<-entered
	other := newBatch()
	other.other(randomTraceID())
	h.consume(other.td)
	assert.Equal(t, 1, h.sink.SpanCount(), "the plain span passed while the split hangs")
	assert.Equal(t, 1, p.store.HeldCount(), "the store's lock is free")
	close(release)
	h.waitSpans(2)
	h.drain()
}

// TestLongSystemPromptIsBounded is issue 21's bad input: a system prompt
// of 20,000 characters with 500 sentences leaves with one result, judged
// against at most 50 instructions, and the cut is counted.
func TestLongSystemPromptIsBounded(t *testing.T) {
	judge := alignmentJudge(t)
	h, _ := judgeHarness(t, splitConfig(judge))
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "Rule %03d: never mention topic %03d here.\n", i, i)
	}
	require.Equal(t, 20000, b.Len())
	ev := scoreOne(h, "We open at nine.", b.String())
	assert.Equal(t, "pass", mustStr(t, ev, evalconv.AttrScoreLabel))
	for _, c := range judge.Calls() {
		if c.Step == promptalignment.SchemaVerdicts {
			assert.Len(t, instructionItems(c), instructions.DefaultMaxInstructions)
		}
	}
	_, count := sinkSpans(h.sink)
	assert.Len(t, count, 1)
	h.drain()
	assert.Equal(t, int64(1), sumOf(t, h.tel, "otelcol_processor_llm_eval_instruction_split_limited", attribute.String("limit", "instructions_dropped")))
}

func TestSplitInstructionsConfig(t *testing.T) {
	no, yes := false, true
	tests := []struct {
		name      string
		edit      func(sc *ScorerConfig)
		wantSplit bool
		wantErr   string
	}{
		{"prompt_alignment splits by default", func(*ScorerConfig) {}, true, ""},
		{"split_instructions: false", func(sc *ScorerConfig) { sc.SplitInstructions = &no }, false, ""},
		{"configured instructions are not split", func(sc *ScorerConfig) { sc.Instructions = []string{"Be brief. Use French."} }, false, ""},
		{"criteria with the instructions field", func(sc *ScorerConfig) {
			sc.Name, sc.Criteria, sc.Fields = "rules_kept", "Follows the rules.", []string{"instructions"}
		}, true, ""},
		{"criteria without it", func(sc *ScorerConfig) { sc.Name, sc.Criteria = "polite", "Polite." }, false, ""},
		{"true on bias", func(sc *ScorerConfig) { sc.Name, sc.SplitInstructions = scoring.Bias, &yes }, false, "split_instructions: only applies"},
		{"true with configured instructions", func(sc *ScorerConfig) { sc.Instructions, sc.SplitInstructions = []string{"Be brief."}, &yes }, false, "split_instructions: only applies"},
		{"true without use_system_instructions", func(sc *ScorerConfig) {
			sc.Instructions, sc.UseSystemInstructions, sc.SplitInstructions = []string{"Be brief."}, false, &yes
		}, false, "split_instructions: only applies"},
		{"false on bias is harmless", func(sc *ScorerConfig) { sc.Name, sc.SplitInstructions = scoring.Bias, &no }, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(scoring.PromptAlignment)
			tt.edit(&cfg.Scorers[0])
			err := confmap.Validate(cfg)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "scorers::0")
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantSplit, cfg.Scorers[0].splitsInstructions())
		})
	}
}

// TestSplitInstructionsFromYAML checks the key decodes and that a scorer
// with split_instructions: false makes no split call.
func TestSplitInstructionsFromYAML(t *testing.T) {
	judge := alignmentJudge(t)
	cfg := splitConfig(judge)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"scorers": []any{map[string]any{"name": "prompt_alignment", "reason_mode": "summary", "split_instructions": false}},
	}).Unmarshal(cfg))
	require.NotNil(t, cfg.Scorers[0].SplitInstructions)
	h, _ := judgeHarness(t, cfg)
	ev := scoreOne(h, "We open at nine.", threeRules)
	assert.Equal(t, 0.0, mustDouble(t, ev, evalconv.AttrScoreValue), "the whole prompt is one broken instruction")
	assert.Equal(t, 0, callsOf(judge, scoring.SchemaInstructionSplit))
	h.waitIdle()
	_, err := h.tel.GetMetric("otelcol_processor_llm_eval_instruction_split_cache_hits")
	assert.Error(t, err, "no split cache without a scorer that splits")
}
