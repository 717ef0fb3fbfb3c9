package pipeline

import (
	"strings"
	"unicode/utf8"

	"github.com/llm-eval/llm_eval/scoring"
)

// Bounds on trajectory text that are not worth an option.
const (
	// maxToolNameChars caps a tool name; names are identifiers, so only a
	// broken or hostile trace has longer ones.
	maxToolNameChars = 200
	// minTrajectoryTextChars is the least each trajectory text keeps when
	// the texts together are cut to MaxInputChars.
	minTrajectoryTextChars = 64
	// maxTrajectoryTools caps the tools shown; the rest are left out and
	// the result has Truncated set. A trace may list hundreds of tools
	// with long descriptions, and the judge needs only what each is for.
	maxTrajectoryTools = 64
	// maxToolDescriptionChars caps each tool's description.
	maxToolDescriptionChars = 300
)

// HasSteps reports whether t holds something to judge: steps other than
// omitted ones.
func HasSteps(t *scoring.Trajectory) bool {
	if t == nil {
		return false
	}
	for _, s := range t.Steps {
		if s.Kind != scoring.StepOmitted {
			return true
		}
	}
	return false
}

// bounded is what bounding a trajectory left out beside the omitted steps
// it inserted: dropped[i] counts the tool calls step i lost.
type bounded struct{ dropped []int }

// boundTrajectory cuts t to at most limit steps, counting each tool call
// of a generation step as one step, by keeping the first and the last steps
// and putting one omitted step in place of those in between. A generation
// step keeps at most limit/2 of its tool calls. It reports whether it cut.
func boundTrajectory(t *scoring.Trajectory, limit int) (bounded, bool) {
	half := max(limit/2, 1)
	cut := false
	dropped := make([]int, len(t.Steps))
	for i := range t.Steps {
		s := &t.Steps[i]
		if n := len(s.ToolCalls); n > half {
			dropped[i] += n - half
			s.ToolCalls = s.ToolCalls[:half]
			cut = true
		}
	}
	cost := func(s scoring.Step) int { return max(1, len(s.ToolCalls)) }
	total := 0
	for _, s := range t.Steps {
		total += cost(s)
	}
	if total <= limit {
		return bounded{dropped: dropped}, cut
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
	gap := scoring.Step{Kind: scoring.StepOmitted}
	for _, s := range t.Steps[head:tail] {
		if s.Kind == scoring.StepOmitted {
			gap.Count += s.Count
		} else {
			gap.Count++
		}
	}
	steps := make([]scoring.Step, 0, head+1+len(t.Steps)-tail)
	steps = append(steps, t.Steps[:head]...)
	steps = append(steps, gap)
	t.Steps = append(steps, t.Steps[tail:]...)
	kept := make([]int, 0, len(t.Steps))
	kept = append(kept, dropped[:head]...)
	kept = append(kept, 0)
	kept = append(kept, dropped[tail:]...)
	return bounded{dropped: kept}, true
}

// omissions reports whether steps or tool calls of t were left out to
// bound it, so that what the judge sees is not the whole run.
func (b bounded) omissions(t *scoring.Trajectory) bool {
	if t == nil {
		return false
	}
	for i, s := range t.Steps {
		if s.Kind == scoring.StepOmitted || b.droppedAt(i) > 0 {
			return true
		}
	}
	return false
}

func (b bounded) droppedAt(i int) int {
	if i < len(b.dropped) {
		return b.dropped[i]
	}
	return 0
}

// trajectoryTexts returns pointers to every free text of t: generation
// outputs and errors, tool arguments, results and errors.
func trajectoryTexts(t *scoring.Trajectory) []*string {
	var out []*string
	for i := range t.Steps {
		s := &t.Steps[i]
		switch s.Kind {
		case scoring.StepGeneration:
			out = append(out, &s.Output, &s.Error)
			for j := range s.ToolCalls {
				out = append(out, &s.ToolCalls[j].Arguments)
			}
		case scoring.StepTool:
			out = append(out, &s.Arguments, &s.Result, &s.Error)
		}
	}
	return out
}

// fitTexts cuts the texts so that together they hold at most budget runes:
// texts shorter than a common cap are kept whole and the longer ones are
// cut to that cap (at least minTrajectoryTextChars), each ending with
// scoring.TruncationMarker. It reports whether it cut.
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
		if s, ok := Truncate(*t, capChars); ok {
			*t, cut = s, true
		}
	}
	return cut
}

// Call is one tool call of a trajectory with its execution: a requested
// call paired with the tool step that executed it, a requested call whose
// execution was not recorded, or an execution whose request was not.
type Call struct {
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

// Calls pairs the tool calls of t's generation steps with its tool steps
// (see callsOf).
func Calls(t *scoring.Trajectory) []Call {
	calls, _ := callsOf(t)
	return calls
}

// callsOf pairs the tool calls of t's generation steps with its tool
// steps. A tool step executes the earliest unexecuted call before it that
// was requested with its CallID; failing that, the earliest one of the
// same tool whose id (if any) no tool step carries. A tool step that pairs
// with no call is a call of its own. Calls are numbered in the order they
// first appear. It also returns, per step, the numbers of the calls it
// shows (a generation step one per tool call, a tool step one).
func callsOf(t *scoring.Trajectory) ([]Call, [][]int) {
	if t == nil {
		return nil, nil
	}
	var calls []Call
	numbers := make([][]int, len(t.Steps))
	byID := map[string][]int{}
	// byName queues, per tool, the calls an execution without a matching
	// id may take, oldest first; next skips those already executed.
	byName := map[string][]int{}
	next := map[string]int{}
	execIDs := map[string]bool{}
	for _, s := range t.Steps {
		if s.Kind == scoring.StepTool && s.CallID != "" {
			execIDs[s.CallID] = true
		}
	}
	for i, s := range t.Steps {
		switch s.Kind {
		case scoring.StepGeneration:
			for _, tc := range s.ToolCalls {
				calls = append(calls, Call{Number: len(calls) + 1, Tool: tc.Name, Arguments: tc.Arguments, Requested: true, requestArgs: tc.Arguments})
				if tc.ID != "" {
					byID[tc.ID] = append(byID[tc.ID], len(calls)-1)
				}
				if tc.ID == "" || !execIDs[tc.ID] {
					byName[tc.Name] = append(byName[tc.Name], len(calls)-1)
				}
				numbers[i] = append(numbers[i], len(calls))
			}
		case scoring.StepTool:
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
				calls = append(calls, Call{Number: len(calls) + 1, Tool: s.Tool, Arguments: s.Arguments})
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

// trajectoryLine is how one step is shown to the judge: one JSON object per
// line of the TRAJECTORY block.
type trajectoryLine struct {
	Step    int              `json:"step,omitempty"`
	Kind    scoring.StepKind `json:"kind"`
	Text    string           `json:"text,omitempty"`
	Calls   []toolCallLine   `json:"tool_calls,omitempty"`
	Dropped int              `json:"more_tool_calls_omitted,omitempty"`
	Call    int              `json:"call,omitempty"`
	Tool    string           `json:"tool,omitempty"`
	Args    *string          `json:"arguments,omitempty"`
	Result  *string          `json:"result,omitempty"`
	Error   string           `json:"error,omitempty"`
	Omitted int              `json:"omitted_steps,omitempty"`
}

type toolCallLine struct {
	Call int    `json:"call"`
	Tool string `json:"tool"`
	Args string `json:"arguments"`
}

// TrajectoryLines renders t for the judge, one line a step (see
// trajectoryLines).
func TrajectoryLines(t *scoring.Trajectory) []any { return trajectoryLines(t, bounded{}) }

// trajectoryLines renders t for the judge. Steps are numbered from 1 (an
// omitted step advances the number by its count) and calls carry the
// numbers callsOf gave them; a tool step shows its arguments only when
// they differ from those of its request, and shows an empty result only
// when it has no error either. A step that lost tool calls to bounding
// says how many.
func trajectoryLines(t *scoring.Trajectory, b bounded) []any {
	calls, numbers := callsOf(t)
	lines := make([]any, 0, len(t.Steps))
	step := 0
	for i, s := range t.Steps {
		if s.Kind == scoring.StepOmitted {
			lines = append(lines, trajectoryLine{Kind: scoring.StepOmitted, Omitted: s.Count})
			step += s.Count
			continue
		}
		step++
		l := trajectoryLine{Step: step, Kind: s.Kind}
		switch s.Kind {
		case scoring.StepGeneration:
			l.Text, l.Error = s.Output, s.Error
			for j, tc := range s.ToolCalls {
				l.Calls = append(l.Calls, toolCallLine{Call: numbers[i][j], Tool: ToolName(tc.Name), Args: tc.Arguments})
			}
			l.Dropped = b.droppedAt(i)
		case scoring.StepTool:
			c := calls[numbers[i][0]-1]
			l.Call, l.Tool = c.Number, ToolName(s.Tool)
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

// ToolName is a tool's name as the judge and the checks' details show it:
// capped at maxToolNameChars, and named when it is blank.
func ToolName(name string) string {
	if strings.TrimSpace(name) == "" {
		return "(unnamed tool)"
	}
	if cut, ok := Truncate(name, maxToolNameChars); ok {
		return cut
	}
	return name
}

// prepareTools returns the tools the tool_use judge sees: one per name
// (the first that names it, with the first description found for it),
// descriptions redacted, their markers neutralised and cut, names capped,
// at most maxTrajectoryTools of them. It reports whether it cut or left
// out anything.
func prepareTools(tools []scoring.ToolDefinition, redact func(string) string) ([]scoring.ToolDefinition, bool) {
	if len(tools) == 0 {
		return nil, false
	}
	out := make([]scoring.ToolDefinition, 0, min(len(tools), maxTrajectoryTools))
	at := make(map[string]int, len(tools))
	cut := false
	for _, d := range tools {
		name := strings.TrimSpace(d.Name)
		if name == "" {
			continue
		}
		desc := strings.TrimSpace(d.Description)
		if i, seen := at[name]; seen {
			if out[i].Description == "" && desc != "" {
				out[i].Description = fitToolDescription(desc, redact, &cut)
			}
			continue
		}
		if len(out) == maxTrajectoryTools {
			cut = true
			continue
		}
		at[name] = len(out)
		shown := name
		if v, ok := Truncate(name, maxToolNameChars); ok {
			shown, cut = v, true
		}
		out = append(out, scoring.ToolDefinition{Name: shown, Description: fitToolDescription(desc, redact, &cut)})
	}
	return out, cut
}

// fitToolDescription redacts and caps one description, noting a cut.
func fitToolDescription(desc string, redact func(string) string, cut *bool) string {
	if desc == "" {
		return ""
	}
	if redact != nil {
		desc = redact(desc)
	}
	desc = scoring.NeutralizeTruncationMarkers(desc) // only our own cut may end with the marker
	if v, ok := Truncate(desc, maxToolDescriptionChars); ok {
		*cut = true
		return v
	}
	return desc
}

// toolLine is how one available tool is shown to the judge: one JSON
// object per line of the TOOLS block.
type toolLine struct {
	Tool        string `json:"tool"`
	Description string `json:"description,omitempty"`
}

// ToolLines renders the tools for the judge.
func ToolLines(tools []scoring.ToolDefinition) []any {
	lines := make([]any, len(tools))
	for i, d := range tools {
		lines[i] = toolLine{Tool: d.Name, Description: d.Description}
	}
	return lines
}

// Omissions reports whether steps or tool calls of the case's trajectory
// were left out to bound it, so that what the judge sees is not the whole
// run.
func (e *Evaluation) Omissions() bool { return e.run.omissions(e.Case.Trajectory) }

// TrajectoryLines renders the case's trajectory for the judge.
func (e *Evaluation) TrajectoryLines() []any { return trajectoryLines(e.Case.Trajectory, e.run) }
