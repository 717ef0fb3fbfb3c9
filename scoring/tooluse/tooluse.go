// Package tooluse is the tool use scorer for agent runs, modelled on
// Phoenix's tool-calling and Mastra's tool-call accuracy evals: the judge
// answers for every tool call of the trajectory whether it was the right
// tool with supported arguments, and names the available tools the
// request needed and the run never called. Higher is better.
package tooluse

import (
	"cmp"
	"embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// SchemaVerdicts is the schema name of the tool use scorer's reply.
const SchemaVerdicts = "tool_use_verdicts"

// Verdicts is the tool_use scorer's analyze result: one entry per
// tool call of the trajectory, in call order, and the tools the request
// needed that the run never called.
type Verdicts struct {
	Verdicts []Verdict `json:"verdicts"`
	// Missing are the available tools the request needed and the run
	// never called, each counting as one inappropriate decision.
	Missing []MissingTool `json:"missing_tools,omitempty"`
	// MissingNotCounted is set when steps of the run were left out to
	// bound it: a tool listed as missing may have been called in them, so
	// Missing does not count towards the score.
	MissingNotCounted bool `json:"missing_not_counted,omitempty"`
	// Reordered is set when the judge returned the verdicts in another
	// order than the calls; they were put in order by their call numbers.
	Reordered bool `json:"reordered,omitempty"`
}

// MissingTool is a tool the agent had, that the request needed and that
// the run never called.
type MissingTool struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// Verdict judges one tool call. RightTool says whether calling
// that tool at that point served the request, ArgumentsSupported whether
// its arguments came from the run so far, ResultUsed ("yes", "no" or
// "n/a") whether the run used what it returned. The call is Appropriate
// when RightTool and ArgumentsSupported are both "yes"; ResultUsed does
// not count towards the score.
type Verdict struct {
	Call               int    `json:"call"`
	Tool               string `json:"tool"`
	RightTool          string `json:"right_tool"`
	ArgumentsSupported string `json:"arguments_supported"`
	ResultUsed         string `json:"result_used"`
	Appropriate        bool   `json:"appropriate"`
	Reason             string `json:"reason"`
}

//go:embed *.tmpl
var templates embed.FS

var verdictsPrompt = &pipeline.Prompt{Schema: schemaVerdicts, User: verdictsMessage, Demo: demoVerdicts}

// Definition is the tool use scorer.
var Definition = pipeline.Definition{
	Name:       scoring.ToolUse,
	Sends:      []scoring.Field{scoring.FieldInput, scoring.FieldOutput},
	Trajectory: true,
	Tools:      true,
	Prompts:    pipeline.NewPrompts(templates, nil, verdictsPrompt),
	Run:        run,
}

// New returns the tool use scorer, asking judge.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

// run is the tool_use pipeline: no preprocess (the calls are read
// from the trajectory), one analyze call judging every tool call and
// naming the available tools the request needed that the run never
// called. Score = appropriate calls / (calls + missing tools) × scale,
// halved when a needed tool was never called: such a run failed the
// request, so it scores below half the scale whatever its other calls
// scored (Mastra's LLM tool-call accuracy counts missing tools only when
// no tool was called). A run without tool calls is judged when its tools
// are known: it scores the full scale when it needed none and 0 when it
// missed one. A case
// without a trajectory, or without tool calls and without known tools, is
// not scorable.
func run(e *pipeline.Evaluation) {
	if !pipeline.HasSteps(e.Case.Trajectory) {
		e.NotScorable("The case has no trajectory: tool_use judges the tool calls of an agent run, and this case records none.")
		return
	}
	calls := pipeline.Calls(e.Case.Trajectory)
	tools := e.Case.Trajectory.Tools
	omissions := e.Omissions()
	if len(calls) == 0 && (len(tools) == 0 || omissions) {
		if omissions {
			e.NotScorable("The agent made no tool calls in the steps shown and steps were left out, so there is no tool use to judge.")
			return
		}
		e.NotScorable("The agent made no tool calls in the steps recorded and the trace does not say which tools it had, so there is no tool use to judge.")
		return
	}
	var shown []any
	if len(tools) > 0 {
		shown = pipeline.ToolLines(tools)
	}
	data := pipeline.PromptData{
		Input:      e.Case.Input,
		Output:     e.Case.Output,
		Trajectory: e.TrajectoryLines(),
		Calls:      len(calls),
		Tools:      shown,
		Omissions:  omissions,
	}
	var result Verdicts
	if err := e.Ask(scoring.StepAnalyze, verdictsPrompt, data, func(reply string) error {
		var perr error
		result, perr = parseVerdicts(reply, calls, tools)
		return perr
	}); err != nil {
		e.Fail(err)
		return
	}
	result.MissingNotCounted = omissions && len(result.Missing) > 0
	e.Result.Steps.Analyze = result
	appropriate := 0
	var faults []string
	var unused []string
	forJudge := make([]any, 0, len(result.Verdicts)+len(result.Missing))
	for _, v := range result.Verdicts {
		forJudge = append(forJudge, v)
		if v.Appropriate {
			appropriate++
		} else {
			faults = append(faults, fmt.Sprintf("call %d %s (%s)", v.Call, pipeline.ToolName(v.Tool), strings.TrimRight(cmp.Or(v.Reason, "no reason given"), ". ")))
		}
		if v.ResultUsed == pipeline.VerdictNo {
			unused = append(unused, strconv.Itoa(v.Call))
		}
	}
	var missing []string
	for _, m := range result.Missing {
		forJudge = append(forJudge, struct {
			MissingTool string `json:"missing_tool"`
			Counted     bool   `json:"counted"`
			Reason      string `json:"reason"`
		}{m.Tool, !omissions, m.Reason})
		missing = append(missing, fmt.Sprintf("%s (%s)", pipeline.ToolName(m.Tool), strings.TrimRight(cmp.Or(m.Reason, "no reason given"), ". ")))
	}
	n := len(calls)
	total := n
	missed := 0 // needed tools never called that count
	if !omissions {
		missed = len(result.Missing)
		total += missed
	}
	switch {
	case total == 0: // no call made and none needed: nothing done wrong
		e.ScoreRatio(1, 1)
	case missed > 0:
		// A needed tool never called fails the request however good the
		// other calls were: the share is halved, so such a run scores
		// below half the scale.
		e.ScoreRatio(appropriate, 2*total)
	default:
		e.ScoreRatio(appropriate, total)
	}
	e.Reason(forJudge, func() string {
		score := pipeline.FormatScore(e.Result.Score)
		var b strings.Builder
		switch {
		case n == 0 && len(missing) == 0:
			fmt.Fprintf(&b, "The score is %s because the run needed none of its tools and called none", score)
		case n == 0:
			fmt.Fprintf(&b, "The score is %s because the run called no tool although it needed %s", score, strings.Join(missing, "; "))
		case missed > 0:
			fmt.Fprintf(&b, "The score is %s because the run never called a tool the request needed, which halves the share of appropriate decisions: %s; %d of %d tool %s appropriate",
				score, strings.Join(missing, "; "), appropriate, n, pipeline.Plural(n, "call was", "calls were"))
		case appropriate == n:
			fmt.Fprintf(&b, "The score is %s because all %d tool %s appropriate", score, n, pipeline.Plural(n, "call was", "calls were"))
		default:
			fmt.Fprintf(&b, "The score is %s because %d of %d tool %s appropriate", score, appropriate, n, pipeline.Plural(n, "call was", "calls were"))
		}
		if n > 0 && appropriate < n {
			fmt.Fprintf(&b, "; not appropriate: %s", strings.Join(faults, "; "))
		}
		if n > 0 && len(missing) > 0 && omissions {
			fmt.Fprintf(&b, "; the judge found needed but not called %s, not counted because steps were left out", strings.Join(missing, "; "))
		}
		if len(unused) > 0 {
			fmt.Fprintf(&b, "; the %s of %s %s %s not used", pipeline.Plural(len(unused), "result", "results"),
				pipeline.Plural(len(unused), "call", "calls"), strings.Join(unused, ", "), pipeline.Plural(len(unused), "was", "were"))
		}
		b.WriteString(".")
		return b.String()
	})
}

// parseVerdicts parses a tool_use analyze reply: exactly one
// verdict per call. Verdicts carrying every call number once are put in
// call order; verdicts without numbers are taken in order.
func parseVerdicts(reply string, calls []pipeline.Call, tools []scoring.ToolDefinition) (Verdicts, error) {
	v, err := pipeline.ExtractJSON(reply, schemaVerdicts)
	if err != nil {
		return Verdicts{}, err
	}
	missing, err := parseMissingTools(v, calls, tools)
	if err != nil {
		return Verdicts{}, err
	}
	list, err := pipeline.ListField(v, "verdicts", "right_tool", "call")
	if err != nil {
		return Verdicts{}, err
	}
	if len(list) != len(calls) {
		return Verdicts{}, fmt.Errorf("expected exactly %d items in %q, one per tool call in call order, got %d",
			len(calls), "verdicts", len(list))
	}
	parsed := make([]Verdict, len(list))
	named := make([]int, len(list)) // the call each verdict names, from 0; -1: none
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return Verdicts{}, fmt.Errorf("item %d of %q must be an object, got %s", i+1, "verdicts", pipeline.JSONKind(it))
		}
		var pv Verdict
		for _, f := range []struct {
			dst     *string
			keys    []string
			allowNA bool
			missing string // used when the key is absent; "" makes it required
		}{
			{&pv.RightTool, []string{"right_tool", "tool_appropriate", "appropriate_tool"}, false, ""},
			{&pv.ArgumentsSupported, []string{"arguments_supported", "arguments", "args_supported"}, false, ""},
			{&pv.ResultUsed, []string{"result_used", "result"}, true, pipeline.VerdictNA},
		} {
			raw, ok := pipeline.Lookup(m, f.keys...)
			if !ok {
				if f.missing == "" {
					return Verdicts{}, fmt.Errorf("item %d of %q has no %q", i+1, "verdicts", f.keys[0])
				}
				*f.dst = f.missing
				continue
			}
			s, _ := raw.(string)
			verdict, ok := pipeline.NormalizeVerdict(s)
			if !ok || (verdict == pipeline.VerdictNA && !f.allowNA) {
				allowed := `"yes" or "no"`
				if f.allowNA {
					allowed = `"yes", "no" or "n/a"`
				}
				return Verdicts{}, fmt.Errorf("item %d of %q has %s %s; it must be %s", i+1, "verdicts", f.keys[0], pipeline.Describe(raw), allowed)
			}
			*f.dst = verdict
		}
		pv.Reason = pipeline.OptionalString(m, "reason")
		pv.Appropriate = pipeline.IsYes(pv.RightTool) && pipeline.IsYes(pv.ArgumentsSupported)
		parsed[i] = pv
		named[i] = -1
		if raw, ok := pipeline.Lookup(m, "call", "number"); ok {
			named[i] = pipeline.ItemNumber(raw, len(calls)) - 1
		}
	}
	order, reordered, err := pipeline.PlaceVerdicts(named, "tool call", "in call order, with its number")
	if err != nil {
		return Verdicts{}, err
	}
	out := Verdicts{Verdicts: make([]Verdict, len(parsed)), Missing: missing, Reordered: reordered}
	for i, j := range order {
		pv := parsed[j]
		pv.Call, pv.Tool = calls[i].Number, calls[i].Tool
		out.Verdicts[i] = pv
	}
	return out, nil
}

// parseMissingTools reads the "missing_tools" list of a tool_use reply:
// each item names a tool of the TOOLS block (an object with "tool" and
// "reason", or the bare name) that the run never called. With no tools
// known the list must be empty or absent; with tools known it is
// required. A name no tool has, or a tool the run called, is an error
// (re-asked); a repeated name counts once.
func parseMissingTools(v any, calls []pipeline.Call, tools []scoring.ToolDefinition) ([]MissingTool, error) {
	var raw any
	found := false
	if m, ok := v.(map[string]any); ok {
		raw, found = pipeline.Lookup(m, "missing_tools", "missing", "uncalled_tools")
	}
	if !found || raw == nil {
		if len(tools) > 0 {
			return nil, fmt.Errorf("the reply has no %q list; give it, empty when the run called every tool the request needed", "missing_tools")
		}
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("the %q field must be a list, got %s", "missing_tools", pipeline.JSONKind(raw))
	}
	if len(list) > 0 && len(tools) == 0 {
		return nil, fmt.Errorf("the %q list must be empty: no TOOLS block lists the tools the agent had", "missing_tools")
	}
	called := make(map[string]int, len(calls))
	for _, c := range calls {
		if _, seen := called[c.Tool]; !seen {
			called[c.Tool] = c.Number
		}
	}
	var out []MissingTool
	seen := map[string]bool{}
	for i, it := range list {
		var name, reason string
		switch t := it.(type) {
		case string:
			name = t
		case map[string]any:
			n, ok := pipeline.Lookup(t, "tool", "name")
			if !ok {
				return nil, fmt.Errorf("item %d of %q has no %q", i+1, "missing_tools", "tool")
			}
			name, _ = n.(string)
			reason = pipeline.OptionalString(t, "reason")
		default:
			return nil, fmt.Errorf("item %d of %q must be an object, got %s", i+1, "missing_tools", pipeline.JSONKind(it))
		}
		tool, ok := availableTool(name, tools)
		if !ok {
			return nil, fmt.Errorf("item %d of %q names %s, which is not a tool of the TOOLS block", i+1, "missing_tools", pipeline.Describe(name))
		}
		if n, ok := called[tool]; ok {
			return nil, fmt.Errorf("item %d of %q names %q, which the run called (call %d); list only tools it never called", i+1, "missing_tools", tool, n)
		}
		if seen[tool] {
			continue
		}
		seen[tool] = true
		out = append(out, MissingTool{Tool: tool, Reason: reason})
	}
	return out, nil
}

// availableTool returns the name of the tool a reply names: the same name,
// else the only one equal to it ignoring case and surrounding space.
func availableTool(name string, tools []scoring.ToolDefinition) (string, bool) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", false
	}
	match := ""
	for _, d := range tools {
		if d.Name == name {
			return name, true
		}
		if strings.EqualFold(d.Name, name) {
			if match != "" {
				return "", false
			}
			match = d.Name
		}
	}
	return match, match != ""
}

var schemaVerdicts = pipeline.ListsSchema(SchemaVerdicts,
	pipeline.ItemList{Field: "verdicts", Props: []pipeline.Property{
		{Name: "call", Integer: true},
		{Name: "right_tool", Enum: []string{pipeline.VerdictYes, pipeline.VerdictNo}},
		{Name: "arguments_supported", Enum: []string{pipeline.VerdictYes, pipeline.VerdictNo}},
		{Name: "result_used", Enum: []string{pipeline.VerdictYes, pipeline.VerdictNo, pipeline.VerdictNA}},
	}},
	pipeline.ItemList{Field: "missing_tools", Props: []pipeline.Property{{Name: "tool"}}})

// verdictsMessage sends the tools and the run, then the task, which names
// the number of calls: what differs between calls comes last.
func verdictsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	var err error
	if len(d.Tools) > 0 {
		if b, err = pipeline.AppendJSONL(b, "TOOLS", d.Tools); err != nil {
			return nil, err
		}
		b = append(b, "\n\n"...)
	}
	if b, err = pipeline.AppendRun(b, d); err != nil {
		return nil, err
	}
	n := strconv.Itoa(d.Calls)
	if d.Calls == 0 {
		b = append(b, "\n\nThis agent run made no tool calls: return an empty verdicts list."...)
	} else {
		b = append(b, "\n\nJudge each of the "+n+" tool calls of this agent run, numbered 1 to "+n+" in the trajectory. Return exactly "+n+" verdicts, in call order."...)
	}
	switch {
	case len(d.Tools) == 0:
		return append(b, " The tools the agent had are not known: return an empty missing_tools list."...), nil
	case d.Omissions:
		return append(b, " Steps of the run were left out, so a tool may have been called in them: return an empty missing_tools list."...), nil
	default:
		return append(b, " In missing_tools, list the tools of the TOOLS block that the request needed and the run never called."...), nil
	}
}
