// Package scoring scores LLM generations and agent runs with an LLM
// judge. It has no OpenTelemetry imports and can be used on its own.
//
// This package holds what every scorer shares: a Case is one generation
// (Input, Output, Context, Instructions), agent run (its Trajectory) or
// conversation (its Turns, the system prompt in Instructions); a
// Scorer turns it into a Result (Score, Label, Reason, Steps, Usage); a
// Judge answers the chat Requests a scorer sends; Options tune a scorer;
// an Error says why an evaluation failed. The scorers themselves are
// packages of their own, which package scorers lists and builds:
//
//	judge, err := openai.NewJudge(openai.Config{BaseURL: url, Model: model})
//	...
//	s, err := scorers.New(scoring.Hallucination, judge, scoring.Options{})
//	...
//	res := s.Score(ctx, scoring.Case{Output: answer, Context: docs})
//	if res.Scored() {
//		fmt.Println(res.Score, res.Label, res.Reason)
//	}
//
// The packages below scoring:
//
//   - scorers: the list of scorers, one line each, and Build, the one way
//     from a Spec to a Scorer that the processor and llmeval take.
//   - bias, hallucination, promptalignment, answerrelevancy,
//     contextrelevance, toxicity, taskcompletion, tooluse and criteria:
//     one LLM-judged scorer each, with its prompts, reply schemas, steps
//     and the offline demo judge's replies.
//   - conversationcompleteness, knowledgeretention, roleadherence and
//     conversationrelevancy: the conversation scorers, which judge a
//     whole conversation once (scorers.ConversationNames), after
//     deepeval's conversational metrics.
//   - checks: deterministic rules over the output and the trajectory, with
//     no judge call.
//   - instructions: splits a system prompt into its separate instructions.
//   - pipeline: what the LLM-judged scorers are made of (case preparation,
//     judge calls and re-asks, reply reading, prompts, arithmetic).
//   - openai: the Judge of an OpenAI-compatible endpoint; guard: circuit
//     breaker, rate limiter, money budget, fallback judge and caches in
//     front of it; redact: redaction
//     of evaluated text; scoringtest: a fake judge for tests and the
//     labelled offline demo.
//
// What each scorer measures, its arithmetic, how judge replies are read
// and where we differ from Mastra's and deepeval's scorers is in
// docs/scorers.md; agent trajectories are in docs/agents.md. Adding a
// scorer is one folder and one line: see CONTRIBUTING.md.
package scoring
