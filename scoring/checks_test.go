package scoring

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ruleCase is one output checked against one rule.
type ruleCase struct {
	name   string
	rule   CheckRule
	output string
	pass   bool
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewChecks([]CheckRule{tc.rule}, Options{})
			require.NoError(t, err)
			res := s.Score(context.Background(), Case{Output: tc.output})
			v := res.Steps.Analyze.(CheckVerdicts).Verdicts
			require.Len(t, v, 1)
			assert.Equal(t, tc.pass, v[0].Passed, "detail: %s", v[0].Detail)
			want := LabelFail
			if tc.pass {
				want = LabelPass
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
	sch := CheckRule{Type: RuleJSONSchema, Schema: schema}
	fenced := sch
	fenced.AllowCodeFence = true
	runRuleCases(t, []ruleCase{
		{"valid object", CheckRule{Type: RuleJSONValid}, ` {"a": [1, 2]} `, true},
		{"valid scalar", CheckRule{Type: RuleJSONValid}, `42`, true},
		{"trailing text", CheckRule{Type: RuleJSONValid}, `{"a": 1} and more`, false},
		{"two values", CheckRule{Type: RuleJSONValid}, `{} {}`, false},
		{"broken", CheckRule{Type: RuleJSONValid}, `{"a": }`, false},
		{"empty", CheckRule{Type: RuleJSONValid}, ``, false},
		{"fence refused by default", CheckRule{Type: RuleJSONValid}, "```json\n{}\n```", false},
		{"fence allowed", CheckRule{Type: RuleJSONValid, AllowCodeFence: true}, "```json\n{\"a\": 1}\n```", true},
		{"bare fence allowed", CheckRule{Type: RuleJSONValid, AllowCodeFence: true}, "```\n[1]\n```", true},
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
		{"number accepts integer", CheckRule{Type: RuleJSONSchema, Schema: map[string]any{"type": "number", "exclusiveMaximum": 10}}, `9`, true},
		{"exclusive maximum", CheckRule{Type: RuleJSONSchema, Schema: map[string]any{"type": "number", "exclusiveMaximum": 10}}, `10`, false},
		{"additional schema", CheckRule{Type: RuleJSONSchema, Schema: map[string]any{"additionalProperties": map[string]any{"type": "string"}}}, `{"a": 1}`, false},
	})
}

func TestCheckRegexAndContains(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"match once", CheckRule{Type: RuleRegexMatch, Pattern: `\d{3}`}, "code 123", true},
		{"no match", CheckRule{Type: RuleRegexMatch, Pattern: `\d{3}`}, "code 12", false},
		{"match at least 2", CheckRule{Type: RuleRegexMatch, Pattern: `\*[^*]+\*`, Min: ptr(2)}, "*a* and *b*", true},
		{"match fewer than min", CheckRule{Type: RuleRegexMatch, Pattern: `\*[^*]+\*`, Min: ptr(3)}, "*a* and *b*", false},
		{"match above max", CheckRule{Type: RuleRegexMatch, Pattern: `x`, Max: ptr(1)}, "xx", false},
		{"match max allows zero", CheckRule{Type: RuleRegexMatch, Pattern: `x`, Max: ptr(1)}, "none", true},
		{"match ignore case", CheckRule{Type: RuleRegexMatch, Pattern: `p\.s\.`, IgnoreCase: true}, "P.S. hi", true},
		{"absent ok", CheckRule{Type: RuleRegexAbsent, Pattern: `(?i)lorem`}, "text", true},
		{"absent found", CheckRule{Type: RuleRegexAbsent, Pattern: `lorem`}, "lorem ipsum", false},
		{"contains", CheckRule{Type: RuleContains, Value: "cat"}, "a cat", true},
		{"contains case", CheckRule{Type: RuleContains, Value: "Cat"}, "a cat", false},
		{"contains ignore case", CheckRule{Type: RuleContains, Value: "Cat", IgnoreCase: true}, "a CAT", true},
		{"contains counts", CheckRule{Type: RuleContains, Value: "la", Min: ptr(3)}, "la la la", true},
		{"contains too few", CheckRule{Type: RuleContains, Value: "la", Min: ptr(4)}, "la la la", false},
		{"contains exactly", CheckRule{Type: RuleContains, Value: "a", Min: ptr(2), Max: ptr(2)}, "banana", false},
		{"contains substring counts inside words", CheckRule{Type: RuleContains, Value: "cat", Min: ptr(2)}, "cat category", true},
		{"contains whole word", CheckRule{Type: RuleContains, Value: "cat", WholeWord: true, Min: ptr(2)}, "cat category", false},
		{"excludes ok", CheckRule{Type: RuleExcludes, Value: ","}, "no commas here", true},
		{"excludes found", CheckRule{Type: RuleExcludes, Value: ","}, "one, two", false},
		{"excludes whole word ignores part", CheckRule{Type: RuleExcludes, Value: "art", WholeWord: true, IgnoreCase: true}, "Party smart", true},
		{"excludes whole word found", CheckRule{Type: RuleExcludes, Value: "art", WholeWord: true, IgnoreCase: true}, "Modern ART.", false},
		{"excludes whole word unicode", CheckRule{Type: RuleExcludes, Value: "für", WholeWord: true}, "dafür", true},
	})
}

func TestCheckAffixesAndFirstWord(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"starts with", CheckRule{Type: RuleStartsWith, Value: "Write a poem"}, "  Write a poem about cats.", true},
		{"starts with case", CheckRule{Type: RuleStartsWith, Value: "write a poem"}, "Write a poem", false},
		{"starts with ignore case", CheckRule{Type: RuleStartsWith, Value: "write a poem", IgnoreCase: true}, "Write a poem", true},
		{"ends with", CheckRule{Type: RuleEndsWith, Value: "Is there anything else?"}, "Done. Is there anything else? \n", true},
		{"ends with inside quotes", CheckRule{Type: RuleEndsWith, Value: "the end.", IgnoreCase: true}, `"It was The End."`, true},
		{"ends with missing", CheckRule{Type: RuleEndsWith, Value: "Bye"}, "Bye now", false},
		{"first word", CheckRule{Type: RuleFirstWord, Value: "Dear"}, "\"Dear, friend\"", true},
		{"first word other", CheckRule{Type: RuleFirstWord, Value: "Dear"}, "Hello dear", false},
		{"first word of paragraph", CheckRule{Type: RuleFirstWord, Value: "summary", Paragraph: 2, IgnoreCase: true}, "Intro here.\n\nSummary: done.", true},
		{"first word paragraph missing", CheckRule{Type: RuleFirstWord, Value: "x", Paragraph: 3}, "one\n\ntwo", false},
		{"first word custom separator", CheckRule{Type: RuleFirstWord, Value: "b", Paragraph: 2, Separator: "***"}, "a\n***\nb c", true},
	})
}

func TestCheckCounts(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"words at least", CheckRule{Type: RuleWords, Min: ptr(3)}, "one two three", true},
		{"words too few", CheckRule{Type: RuleWords, Min: ptr(4)}, "one two three", false},
		{"words at most", CheckRule{Type: RuleWords, Max: ptr(2)}, "one two three", false},
		{"words apostrophe splits", CheckRule{Type: RuleWords, Min: ptr(2), Max: ptr(2)}, "don't", true},
		{"words unicode", CheckRule{Type: RuleWords, Min: ptr(3), Max: ptr(3)}, "größte Ausgaben für", true},
		{"sentences", CheckRule{Type: RuleSentences, Min: ptr(3), Max: ptr(3)}, "One. Two! Three?", true},
		{"sentences abbreviations", CheckRule{Type: RuleSentences, Max: ptr(1)}, "Dr. Smith met Mr. J. Doe, e.g. at 3.5 p.m. on Monday.", true},
		{"sentences no final stop", CheckRule{Type: RuleSentences, Min: ptr(2), Max: ptr(2)}, "First one. Second one", true},
		{"sentences ellipsis and quotes", CheckRule{Type: RuleSentences, Min: ptr(2), Max: ptr(2)}, `He said "stop." Then he left...`, true},
		{"sentences too many", CheckRule{Type: RuleSentences, Max: ptr(1)}, "Yes. No.", false},
		{"paragraphs blank lines", CheckRule{Type: RuleParagraphs, Min: ptr(3), Max: ptr(3)}, "a\n\nb\n \n c\n\n\n", true},
		{"paragraphs single newline is one", CheckRule{Type: RuleParagraphs, Max: ptr(1)}, "a\nb", true},
		{"paragraphs separator", CheckRule{Type: RuleParagraphs, Min: ptr(2), Max: ptr(2), Separator: "***"}, "a\n***\nb\n***\n", true},
		{"paragraphs separator too few", CheckRule{Type: RuleParagraphs, Min: ptr(3), Separator: "***"}, "a *** b", false},
		{"characters", CheckRule{Type: RuleCharacters, Max: ptr(5)}, "héllo", true},
		{"characters too many", CheckRule{Type: RuleCharacters, Max: ptr(4)}, "héllo", false},
		{"characters range", CheckRule{Type: RuleCharacters, Min: ptr(2), Max: ptr(3)}, "a", false},
	})
}

func TestCheckCase(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"lowercase", CheckRule{Type: RuleLowercase}, "all lower, 123!", true},
		{"lowercase capital", CheckRule{Type: RuleLowercase}, "all lower but I", false},
		{"lowercase no letters", CheckRule{Type: RuleLowercase}, "123 !", false},
		{"lowercase unicode", CheckRule{Type: RuleLowercase}, "ça va très bien", true},
		{"uppercase", CheckRule{Type: RuleUppercase}, "I'M LOUD, 2 TIMES!", true},
		{"uppercase with lower", CheckRule{Type: RuleUppercase}, "LOUD but not", false},
		{"uppercase unicode", CheckRule{Type: RuleUppercase}, "ÇA VA", true},
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
		{"language match", CheckRule{Type: RuleLanguage, Value: "de"}, "Das ist nicht gut und wir sind müde.", true},
		{"language mismatch", CheckRule{Type: RuleLanguage, Value: "de"}, "This is not good and we are tired.", false},
		{"language code case", CheckRule{Type: RuleLanguage, Value: "EN"}, "This is not good and we are tired.", true},
	})
}

func TestCheckSafety(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"no pii clean", CheckRule{Type: RuleNoPII}, "Call the front desk, version 1.2.3, order 2024-01-05.", true},
		{"pii email", CheckRule{Type: RuleNoPII}, "Write to ann@example.com", false},
		{"pii phone", CheckRule{Type: RuleNoPII}, "Call +44 20 7946 0958 today", false},
		{"pii card", CheckRule{Type: RuleNoPII}, "Card 4111 1111 1111 1111", false},
		{"no secrets clean", CheckRule{Type: RuleNoSecrets}, "Set OPENAI_API_KEY in your shell; never paste it here.", true},
		{"secret openai", CheckRule{Type: RuleNoSecrets}, "key: sk-proj-abcdefghijklmnopqrstuvwx1234", false},
		{"secret aws", CheckRule{Type: RuleNoSecrets}, "AKIAIOSFODNN7EXAMPLE", false},
		{"secret github", CheckRule{Type: RuleNoSecrets}, "ghp_" + strings.Repeat("a1B2", 9), false},
		{"secret private key", CheckRule{Type: RuleNoSecrets}, "-----BEGIN RSA PRIVATE KEY-----\nMIIE...", false},
		{"secret openssh key", CheckRule{Type: RuleNoSecrets}, "-----BEGIN OPENSSH PRIVATE KEY-----", false},
		{"public key is fine", CheckRule{Type: RuleNoSecrets}, "-----BEGIN PUBLIC KEY-----", true},
		{"secret jwt", CheckRule{Type: RuleNoSecrets}, "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", false},
		{"not refusal", CheckRule{Type: RuleNotRefusal}, "Here is the poem you asked for.", true},
		{"refusal cannot", CheckRule{Type: RuleNotRefusal}, "I can't help with that request.", false},
		{"refusal curly apostrophe", CheckRule{Type: RuleNotRefusal}, "I’m sorry, but I can’t assist with that.", false},
		{"refusal as an ai", CheckRule{Type: RuleNotRefusal}, "As an AI language model, I cannot browse the web.", false},
		{"refusal must decline", CheckRule{Type: RuleNotRefusal}, "I must decline to write that.", false},
		{"refusal deep in a long answer is a caveat", CheckRule{Type: RuleNotRefusal}, strings.Repeat("Useful text. ", 40) + "I cannot help with taxes.", true},
		{"cannot in ordinary prose", CheckRule{Type: RuleNotRefusal}, "Penguins cannot fly, but they swim well.", true},
	})
}

func TestCheckDetailNeverQuotesFindings(t *testing.T) {
	s, err := NewChecks([]CheckRule{{Type: RuleNoPII}, {Type: RuleNoSecrets}}, Options{})
	require.NoError(t, err)
	res := s.Score(context.Background(), Case{Output: "mail ann@example.com key sk-abcdefghijklmnopqrstuvwxyz"})
	for _, v := range res.Steps.Analyze.(CheckVerdicts).Verdicts {
		assert.NotContains(t, v.Detail, "ann@example.com")
		assert.NotContains(t, v.Detail, "sk-abc")
	}
	assert.NotContains(t, res.Reason, "ann@example.com")
	assert.NotContains(t, res.Reason, "sk-abc")
	assert.Contains(t, res.Reason, "email")
}

func TestChecksScoreIsShareOfRulesPassed(t *testing.T) {
	rules := []CheckRule{
		{Type: RuleContains, Value: "a"},
		{Type: RuleContains, Value: "b"},
		{Type: RuleContains, Value: "c"},
		{Type: RuleContains, Value: "d"},
	}
	tests := []struct {
		name   string
		opts   Options
		output string
		score  float64
		label  Label
	}{
		{"all pass", Options{}, "abcd", 1, LabelPass},
		{"default threshold needs all", Options{}, "abc", 0.75, LabelFail},
		{"lower threshold", Options{Threshold: ptr(0.5)}, "ab", 0.5, LabelPass},
		{"below threshold", Options{Threshold: ptr(0.5)}, "a", 0.25, LabelFail},
		{"scale", Options{Scale: 10, Threshold: ptr(7.0)}, "abc", 7.5, LabelPass},
		{"non-integer scale, all pass, exact", Options{Scale: 0.7}, "abcd", 0.7, LabelPass},
		{"strict", Options{StrictMode: true, Threshold: ptr(0.1)}, "abc", 0, LabelFail},
		{"strict all pass", Options{StrictMode: true}, "dcba", 1, LabelPass},
		// 3/4 × 0.7 is 0.5249999999999999 and 3/4 × 0.3 is
		// 0.22499999999999998 in floating point; rounded, both sit
		// exactly at the threshold and pass.
		{"rounded to two decimals, at threshold, scale 0.7", Options{Scale: 0.7, Threshold: ptr(0.53)}, "abc", 0.53, LabelPass},
		{"rounded to two decimals, at threshold, scale 0.3", Options{Scale: 0.3, Threshold: ptr(0.23)}, "abc", 0.23, LabelPass},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewChecks(rules, tc.opts)
			require.NoError(t, err)
			assert.Equal(t, Checks, s.Name())
			res := s.Score(context.Background(), Case{Output: tc.output})
			assert.Equal(t, tc.score, res.Score)
			assert.Equal(t, tc.label, res.Label)
			assert.Len(t, res.Steps.Analyze.(CheckVerdicts).Verdicts, 4)
			assert.Zero(t, res.Usage.LLMCalls)
			assert.Contains(t, res.Reason, "checks passed")
		})
	}
}

func TestNewChecksRejectsBadRules(t *testing.T) {
	tests := []struct {
		name  string
		rules []CheckRule
		opts  Options
		want  string
	}{
		{"no rules", nil, Options{}, "rules: the checks scorer needs at least one rule"},
		{"unknown type", []CheckRule{{Type: "json_valid"}, {Type: "spelling"}}, Options{}, `rules::1::type: unknown rule type "spelling"`},
		{"missing type", []CheckRule{{}}, Options{}, "rules::0::type: missing"},
		{"bad regexp", []CheckRule{{Type: RuleRegexMatch, Pattern: "a("}}, Options{}, "rules::0::pattern: error parsing regexp"},
		{"bad regexp absent", []CheckRule{{Type: RuleNoPII}, {Type: RuleNoSecrets}, {Type: RuleRegexAbsent, Pattern: "[z-a]"}}, Options{}, "rules::2::pattern: error parsing regexp"},
		{"empty-matching regexp", []CheckRule{{Type: RuleRegexMatch, Pattern: "x*"}}, Options{}, "rules::0::pattern: \"x*\" matches empty text"},
		{"missing pattern", []CheckRule{{Type: RuleRegexAbsent}}, Options{}, "rules::0::pattern: missing"},
		{"missing value", []CheckRule{{Type: RuleContains}}, Options{}, "rules::0::value: missing"},
		{"negative min", []CheckRule{{Type: RuleWords, Min: ptr(-1)}}, Options{}, "rules::0::min: must not be negative"},
		{"max below min", []CheckRule{{Type: RuleContains, Value: "a", Min: ptr(3), Max: ptr(2)}}, Options{}, "rules::0::max: 2 is below min 3"},
		{"count without bounds", []CheckRule{{Type: RuleSentences}}, Options{}, "rules::0::min: set min, max or both"},
		{"field not used", []CheckRule{{Type: RuleExcludes, Value: "x", Min: ptr(2)}}, Options{}, "rules::0::min: not used by rule type excludes"},
		{"pattern on contains", []CheckRule{{Type: RuleContains, Value: "x", Pattern: "y"}}, Options{}, "rules::0::pattern: not used by rule type contains"},
		{"unknown language", []CheckRule{{Type: RuleLanguage, Value: "xx"}}, Options{}, `rules::0::value: unsupported language "xx"`},
		{"first word two words", []CheckRule{{Type: RuleFirstWord, Value: "two words"}}, Options{}, "rules::0::value: want one word"},
		{"schema missing", []CheckRule{{Type: RuleJSONSchema}}, Options{}, "rules::0::schema: missing"},
		{"schema unknown keyword", []CheckRule{{Type: RuleJSONSchema, Schema: map[string]any{"oneOf": []any{}}}}, Options{}, "rules::0::schema: /oneOf: unsupported keyword"},
		{"schema unknown type", []CheckRule{{Type: RuleJSONSchema, Schema: map[string]any{"type": "text"}}}, Options{}, `rules::0::schema: /type: unknown type "text"`},
		{"schema nested bad pattern", []CheckRule{{Type: RuleJSONSchema, Schema: map[string]any{"properties": map[string]any{"a": map[string]any{"pattern": "("}}}}}, Options{}, "rules::0::schema: /properties/a/pattern: error parsing regexp"},
		{"schema bad required", []CheckRule{{Type: RuleJSONSchema, Schema: map[string]any{"required": "a"}}}, Options{}, "rules::0::schema: /required: want a list of property names"},
		{"schema bad minLength", []CheckRule{{Type: RuleJSONSchema, Schema: map[string]any{"minLength": -2}}}, Options{}, "rules::0::schema: /minLength: want a non-negative integer"},
		{"bad threshold", []CheckRule{{Type: RuleNoPII}}, Options{Threshold: ptr(2.0)}, "threshold: must be between 0 and the scale"},
		{"bad scale", []CheckRule{{Type: RuleNoPII}}, Options{Scale: -1}, "scale: must be a positive number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewChecks(tc.rules, tc.opts)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestChecksConcurrentUse(t *testing.T) {
	s, err := NewChecks([]CheckRule{{Type: RuleWords, Max: ptr(5)}, {Type: RuleNoSecrets}, {Type: RuleLanguage, Value: "en"}}, Options{})
	require.NoError(t, err)
	done := make(chan Result)
	for i := range 8 {
		go func() {
			out := "this is the answer"
			if i%2 == 1 {
				out = "this is the answer with far too many words in it"
			}
			done <- s.Score(context.Background(), Case{Output: out})
		}()
	}
	pass := 0
	for range 8 {
		if (<-done).Label == LabelPass {
			pass++
		}
	}
	assert.Equal(t, 4, pass)
}

// benchRules holds one rule of every type, for the benchmarks.
var benchRules = []CheckRule{
	{Type: RuleJSONValid}, {Type: RuleJSONSchema, Schema: map[string]any{"type": "object"}},
	{Type: RuleRegexMatch, Pattern: `\*[^\n*]+\*`, Min: ptr(2)}, {Type: RuleRegexAbsent, Pattern: `(?i)lorem`},
	{Type: RuleContains, Value: "data", IgnoreCase: true, Min: ptr(2)}, {Type: RuleExcludes, Value: "awful", WholeWord: true},
	{Type: RuleStartsWith, Value: "The"}, {Type: RuleEndsWith, Value: "done."}, {Type: RuleFirstWord, Value: "The", Paragraph: 2},
	{Type: RuleWords, Max: ptr(400)}, {Type: RuleSentences, Min: ptr(3)}, {Type: RuleParagraphs, Min: ptr(2)},
	{Type: RuleCharacters, Max: ptr(4000)}, {Type: RuleLowercase}, {Type: RuleUppercase},
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
	s, err := NewChecks(benchRules, Options{})
	require.NoError(b, err)
	c := Case{Output: benchOutput()}
	b.ReportAllocs()
	b.SetBytes(int64(len(c.Output)))
	for b.Loop() {
		s.Score(context.Background(), c)
	}
}

// BenchmarkCheckRule measures each rule type alone over the same answer.
func BenchmarkCheckRule(b *testing.B) {
	c := Case{Output: benchOutput()}
	for _, r := range benchRules {
		b.Run(r.Type, func(b *testing.B) {
			s, err := NewChecks([]CheckRule{r}, Options{})
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				s.Score(context.Background(), c)
			}
		})
	}
}
