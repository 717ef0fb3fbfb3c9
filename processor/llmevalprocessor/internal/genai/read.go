package genai

import (
	"slices"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/scoring"
)

// Convention names reported in Generation.Convention.
const (
	ConventionGenAI         = "gen_ai"
	ConventionGenAIEvents   = "gen_ai_events"
	ConventionOpenInference = "openinference"
	ConventionOpenLLMetry   = "openllmetry"
	ConventionVercel        = "vercel"
)

// Reasons put in Generation.Missing.
const (
	MissingOutput    = "no output content"
	MissingRedacted  = "content redacted"
	MissingToolCalls = "tool calls only"
	MissingFiltered  = "content filtered"
	// MissingMalformedPrefix starts the reason of a span whose message
	// attribute is not the JSON its convention defines; the attribute's
	// name follows ("malformed gen_ai.output.messages").
	MissingMalformedPrefix = "malformed "
	// MissingUnreadable reports a bug in the reader that was recovered from.
	MissingUnreadable = "unreadable span"
)

// extraction is what one convention found on a span.
type extraction struct {
	convention string
	input      []message
	output     []message
	system     []string
	hasInput   bool // the convention's input attributes are present, even if empty
	hasOutput  bool
	// malformed names the attribute whose JSON could not be read: the
	// call is not scorable rather than judged on its raw text.
	malformed string
	// inAttr and outAttr name the attribute (or event) each side was read
	// from; inIssue and outIssue say what it holds instead of text, when
	// the attribute itself is none ("is a number, not text", "is empty").
	inAttr, outAttr   string
	inIssue, outIssue string
}

// readInput adds the input messages of the content attribute name, JSON
// messages or plain text (readMessageAttr); the first attribute read
// names the side.
func (x *extraction) readInput(v pcommon.Value, name string) {
	x.readSide(v, name, "user", &x.hasInput, &x.inAttr, &x.inIssue, &x.input)
}

// readOutput is readInput for the output side; a string cut short is kept
// as far as it goes.
func (x *extraction) readOutput(v pcommon.Value, name string) {
	x.readSide(v, name, "assistant", &x.hasOutput, &x.outAttr, &x.outIssue, &x.output)
}

func (x *extraction) readSide(v pcommon.Value, name, role string, has *bool, attr, issue *string, msgs *[]message) {
	read, why, bad := readMessageAttr(v, role, role == "assistant")
	if !*has {
		*has, *attr, *issue = true, name, why
	}
	*msgs = appendMessages(*msgs, read)
	if bad {
		x.malformed = name
	}
}

// Read extracts the generation from a span Classify called KindGeneration.
// When several conventions are present, input and output are each taken from
// the first that has them, in this order: current gen_ai attributes, span
// events, OpenInference messages, OpenLLMetry indexed attributes, Vercel AI
// SDK, Mastra, Langfuse observations, Genkit model actions, raw OpenInference
// input.value/output.value.
// It never panics, whatever the attributes hold.
func Read(span ptrace.Span) Generation {
	g, _ := readGeneration(span, false)
	return g
}

// ReadWithStep is Read and ReadStep of a generation span in one pass over
// its messages, for a span that is both scored and a step of an agent run;
// ok is false when the span is no step (ReadStep).
func ReadWithStep(span ptrace.Span) (g Generation, st Step, ok bool) {
	g, step := readGeneration(span, !span.ParentSpanID().IsEmpty())
	if step == nil {
		return g, Step{}, false
	}
	return g, *step, true
}

// readGeneration reads a generation span and, with step, its step.
func readGeneration(span ptrace.Span, step bool) (g Generation, st *Step) {
	defer func() {
		if r := recover(); r != nil {
			// A bug here must not take the collector down: report the span unscorable.
			g, st = Generation{Missing: MissingUnreadable}, nil
		}
	}()
	attrs := span.Attributes()
	idx := collectIndexed(attrs)
	in, out, system := extract(span, idx)
	if step {
		s := generationStep(span, in, out)
		st = &s
	}
	g.fill(in, out, system)
	g.Documents = spanContext(attrs, idx)
	g.Model = firstAttr(attrs, "gen_ai.request.model", "gen_ai.response.model", "llm.model_name",
		"llm.request.model_name", "llm.response.model_name", "ai.model.id", "ai.response.model", attrLangfuseModel)
	if g.Model == "" {
		g.Model = mastraModel(attrs)
	}
	g.ResponseID = firstAttr(attrs, "gen_ai.response.id", "ai.response.id")
	g.clip()
	return g, st
}

// extract reads a generation span's input and output messages, each from
// the first convention that has them (in Read's order), and the system
// instructions of the conventions it looked at.
func extract(span ptrace.Span, idx *indexedAttrs) (in, out *extraction, system []string) {
	attrs := span.Attributes()
	candidates := []func() extraction{
		func() extraction { return readInvocationSystem(attrs) },
		func() extraction { return readSemconv(attrs, ConventionGenAI) },
		func() extraction { return readEvents(span.Events()) },
		func() extraction { return readOpenInference(idx) },
		func() extraction { return readOpenLLMetry(idx) },
		func() extraction { return readVercel(attrs) },
		func() extraction { return readMastra(attrs) },
		func() extraction { return readLangfuse(attrs) },
		func() extraction { return readGenkit(attrs) },
		func() extraction { return readRawIO(attrs) },
	}
	for _, read := range candidates {
		x := read()
		if !x.hasInput && !x.hasOutput && len(x.system) == 0 {
			continue
		}
		if in == nil && x.hasInput {
			in = &x
		}
		if out == nil && x.hasOutput {
			xo := x
			out = &xo
		}
		system = append(system, x.system...)
		if in != nil && out != nil {
			break
		}
	}
	return in, out, system
}

// fill sets the text fields from the chosen input and output.
func (g *Generation) fill(in, out *extraction, system []string) {
	switch {
	case out != nil:
		g.Convention = out.convention
	case in != nil:
		g.Convention = in.convention
	}
	g.SystemInstructions = appendUnique(nil, system...)
	if in != nil {
		var conv strings.Builder
		var turns []Turn
		request := -1 // the turn of Input
		for _, m := range in.input {
			text := m.text()
			if isSystemRole(m.role) {
				g.SystemInstructions = appendUnique(g.SystemInstructions, text)
			} else if isUserRole(m.role) && text != "" {
				g.Input = text
				request = len(turns)
			}
			for _, p := range m.parts {
				if p.kind == partToolResult && p.text != "" {
					g.ToolResults = appendUnique(g.ToolResults, p.text)
				}
			}
			if body := turnText(m); body != "" {
				role := turnRole(m)
				appendBounded(&conv, "\n", role+": "+body)
				if !isSystemRole(m.role) && m.role != "tool" {
					turns = append(turns, Turn{Role: speaker(m.role), Content: body})
				}
			}
		}
		g.Conversation = conv.String()
		if request > 0 {
			g.History = slices.Clone(turns[max(0, request-MaxHistoryTurns):request])
		}
	}
	g.Missing = missingReason(g.Input, out)
	if reason, counted := notTextReason(g.Missing, g.Input, in, out); reason != "" {
		g.Missing, g.Malformed = reason, counted
	}
	for _, x := range []*extraction{out, in} {
		if x != nil && x.malformed != "" {
			g.Malformed = x.malformed
			g.Missing = MissingMalformedPrefix + x.malformed
			break
		}
	}
	if out != nil {
		if first, ok := firstChoice(out.output); ok {
			g.Output = first.text()
		}
	}
}

// missingReason says why a span cannot be scored, or "" when it can.
func missingReason(input string, out *extraction) string {
	if strings.TrimSpace(input) == redacted {
		return MissingRedacted
	}
	if out == nil {
		return MissingOutput
	}
	first, ok := firstChoice(out.output)
	if !ok {
		return MissingOutput
	}
	text := strings.TrimSpace(first.text())
	switch {
	case strings.EqualFold(first.finishReason, "content_filter") && (text == "" || text == "FILTERED"):
		return MissingFiltered
	case text == redacted:
		return MissingRedacted
	case text != "":
		return ""
	case first.hasToolCalls() || isToolCallFinish(first.finishReason):
		return MissingToolCalls
	}
	return MissingOutput
}

// notTextReason says why a call is not scorable when the attribute of a
// side holds no text but something else: an output without text whose
// attribute, or first choice's content, is a number, a boolean, null,
// empty or JSON that is no message; or an input without a user turn's
// text whose attribute is such, or whose user turn's content is of such a
// type. An empty turn in a conversation that has other content is no
// reason. counted is the attribute for the content_malformed count.
func notTextReason(missing, input string, in, out *extraction) (reason, counted string) {
	if missing == MissingOutput && out != nil {
		first, _ := firstChoice(out.output)
		if reason, counted = sideIssue(out.outAttr, out.outIssue, first.parts, true); reason != "" {
			return reason, counted
		}
	}
	if missing != "" || input != "" || in == nil {
		return "", ""
	}
	var user []part
	for _, m := range in.input {
		if isUserRole(m.role) {
			user = append(user, m.parts...)
		}
	}
	return sideIssue(in.inAttr, in.inIssue, user, false)
}

func isToolCallFinish(reason string) bool {
	switch strings.ToLower(reason) {
	case "tool_call", "tool_calls", "tool-calls", "tool_use", "function_call":
		return true
	}
	return false
}

// firstChoice is the output message with the lowest choice index.
func firstChoice(ms []message) (message, bool) {
	if len(ms) == 0 {
		return message{}, false
	}
	best := 0
	for i := range ms {
		if ms[i].index < ms[best].index {
			best = i
		}
	}
	return ms[best], true
}

// turnText renders one input turn's text; tool calls are shown by name
// and arguments so the judge can follow the turn order.
func turnText(m message) string {
	var b strings.Builder
	for _, p := range m.parts {
		switch p.kind {
		case partText, partRefusal, partToolResult:
			appendBounded(&b, "\n", p.text)
		case partToolCall:
			appendBounded(&b, "\n", "[tool call "+p.text+"]")
		}
	}
	return b.String()
}

// speaker is whose a turn of History is: RoleAssistant, or RoleUser for
// the user and any custom role (as isUserRole).
func speaker(role string) string {
	if role == RoleAssistant {
		return role
	}
	return RoleUser
}

// turnRole is a turn's role, user when it has none.
func turnRole(m message) string {
	if m.role == "" {
		return "user"
	}
	return m.role
}

// appendUnique appends the non-empty values of add not already in dst,
// up to maxItems entries.
func appendUnique(dst []string, add ...string) []string {
	for _, s := range add {
		if t := strings.TrimSpace(s); t == "" || t == redacted || len(dst) >= maxItems {
			continue
		}
		dup := false
		for _, d := range dst {
			if d == s {
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, s)
		}
	}
	return dst
}

func firstAttr(attrs pcommon.Map, keys ...string) string {
	for _, k := range keys {
		if s := attrString(attrs, k); s != "" {
			return s
		}
	}
	return ""
}

// clip bounds every text field and makes it valid UTF-8. A text the
// scorers judge that was cut ends with scoring.TruncationMarker, as the
// trace context index marks its cut, so the judge is told and the result
// is truncated; only such a cut ends a text with the marker.
func (g *Generation) clip() {
	g.Input = clipText(g.Input)
	g.Conversation = clipText(g.Conversation)
	for i := range g.History {
		g.History[i].Content = clipText(g.History[i].Content)
	}
	g.Output = clipText(g.Output)
	g.Model = clip(g.Model)
	g.ResponseID = clip(g.ResponseID)
	for i := range g.ToolResults {
		g.ToolResults[i] = clipText(g.ToolResults[i])
	}
	for i := range g.Documents {
		g.Documents[i] = clipText(g.Documents[i])
	}
	for i := range g.SystemInstructions {
		g.SystemInstructions[i] = clipText(g.SystemInstructions[i])
	}
}

// clip bounds s to maxFieldBytes on a rune boundary and replaces invalid
// UTF-8. It leaves no mark: for names and ids, and for texts that are cut
// again, and marked, later (agent step texts, trace context documents).
func clip(s string) string {
	return validUTF8(cutRunes(s, maxFieldBytes))
}

// clipText is clip for a text the scorers judge. A text over
// maxFieldBytes is cut to leave room for scoring.TruncationMarker, which
// then ends it; markers the text wrote itself become "[...]". A text
// that was not cut and ends with the marker has its markers neutralised
// too, so that only this cut ends a text with it.
func clipText(s string) string {
	if len(s) > maxFieldBytes {
		body := validUTF8(cutRunes(s, maxFieldBytes-len(scoring.TruncationMarker)))
		return scoring.NeutralizeTruncationMarkers(body) + scoring.TruncationMarker
	}
	s = validUTF8(s)
	if strings.HasSuffix(s, scoring.TruncationMarker) {
		s = scoring.NeutralizeTruncationMarkers(s)
	}
	return s
}

// cutRunes cuts s to at most n bytes on a rune boundary.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func validUTF8(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}
