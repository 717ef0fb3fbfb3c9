package scoring_test

import (
	"slices"
	"testing"

	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// The cost benchmark's view of provider prefix caching. A provider caches
// the token prefix of a prompt: tools, the response_format schema, then
// the messages in order. Only the part before the first byte that differs
// from an earlier call can be served from the cache.

// stepPrefix is what the calls of one step (one reply schema) share: the
// longest common prefix of their message text (Call.Text: the system
// message, a blank line, the user message), over every call of the step.
type stepPrefix struct {
	calls int
	// promptTokens sums the calls' prompt tokens as the fake judge counts
	// them (Call.PromptTokens, about four characters a token).
	promptTokens int
	// prefixChars is the length of the common prefix, in bytes; prefix
	// tokens are whole tokens of it (prefixChars / 4).
	prefixChars int
}

func (p stepPrefix) prefixTokens() int { return p.prefixChars / 4 }

// share is the part of the step's prompt tokens that lies in the prefix
// every call of the step shares.
func (p stepPrefix) share() float64 {
	if p.promptTokens == 0 {
		return 0
	}
	return float64(p.calls*p.prefixTokens()) / float64(p.promptTokens)
}

// sharedPrefixes groups calls by step and finds each step's common prefix.
// The response_format schema is not counted: it is the same for every call
// of a step, so it only lengthens the prefix a provider can cache, and the
// fake judge's prompt tokens leave it out too.
func sharedPrefixes(calls []scoringtest.Call) map[string]*stepPrefix {
	out := map[string]*stepPrefix{}
	first := map[string]string{}
	for _, c := range calls {
		text := c.Text()
		p, ok := out[c.Step]
		if !ok {
			p = &stepPrefix{prefixChars: len(text)}
			out[c.Step] = p
			first[c.Step] = text
		}
		p.calls++
		p.promptTokens += c.PromptTokens()
		p.prefixChars = testkit.CommonPrefixLen(first[c.Step][:p.prefixChars], text)
	}
	return out
}

// OpenAI's prompt caching (openai.com/index/api-prompt-caching/, the
// prompt caching guide): prompts of 1,024 tokens or more; the cached part
// is the longest prefix seen before, from 1,024 tokens up in 128-token
// increments. Caches are cleared after minutes without use, so the
// benchmark's figure is the steady state of a step called often enough.
const (
	openAICacheMinTokens = 1024
	openAICacheIncrement = 128
)

// openAICachedTokens is how many tokens of a call OpenAI bills as cached
// when a prefix of prefixTokens was sent before: none below the minimum,
// else the prefix rounded down to whole increments above it.
func openAICachedTokens(prefixTokens int) int {
	if prefixTokens < openAICacheMinTokens {
		return 0
	}
	return openAICacheMinTokens + (prefixTokens-openAICacheMinTokens)/openAICacheIncrement*openAICacheIncrement
}

// judgePrice is a judge model's list price, in USD per million tokens.
type judgePrice struct {
	model                      string
	input, cachedInput, output float64
}

// judgePrices are the prices the cost benchmark reports an evaluation at:
// gpt-4o-mini (the examples' judge; cached input at half price, OpenAI's
// "Prompt Caching in the API" announcement) and gpt-4.1-mini (cached
// input at a quarter of the input price).
var judgePrices = []judgePrice{
	{model: "gpt-4o-mini", input: 0.15, cachedInput: 0.075, output: 0.60},
	{model: "gpt-4.1-mini", input: 0.40, cachedInput: 0.10, output: 1.60},
}

// cost is what tokens cost at p, in USD: cached of the prompt tokens at the
// cached-input price, the rest at the input price.
func (p judgePrice) cost(prompt, cached, completion int) float64 {
	return (float64(prompt-cached)*p.input + float64(cached)*p.cachedInput + float64(completion)*p.output) / 1e6
}

// cachedTokens is how many of calls' prompt tokens OpenAI would bill as
// cached once every step's shared prefix is in its cache.
func cachedTokens(calls []scoringtest.Call, prefixes map[string]*stepPrefix) int {
	n := 0
	for _, c := range calls {
		n += openAICachedTokens(prefixes[c.Step].prefixTokens())
	}
	return n
}

func call(step string, msgs ...string) scoringtest.Call {
	c := scoringtest.Call{Step: step}
	roles := []string{"system", "user"}
	for i, m := range msgs {
		c.Request.Messages = append(c.Request.Messages, scoringtest.Message{Role: roles[i%2], Content: m})
	}
	return c
}

func TestSharedPrefixes(t *testing.T) {
	sys := string(make([]byte, 400)) // 100 tokens
	calls := []scoringtest.Call{
		call("a", sys, "task. <<<OUTPUT\n\"one\"\nOUTPUT>>>"),
		call("b", "other system", "x"),
		call("a", sys, "task. <<<OUTPUT\n\"two\"\nOUTPUT>>>"),
		call("a", sys, "task. <<<OUTPUT\n\"three, longer\"\nOUTPUT>>>"),
	}
	got := sharedPrefixes(calls)
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"a", "b"}) {
		t.Fatalf("steps %v, want [a b]", keys)
	}
	a := got["a"]
	wantChars := len(sys) + len("\n\ntask. <<<OUTPUT\n\"")
	if a.calls != 3 || a.prefixChars != wantChars {
		t.Errorf("step a: %d calls, prefix %d chars; want 3 calls, %d chars", a.calls, a.prefixChars, wantChars)
	}
	wantTokens := calls[0].PromptTokens() + calls[2].PromptTokens() + calls[3].PromptTokens()
	if a.promptTokens != wantTokens {
		t.Errorf("step a: %d prompt tokens, want %d", a.promptTokens, wantTokens)
	}
	if want := float64(3*(wantChars/4)) / float64(wantTokens); a.share() != want || a.share() >= 1 {
		t.Errorf("step a: share %v, want %v", a.share(), want)
	}
	// A step called once shares its whole prompt with itself.
	if b := got["b"]; b.calls != 1 || b.prefixChars != len(calls[1].Text()) {
		t.Errorf("step b: %+v", *b)
	}
}

func TestOpenAICachedTokens(t *testing.T) {
	for _, tc := range []struct{ prefix, want int }{
		{0, 0}, {1023, 0}, {1024, 1024}, {1151, 1024}, {1152, 1152}, {2000, 1920},
	} {
		if got := openAICachedTokens(tc.prefix); got != tc.want {
			t.Errorf("openAICachedTokens(%d) = %d, want %d", tc.prefix, got, tc.want)
		}
	}
	p := judgePrice{input: 1, cachedInput: 0.5, output: 2}
	if got, want := p.cost(3000, 2048, 100), (952+1024+200)/1e6; got != want {
		t.Errorf("cost = %v, want %v", got, want)
	}
}
