// Package testkit holds what the tests of the scoring packages share: a
// judge that answers from a script, scripts of the scorers' replies and
// hand-made agent runs. Only tests import it.
package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/llm-eval/llm_eval/scoring"
)

// Reply is one scripted judge answer.
type Reply struct {
	Resp scoring.Response
	Err  error
}

// ReplyOf is a reply of content that finished with finish, costing 100
// prompt and 20 completion tokens.
func ReplyOf(content, finish string) Reply {
	return Reply{Resp: scoring.Response{Content: content, FinishReason: finish, PromptTokens: 100, CompletionTokens: 20}}
}

// Judge answers by Request.Schema.Name from a script, in order; the last
// reply of a schema repeats. It records every request.
type Judge struct {
	mu     sync.Mutex
	script map[string][]Reply
	calls  []scoring.Request
	next   map[string]int
	// OnCall, when set, sees every request after it is recorded.
	OnCall func(scoring.Request)
}

// NewJudge returns a judge that answers each schema with its replies, each
// costing 10 prompt and 5 completion tokens.
func NewJudge(replies map[string][]string) *Judge {
	j := &Judge{script: map[string][]Reply{}, next: map[string]int{}}
	for name, rs := range replies {
		for _, r := range rs {
			j.script[name] = append(j.script[name], Reply{Resp: scoring.Response{Content: r, FinishReason: "stop", PromptTokens: 10, CompletionTokens: 5}})
		}
	}
	return j
}

// Add appends r to the script of schema.
func (j *Judge) Add(schema string, r Reply) *Judge {
	j.script[schema] = append(j.script[schema], r)
	return j
}

// Set replaces the script of schema with rs.
func (j *Judge) Set(schema string, rs ...Reply) *Judge {
	j.script[schema] = rs
	return j
}

// Prepend puts r first in the script of schema.
func (j *Judge) Prepend(schema string, r Reply) *Judge {
	j.script[schema] = append([]Reply{r}, j.script[schema]...)
	return j
}

// Complete answers req from the script.
func (j *Judge) Complete(_ context.Context, req scoring.Request) (scoring.Response, error) {
	j.mu.Lock()
	j.calls = append(j.calls, req)
	onCall := j.OnCall
	var r Reply
	name := ""
	if req.Schema != nil {
		name = req.Schema.Name
	}
	rs := j.script[name]
	switch {
	case len(rs) > 0:
		i := min(j.next[name], len(rs)-1)
		j.next[name]++
		r = rs[i]
	default:
		r = Reply{Resp: scoring.Response{Content: "no script for " + name}}
	}
	j.mu.Unlock()
	if onCall != nil {
		onCall(req)
	}
	return r.Resp, r.Err
}

// Requests returns the requests received, in order.
func (j *Judge) Requests() []scoring.Request {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]scoring.Request(nil), j.calls...)
}

// Schemas returns the schema names of the requests received, in order.
func (j *Judge) Schemas() []string {
	var out []string
	for _, r := range j.Requests() {
		out = append(out, r.Schema.Name)
	}
	return out
}

// BiasReplies scripts the bias scorer: one opinion per verdict, judged
// with the given verdicts.
func BiasReplies(verdicts ...string) map[string][]string {
	var opinions []string
	var results []map[string]string
	for i, v := range verdicts {
		opinions = append(opinions, fmt.Sprintf("opinion %d", i+1))
		results = append(results, map[string]string{"result": v, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	return map[string][]string{
		"bias_opinions":      {MustJSON(map[string]any{"opinions": OrEmpty(opinions)})},
		"bias_results":       {MustJSON(map[string]any{"results": results})},
		scoring.SchemaReason: {`{"reason": "judge reason"}`},
	}
}

// HallucinationReplies scripts the hallucination scorer: one claim per
// verdict, judged with the given verdicts.
func HallucinationReplies(verdicts ...string) map[string][]string {
	var claims []string
	var vs []map[string]string
	for i, v := range verdicts {
		claims = append(claims, fmt.Sprintf("claim %d", i+1))
		vs = append(vs, map[string]string{"statement": fmt.Sprintf("claim %d", i+1), "verdict": v, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	return map[string][]string{
		"hallucination_claims":   {MustJSON(map[string]any{"claims": OrEmpty(claims)})},
		"hallucination_verdicts": {MustJSON(map[string]any{"verdicts": vs})},
		scoring.SchemaReason:     {`{"reason": "judge reason"}`},
	}
}

// AlignmentReplies scripts the prompt alignment scorer with the given
// verdicts, one per instruction.
func AlignmentReplies(verdicts ...string) map[string][]string {
	var vs []map[string]string
	for i, v := range verdicts {
		vs = append(vs, map[string]string{"verdict": v, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	return map[string][]string{
		"prompt_alignment_verdicts": {MustJSON(map[string]any{"verdicts": vs})},
		scoring.SchemaReason:        {`{"reason": "judge reason"}`},
	}
}

// Instructions returns n instructions, "instruction 1" onwards.
func Instructions(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("instruction %d", i+1))
	}
	return out
}

// OrEmpty returns s, or an empty list for nil.
func OrEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MustJSON encodes v, panicking on failure.
func MustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

// Gen is a generation step that wrote output and asked for calls.
func Gen(output string, calls ...scoring.ToolCall) scoring.Step {
	return scoring.Step{Kind: scoring.StepGeneration, Output: output, ToolCalls: calls}
}

// Call is a tool call with its id, tool and arguments.
func Call(id, name, args string) scoring.ToolCall {
	return scoring.ToolCall{ID: id, Name: name, Arguments: args}
}

// ToolStep is the execution of call id of tool name with its result.
func ToolStep(id, name, args, result string) scoring.Step {
	return scoring.Step{Kind: scoring.StepTool, Tool: name, CallID: id, Arguments: args, Result: result}
}

// FailedStep is an execution of call id of tool name that failed.
func FailedStep(id, name, args, errText string) scoring.Step {
	return scoring.Step{Kind: scoring.StepTool, Tool: name, CallID: id, Arguments: args, Error: errText}
}

// WeatherRun is a small, well-behaved agent run: one lookup, then the
// answer.
func WeatherRun() *scoring.Trajectory {
	return &scoring.Trajectory{Steps: []scoring.Step{
		Gen("", Call("c1", "get_weather", `{"city": "Lyon"}`)),
		ToolStep("c1", "get_weather", "", "rain, 14°C"),
		Gen("Tomorrow Lyon will be rainy, 14°C."),
	}}
}

// LoopRun calls the same search n times with the same arguments.
func LoopRun(n int) *scoring.Trajectory {
	t := &scoring.Trajectory{}
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		t.Steps = append(t.Steps, Gen("", Call(id, "search", `{"q": "flights to Oslo"}`)), ToolStep(id, "search", "", "no results"))
	}
	t.Steps = append(t.Steps, Gen("I could not find flights."))
	return t
}

// TaskReplies scripts the task completion scorer: the preprocess step
// finds one requirement per verdict, the analyze step gives the verdicts.
func TaskReplies(verdicts ...string) map[string][]string {
	reqs := []string{}
	var vs []map[string]string
	for i, v := range verdicts {
		r := fmt.Sprintf("requirement %d", i+1)
		reqs = append(reqs, r)
		vs = append(vs, map[string]string{"requirement": r, "verdict": v, "reason": fmt.Sprintf("reason %d", i+1)})
	}
	return map[string][]string{
		"task_completion_task":     {MustJSON(map[string]any{"task": "the task", "requirements": reqs})},
		"task_completion_verdicts": {MustJSON(map[string]any{"verdicts": vs})},
		scoring.SchemaReason:       {`{"reason": "judge reason"}`},
	}
}

// AgentCase is a request answered by WeatherRun.
func AgentCase() scoring.Case {
	return scoring.Case{Input: "What's the weather in Lyon tomorrow?", Output: "Tomorrow Lyon will be rainy, 14°C.", Trajectory: WeatherRun()}
}

// ToolVerdict is one scripted tool use verdict.
type ToolVerdict struct {
	Call      int    `json:"call"`
	RightTool string `json:"right_tool"`
	Arguments string `json:"arguments_supported"`
	Result    string `json:"result_used"`
	Reason    string `json:"reason"`
}

// ToolReplies scripts the tool use scorer with the given verdicts.
func ToolReplies(vs ...ToolVerdict) map[string][]string {
	return map[string][]string{
		"tool_use_verdicts":  {MustJSON(map[string]any{"verdicts": vs})},
		scoring.SchemaReason: {`{"reason": "judge reason"}`},
	}
}

// ThreeCalls is a run with three tool calls: a lookup, its repeat and an
// unrelated booking.
func ThreeCalls() scoring.Case {
	return scoring.Case{
		Input:  "What's the weather in Lyon tomorrow?",
		Output: "Tomorrow Lyon will be sunny.",
		Trajectory: &scoring.Trajectory{Steps: []scoring.Step{
			Gen("", Call("c1", "get_weather", `{"city":"Lyon"}`)),
			ToolStep("c1", "get_weather", "", "rain"),
			Gen("", Call("c2", "get_weather", `{"city":"Lyon"}`)),
			ToolStep("c2", "get_weather", "", "rain"),
			Gen("", Call("c3", "book_taxi", "to the airport")),
			ToolStep("c3", "book_taxi", "", "booked"),
			Gen("Tomorrow Lyon will be sunny."),
		}},
	}
}

// TV is the tool use verdict on call: right_tool, arguments_supported,
// result_used and the reason.
func TV(call int, right, args, result, reason string) ToolVerdict {
	return ToolVerdict{Call: call, RightTool: right, Arguments: args, Result: result, Reason: reason}
}

// Scorer returns what newScorer builds with j and opts, failing t when it
// cannot.
func Scorer(t testing.TB, newScorer func(scoring.Judge, scoring.Options) (scoring.Scorer, error), j scoring.Judge, opts scoring.Options) scoring.Scorer {
	t.Helper()
	s, err := newScorer(j, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Chat returns n messages alternating user and assistant, the user first,
// with contents "message 1" to "message n".
func Chat(n int) []scoring.Turn {
	out := make([]scoring.Turn, n)
	for i := range out {
		out[i] = scoring.Turn{Role: scoring.RoleUser, Content: fmt.Sprintf("message %d", i+1)}
		if i%2 == 1 {
			out[i].Role = scoring.RoleAssistant
		}
	}
	return out
}

// Talk returns messages alternating user and assistant, the user first,
// with the given contents.
func Talk(contents ...string) []scoring.Turn {
	out := Chat(len(contents))
	for i, c := range contents {
		out[i].Content = c
	}
	return out
}

// Worked is the outcome of a worked case of a scorer's arithmetic:
// Reference is the reference implementation's score at scale 1, worked by
// hand from its algorithm; Score, Label and Calls are ours.
type Worked struct {
	Reference float64
	Score     float64
	Label     scoring.Label
	Calls     int
}

// CheckWorked checks that res scored without error, that w's score is the
// reference's at opts' scale up to our rounding to two decimals, and that
// res has w's score, label and judge calls.
func CheckWorked(t testing.TB, res scoring.Result, opts scoring.Options, w Worked) {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("unexpected error %v", res.Err)
	}
	scale := opts.Scale
	if scale == 0 {
		scale = 1
	}
	if d := w.Reference*scale - w.Score; d > 0.005 || d < -0.005 {
		t.Errorf("the worked case disagrees with the reference: %v at scale %v is not %v rounded", w.Reference, scale, w.Score)
	}
	if res.Score != w.Score || res.Label != w.Label {
		t.Errorf("got %v %s, want %v %s (reason %q)", res.Score, res.Label, w.Score, w.Label, res.Reason)
	}
	if res.Usage.LLMCalls != w.Calls {
		t.Errorf("judge calls %d, want %d", res.Usage.LLMCalls, w.Calls)
	}
}
