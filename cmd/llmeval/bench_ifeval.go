package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/llm-eval/llm_eval/scoring/checks"
)

// ifevalRules translates one IFEval instruction (its id and kwargs) into
// checks rules that together decide whether it was followed. An instruction
// it cannot express returns an error saying why; bench counts and lists
// those instead of guessing.
func ifevalRules(id string, kw map[string]any) ([]checks.Rule, error) {
	num := func(key string) (int, error) {
		v, ok := kw[key].(float64)
		if !ok || v != float64(int(v)) {
			return 0, fmt.Errorf("kwarg %s: want an integer, got %v", key, kw[key])
		}
		return int(v), nil
	}
	str := func(key string) (string, error) {
		v, ok := kw[key].(string)
		if !ok || v == "" {
			return "", fmt.Errorf("kwarg %s: want a string, got %v", key, kw[key])
		}
		return v, nil
	}
	// relation turns IFEval's "less than N" / "at least N" into min/max.
	relation := func(rule checks.Rule, relKey, numKey string) (checks.Rule, error) {
		n, err := num(numKey)
		if err != nil {
			return rule, err
		}
		rel, err := str(relKey)
		if err != nil {
			return rule, err
		}
		switch rel {
		case "less than":
			rule.Max = ptrInt(n - 1)
		case "at least":
			rule.Min = ptrInt(n)
		default:
			return rule, fmt.Errorf("kwarg %s: unknown relation %q", relKey, rel)
		}
		return rule, nil
	}
	one := func(r checks.Rule, err error) ([]checks.Rule, error) {
		if err != nil {
			return nil, err
		}
		return []checks.Rule{r}, nil
	}
	exactly := func(n int) (*int, *int) { return ptrInt(n), ptrInt(n) }

	switch id {
	case "punctuation:no_comma":
		return one(checks.Rule{Type: checks.RuleExcludes, Value: ","}, nil)
	case "length_constraints:number_words":
		return one(relation(checks.Rule{Type: checks.RuleWords}, "relation", "num_words"))
	case "length_constraints:number_sentences":
		return one(relation(checks.Rule{Type: checks.RuleSentences}, "relation", "num_sentences"))
	case "length_constraints:number_paragraphs":
		n, err := num("num_paragraphs")
		r := checks.Rule{Type: checks.RuleParagraphs, Separator: "***"}
		r.Min, r.Max = exactly(n)
		return one(r, err)
	case "length_constraints:nth_paragraph_first_word":
		n, err := num("num_paragraphs")
		if err != nil {
			return nil, err
		}
		nth, err := num("nth_paragraph")
		if err != nil {
			return nil, err
		}
		word, err := str("first_word")
		if err != nil {
			return nil, err
		}
		count := checks.Rule{Type: checks.RuleParagraphs}
		count.Min, count.Max = exactly(n)
		return []checks.Rule{count,
			{Type: checks.RuleFirstWord, Value: word, Paragraph: nth, IgnoreCase: true}}, nil
	case "detectable_format:number_highlighted_sections":
		n, err := num("num_highlights")
		// *text* or **text** with something other than space inside.
		return one(checks.Rule{Type: checks.RuleRegexMatch,
			Pattern: `\*\*[^\n*]*[^\s*][^\n*]*\*\*|\*[^\n*]*[^\s*][^\n*]*\*`, Min: ptrInt(n)}, err)
	case "detectable_format:number_bullet_lists":
		n, err := num("num_bullets")
		r := checks.Rule{Type: checks.RuleRegexMatch, Pattern: `(?m)^\s*(?:\*[^*]|-).*$`}
		r.Min, r.Max = exactly(n)
		return one(r, err)
	case "detectable_format:title":
		return one(checks.Rule{Type: checks.RuleRegexMatch, Pattern: `<<[^\n]*[^\s<>][^\n]*>>`}, nil)
	case "detectable_format:json_format":
		return one(checks.Rule{Type: checks.RuleJSONValid, AllowCodeFence: true}, nil)
	case "detectable_format:constrained_response":
		return one(checks.Rule{Type: checks.RuleRegexMatch, Pattern: `My answer is (?:yes|no|maybe)\.`}, nil)
	case "detectable_format:multiple_sections":
		n, err := num("num_sections")
		if err != nil {
			return nil, err
		}
		marker, err := str("section_spliter")
		return one(checks.Rule{Type: checks.RuleRegexMatch,
			Pattern: `\s?` + regexp.QuoteMeta(marker) + `\s?\d+\s?`, Min: ptrInt(n)}, err)
	case "detectable_content:number_placeholders":
		n, err := num("num_placeholders")
		return one(checks.Rule{Type: checks.RuleRegexMatch, Pattern: `\[[^\]\n]*\]`, Min: ptrInt(n)}, err)
	case "detectable_content:postscript":
		marker, err := str("postscript_marker")
		if err != nil {
			return nil, err
		}
		pattern := regexp.QuoteMeta(strings.TrimSpace(marker))
		switch strings.ToUpper(strings.TrimSpace(marker)) {
		case "P.S.":
			pattern = `p\.\s?s\.`
		case "P.P.S", "P.P.S.":
			pattern = `p\.\s?p\.\s?s`
		}
		return one(checks.Rule{Type: checks.RuleRegexMatch, Pattern: pattern, IgnoreCase: true}, nil)
	case "keywords:existence":
		list, ok := kw["keywords"].([]any)
		if !ok || len(list) == 0 {
			return nil, fmt.Errorf("kwarg keywords: want a list, got %v", kw["keywords"])
		}
		var rules []checks.Rule
		for _, k := range list {
			s, ok := k.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("kwarg keywords: want strings, got %v", k)
			}
			rules = append(rules, checks.Rule{Type: checks.RuleContains, Value: s, IgnoreCase: true})
		}
		return rules, nil
	case "keywords:forbidden_words":
		list, ok := kw["forbidden_words"].([]any)
		if !ok || len(list) == 0 {
			return nil, fmt.Errorf("kwarg forbidden_words: want a list, got %v", kw["forbidden_words"])
		}
		var rules []checks.Rule
		for _, k := range list {
			s, ok := k.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("kwarg forbidden_words: want strings, got %v", k)
			}
			rules = append(rules, checks.Rule{Type: checks.RuleExcludes, Value: s, IgnoreCase: true, WholeWord: true})
		}
		return rules, nil
	case "keywords:frequency":
		word, err := str("keyword")
		if err != nil {
			return nil, err
		}
		return one(relation(checks.Rule{Type: checks.RuleContains, Value: word, IgnoreCase: true}, "relation", "frequency"))
	case "keywords:letter_frequency":
		letter, err := str("letter")
		if err != nil {
			return nil, err
		}
		return one(relation(checks.Rule{Type: checks.RuleContains, Value: letter, IgnoreCase: true}, "let_relation", "let_frequency"))
	case "language:response_language":
		code, err := str("language")
		return one(checks.Rule{Type: checks.RuleLanguage, Value: code}, err)
	case "change_case:english_capital":
		return []checks.Rule{{Type: checks.RuleUppercase}, {Type: checks.RuleLanguage, Value: "en"}}, nil
	case "change_case:english_lowercase":
		return []checks.Rule{{Type: checks.RuleLowercase}, {Type: checks.RuleLanguage, Value: "en"}}, nil
	case "change_case:capital_word_frequency":
		// Words written wholly in capitals (two letters or more, or "I").
		return one(relation(checks.Rule{Type: checks.RuleRegexMatch,
			Pattern: `\b\p{Lu}[\p{Lu}\d]*\b`}, "capital_relation", "capital_frequency"))
	case "startend:end_checker":
		phrase, err := str("end_phrase")
		return one(checks.Rule{Type: checks.RuleEndsWith, Value: phrase, IgnoreCase: true}, err)
	case "startend:quotation":
		return one(checks.Rule{Type: checks.RuleRegexMatch, Pattern: `^\s*"(?s:.*)"\s*$`}, nil)
	case "combination:repeat_prompt":
		text, err := str("prompt_to_repeat")
		return one(checks.Rule{Type: checks.RuleStartsWith, Value: text, IgnoreCase: true}, err)
	case "combination:two_responses":
		// Two non-empty parts split by six asterisks. IFEval also wants the
		// two to differ; no rule compares parts, and on this data no labelled
		// response repeats itself, so that half is not checked.
		r := checks.Rule{Type: checks.RuleParagraphs, Separator: "******"}
		r.Min, r.Max = exactly(2)
		return one(r, nil)
	}
	return nil, fmt.Errorf("no checks rule for instruction %s", id)
}

func ptrInt(n int) *int { return &n }
