package checks

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/testkit"
)

// ruleCase is one output checked against one rule.
type ruleCase struct {
	name   string
	rule   Rule
	output string
	pass   bool
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New([]Rule{tc.rule}, scoring.Options{})
			require.NoError(t, err)
			res := s.Score(context.Background(), scoring.Case{Output: tc.output})
			v := res.Steps.Analyze.(Verdicts).Verdicts
			require.Len(t, v, 1)
			assert.Equal(t, tc.pass, v[0].Passed, "detail: %s", v[0].Detail)
			want := scoring.LabelFail
			if tc.pass {
				want = scoring.LabelPass
			}
			assert.Equal(t, want, res.Label)
			assert.Zero(t, res.Usage.LLMCalls)
		})
	}
}

func TestCheckJSON(t *testing.T) {
	schema := map[string]any{
		"type":     "object",
		"required": []any{"name", "age"},
		"properties": map[string]any{
			"name": map[string]any{"type": "string", "minLength": 1, "maxLength": 5},
			"age":  map[string]any{"type": "integer", "minimum": 0, "maximum": 130},
			"tags": map[string]any{"type": "array", "items": map[string]any{"enum": []any{"a", "b"}}, "maxItems": 2},
			"kind": map[string]any{"const": "person"},
			"code": map[string]any{"type": "string", "pattern": "^[A-Z]{2}$"},
			"ok":   map[string]any{"type": []any{"boolean", "null"}},
		},
		"additionalProperties": false,
	}
	sch := Rule{Type: RuleJSONSchema, Schema: schema}
	fenced := sch
	fenced.AllowCodeFence = true
	runRuleCases(t, []ruleCase{
		{"valid object", Rule{Type: RuleJSONValid}, ` {"a": [1, 2]} `, true},
		{"valid scalar", Rule{Type: RuleJSONValid}, `42`, true},
		{"trailing text", Rule{Type: RuleJSONValid}, `{"a": 1} and more`, false},
		{"two values", Rule{Type: RuleJSONValid}, `{} {}`, false},
		{"broken", Rule{Type: RuleJSONValid}, `{"a": }`, false},
		{"empty", Rule{Type: RuleJSONValid}, ``, false},
		{"fence refused by default", Rule{Type: RuleJSONValid}, "```json\n{}\n```", false},
		{"fence allowed", Rule{Type: RuleJSONValid, AllowCodeFence: true}, "```json\n{\"a\": 1}\n```", true},
		{"bare fence allowed", Rule{Type: RuleJSONValid, AllowCodeFence: true}, "```\n[1]\n```", true},
		{"schema ok", sch, `{"name": "Ann", "age": 30, "tags": ["a"], "kind": "person", "code": "GB", "ok": null}`, true},
		{"schema missing required", sch, `{"name": "Ann"}`, false},
		{"schema wrong type", sch, `{"name": 3, "age": 30}`, false},
		{"schema integer wanted", sch, `{"name": "Ann", "age": 30.5}`, false},
		{"schema above maximum", sch, `{"name": "Ann", "age": 131}`, false},
		{"schema below minimum", sch, `{"name": "Ann", "age": -1}`, false},
		{"schema string too long", sch, `{"name": "Annabel", "age": 3}`, false},
		{"schema string empty", sch, `{"name": "", "age": 3}`, false},
		{"schema enum", sch, `{"name": "A", "age": 3, "tags": ["c"]}`, false},
		{"schema too many items", sch, `{"name": "A", "age": 3, "tags": ["a", "b", "a"]}`, false},
		{"schema const", sch, `{"name": "A", "age": 3, "kind": "robot"}`, false},
		{"schema pattern", sch, `{"name": "A", "age": 3, "code": "gb"}`, false},
		{"schema type list", sch, `{"name": "A", "age": 3, "ok": "yes"}`, false},
		{"schema additional", sch, `{"name": "A", "age": 3, "extra": 1}`, false},
		{"schema not an object", sch, `[1]`, false},
		{"schema invalid JSON", sch, `{name: "A"}`, false},
		{"schema fenced", fenced, "```json\n{\"name\": \"A\", \"age\": 1}\n```", true},
		{"number accepts integer", Rule{Type: RuleJSONSchema, Schema: map[string]any{"type": "number", "exclusiveMaximum": 10}}, `9`, true},
		{"exclusive maximum", Rule{Type: RuleJSONSchema, Schema: map[string]any{"type": "number", "exclusiveMaximum": 10}}, `10`, false},
		{"additional schema", Rule{Type: RuleJSONSchema, Schema: map[string]any{"additionalProperties": map[string]any{"type": "string"}}}, `{"a": 1}`, false},
	})
}

func TestCheckRegexAndContains(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"match once", Rule{Type: RuleRegexMatch, Pattern: `\d{3}`}, "code 123", true},
		{"no match", Rule{Type: RuleRegexMatch, Pattern: `\d{3}`}, "code 12", false},
		{"match at least 2", Rule{Type: RuleRegexMatch, Pattern: `\*[^*]+\*`, Min: testkit.Ptr(2)}, "*a* and *b*", true},
		{"match fewer than min", Rule{Type: RuleRegexMatch, Pattern: `\*[^*]+\*`, Min: testkit.Ptr(3)}, "*a* and *b*", false},
		{"match above max", Rule{Type: RuleRegexMatch, Pattern: `x`, Max: testkit.Ptr(1)}, "xx", false},
		{"match max allows zero", Rule{Type: RuleRegexMatch, Pattern: `x`, Max: testkit.Ptr(1)}, "none", true},
		{"match ignore case", Rule{Type: RuleRegexMatch, Pattern: `p\.s\.`, IgnoreCase: true}, "P.S. hi", true},
		{"absent ok", Rule{Type: RuleRegexAbsent, Pattern: `(?i)lorem`}, "text", true},
		{"absent found", Rule{Type: RuleRegexAbsent, Pattern: `lorem`}, "lorem ipsum", false},
		{"contains", Rule{Type: RuleContains, Value: "cat"}, "a cat", true},
		{"contains case", Rule{Type: RuleContains, Value: "Cat"}, "a cat", false},
		{"contains ignore case", Rule{Type: RuleContains, Value: "Cat", IgnoreCase: true}, "a CAT", true},
		{"contains counts", Rule{Type: RuleContains, Value: "la", Min: testkit.Ptr(3)}, "la la la", true},
		{"contains too few", Rule{Type: RuleContains, Value: "la", Min: testkit.Ptr(4)}, "la la la", false},
		{"contains exactly", Rule{Type: RuleContains, Value: "a", Min: testkit.Ptr(2), Max: testkit.Ptr(2)}, "banana", false},
		{"contains substring counts inside words", Rule{Type: RuleContains, Value: "cat", Min: testkit.Ptr(2)}, "cat category", true},
		{"contains whole word", Rule{Type: RuleContains, Value: "cat", WholeWord: true, Min: testkit.Ptr(2)}, "cat category", false},
		{"excludes ok", Rule{Type: RuleExcludes, Value: ","}, "no commas here", true},
		{"excludes found", Rule{Type: RuleExcludes, Value: ","}, "one, two", false},
		{"excludes whole word ignores part", Rule{Type: RuleExcludes, Value: "art", WholeWord: true, IgnoreCase: true}, "Party smart", true},
		{"excludes whole word found", Rule{Type: RuleExcludes, Value: "art", WholeWord: true, IgnoreCase: true}, "Modern ART.", false},
		{"excludes whole word unicode", Rule{Type: RuleExcludes, Value: "für", WholeWord: true}, "dafür", true},
	})
}

func TestCheckAffixesAndFirstWord(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"starts with", Rule{Type: RuleStartsWith, Value: "Write a poem"}, "  Write a poem about cats.", true},
		{"starts with case", Rule{Type: RuleStartsWith, Value: "write a poem"}, "Write a poem", false},
		{"starts with ignore case", Rule{Type: RuleStartsWith, Value: "write a poem", IgnoreCase: true}, "Write a poem", true},
		{"ends with", Rule{Type: RuleEndsWith, Value: "Is there anything else?"}, "Done. Is there anything else? \n", true},
		{"ends with inside quotes", Rule{Type: RuleEndsWith, Value: "the end.", IgnoreCase: true}, `"It was The End."`, true},
		{"ends with missing", Rule{Type: RuleEndsWith, Value: "Bye"}, "Bye now", false},
		{"first word", Rule{Type: RuleFirstWord, Value: "Dear"}, "\"Dear, friend\"", true},
		{"first word other", Rule{Type: RuleFirstWord, Value: "Dear"}, "Hello dear", false},
		{"first word of paragraph", Rule{Type: RuleFirstWord, Value: "summary", Paragraph: 2, IgnoreCase: true}, "Intro here.\n\nSummary: done.", true},
		{"first word paragraph missing", Rule{Type: RuleFirstWord, Value: "x", Paragraph: 3}, "one\n\ntwo", false},
		{"first word custom separator", Rule{Type: RuleFirstWord, Value: "b", Paragraph: 2, Separator: "***"}, "a\n***\nb c", true},
	})
}

func TestCheckCounts(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"words at least", Rule{Type: RuleWords, Min: testkit.Ptr(3)}, "one two three", true},
		{"words too few", Rule{Type: RuleWords, Min: testkit.Ptr(4)}, "one two three", false},
		{"words at most", Rule{Type: RuleWords, Max: testkit.Ptr(2)}, "one two three", false},
		{"words apostrophe splits", Rule{Type: RuleWords, Min: testkit.Ptr(2), Max: testkit.Ptr(2)}, "don't", true},
		{"words unicode", Rule{Type: RuleWords, Min: testkit.Ptr(3), Max: testkit.Ptr(3)}, "größte Ausgaben für", true},
		{"sentences", Rule{Type: RuleSentences, Min: testkit.Ptr(3), Max: testkit.Ptr(3)}, "One. Two! Three?", true},
		{"sentences abbreviations", Rule{Type: RuleSentences, Max: testkit.Ptr(1)}, "Dr. Smith met Mr. J. Doe, e.g. at 3.5 p.m. on Monday.", true},
		{"sentences no final stop", Rule{Type: RuleSentences, Min: testkit.Ptr(2), Max: testkit.Ptr(2)}, "First one. Second one", true},
		{"sentences ellipsis and quotes", Rule{Type: RuleSentences, Min: testkit.Ptr(2), Max: testkit.Ptr(2)}, `He said "stop." Then he left...`, true},
		{"sentences too many", Rule{Type: RuleSentences, Max: testkit.Ptr(1)}, "Yes. No.", false},
		{"paragraphs blank lines", Rule{Type: RuleParagraphs, Min: testkit.Ptr(3), Max: testkit.Ptr(3)}, "a\n\nb\n \n c\n\n\n", true},
		{"paragraphs single newline is one", Rule{Type: RuleParagraphs, Max: testkit.Ptr(1)}, "a\nb", true},
		{"paragraphs separator", Rule{Type: RuleParagraphs, Min: testkit.Ptr(2), Max: testkit.Ptr(2), Separator: "***"}, "a\n***\nb\n***\n", true},
		{"paragraphs separator too few", Rule{Type: RuleParagraphs, Min: testkit.Ptr(3), Separator: "***"}, "a *** b", false},
		{"characters", Rule{Type: RuleCharacters, Max: testkit.Ptr(5)}, "héllo", true},
		{"characters too many", Rule{Type: RuleCharacters, Max: testkit.Ptr(4)}, "héllo", false},
		{"characters range", Rule{Type: RuleCharacters, Min: testkit.Ptr(2), Max: testkit.Ptr(3)}, "a", false},
	})
}

func TestCheckCase(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"lowercase", Rule{Type: RuleLowercase}, "all lower, 123!", true},
		{"lowercase capital", Rule{Type: RuleLowercase}, "all lower but I", false},
		{"lowercase no letters", Rule{Type: RuleLowercase}, "123 !", false},
		{"lowercase unicode", Rule{Type: RuleLowercase}, "ça va très bien", true},
		{"uppercase", Rule{Type: RuleUppercase}, "I'M LOUD, 2 TIMES!", true},
		{"uppercase with lower", Rule{Type: RuleUppercase}, "LOUD but not", false},
		{"uppercase unicode", Rule{Type: RuleUppercase}, "ÇA VA", true},
	})
}

func TestDetectLanguage(t *testing.T) {
	tests := []struct{ text, want string }{
		{"The quick brown fox jumps over the lazy dog and it is happy.", "en"},
		{"THE COMPONENTS THAT MAKE A SUCCESSFUL PERSON ARE MANY", "en"},
		{"Google, Facebook und Amazon sind einige der größten Unternehmen der Welt.", "de"},
		{"Le chat est sur la table et il dort dans la maison.", "fr"},
		{"El perro está en la casa y no quiere salir por la lluvia.", "es"},
		{"O gato está em casa e não quer sair por causa da chuva.", "pt"},
		{"Il gatto è sulla sedia e non vuole scendere per la pioggia.", "it"},
		{"Kun haistat kukkaa, tapahtuu monia asioita ja se on mukavaa.", "fi"},
		{"Kwa nini pete ya uchumba ni kama mpira wa miguu? Kwa sababu unahitaji mchezaji.", "sw"},
		{"Trời ơi! Câu này nghe như mẹ chỉ là một chiếc máy.", "vi"},
		{"Решетка - это что-то вроде сетки, которую можно нарисовать на бумаге.", "ru"},
		{"Це дуже гарний день, і ми їдемо до моря.", "uk"},
		{"एक आदमी है जिसका नाम आरव है वह कभी बोलता नहीं है", "hi"},
		{"कॉशी-श्वार्झ असमानता ही गणितातील एक महत्त्वाची असमानता आहे आणि ती सर्वत्र वापरली जाते.", "mr"},
		{"ಹೌದು, ಹ್ಯಾಂಬರ್ಗರ್ಗಳು ಸ್ಯಾಂಡ್ವಿಚ್ಗಳು.", "kn"},
		{"ਕੋਡਿੰਗ ਦੇ ਯੋਗਤਾਵਾਂ", "pa"},
		{"તમે ગુજરાતમાં કયા ભાગમાં રહેશો છો?", "gu"},
		{"பாகுபலி இந்த படம்", "ta"},
		{"మేము సృష్టికర్తల ఒక జట్టు", "te"},
		{"ฉันเป็นสิ่งที่คุณใช้", "th"},
		{"<<SRE>>\n\nSRE는 사이트 신뢰성 엔지니어의 약자입니다.", "ko"},
		{"2022 সালের Google IO ঘোষণা অনুযায়ী", "bn"},
		{"東京は日本の首都です。", "ja"},
		{"北京是中国的首都。", "zh"},
		{"یہ ایک اچھا دن ہے اور میں بہت خوش ہوں۔", "ur"},
		{"Person 1: Salam, kya haal hai? Maine suna hai ke tumne", LanguageUnknown},
		{"12345 !!!", LanguageUnknown},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, DetectLanguage(tc.text), tc.text)
	}
	runRuleCases(t, []ruleCase{
		{"language match", Rule{Type: RuleLanguage, Value: "de"}, "Das ist nicht gut und wir sind müde.", true},
		{"language mismatch", Rule{Type: RuleLanguage, Value: "de"}, "This is not good and we are tired.", false},
		{"language code case", Rule{Type: RuleLanguage, Value: "EN"}, "This is not good and we are tired.", true},
	})
}

func TestCheckSafety(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"no pii clean", Rule{Type: RuleNoPII}, "Call the front desk, version 1.2.3, order 2024-01-05.", true},
		{"pii email", Rule{Type: RuleNoPII}, "Write to ann@example.com", false},
		{"pii phone", Rule{Type: RuleNoPII}, "Call +44 20 7946 0958 today", false},
		{"pii card", Rule{Type: RuleNoPII}, "Card 4111 1111 1111 1111", false},
		{"no secrets clean", Rule{Type: RuleNoSecrets}, "Set OPENAI_API_KEY in your shell; never paste it here.", true},
		{"secret openai", Rule{Type: RuleNoSecrets}, "key: sk-proj-abcdefghijklmnopqrstuvwx1234", false},
		{"secret aws", Rule{Type: RuleNoSecrets}, "AKIAIOSFODNN7EXAMPLE", false},
		{"secret github", Rule{Type: RuleNoSecrets}, "ghp_" + strings.Repeat("a1B2", 9), false},
		{"secret private key", Rule{Type: RuleNoSecrets}, "-----BEGIN RSA PRIVATE KEY-----\nMIIE...", false},
		{"secret openssh key", Rule{Type: RuleNoSecrets}, "-----BEGIN OPENSSH PRIVATE KEY-----", false},
		{"public key is fine", Rule{Type: RuleNoSecrets}, "-----BEGIN PUBLIC KEY-----", true},
		{"secret jwt", Rule{Type: RuleNoSecrets}, "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", false},
		{"not refusal", Rule{Type: RuleNotRefusal}, "Here is the poem you asked for.", true},
		{"refusal cannot", Rule{Type: RuleNotRefusal}, "I can't help with that request.", false},
		{"refusal curly apostrophe", Rule{Type: RuleNotRefusal}, "I’m sorry, but I can’t assist with that.", false},
		{"refusal as an ai", Rule{Type: RuleNotRefusal}, "As an AI language model, I cannot browse the web.", false},
		{"refusal must decline", Rule{Type: RuleNotRefusal}, "I must decline to write that.", false},
		{"refusal deep in a long answer is a caveat", Rule{Type: RuleNotRefusal}, strings.Repeat("Useful text. ", 40) + "I cannot help with taxes.", true},
		{"cannot in ordinary prose", Rule{Type: RuleNotRefusal}, "Penguins cannot fly, but they swim well.", true},
	})
}

func TestCheckDetailNeverQuotesFindings(t *testing.T) {
	s, err := New([]Rule{{Type: RuleNoPII}, {Type: RuleNoSecrets}}, scoring.Options{})
	require.NoError(t, err)
	res := s.Score(context.Background(), scoring.Case{Output: "mail ann@example.com key sk-abcdefghijklmnopqrstuvwxyz"})
	for _, v := range res.Steps.Analyze.(Verdicts).Verdicts {
		assert.NotContains(t, v.Detail, "ann@example.com")
		assert.NotContains(t, v.Detail, "sk-abc")
	}
	assert.NotContains(t, res.Reason, "ann@example.com")
	assert.NotContains(t, res.Reason, "sk-abc")
	assert.Contains(t, res.Reason, "email")
}

func TestChecksScoreIsShareOfRulesPassed(t *testing.T) {
	rules := []Rule{
		{Type: RuleContains, Value: "a"},
		{Type: RuleContains, Value: "b"},
		{Type: RuleContains, Value: "c"},
		{Type: RuleContains, Value: "d"},
	}
	tests := []struct {
		name   string
		opts   scoring.Options
		output string
		score  float64
		label  scoring.Label
	}{
		{"all pass", scoring.Options{}, "abcd", 1, scoring.LabelPass},
		{"default threshold needs all", scoring.Options{}, "abc", 0.75, scoring.LabelFail},
		{"lower threshold", scoring.Options{Threshold: testkit.Ptr(0.5)}, "ab", 0.5, scoring.LabelPass},
		{"below threshold", scoring.Options{Threshold: testkit.Ptr(0.5)}, "a", 0.25, scoring.LabelFail},
		{"scale", scoring.Options{Scale: 10, Threshold: testkit.Ptr(7.0)}, "abc", 7.5, scoring.LabelPass},
		{"non-integer scale, all pass, exact", scoring.Options{Scale: 0.7}, "abcd", 0.7, scoring.LabelPass},
		{"strict", scoring.Options{StrictMode: true, Threshold: testkit.Ptr(0.1)}, "abc", 0, scoring.LabelFail},
		{"strict all pass", scoring.Options{StrictMode: true}, "dcba", 1, scoring.LabelPass},
		// 3/4 × 0.7 is 0.5249999999999999 and 3/4 × 0.3 is
		// 0.22499999999999998 in floating point; rounded, both sit
		// exactly at the threshold and pass.
		{"rounded to two decimals, at threshold, scale 0.7", scoring.Options{Scale: 0.7, Threshold: testkit.Ptr(0.53)}, "abc", 0.53, scoring.LabelPass},
		{"rounded to two decimals, at threshold, scale 0.3", scoring.Options{Scale: 0.3, Threshold: testkit.Ptr(0.23)}, "abc", 0.23, scoring.LabelPass},
		// Every score is rounded, the scale's end included (issue 36 item
		// 10): all rules passed at scale 0.125 is 0.13, as Mastra rounds.
		{"all pass at scale 0.125", scoring.Options{Scale: 0.125}, "abcd", 0.13, scoring.LabelPass},
		{"strict all pass at scale 0.333", scoring.Options{Scale: 0.333, StrictMode: true}, "abcd", 0.33, scoring.LabelPass},
		{"3 of 4 at scale 0.125, threshold 0.09375", scoring.Options{Scale: 0.125, Threshold: testkit.Ptr(0.09375)}, "abc", 0.09, scoring.LabelPass},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(rules, tc.opts)
			require.NoError(t, err)
			assert.Equal(t, scoring.Checks, s.Name())
			res := s.Score(context.Background(), scoring.Case{Output: tc.output})
			assert.Equal(t, tc.score, res.Score)
			assert.Equal(t, tc.label, res.Label)
			assert.Len(t, res.Steps.Analyze.(Verdicts).Verdicts, 4)
			assert.Zero(t, res.Usage.LLMCalls)
			assert.Contains(t, res.Reason, "checks passed")
		})
	}
}

func TestNewChecksRejectsBadRules(t *testing.T) {
	tests := []struct {
		name  string
		rules []Rule
		opts  scoring.Options
		want  string
	}{
		{"no rules", nil, scoring.Options{}, "rules: the checks scorer needs at least one rule"},
		{"unknown type", []Rule{{Type: "json_valid"}, {Type: "spelling"}}, scoring.Options{}, `rules::1::type: unknown rule type "spelling"`},
		{"missing type", []Rule{{}}, scoring.Options{}, "rules::0::type: missing"},
		{"bad regexp", []Rule{{Type: RuleRegexMatch, Pattern: "a("}}, scoring.Options{}, "rules::0::pattern: error parsing regexp"},
		{"bad regexp absent", []Rule{{Type: RuleNoPII}, {Type: RuleNoSecrets}, {Type: RuleRegexAbsent, Pattern: "[z-a]"}}, scoring.Options{}, "rules::2::pattern: error parsing regexp"},
		{"empty-matching regexp", []Rule{{Type: RuleRegexMatch, Pattern: "x*"}}, scoring.Options{}, "rules::0::pattern: \"x*\" matches empty text"},
		{"missing pattern", []Rule{{Type: RuleRegexAbsent}}, scoring.Options{}, "rules::0::pattern: missing"},
		{"missing value", []Rule{{Type: RuleContains}}, scoring.Options{}, "rules::0::value: missing"},
		{"negative min", []Rule{{Type: RuleWords, Min: testkit.Ptr(-1)}}, scoring.Options{}, "rules::0::min: must not be negative"},
		{"max below min", []Rule{{Type: RuleContains, Value: "a", Min: testkit.Ptr(3), Max: testkit.Ptr(2)}}, scoring.Options{}, "rules::0::max: 2 is below min 3"},
		{"count without bounds", []Rule{{Type: RuleSentences}}, scoring.Options{}, "rules::0::min: set min, max or both"},
		{"field not used", []Rule{{Type: RuleExcludes, Value: "x", Min: testkit.Ptr(2)}}, scoring.Options{}, "rules::0::min: not used by rule type excludes"},
		{"pattern on contains", []Rule{{Type: RuleContains, Value: "x", Pattern: "y"}}, scoring.Options{}, "rules::0::pattern: not used by rule type contains"},
		{"unknown language", []Rule{{Type: RuleLanguage, Value: "xx"}}, scoring.Options{}, `rules::0::value: unsupported language "xx"`},
		{"first word two words", []Rule{{Type: RuleFirstWord, Value: "two words"}}, scoring.Options{}, "rules::0::value: want one word"},
		{"schema missing", []Rule{{Type: RuleJSONSchema}}, scoring.Options{}, "rules::0::schema: missing"},
		{"schema unknown keyword", []Rule{{Type: RuleJSONSchema, Schema: map[string]any{"oneOf": []any{}}}}, scoring.Options{}, "rules::0::schema: /oneOf: unsupported keyword"},
		{"schema unknown type", []Rule{{Type: RuleJSONSchema, Schema: map[string]any{"type": "text"}}}, scoring.Options{}, `rules::0::schema: /type: unknown type "text"`},
		{"schema nested bad pattern", []Rule{{Type: RuleJSONSchema, Schema: map[string]any{"properties": map[string]any{"a": map[string]any{"pattern": "("}}}}}, scoring.Options{}, "rules::0::schema: /properties/a/pattern: error parsing regexp"},
		{"schema bad required", []Rule{{Type: RuleJSONSchema, Schema: map[string]any{"required": "a"}}}, scoring.Options{}, "rules::0::schema: /required: want a list of property names"},
		{"schema bad minLength", []Rule{{Type: RuleJSONSchema, Schema: map[string]any{"minLength": -2}}}, scoring.Options{}, "rules::0::schema: /minLength: want a non-negative integer"},
		{"bad threshold", []Rule{{Type: RuleNoPII}}, scoring.Options{Threshold: testkit.Ptr(2.0)}, "threshold: must be between 0 and the scale"},
		{"bad scale", []Rule{{Type: RuleNoPII}}, scoring.Options{Scale: -1}, "scale: must be a positive number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.rules, tc.opts)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestChecksConcurrentUse(t *testing.T) {
	s, err := New([]Rule{{Type: RuleWords, Max: testkit.Ptr(5)}, {Type: RuleNoSecrets}, {Type: RuleLanguage, Value: "en"}}, scoring.Options{})
	require.NoError(t, err)
	done := make(chan scoring.Result)
	for i := range 8 {
		go func() {
			out := "this is the answer"
			if i%2 == 1 {
				out = "this is the answer with far too many words in it"
			}
			done <- s.Score(context.Background(), scoring.Case{Output: out})
		}()
	}
	pass := 0
	for range 8 {
		if (<-done).Label == scoring.LabelPass {
			pass++
		}
	}
	assert.Equal(t, 4, pass)
}

// benchRules holds one rule of every type, for the benchmarks.
var benchRules = []Rule{
	{Type: RuleJSONValid}, {Type: RuleJSONSchema, Schema: map[string]any{"type": "object"}},
	{Type: RuleRegexMatch, Pattern: `\*[^\n*]+\*`, Min: testkit.Ptr(2)}, {Type: RuleRegexAbsent, Pattern: `(?i)lorem`},
	{Type: RuleContains, Value: "data", IgnoreCase: true, Min: testkit.Ptr(2)}, {Type: RuleExcludes, Value: "awful", WholeWord: true},
	{Type: RuleStartsWith, Value: "The"}, {Type: RuleEndsWith, Value: "done."}, {Type: RuleFirstWord, Value: "The", Paragraph: 2},
	{Type: RuleWords, Max: testkit.Ptr(400)}, {Type: RuleSentences, Min: testkit.Ptr(3)}, {Type: RuleParagraphs, Min: testkit.Ptr(2)},
	{Type: RuleCharacters, Max: testkit.Ptr(4000)}, {Type: RuleLowercase}, {Type: RuleUppercase},
	{Type: RuleLanguage, Value: "en"}, {Type: RuleNoPII}, {Type: RuleNoSecrets}, {Type: RuleNotRefusal},
}

// benchOutput is a 1,500-character answer of two paragraphs.
func benchOutput() string {
	para := "The *pipeline* reads the data, samples it and scores each answer against its rules. "
	return strings.Repeat(para, 6) + "\n\n" + strings.Repeat(para, 11) + "All done."
}

// BenchmarkChecks measures all rule types together over a 1,500-character
// answer, the cost the checks scorer adds to each sampled span.
func BenchmarkChecks(b *testing.B) {
	s, err := New(benchRules, scoring.Options{})
	require.NoError(b, err)
	c := scoring.Case{Output: benchOutput()}
	b.ReportAllocs()
	b.SetBytes(int64(len(c.Output)))
	for b.Loop() {
		s.Score(context.Background(), c)
	}
}

// BenchmarkCheckRule measures each rule type alone over the same answer.
func BenchmarkCheckRule(b *testing.B) {
	c := scoring.Case{Output: benchOutput()}
	for _, r := range benchRules {
		b.Run(r.Type, func(b *testing.B) {
			s, err := New([]Rule{r}, scoring.Options{})
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				s.Score(context.Background(), c)
			}
		})
	}
}
