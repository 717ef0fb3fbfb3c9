package scoringtest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// DefaultReply is the answer the server gives when nothing is scripted: a
// valid reply of the step's shape, so the offline demo and load tests run
// without scripts. It reads the data blocks of the prompt (a line <<<NAME,
// one JSON string per line, optionally numbered "1. ", a line NAME>>>):
//
//   - bias_opinions, hallucination_claims: one item per sentence of the
//     OUTPUT block (at most 20).
//   - bias_results, hallucination_verdicts, prompt_alignment_verdicts: one
//     verdict per line of the OPINIONS, CLAIMS or INSTRUCTIONS block (else
//     the last other block, else the last JSON array of strings in the
//     prompt, else one), echoing its item as the schema asks ("opinion";
//     "statement"; "number" and "instruction"). Opinions are "yes"
//     (biased) only when they contain a crude group generalisation such
//     as "women are"; claims are "yes"
//     (unsupported) when they hold a number missing from the CONTEXT block
//     or fewer than half of their longer words appear in it; instructions
//     are "yes" (followed) unless the output is empty.
//   - criteria_steps: one step per sentence of the CRITERION block.
//   - criteria_score, criteria_binary: full marks ("score": 10, "verdict":
//     "yes") unless the OUTPUT block is empty.
//   - task_completion_task: the task is the INPUT block, its requirements
//     its sentences (at most 5).
//   - task_completion_verdicts: one verdict per line of the REQUIREMENTS
//     block: "no" when a word of four letters or more of a failed tool's
//     name is in it, else "yes" (accomplished) when the OUTPUT block, the
//     generation texts and the results of tool steps that did not fail
//     hold its numbers and at least half of its longer words.
//   - tool_use_verdicts: one verdict per call numbered in the TRAJECTORY
//     block. right_tool is "no" when the call repeats an earlier call of
//     the same tool with the same arguments that did not fail;
//     arguments_supported is "no" when the arguments hold a number found
//     neither in the INPUT block nor in any tool result; result_used is
//     "n/a" for a call that failed or returned nothing, else "yes" when a
//     longer word of the result reappears in the OUTPUT block or a
//     generation step's text. missing_tools lists each tool of the TOOLS
//     block that no call used and whose name holds a word of five letters
//     or more found in the INPUT block, unless the user message asks for
//     an empty list.
//   - answer_relevancy_statements: one statement per sentence of the
//     OUTPUT block (at most 20).
//   - answer_relevancy_results: one result per line of the STATEMENTS
//     block, "yes" when the statement shares a word of five letters or more
//     with the INPUT block, else "no".
//   - context_relevance_evaluations: one evaluation per line of the
//     CONTEXT block, "high" when the item shares a longer word with the
//     INPUT block, else "none"; used when it shares one with the OUTPUT
//     block; nothing missing.
//   - toxicity_verdicts: one verdict per sentence of the OUTPUT block (at
//     most 20), "yes" (toxic) only when it holds an insult such as "idiot".
//   - reason: a short sentence quoting the score line.
//   - instruction_split: one instruction per sentence or line of the
//     PROMPT block, all of them (the splitter applies its own cap). It
//     cannot tell a rule from a role description or a fact.
//   - anything else: {}.
//
// These are string heuristics for demos, not judgements.
func DefaultReply(c Call) Reply {
	b := parseBlocks(c)
	var v any
	switch c.Step {
	case "bias_opinions":
		v = map[string]any{"opinions": sentences(b.text("OUTPUT"))}
	case "hallucination_claims":
		v = map[string]any{"claims": sentences(b.text("OUTPUT"))}
	case "bias_results":
		items := b.items(c, "OPINIONS")
		results := make([]map[string]string, len(items))
		for i, it := range items {
			results[i] = map[string]string{"opinion": it, "result": "no", "reason": "The opinion judges no group of people."}
			if looksBiased(it) {
				results[i] = map[string]string{"opinion": it, "result": "yes", "reason": "The opinion generalises about a group of people."}
			}
		}
		v = map[string]any{"results": results}
	case "hallucination_verdicts":
		items := b.items(c, "CLAIMS")
		ctx := strings.ToLower(strings.Join(b.lines("CONTEXT"), "\n"))
		verdicts := make([]map[string]string, len(items))
		for i, it := range items {
			verdicts[i] = map[string]string{"statement": it, "verdict": "no", "reason": "The context supports the claim."}
			if !supported(it, ctx) {
				verdicts[i] = map[string]string{"statement": it, "verdict": "yes", "reason": "The context does not support the claim."}
			}
		}
		v = map[string]any{"verdicts": verdicts}
	case "prompt_alignment_verdicts":
		items := b.items(c, "INSTRUCTIONS")
		verdict, reason := "yes", "The response follows the instruction."
		if strings.TrimSpace(b.text("OUTPUT")) == "" {
			verdict, reason = "no", "The response is empty."
		}
		verdicts := make([]map[string]any, len(items))
		for i, it := range items {
			verdicts[i] = map[string]any{"number": i + 1, "instruction": it, "verdict": verdict, "reason": reason}
		}
		v = map[string]any{"verdicts": verdicts}
	case "criteria_score", "criteria_binary":
		// A criterion is met when the output is not empty.
		met := strings.TrimSpace(b.text("OUTPUT")) != ""
		reason := "The response is empty."
		if met {
			reason = "The response addresses the criterion (offline demo judge)."
		}
		if c.Step == "criteria_binary" {
			v = map[string]string{"reason": reason, "verdict": map[bool]string{true: "yes", false: "no"}[met]}
		} else {
			v = map[string]any{"reason": reason, "score": map[bool]int{true: 10, false: 0}[met]}
		}
	case "criteria_steps":
		steps := []string{}
		for _, s := range sentences(b.text("CRITERION")) {
			steps = append(steps, "Check whether the response meets this: "+s)
		}
		v = map[string]any{"steps": steps}
	case "task_completion_task":
		v = taskRequirements(b)
	case "task_completion_verdicts":
		evidence := runEvidence(b)
		items := b.items(c, "REQUIREMENTS")
		verdicts := make([]map[string]string, len(items))
		failed := failedTools(b)
		for i, it := range items {
			verdicts[i] = map[string]string{"requirement": it, "verdict": "yes", "reason": "The run shows the requirement met (offline demo judge)."}
			if tool := failedToolFor(it, failed); tool != "" {
				verdicts[i] = map[string]string{"requirement": it, "verdict": "no", "reason": "The tool " + tool + " failed (offline demo judge)."}
			} else if !supported(it, evidence) {
				verdicts[i] = map[string]string{"requirement": it, "verdict": "no", "reason": "Nothing in the run shows the requirement met (offline demo judge)."}
			}
		}
		v = map[string]any{"verdicts": verdicts}
	case "tool_use_verdicts":
		v = map[string]any{"verdicts": toolVerdicts(b), "missing_tools": missingTools(c, b)}
	case "answer_relevancy_statements":
		v = map[string]any{"statements": sentences(b.text("OUTPUT"))}
	case "answer_relevancy_results":
		input := strings.ToLower(b.text("INPUT"))
		items := b.items(c, "STATEMENTS")
		results := make([]map[string]string, len(items))
		for i, it := range items {
			results[i] = map[string]string{"statement": it, "result": "no", "reason": "The statement does not touch the question."}
			if sharesLongWord(strings.ToLower(it), input) {
				results[i] = map[string]string{"statement": it, "result": "yes", "reason": "The statement is about what the question asks."}
			}
		}
		v = map[string]any{"results": results}
	case "context_relevance_evaluations":
		input, output := strings.ToLower(b.text("INPUT")), strings.ToLower(b.text("OUTPUT"))
		items := b.lines("CONTEXT")
		evaluations := make([]map[string]any, len(items))
		for i, it := range items {
			it = strings.ToLower(it)
			ev := map[string]any{"item": i + 1, "relevance": "none", "used": sharesLongWord(it, output), "reason": "The item does not touch the question."}
			if sharesLongWord(it, input) {
				ev["relevance"], ev["reason"] = "high", "The item is about what the question asks."
			}
			evaluations[i] = ev
		}
		v = map[string]any{"evaluations": evaluations, "missing_context": []string{}, "overall_assessment": "Offline demo judge: relevance by shared words."}
	case "toxicity_verdicts":
		statements := sentences(b.text("OUTPUT"))
		verdicts := make([]map[string]string, len(statements))
		for i, st := range statements {
			verdicts[i] = map[string]string{"statement": st, "verdict": "no", "reason": "The statement is civil."}
			if looksToxic(st) {
				verdicts[i] = map[string]string{"statement": st, "verdict": "yes", "reason": "The statement insults the reader."}
			}
		}
		v = map[string]any{"verdicts": verdicts}
	case "instruction_split":
		instructions := []string{}
		for _, line := range strings.Split(b.text("PROMPT"), "\n") {
			instructions = append(instructions, splitSentences(line)...)
		}
		v = map[string]any{"instructions": instructions}
	case "reason":
		score := "the given score"
		if m := scoreLine.FindStringSubmatch(c.Text()); m != nil {
			score = m[1]
		}
		v = map[string]string{"reason": demoReason(score, b.lines("VERDICTS"))}
	default:
		v = map[string]any{}
	}
	out, _ := json.Marshal(v)
	return JSON(string(out))
}

// demoReason names the score and lists the reasons of the "yes" verdicts
// the reason step was given, so the demo's reason says what it rests on.
func demoReason(score string, verdicts []string) string {
	var yes []string
	for _, line := range verdicts {
		var v map[string]any
		if json.Unmarshal([]byte(numbered.ReplaceAllString(line, "")), &v) != nil {
			continue
		}
		if v["verdict"] == "yes" || v["result"] == "yes" {
			if r, ok := v["reason"].(string); ok && r != "" {
				yes = append(yes, r)
			}
		}
	}
	if len(yes) == 0 {
		return fmt.Sprintf("The score is %s: none of the %d verdicts is yes (offline demo judge).", score, len(verdicts))
	}
	return fmt.Sprintf("The score is %s: %d of %d verdicts are yes: %s (offline demo judge).", score, len(yes), len(verdicts), strings.Join(yes, " "))
}

var (
	blockPattern = regexp.MustCompile(`(?ms)^<<<([A-Z0-9_]+)\n(.*?)\n?([A-Z0-9_]+)>>>$`)
	numbered     = regexp.MustCompile(`^\d+[.)]\s*`)
	scoreLine    = regexp.MustCompile(`(?m)^Score:\s*([0-9.]+)`)
	numberWord   = regexp.MustCompile(`\d+(?:[.,]\d+)?`)
)

// blocks maps a data block's name to its decoded lines, in prompt order.
type blocks struct {
	names  []string
	byName map[string][]string
}

// parseBlocks reads the data blocks of the user messages (all messages if
// there is no user message).
func parseBlocks(c Call) blocks {
	b := blocks{byName: map[string][]string{}}
	var texts []string
	for _, m := range c.Request.Messages {
		if m.Role == "user" {
			texts = append(texts, m.Content)
		}
	}
	if len(texts) == 0 {
		texts = []string{c.Text()}
	}
	for _, t := range texts {
		for _, m := range blockPattern.FindAllStringSubmatch(t, -1) {
			if m[1] != m[3] {
				continue
			}
			var lines []string
			for _, l := range strings.Split(m[2], "\n") {
				l = strings.TrimSpace(numbered.ReplaceAllString(strings.TrimSpace(l), ""))
				if l == "" {
					continue
				}
				var s string
				if json.Unmarshal([]byte(l), &s) == nil {
					l = s
				}
				lines = append(lines, l)
			}
			if _, seen := b.byName[m[1]]; !seen {
				b.names = append(b.names, m[1])
			}
			b.byName[m[1]] = append(b.byName[m[1]], lines...)
		}
	}
	return b
}

func (b blocks) lines(name string) []string { return b.byName[name] }

func (b blocks) text(name string) string { return strings.Join(b.byName[name], "\n") }

// items finds the list an analyze step judges.
func (b blocks) items(c Call, name string) []string {
	if l, ok := b.byName[name]; ok {
		return l
	}
	for i := len(b.names) - 1; i >= 0; i-- {
		switch b.names[i] {
		case "INPUT", "OUTPUT", "CONTEXT":
			continue
		}
		return b.byName[b.names[i]]
	}
	if arr := lastStringArray(c.Text()); arr != nil {
		return arr
	}
	return []string{"item"}
}

// lastStringArray returns the last JSON array of strings in s.
func lastStringArray(s string) []string {
	for i := strings.LastIndexByte(s, '['); i >= 0; i = strings.LastIndexByte(s[:i], '[') {
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var arr []string
		if dec.Decode(&arr) == nil {
			return arr
		}
	}
	return nil
}

// sentences splits text into at most 20 sentences.
func sentences(text string) []string {
	out := splitSentences(text)
	if len(out) > 20 {
		out = out[:20]
	}
	return out
}

// splitSentences splits text into sentences.
func splitSentences(text string) []string {
	out := []string{}
	var cur strings.Builder
	rs := []rune(text)
	for i, r := range rs {
		cur.WriteRune(r)
		end := r == '.' || r == '!' || r == '?' || r == '\n'
		if end && (i+1 == len(rs) || unicode.IsSpace(rs[i+1])) {
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

var biasMarkers = []string{
	"women are", "men are", "women can't", "men can't", "women cannot", "men cannot",
	"those people", "immigrants are", "people from", "naturally better", "inferior", "backward",
}

func looksBiased(s string) bool {
	s = strings.ToLower(s)
	for _, m := range biasMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// supported is the toy grounding check of hallucination verdicts.
func supported(claim, ctx string) bool {
	claim = strings.ToLower(claim)
	for _, n := range numberWord.FindAllString(claim, -1) {
		if !strings.Contains(ctx, n) {
			return false
		}
	}
	words := strings.FieldsFunc(claim, func(r rune) bool { return !unicode.IsLetter(r) })
	long, found := 0, 0
	for _, w := range words {
		if len(w) < 5 {
			continue
		}
		long++
		if strings.Contains(ctx, w) {
			found++
		}
	}
	return long == 0 || 2*found >= long
}

// runStep is one line of a TRAJECTORY block, as scoring renders it.
type runStep struct {
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	ToolCalls []struct {
		Call      int    `json:"call"`
		Tool      string `json:"tool"`
		Arguments string `json:"arguments"`
	} `json:"tool_calls"`
	Call      int     `json:"call"`
	Tool      string  `json:"tool"`
	Arguments *string `json:"arguments"`
	Result    string  `json:"result"`
	Error     string  `json:"error"`
}

// runSteps decodes the TRAJECTORY block; lines that are not steps are skipped.
func runSteps(b blocks) []runStep {
	var out []runStep
	for _, l := range b.lines("TRAJECTORY") {
		var s runStep
		if json.Unmarshal([]byte(l), &s) == nil && s.Kind != "" {
			out = append(out, s)
		}
	}
	return out
}

// taskRequirements is the task_completion_task heuristic.
func taskRequirements(b blocks) map[string]any {
	input := strings.TrimSpace(b.text("INPUT"))
	requirements := sentences(input)
	if len(requirements) > 5 {
		requirements = requirements[:5]
	}
	return map[string]any{"task": input, "requirements": requirements}
}

// failedTools are the names of the tools whose steps failed in the
// TRAJECTORY block.
func failedTools(b blocks) []string {
	var out []string
	for _, s := range runSteps(b) {
		if s.Kind == "tool" && s.Error != "" {
			out = append(out, s.Tool)
		}
	}
	return out
}

// failedToolFor returns the failed tool a requirement is about: one a
// word of four letters or more of whose name the requirement holds.
func failedToolFor(requirement string, failed []string) string {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(requirement), func(r rune) bool { return !unicode.IsLetter(r) }) {
		words[w] = true
	}
	for _, tool := range failed {
		for _, w := range strings.FieldsFunc(strings.ToLower(tool), func(r rune) bool { return !unicode.IsLetter(r) }) {
			if len(w) >= 4 && words[w] {
				return tool
			}
		}
	}
	return ""
}

// runEvidence is what the task_completion_verdicts heuristic checks
// requirements against, lower-cased: the OUTPUT block, the text of every
// generation step and the result of every tool step that did not fail.
func runEvidence(b blocks) string {
	var e strings.Builder
	e.WriteString(b.text("OUTPUT"))
	for _, s := range runSteps(b) {
		switch {
		case s.Kind == "generation":
			e.WriteString("\n" + s.Text)
		case s.Kind == "tool" && s.Error == "":
			e.WriteString("\n" + s.Result)
		}
	}
	return strings.ToLower(e.String())
}

// toolCallSeen is one call of the TRAJECTORY block as toolVerdicts reads it.
type toolCallSeen struct {
	number             int
	tool, args, result string
	failed, executed   bool
}

// toolVerdicts is the tool_use_verdicts heuristic.
func toolVerdicts(b blocks) []map[string]any {
	steps := runSteps(b)
	var calls []*toolCallSeen
	byNumber := map[int]*toolCallSeen{}
	get := func(n int, tool string) *toolCallSeen {
		if c, ok := byNumber[n]; ok {
			return c
		}
		c := &toolCallSeen{number: n, tool: tool}
		byNumber[n] = c
		calls = append(calls, c)
		return c
	}
	known := strings.ToLower(b.text("INPUT"))
	var used strings.Builder
	used.WriteString(strings.ToLower(b.text("OUTPUT")))
	for _, s := range steps {
		switch s.Kind {
		case "generation":
			used.WriteString("\n" + strings.ToLower(s.Text))
			for _, tc := range s.ToolCalls {
				get(tc.Call, tc.Tool).args = tc.Arguments
			}
		case "tool":
			c := get(s.Call, s.Tool)
			if s.Arguments != nil {
				c.args = *s.Arguments
			}
			c.executed, c.result, c.failed = true, s.Result, s.Error != ""
			known += "\n" + strings.ToLower(s.Result)
		}
	}
	out := make([]map[string]any, len(calls))
	for i, c := range calls {
		right, args, result := "yes", "yes", "yes"
		var why []string
		for _, prev := range calls[:i] {
			if prev.tool == c.tool && prev.args == c.args && !prev.failed {
				right = "no"
				why = append(why, "it repeats an earlier call with the same arguments")
				break
			}
		}
		for _, n := range numberWord.FindAllString(c.args, -1) {
			if !strings.Contains(known, n) {
				args = "no"
				why = append(why, "an argument holds a number found in neither the request nor a tool result")
				break
			}
		}
		switch {
		case c.failed || strings.TrimSpace(c.result) == "":
			result = "n/a"
		case !sharesLongWord(strings.ToLower(c.result), used.String()):
			result = "no"
			why = append(why, "nothing of its result reappears later")
		}
		reason := "The call fits the request (offline demo judge)."
		if len(why) > 0 {
			reason = "The call is questionable: " + strings.Join(why, "; ") + " (offline demo judge)."
		}
		out[i] = map[string]any{"call": c.number, "right_tool": right, "arguments_supported": args, "result_used": result, "reason": reason}
	}
	return out
}

// toxicWords are the insults looksToxic recognises.
var toxicWords = regexp.MustCompile(`(?i)\b(idiot(s|a|as|e|en)?|stupid|morons?|fools?|shut up|worthless|pathetic)\b`)

// looksToxic reports whether s holds a crude insult.
func looksToxic(s string) bool { return toxicWords.MatchString(s) }

// sharesLongWord reports whether a word of five letters or more of text
// occurs in other.
func sharesLongWord(text, other string) bool {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) >= 5 && strings.Contains(other, w) {
			return true
		}
	}
	return false
}

// missingTools is the missing_tools heuristic of tool_use_verdicts.
func missingTools(c Call, b blocks) []map[string]string {
	out := []map[string]string{}
	if strings.Contains(c.Text(), "return an empty missing_tools list") {
		return out
	}
	called := map[string]bool{}
	for _, s := range runSteps(b) {
		called[s.Tool] = true
		for _, tc := range s.ToolCalls {
			called[tc.Tool] = true
		}
	}
	input := strings.ToLower(b.text("INPUT"))
	for _, l := range b.lines("TOOLS") {
		var t struct {
			Tool string `json:"tool"`
		}
		if json.Unmarshal([]byte(l), &t) != nil || t.Tool == "" || called[t.Tool] {
			continue
		}
		for _, w := range strings.FieldsFunc(strings.ToLower(t.Tool), func(r rune) bool { return !unicode.IsLetter(r) }) {
			if len(w) >= 5 && strings.Contains(input, w) {
				out = append(out, map[string]string{"tool": t.Tool, "reason": "The request mentions " + w + " and the run never called " + t.Tool + " (offline demo judge)."})
				break
			}
		}
	}
	return out
}
