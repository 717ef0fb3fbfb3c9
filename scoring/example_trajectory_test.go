package scoring_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/checks"
	"github.com/llm-eval/llm_eval/scoring/scorers"
	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/scoring/taskcompletion"
	"github.com/llm-eval/llm_eval/scoring/tooluse"
)

// rescheduleRun is an agent run whose tool failed while its answer claims
// success.
func rescheduleRun() scoring.Case {
	return scoring.Case{
		Input:  "Move my dentist appointment to next Tuesday.",
		Output: "Done! Your appointment is now on Tuesday at 10:00.",
		Trajectory: &scoring.Trajectory{Steps: []scoring.Step{
			{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{
				{ID: "call_1", Name: "find_appointment", Arguments: `{"type": "dentist"}`}}},
			{Kind: scoring.StepTool, Tool: "find_appointment", CallID: "call_1", Result: `{"id": 71, "time": "Thu 10:00"}`},
			{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{
				{ID: "call_2", Name: "reschedule", Arguments: `{"id": 71, "day": "Tuesday"}`}}},
			{Kind: scoring.StepTool, Tool: "reschedule", CallID: "call_2", Error: "no free slots on Tuesday"},
			{Kind: scoring.StepGeneration, Output: "Done! Your appointment is now on Tuesday at 10:00."},
		}},
	}
}

func ExampleTrajectory_taskCompletion() {
	judge := scoringtest.Canned{
		taskcompletion.SchemaTask: `{"task": "Move the dentist appointment to next Tuesday.",
			"requirements": ["the appointment is moved", "to next Tuesday"]}`,
		taskcompletion.SchemaVerdicts: `{"verdicts": [
			{"requirement": "the appointment is moved", "verdict": "no", "reason": "The reschedule call failed."},
			{"requirement": "to next Tuesday", "verdict": "no", "reason": "No Tuesday slot was booked."}]}`,
	}
	s, err := scorers.New(scoring.TaskCompletion, judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), rescheduleRun())
	fmt.Println(res.Score, res.Label, res.Usage.LLMCalls)
	fmt.Println(res.Reason)

	// Without a trajectory there is no run to judge.
	res = s.Score(context.Background(), scoring.Case{Input: "Move my appointment.", Output: "Done."})
	fmt.Println(res.Label, res.Usage.LLMCalls)
	// Output:
	// 0 fail 2
	// The score is 0 because the run accomplished none of the 2 judged requirements: The reschedule call failed; No Tuesday slot was booked.
	// not_scorable 0
}

func ExampleTrajectory_toolUse() {
	judge := scoringtest.Canned{
		tooluse.SchemaVerdicts: `{"verdicts": [
			{"call": 1, "right_tool": "yes", "arguments_supported": "yes", "result_used": "yes", "reason": "Finds the appointment to move."},
			{"call": 2, "right_tool": "yes", "arguments_supported": "yes", "result_used": "no", "reason": "The answer ignores the error."}]}`,
	}
	s, err := scorers.New(scoring.ToolUse, judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), rescheduleRun())
	fmt.Println(res.Score, res.Label)
	fmt.Println(res.Reason)
	// Output:
	// 1 pass
	// The score is 1 because all 2 tool calls were appropriate; the result of call 2 was not used.
}

// ExampleNew_toolUseMissingTool: the trajectory lists the tools the agent
// had, and the judge names one the request needed that the run never
// called; it counts as a wrong decision.
func ExampleTrajectory_missingTool() {
	judge := scoringtest.Canned{
		tooluse.SchemaVerdicts: `{"verdicts": [
			{"call": 1, "right_tool": "yes", "arguments_supported": "yes", "result_used": "yes", "reason": ""}],
			"missing_tools": [{"tool": "cancel_order", "reason": "The user asked for a cancellation."}]}`,
	}
	s, err := scorers.New(scoring.ToolUse, judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Input:  "Cancel my order 5512.",
		Output: "Your order 5512 has been cancelled.",
		Trajectory: &scoring.Trajectory{
			Steps: []scoring.Step{
				{Kind: scoring.StepGeneration, ToolCalls: []scoring.ToolCall{{ID: "c1", Name: "get_order", Arguments: `{"id": "5512"}`}}},
				{Kind: scoring.StepTool, Tool: "get_order", CallID: "c1", Result: `{"status": "processing"}`},
				{Kind: scoring.StepGeneration, Output: "Your order 5512 has been cancelled."},
			},
			Tools: []scoring.ToolDefinition{{Name: "get_order"}, {Name: "cancel_order", Description: "Cancels an order."}},
		},
	})
	fmt.Println(res.Score, res.Label)
	fmt.Println(res.Reason)
	// Output:
	// 0.25 fail
	// The score is 0.25 because the run never called a tool the request needed, which halves the share of appropriate decisions: cancel_order (The user asked for a cancellation); 1 of 1 tool call was appropriate.
}

func ExampleTrajectory_checks() {
	s, err := checks.New([]checks.Rule{
		{Type: checks.RuleToolErrors},             // no tool execution may fail
		{Type: checks.RuleMaxSteps, Max: new(20)}, // at most 20 steps
		{Type: checks.RuleRepeatedToolCalls},      // no call made more than twice
		{Type: checks.RuleForbiddenTools, Tools: []string{"cancel_appointment"}},
	}, scoring.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), rescheduleRun())
	fmt.Println(res.Score, res.Label)
	fmt.Println(res.Reason)

	// A case without a trajectory: the rules are skipped, not failed.
	res = s.Score(context.Background(), scoring.Case{Output: "Done."})
	fmt.Println(res.Label)
	// Output:
	// 0.75 fail
	// 3 of 4 checks passed; failed: #0 tool_errors (1 tool execution ended in error (reschedule 1), want at most 0).
	// not_scorable
}

func ExampleTrajectory_namedChecks() {
	// A checks scorer of its own for tool errors: its fail rate is the
	// share of agent runs with a failed tool execution.
	s, err := checks.NewNamed("tool_errors", []checks.Rule{{Type: checks.RuleToolErrors}}, scoring.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), rescheduleRun())
	fmt.Println(res.Scorer, res.Label)
	// Output:
	// tool_errors fail
}
