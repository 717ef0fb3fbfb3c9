package scoring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

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

	// droppedCalls counts tool calls of a generation step that were left
	// out to keep the trajectory bounded.
	droppedCalls int
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

// empty reports whether t holds nothing to judge: no trajectory, or only
// omitted steps.
func (t *Trajectory) empty() bool {
	if t == nil {
		return true
	}
	for _, s := range t.Steps {
		if s.Kind != StepOmitted {
			return false
		}
	}
	return true
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

// clone copies t deeply enough that prepare can rewrite its texts.
func (t *Trajectory) clone() *Trajectory {
	if t == nil {
		return nil
	}
	c := &Trajectory{Steps: make([]Step, len(t.Steps)), Tools: append([]ToolDefinition(nil), t.Tools...)}
	for i, s := range t.Steps {
		s.ToolCalls = append([]ToolCall(nil), s.ToolCalls...)
		c.Steps[i] = s
	}
	return c
}

// DefaultMaxTrajectorySteps is the step bound when Options.MaxTrajectorySteps is 0.
const DefaultMaxTrajectorySteps = 50

// Bounds on trajectory text that are not worth an option.
const (
	// maxToolNameChars caps a tool name; names are identifiers, so only a
	// broken or hostile trace has longer ones.
	maxToolNameChars = 200
	// minTrajectoryTextChars is the least each trajectory text keeps when
	// the texts together are cut to MaxInputChars.
	minTrajectoryTextChars = 64
)

// boundTrajectory cuts t to at most limit steps, counting each tool call
// of a generation step as one step, by keeping the first and the last steps
// and putting one omitted step in place of those in between. A generation
// step keeps at most limit/2 of its tool calls. It reports whether it cut.
func boundTrajectory(t *Trajectory, limit int) bool {
	half := max(limit/2, 1)
	cut := false
	for i := range t.Steps {
		s := &t.Steps[i]
		if n := len(s.ToolCalls); n > half {
			s.droppedCalls += n - half
			s.ToolCalls = s.ToolCalls[:half]
			cut = true
		}
	}
	cost := func(s Step) int { return max(1, len(s.ToolCalls)) }
	total := 0
	for _, s := range t.Steps {
		total += cost(s)
	}
	if total <= limit {
		return cut
	}
	head, used := 0, 0
	for head < len(t.Steps) && used+cost(t.Steps[head]) <= half {
		used += cost(t.Steps[head])
		head++
	}
	tail := len(t.Steps)
	for tail > head && used+cost(t.Steps[tail-1]) <= limit-1 { // one line for the omitted step
		used += cost(t.Steps[tail-1])
		tail--
	}
	gap := Step{Kind: StepOmitted}
	for _, s := range t.Steps[head:tail] {
		if s.Kind == StepOmitted {
			gap.Count += s.Count
		} else {
			gap.Count++
		}
	}
	steps := make([]Step, 0, head+1+len(t.Steps)-tail)
	steps = append(steps, t.Steps[:head]...)
	steps = append(steps, gap)
	t.Steps = append(steps, t.Steps[tail:]...)
	return true
}

// trajectoryTexts returns pointers to every free text of t: generation
// outputs and errors, tool arguments, results and errors.
func trajectoryTexts(t *Trajectory) []*string {
	var out []*string
	for i := range t.Steps {
		s := &t.Steps[i]
		switch s.Kind {
		case StepGeneration:
			out = append(out, &s.Output, &s.Error)
			for j := range s.ToolCalls {
				out = append(out, &s.ToolCalls[j].Arguments)
			}
		case StepTool:
			out = append(out, &s.Arguments, &s.Result, &s.Error)
		}
	}
	return out
}

// fitTexts cuts the texts so that together they hold at most budget runes:
// texts shorter than a common cap are kept whole and the longer ones are
// cut to that cap (at least minTrajectoryTextChars), each ending with
// TruncationMarker. It reports whether it cut.
func fitTexts(texts []*string, budget int) bool {
	if budget <= 0 {
		return false
	}
	lens := make([]int, len(texts))
	total, longest := 0, 0
	for i, t := range texts {
		lens[i] = utf8.RuneCountInString(*t)
		total += lens[i]
		longest = max(longest, lens[i])
	}
	if total <= budget {
		return false
	}
	// The largest cap c with sum(min(len, c)) <= budget.
	lo, hi := 0, longest
	for lo < hi {
		mid := (lo + hi + 1) / 2
		sum := 0
		for _, n := range lens {
			sum += min(n, mid)
		}
		if sum <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	capChars := max(lo, minTrajectoryTextChars)
	cut := false
	for _, t := range texts {
		if s, ok := truncate(*t, capChars); ok {
			*t, cut = s, true
		}
	}
	return cut
}

// trajectoryCall is one tool call of a trajectory with its execution: a
// requested call paired with the tool step that executed it, a requested
// call whose execution was not recorded, or an execution whose request was
// not.
type trajectoryCall struct {
	// Number is the call's position in the trajectory, from 1.
	Number    int
	Tool      string
	Arguments string
	// Requested and Executed say which sides were recorded.
	Requested, Executed bool
	Result, Error       string
	// requestArgs are the arguments the call was requested with.
	requestArgs string
}

// trajectoryCalls pairs the tool calls of t's generation steps with its
// tool steps. A tool step executes the earliest unexecuted call before it
// that was requested with its CallID; failing that, the earliest one of the
// same tool whose id (if any) no tool step carries. A tool step that pairs
// with no call is a call of its own. Calls are numbered in the order they
// first appear. It also returns, per step, the numbers of the calls it
// shows (a generation step one per tool call, a tool step one).
func trajectoryCalls(t *Trajectory) ([]trajectoryCall, [][]int) {
	if t == nil {
		return nil, nil
	}
	var calls []trajectoryCall
	numbers := make([][]int, len(t.Steps))
	byID := map[string][]int{}
	// byName queues, per tool, the calls an execution without a matching
	// id may take, oldest first; next skips those already executed.
	byName := map[string][]int{}
	next := map[string]int{}
	execIDs := map[string]bool{}
	for _, s := range t.Steps {
		if s.Kind == StepTool && s.CallID != "" {
			execIDs[s.CallID] = true
		}
	}
	for i, s := range t.Steps {
		switch s.Kind {
		case StepGeneration:
			for _, tc := range s.ToolCalls {
				calls = append(calls, trajectoryCall{Number: len(calls) + 1, Tool: tc.Name, Arguments: tc.Arguments, Requested: true, requestArgs: tc.Arguments})
				if tc.ID != "" {
					byID[tc.ID] = append(byID[tc.ID], len(calls)-1)
				}
				if tc.ID == "" || !execIDs[tc.ID] {
					byName[tc.Name] = append(byName[tc.Name], len(calls)-1)
				}
				numbers[i] = append(numbers[i], len(calls))
			}
		case StepTool:
			at := -1
			if s.CallID != "" {
				for _, j := range byID[s.CallID] {
					if !calls[j].Executed {
						at = j
						break
					}
				}
			}
			if at < 0 {
				q := byName[s.Tool]
				k := next[s.Tool]
				for k < len(q) && calls[q[k]].Executed {
					k++
				}
				if k < len(q) {
					at = q[k]
					k++
				}
				next[s.Tool] = k
			}
			if at < 0 {
				calls = append(calls, trajectoryCall{Number: len(calls) + 1, Tool: s.Tool, Arguments: s.Arguments})
				at = len(calls) - 1
			}
			c := &calls[at]
			c.Executed, c.Result, c.Error = true, s.Result, s.Error
			if c.Arguments == "" {
				c.Arguments = s.Arguments
			}
			numbers[i] = []int{c.Number}
		}
	}
	return calls, numbers
}

// canonicalArguments is how arguments are compared: JSON re-encoded with
// sorted keys and no spacing, anything else with its surrounding space
// trimmed.
func canonicalArguments(args string) string {
	s := strings.TrimSpace(args)
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return s
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return s
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// trajectoryLine is how one step is shown to the judge: one JSON object per
// line of the TRAJECTORY block.
type trajectoryLine struct {
	Step    int            `json:"step,omitempty"`
	Kind    StepKind       `json:"kind"`
	Text    string         `json:"text,omitempty"`
	Calls   []toolCallLine `json:"tool_calls,omitempty"`
	Dropped int            `json:"more_tool_calls_omitted,omitempty"`
	Call    int            `json:"call,omitempty"`
	Tool    string         `json:"tool,omitempty"`
	Args    *string        `json:"arguments,omitempty"`
	Result  *string        `json:"result,omitempty"`
	Error   string         `json:"error,omitempty"`
	Omitted int            `json:"omitted_steps,omitempty"`
}

type toolCallLine struct {
	Call int    `json:"call"`
	Tool string `json:"tool"`
	Args string `json:"arguments"`
}

// trajectoryLines renders t for the judge. Steps are numbered from 1 (an
// omitted step advances the number by its count) and calls carry the
// numbers trajectoryCalls gave them; a tool step shows its arguments only
// when they differ from those of its request, and shows an empty result
// only when it has no error either.
func trajectoryLines(t *Trajectory) []any {
	calls, numbers := trajectoryCalls(t)
	lines := make([]any, 0, len(t.Steps))
	step := 0
	for i, s := range t.Steps {
		if s.Kind == StepOmitted {
			lines = append(lines, trajectoryLine{Kind: StepOmitted, Omitted: s.Count})
			step += s.Count
			continue
		}
		step++
		l := trajectoryLine{Step: step, Kind: s.Kind}
		switch s.Kind {
		case StepGeneration:
			l.Text, l.Error = s.Output, s.Error
			for j, tc := range s.ToolCalls {
				l.Calls = append(l.Calls, toolCallLine{Call: numbers[i][j], Tool: toolName(tc.Name), Args: tc.Arguments})
			}
			l.Dropped = s.droppedCalls
		case StepTool:
			c := calls[numbers[i][0]-1]
			l.Call, l.Tool = c.Number, toolName(s.Tool)
			if s.Arguments != "" && (!c.Requested || s.Arguments != c.requestArgs) {
				args := s.Arguments
				l.Args = &args
			}
			if s.Result != "" || s.Error == "" {
				result := s.Result
				l.Result = &result
			}
			l.Error = s.Error
		}
		lines = append(lines, l)
	}
	return lines
}

// toolName is a tool's name as the judge and the checks' details show it:
// capped at maxToolNameChars, and named when it is blank.
func toolName(name string) string {
	if strings.TrimSpace(name) == "" {
		return "(unnamed tool)"
	}
	if cut, ok := truncate(name, maxToolNameChars); ok {
		return cut
	}
	return name
}
