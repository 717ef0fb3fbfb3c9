package scoring

import (
	"fmt"
	"slices"
	"strings"
)

// Case is one LLM generation, agent run or conversation to evaluate: what
// was asked, what the model answered, the context it was given, the
// instructions it had to follow, for an agent run the steps it took and,
// in a conversation, the messages that came before.
type Case struct {
	// Input is the user's request (in a conversation, its last user
	// message; the earlier ones are in Turns).
	Input string `json:"input"`
	// Output is the model's answer.
	Output string `json:"output"`
	// Context holds retrieved documents and tool results the answer should
	// be grounded in. The hallucination scorer needs it.
	Context []string `json:"context,omitempty"`
	// Instructions are the rules the answer must follow. The prompt
	// alignment scorer needs them; its verdict i is about instruction i,
	// and a blank instruction is skipped in its place. The role_adherence
	// scorer reads them, joined, as the assistant's system prompt: the
	// role it must keep over a conversation.
	Instructions []string `json:"instructions,omitempty"`
	// Trajectory holds an agent run's steps: its model calls, the tool
	// calls they asked for and the tool executions. The task_completion
	// and tool_use scorers and the checks scorer's trajectory rules need
	// it; nil for a single generation.
	Trajectory *Trajectory `json:"trajectory,omitempty"`
	// Turns are the messages of the conversation that came before Input,
	// oldest first; nil for a generation outside a conversation. The
	// conversation scorers judge the whole conversation (Conversation:
	// Turns, then Input and Output), so a case of a finished conversation
	// may hold every message in Turns and leave Input and Output empty.
	// Scorers of one turn that read history read the last of them
	// (Options.HistoryTurns) as the conversation so far: answer_relevancy
	// to understand what a follow-up question refers to, task_completion
	// to work out what a follow-up such as "Yes, go ahead" asks for, and
	// prompt_alignment to find the instructions the user gave. The others
	// ignore them.
	Turns []Turn `json:"turns,omitempty"`
	// Cut lists the fields (FieldInput, FieldOutput, FieldInstructions)
	// whose texts the caller already cut to a bound of its own, ending
	// each cut text with TruncationMarker (the processor cuts every text
	// it reads at 1 MiB). Such a trailing marker reaches the judge and
	// the result is truncated. In a field not listed, a marker a text
	// ends with is its own and is neutralised, so an answer cannot claim
	// a cut. A context item or a trajectory step text ending with the
	// marker is always taken as cut by the caller. A message of Turns says
	// so itself (Turn.Cut); the turns Conversation makes of Input and
	// Output are cut when their field is listed here.
	Cut []Field `json:"cut,omitempty"`
	// Metadata is carried through untouched; scorers never send it to the judge.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Field is a part of a Case: what a scorer sends to its judge, and what a
// criteria scorer shows it.
type Field string

// Fields.
const (
	FieldInput        Field = "input"
	FieldOutput       Field = "output"
	FieldContext      Field = "context"
	FieldInstructions Field = "instructions" // the system instructions
	FieldTurns        Field = "turns"        // the conversation's messages
)

// Turn is one message of a conversation: a user's message, an
// assistant's reply, or a mark standing for messages left out.
type Turn struct {
	Role TurnRole `json:"role"`
	// Content is the message's text. A turn with blank content carries
	// nothing to judge and is skipped, as a blank context item is.
	Content string `json:"content,omitempty"`
	// Count is the number of messages an omitted turn stands for.
	Count int `json:"count,omitempty"`
	// Cut is set when the caller already cut Content to a bound of its
	// own, ending it with TruncationMarker, as Case.Cut says of a field:
	// that trailing marker reaches the judge and the result is truncated.
	// A marker ending a message without Cut is its own and is neutralised.
	Cut bool `json:"cut,omitempty"`
}

// TurnRole says whose a Turn is.
type TurnRole string

// Turn roles. The system prompt is not a turn: it is the case's
// Instructions. Tool messages are not turns either: what a tool returned
// reaches the conversation through the assistant's reply.
const (
	RoleUser      TurnRole = "user"
	RoleAssistant TurnRole = "assistant"
	// RoleOmitted stands for Count messages left out at this point to keep
	// the conversation bounded. Whoever holds a conversation may insert it
	// when it dropped messages (the processor does when a session's bound
	// is hit); the scorers insert one when they cut a long conversation,
	// and the judge is told how many messages it does not see.
	RoleOmitted TurnRole = "omitted"
)

// Conversation returns the case's whole conversation: Turns, then Input as
// a user turn and Output as an assistant turn, each when it is not blank
// (and Cut when its field is in c.Cut).
// It returns Turns itself when there is nothing to add.
func (c Case) Conversation() []Turn {
	in, out := strings.TrimSpace(c.Input) != "", strings.TrimSpace(c.Output) != ""
	if !in && !out {
		return c.Turns
	}
	conv := make([]Turn, len(c.Turns), len(c.Turns)+2)
	copy(conv, c.Turns)
	if in {
		conv = append(conv, Turn{Role: RoleUser, Content: c.Input, Cut: slices.Contains(c.Cut, FieldInput)})
	}
	if out {
		conv = append(conv, Turn{Role: RoleAssistant, Content: c.Output, Cut: slices.Contains(c.Cut, FieldOutput)})
	}
	return conv
}

// TurnCount is the number of messages of turns, those omitted turns stand
// for included.
func TurnCount(turns []Turn) int {
	n := 0
	for _, t := range turns {
		if t.Role == RoleOmitted {
			n += t.Count
			continue
		}
		n++
	}
	return n
}

// ValidateTurns reports a turn of an unknown role and an omitted turn
// without a positive count.
func ValidateTurns(turns []Turn) error {
	for i, t := range turns {
		switch t.Role {
		case RoleUser, RoleAssistant:
		case RoleOmitted:
			if t.Count < 1 {
				return fmt.Errorf("turn %d: an omitted turn needs a positive count, got %d", i, t.Count)
			}
		default:
			return fmt.Errorf("turn %d: unknown role %q: want %q, %q or %q", i, t.Role, RoleUser, RoleAssistant, RoleOmitted)
		}
	}
	return nil
}

// Trajectory is what an agent did during one run, in order: the model calls
// it made, the tool calls each of them asked for, and the tool executions
// with their results or errors. The task_completion and tool_use scorers
// and the trajectory rules of the checks scorer read it; the other scorers
// ignore it.
//
// Every convention's tool shapes map onto two kinds of step: a generation
// step (an LLM call and the tool calls in its output) and a tool step (one
// execution of a tool). A tool step names the call it executes with CallID
// when the trace records one; without it, it is paired with the earliest
// unexecuted call of the same tool. Tool calls and executions seen only on
// one side (calls whose execution was not recorded, executions whose
// request was not) are kept as they are.
type Trajectory struct {
	Steps []Step `json:"steps"`
	// Tools are the tools the agent had during the run, when the trace
	// says so (gen_ai.tool.definitions, OpenInference llm.tools, the AI
	// SDK's ai.prompt.tools, a Mastra agent's tools); nil when unknown.
	// The tool_use scorer judges against them which tools the request
	// needed and the run never called.
	Tools []ToolDefinition `json:"tools,omitempty"`
}

// ToolDefinition is one tool an agent had: its name and, when recorded,
// what it does.
type ToolDefinition struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// StepKind says what a Step is.
type StepKind string

// Step kinds.
const (
	// StepGeneration is one LLM call of the agent: the text it wrote and
	// the tool calls it asked for.
	StepGeneration StepKind = "generation"
	// StepTool is one execution of a tool, with its result or error.
	StepTool StepKind = "tool"
	// StepOmitted stands for Count steps left out at this point to keep the
	// trajectory bounded. Whoever builds a trajectory may insert it; the
	// scorers insert one when they cut a long trajectory, and the judge is
	// told how many steps it does not see.
	StepOmitted StepKind = "omitted"
)

// Step is one step of a Trajectory. Which fields are used depends on Kind.
type Step struct {
	Kind StepKind `json:"kind"`

	// Output is the text a generation step wrote (empty when it only
	// called tools).
	Output string `json:"output,omitempty"`
	// ToolCalls are the calls a generation step asked for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`

	// Tool is the name of the tool a tool step executed.
	Tool string `json:"tool,omitempty"`
	// CallID is the id of the call a tool step executed, when known
	// (gen_ai.tool.call.id, ai.toolCall.id, ...).
	CallID string `json:"call_id,omitempty"`
	// Arguments are what a tool step was executed with, as text (usually
	// JSON, but any text is accepted).
	Arguments string `json:"arguments,omitempty"`
	// Result is what a tool step returned, as text.
	Result string `json:"result,omitempty"`
	// Error is set when a tool step ended in an error, or a generation
	// step's model call failed: its message, else its error type, else
	// "error". A step with Error failed even if it also has a Result or
	// an Output.
	Error string `json:"error,omitempty"`

	// Count is the number of steps an omitted step stands for.
	Count int `json:"count,omitempty"`
}

// ToolCall is one tool call a generation step asked for.
type ToolCall struct {
	// ID links the call to the tool step that executed it, when known.
	ID string `json:"id,omitempty"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Arguments are the arguments the model wrote, as text (usually JSON,
	// but any text is accepted).
	Arguments string `json:"arguments,omitempty"`
}

// Failed reports whether s is a tool step that ended in an error (the
// tool_errors rule counts these; a failed model call is not a tool error).
func (s Step) Failed() bool { return s.Kind == StepTool && s.Error != "" }

// StepCount is the number of steps of the run, omitted steps included.
func (t *Trajectory) StepCount() int {
	if t == nil {
		return 0
	}
	n := 0
	for _, s := range t.Steps {
		if s.Kind == StepOmitted {
			n += s.Count
			continue
		}
		n++
	}
	return n
}

// Validate reports a step of an unknown kind, an omitted step without a
// positive count and a tool without a name.
func (t *Trajectory) Validate() error {
	if t == nil {
		return nil
	}
	for i, d := range t.Tools {
		if strings.TrimSpace(d.Name) == "" {
			return fmt.Errorf("trajectory tool %d: a tool needs a name", i)
		}
	}
	for i, s := range t.Steps {
		switch s.Kind {
		case StepGeneration, StepTool:
		case StepOmitted:
			if s.Count < 1 {
				return fmt.Errorf("trajectory step %d: an omitted step needs a positive count, got %d", i, s.Count)
			}
		default:
			return fmt.Errorf("trajectory step %d: unknown kind %q: want %q, %q or %q", i, s.Kind, StepGeneration, StepTool, StepOmitted)
		}
	}
	return nil
}
