// Package scoring scores LLM generations with an LLM judge for bias,
// hallucination, prompt alignment and custom criteria. It has no
// OpenTelemetry imports and can be used on its own.
//
// # Case, Scorer, Result
//
// A Case is one generation: the user's Input, the model's Output, the
// Context it was given (retrieved documents, tool results) and the
// Instructions it had to follow. New returns a Scorer by name; its Score
// method turns a Case into a Result:
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
// (StepPreprocess, StepAnalyze, StepReason) and carries a strict JSON
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
//     decides for each whether it is biased (race or colour, gender,
//     sexual orientation, religion, age, nationality, disability,
//     appearance, socioeconomic status, political views; stereotypes
//     worded as facts count as opinions). Score = biased / opinions × scale. An
//     empty output or one without opinions scores 0 without an analyze
//     call.
//   - Hallucination: preprocess splits the output into claims, analyze
//     decides for each whether the context contradicts it or fails to
//     support it. Verdicts are matched to claims by the statement the
//     judge echoes (ClaimVerdicts.Reordered flags a reply in another
//     order), by position when the echo is reworded.
//     Score = hallucinated / claims × scale. An empty output scores 0
//     (it claims nothing) and a case with no context is not scorable,
//     both without a judge call.
//   - PromptAlignment: no preprocess (the instructions are given); analyze
//     gives "yes", "no" or "n/a" per instruction. Score = yes / (yes + no)
//     × scale. No instructions, or only "n/a" verdicts, is not scorable.
//     An empty output is still judged: it fails formatting instructions.
//   - Criteria (NewCriteria, G-Eval style): one custom criterion per
//     scorer, configured with a name, the criteria text, optional
//     evaluation steps, the fields the judge sees (FieldInput,
//     FieldOutput, FieldContext, FieldInstructions; default input and
//     output) and a verdict: CriteriaScore (the judge gives 0 to 10 points,
//     score = points / 10 × scale) or CriteriaBinary (yes is the scale, no
//     is 0). One analyze call, plus the reason call with ReasonLLM; the
//     summary reason is the judge's own. Higher is better. A case without
//     the context or instructions the criterion uses is not scorable.
//     Several may run side by side: each reports its configured name.
//
// Scores are the exact ratio times the scale, computed as
// count × scale / total and never rounded; reasons show two decimals.
//
// # Direction, threshold and labels
//
// The direction is fixed. Bias and hallucination are better when lower
// and pass when score <= threshold; prompt alignment and criteria are
// better when higher and pass when score >= threshold. The default threshold is half the
// scale. Options.StrictMode makes scores binary: for bias and
// hallucination any score above 0 becomes the scale and the threshold is
// 0; for prompt alignment and criteria any score below the scale becomes 0
// and the threshold is the scale. All and none are decided on the counts,
// so they are exactly the scale and 0 at any scale.
//
// A Result's Label is LabelPass or LabelFail when it carries a score,
// LabelNotScorable when the case lacks what the scorer needs (Reason says
// what), and LabelError when the evaluation failed; Err is then an *Error
// whose Type (ErrorJudgeParse, ErrorJudgeTimeout, ...) says why and whose
// Step says where. Score never panics and never returns without a Label.
//
// # Robustness
//
// Replies are parsed tolerantly (code fences, prose around the JSON,
// trailing commas, a single item where a list was expected, verdict words
// such as "Yes." or "N/A"). A reply that still cannot be used, or that has
// the wrong number of verdicts, is re-asked once with the problem stated;
// a second failure is an ErrorJudgeParse (ErrorJudgeTruncated when the
// reply was cut at the token limit). A verdict is never counted unless it
// normalises to yes, no or (for prompt alignment) n/a, and the same
// normalised verdicts drive both the score and the reason.
//
// Evaluated text is data, never instructions: every piece of it is
// JSON-escaped inside delimited blocks, and the judge is told to ignore
// instructions found there. Options.Redact and Options.MaxInputChars apply
// to every evaluated text before it reaches the judge.
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
// calls that found no connection to the judge are in NotSent, not in
// LLMCalls. With
// Options.ReasonMode set to ReasonSummary the reason is composed from the
// verdicts' reasons without a judge call; Options.OmitReason skips it.
// Trivial cases (empty output, no opinions or claims, not scorable) get a
// reason written in Go, never a judge call.
package scoring
