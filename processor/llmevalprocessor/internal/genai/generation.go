// Package genai recognises LLM generation spans of the known trace
// conventions and reads what was asked and answered from them.
//
// Classify runs on every span and only looks at a handful of attribute
// keys. Read runs on selected generation spans and understands the current
// GenAI semantic conventions (attributes, JSON strings or structured
// values), the legacy span events, OpenInference, OpenLLMetry and the
// Vercel AI SDK. ReadContext reads the documents and tool results of
// retrieval, tool and memory spans (KindContext), IsAgent and ReadAgent
// pick and read agent spans for agent-level evaluation, and ReadStep reads
// a span as one step of the agent run above it (a model call with its tool
// calls, a tool execution with its result or error, a nested agent), from
// which the processor assembles the run's trajectory. Reading is
// lenient: truncated JSON is read as far as it goes, non-JSON text is taken
// as raw text, and every text field is bounded.
package genai

// Kind is what a span is to the evaluator.
type Kind int

// Kinds of span.
const (
	KindOther      Kind = iota // not an LLM span: passes through
	KindGeneration             // one LLM call: scored
	KindAggregate              // agent/workflow span repeating a child's content: not scored
	KindJudge                  // a span of the judge's own calls: never scored
	KindContext                // retrieval, tool or memory span: its results are context for the trace
)

// Generation is what one generation span says.
//
// Output is the text of the first choice (lowest choice index). Reasoning
// parts, tool calls and binary parts (blob, file, uri, image, audio) are not
// part of it; a refusal is kept as text because it is what the user was told.
type Generation struct {
	Convention   string // gen_ai, gen_ai_events, openinference, openllmetry, vercel
	Input        string // last user turn
	Conversation string // the whole input conversation as text, one "role: text" line per turn
	// History holds the turns before the last user turn (Input), oldest
	// first, at most the last MaxHistoryTurns: what a follow-up request
	// ("Yes, go ahead") answers. System and tool messages are not turns
	// (what a tool returned reaches the conversation through the
	// assistant's reply); an assistant's tool calls are.
	History            []Turn
	Output             string   // text of the first choice
	ToolResults        []string // tool results in the call's own input (tool messages)
	Documents          []string // retrieved documents and tool results recorded on the span itself
	SystemInstructions []string // separate instructions and system/developer messages, de-duplicated
	Model              string   // request model, else response model
	ResponseID         string   // gen_ai.response.id or ai.response.id
	// Missing is set when the span has no usable content (absent,
	// redacted, only tool calls, or no text where text belongs): the span
	// is not scorable.
	Missing string
	// Malformed names the message attribute that is not the JSON its
	// convention defines, or holds a value of another type than text, for
	// counting (indexes written N); Missing then says so.
	Malformed string
}

// Turn is one message of the conversation before the request: whose it
// is and its text, tool calls shown by name and arguments.
type Turn struct {
	Role    string // RoleUser or RoleAssistant
	Content string
}

// Roles of a Turn.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// MaxHistoryTurns bounds Generation.History: the scorers judge at most
// the last ten turns by default (scoring.DefaultHistoryTurns).
const MaxHistoryTurns = 10

// Context is what the span itself holds that an answer can be grounded in:
// its tool messages, then the documents recorded on it.
func (g Generation) Context() []string {
	if len(g.Documents) == 0 {
		return g.ToolResults
	}
	return appendUnique(append([]string(nil), g.ToolResults...), g.Documents...)
}
