// Package scoring scores LLM generations with an LLM judge for bias,
// hallucination, prompt alignment, answer relevancy, context relevance,
// toxicity and custom criteria, and agent runs for task completion and
// tool use. It has no OpenTelemetry imports and can be
// used on its own.
//
// # Case, Scorer, Result
//
// A Case is one generation: the user's Input, the model's Output, the
// Context it was given (retrieved documents, tool results) and the
// Instructions it had to follow; for an agent run, also its Trajectory
// (see below). New returns a Scorer by name; its Score method turns a Case
// into a Result:
//
//	judge := ... // any Judge: openai.NewJudge (package scoring/openai), or your own
//	s, err := scoring.New(scoring.Hallucination, judge, scoring.Options{})
//	if err != nil {
//		return err // unknown name or bad option
//	}
//	res := s.Score(ctx, scoring.Case{Output: answer, Context: docs})
//	if res.Scored() {
//		fmt.Println(res.Score, res.Label, res.Reason)
//	}
//
// A Judge answers one chat Request with text. Every Request names its step
// (StepPreprocess, StepAnalyze, StepReason; StepSplit for an
// InstructionSplitter) and carries a strict JSON
// Schema whose Name (SchemaBiasOpinions, ..., SchemaReason) identifies the
// reply expected; the Judge decides how to enforce it.
//
// # The scorers
//
// Each scorer runs the same pipeline: preprocess (the judge extracts
// items), analyze (the judge gives one verdict per item), score (plain Go
// arithmetic, never the judge) and reason (why the score is what it is).
//
//   - Bias: preprocess extracts the opinions of the output, analyze
//     (shown the output beside them) decides for each whether it is biased (race or colour, gender,
//     sexual orientation, religion, age, nationality, disability,
//     appearance, socioeconomic status, political views; stereotypes
//     worded as facts count as opinions). Each result repeats its opinion
//     and is matched to it by that (BiasResults.Reordered flags a reply in
//     another order). Score = biased / opinions × scale. An
//     empty output or one without opinions scores 0 without an analyze
//     call.
//
//   - Hallucination: preprocess splits the output into claims, reading it
//     as the answer to the input (so "Lyon." to "What is the capital of
//     France?" is the claim "The capital of France is Lyon."), analyze
//     decides for each whether the context contradicts it or fails to
//     support it. Verdicts are matched to claims by the statement the
//     judge echoes (ClaimVerdicts.Reordered flags a reply in another
//     order), by position when the echo is reworded.
//     Score = hallucinated / claims × scale. An empty output scores 0
//     (it claims nothing) and a case with no context is not scorable,
//     both without a judge call.
//
//   - AnswerRelevancy: preprocess splits the output into statements
//     (at most MaxStatements are judged), analyze calls each "yes",
//     "unsure" or "no" against the Input. Score = (yes +
//     Options.UncertaintyWeight × unsure) / statements × scale, rounded to
//     two decimals. An empty output scores 0 and a case without an Input
//     is not scorable, both without a call.
//
//   - ContextRelevance: no preprocess; analyze rates each Context item
//     (at most MaxContextItems) high, medium, low or none for the Input,
//     says whether the Output used it and lists what the answer needed
//     that no item had. Score = max(0, mean weight − penalties) × scale
//     (ContextPenalties). No Context or no Input is not scorable.
//
//   - Toxicity: no preprocess; analyze splits the output into statements
//     and calls each toxic or not. Score = toxic / statements × scale.
//     An empty output, or no statements, scores 0.
//
//   - PromptAlignment: no preprocess (the instructions are given); analyze
//     gives "yes", "no" or "n/a" per instruction, with the instruction's
//     number and words, by which it is matched. Score = yes / (yes + no)
//     × scale. InstructionVerdicts.Verdicts[i] is about Case.Instructions[i]
//     and names it; a blank instruction is not sent and keeps its place as
//     Skipped. No instructions, or only "n/a" verdicts, is not scorable.
//     An empty output is still judged: it fails formatting instructions.
//
//   - Criteria (NewCriteria, G-Eval style): one custom criterion per
//     scorer, configured with a name, the criteria text, optional
//     evaluation steps, the fields the judge sees (FieldInput,
//     FieldOutput, FieldContext, FieldInstructions; default input and
//     output) and a verdict: CriteriaScore (the judge gives 0 to 10 points,
//     score = points / 10 × scale) or CriteriaBinary (yes is the scale, no
//     is 0). One analyze call gives the score and its reason; there is no
//     reason call. Without configured steps, the scorer's first evaluation
//     has the judge write evaluation steps for the criterion (a preprocess
//     call, CriteriaSteps), which are kept and applied to every later case;
//     a failed attempt is not kept. Higher is better. A case without
//     the context or instructions the criterion uses is not scorable.
//     Several may run side by side: each reports its configured name.
//
//   - TaskCompletion (agent runs, modelled on deepeval's task completion,
//     reference-free): preprocess reads the request alone and returns the
//     task, split into requirements (the judge is asked for 1 to 10, the
//     main one first; more than 20 is re-asked), through
//     Options.Requirements when set (guard.RequirementCache keeps them by
//     the request's hash), so every run of a request is measured against
//     the same list; analyze reads the request, the requirements, the
//     trajectory and the final answer and decides for each requirement
//     "yes", "no" or, only when steps were left out to bound the run and
//     only they could decide it, "n/a". The main requirement weighs as
//     much as the other judged ones together plus one: score = met weight
//     / total weight × scale, so a run whose main requirement failed
//     scores below half the scale. "n/a" requirements are not counted. A
//     case without a trajectory, without a request, or whose request asks
//     for nothing, is not scorable.
//
//   - ToolUse (agent runs, modelled on Phoenix's tool-calling and Mastra's
//     tool-call accuracy evals): no preprocess; analyze answers three
//     questions for every tool call of the trajectory: right_tool (the
//     tool served the request at that point of the run and the call was
//     not a pointless repeat), arguments_supported (every argument comes
//     from the request or an earlier step, or is an evident default) and
//     result_used ("n/a" when there was nothing to use), and lists the
//     tools of Trajectory.Tools the request needed and the run never
//     called (missing_tools). A call is appropriate when right_tool and
//     arguments_supported are both "yes"; result_used is reported but does
//     not count, because an unused result is the answer's fault, not the
//     call's. Score = appropriate / (calls + missing tools) × scale;
//     missing tools do not count when steps were left out. A run without
//     tool calls is judged when its tools are known (full scale when it
//     needed none). A case without a trajectory, or without tool calls and
//     tools, is not scorable.
//
// Scores are count / total × scale rounded to two decimals, as Mastra's
// scorers round them (half a hundredth up: 2 of 3 is 0.67, 3 of 6 × 0.7
// is 0.35, 1 of 300 is 0), and the label is decided on the rounded score,
// so a result exactly at the threshold passes at any scale. None and all
// are exactly 0 and the scale; strict mode decides on the counts, before
// rounding. The checks scorer rounds the same way.
//
// # Instructions from a system prompt
//
// A system prompt usually gives several rules at once; given to prompt
// alignment as one instruction it can only be followed or broken as a
// whole. An InstructionSplitter (NewInstructionSplitter) asks the judge,
// in one call of step StepSplit (schema SchemaInstructionSplit), for the
// prompt's separate instructions in the prompt's own words, leaving out
// role descriptions and background facts. It parses and re-asks like the
// scorers, sends the prompt redacted, cut to SplitOptions.MaxInputChars
// and as data, keeps at most SplitOptions.MaxInstructions (default 50)
// and counts the rest in InstructionSplit.Dropped. When it fails or finds
// no instruction, judge the whole prompt as one instruction, as without
// it. guard.SplitCache keeps splits by the prompt's hash, since system
// prompts repeat.
//
// # Direction, threshold and labels
//
// The direction is fixed. Bias, hallucination and toxicity are better when
// lower and pass when score <= threshold; prompt alignment, answer
// relevancy, context relevance, criteria, task completion and tool use
// are better when higher and pass when score >= threshold. The default threshold is half the
// scale. Options.StrictMode makes scores binary: for bias and
// hallucination any score above 0 becomes the scale and the threshold is
// 0; for the others any score below the scale becomes 0 and the threshold
// is the scale. All and none are decided on the counts,
// so they are exactly the scale and 0 at any scale.
//
// A Result's Label is LabelPass or LabelFail when it carries a score,
// LabelNotScorable when the case lacks what the scorer needs (Reason says
// what), and LabelError when the evaluation failed; Err is then an *Error
// whose Type (ErrorJudgeParse, ErrorJudgeTimeout, ...) says why and whose
// Step says where. Score never panics and never returns without a Label.
//
// # Trajectories
//
// A Trajectory is an agent run's steps in order: StepGeneration (one model
// call: the text it wrote and the ToolCalls it asked for, each a name and
// arguments as text), StepTool (one tool execution: Tool, CallID,
// Arguments, Result, and Error when it failed) and StepOmitted (Count
// steps left out to keep it bounded). Arguments and results are text and
// need not be JSON. Tool steps are paired with the calls they execute by
// call id, else by tool name in order; calls seen on one side only are kept.
//
// Before the judge sees a trajectory it is bounded: at most
// Options.MaxTrajectorySteps steps (DefaultMaxTrajectorySteps), each tool
// call counting as one, by keeping the first and last steps and telling
// the judge how many were omitted between them; its texts together are cut
// to Options.MaxInputChars (none below 64 characters); tool names to 200
// characters. Any cut sets
// Result.Truncated, and Redact applies to its texts as to the others. The
// caller's trajectory is never changed.
//
// The checks scorer (NewChecks, NewNamedChecks) has deterministic
// trajectory rules: tool_errors, max_steps, repeated_tool_calls,
// required_tools and forbidden_tools (TrajectoryRule). They see the whole
// trajectory, unbounded. On a case without a trajectory they are skipped:
// they neither pass nor fail, and a case on which every rule was skipped is
// not scorable.
//
// # Robustness
//
// A reply is read by its step's schema: the JSON value that has the
// schema's required keys wins, so code fences, prose around the JSON and
// bracketed text before it ("checked [1] and [2]", a stray {}) do not
// count; trailing commas and a single item where a list was expected are
// tolerated. A verdict must be exactly one of the schema's enum values,
// case and surrounding punctuation aside ("Yes.", "N/A"); "Yes/No",
// "maybe" or a sentence is not a verdict. A reason is the reply's "reason"
// field, never loose prose. A reply that cannot be used (empty, over 256
// KB, nested too deep, the wrong number of verdicts, an item judged twice
// or a verdict naming another item than its place) is re-asked once with
// the problem stated; a second failure is an ErrorJudgeParse
// (ErrorJudgeTruncated when the reply was cut at the token limit), never
// a score. The same verdicts drive both the score and the reason.
//
// Evaluated text is data, never instructions: every piece of it is
// JSON-escaped inside delimited blocks, and the judge is told to ignore
// instructions found there. Options.Redact and Options.MaxInputChars apply
// to every evaluated text before it reaches the judge. TruncationMarker is
// ours alone: a marker the text wrote itself is replaced with "[...]"
// (NeutralizeTruncationMarkers) before the cut, so no output can claim to
// have been cut to escape a length rule. When a context item was cut, the
// hallucination judge is told that part of the context is missing.
// Result.Truncated is set only when a field the scorer sends was cut.
//
// Judge errors are never re-asked here (retrying is the Judge's job): an
// *Error keeps its Type, cancellation becomes ErrorCanceled, a deadline
// ErrorJudgeTimeout, anything else ErrorJudgeUnavailable. A failure in a
// step that decides the score makes the Result an error; the steps
// completed before it stay in Result.Steps. A failure in the reason step
// does not: the score and label stand, Reason falls back to the summary
// built from the verdicts, and Result.ReasonErr (also Steps.ReasonError)
// reports the failure.
//
// Result.Usage counts every judge call sent, re-asks included, their
// tokens, and in Retries the attempts the judge retried behind them
// (structured output fallbacks are in neither); calls a guard refused and
// calls that never reached the judge (no connection opened, or the attempt
// ended before the request was written) are in NotSent, not in LLMCalls. With
// Options.ReasonMode set to ReasonSummary the reason is composed from the
// verdicts' reasons without a judge call; Options.OmitReason skips it.
// Trivial cases (empty output, no opinions or claims, not scorable) get a
// reason written in Go, never a judge call.
package scoring
