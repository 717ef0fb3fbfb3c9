// Package pipeline is what the LLM-judged scorers are made of. A scorer's
// package writes a Definition (its name and direction, what it reads of a
// case, its Prompts and its Run function) and New turns it into a
// scoring.Scorer.
//
// Score prepares the case for the judge (Options.Redact and
// MaxInputChars on every text, a bounded copy of the trajectory, markers
// neutralised) and runs the definition over it through an Evaluation. Its
// steps ask the judge (Ask, JudgeItems, or ExtractThenJudge for the
// extract → verdict shape of bias, hallucination and answer relevancy);
// a reply that cannot be used is re-asked once, then the evaluation is an
// error, never a score. The score is plain arithmetic over the verdicts
// (ScoreRatio, SetFraction: rounded to two decimals as Mastra rounds, then
// labelled in the scorer's direction), and the reason step (Reason) asks
// the judge or composes a summary. Exchange makes the same judge calls for
// steps outside a scorer, such as an instruction split.
//
// Replies are read by the step's schema (ExtractJSON, ParseStrings,
// ParseVerdicts, MatchStatements); prompts are a system template per step,
// parsed with the shared rules of templates/, and a user message written
// in Go with the case's texts as JSON in delimited blocks (AppendText,
// AppendList, AppendJSONL).
package pipeline
