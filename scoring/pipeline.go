package scoring

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// finishLength is the finish reason of a reply cut at the token limit.
const finishLength = "length"

// evaluation is one run of a scorer's pipeline over one prepared Case. It
// accumulates the Result as the steps complete.
type evaluation struct {
	s   *scorer
	ctx context.Context
	c   Case
	res Result
	// cut holds the case fields prepare cut to MaxInputChars.
	cut map[Field]bool
}

// ask runs one judge step of the evaluation (see exchange.ask), keeping
// its prompt when the scorer is verbose.
func (e *evaluation) ask(step string, schema *Schema, msgs []Message, parse func(string) error) error {
	e.keepPrompt(step, msgs)
	return e.exchange().ask(step, schema, msgs, parse)
}

// exchange is the evaluation's conversation with its judge.
func (e *evaluation) exchange() exchange {
	return exchange{ctx: e.ctx, judge: e.s.judge, now: e.s.now, usage: &e.res.Usage}
}

// exchange sends judge calls for one evaluation or one instruction split
// and adds their cost to usage.
type exchange struct {
	ctx   context.Context
	judge Judge
	now   func() time.Time
	usage *Usage
}

// ask runs one judge step: it sends msgs, hands the reply to parse and, if
// parse rejects it, re-asks once with the bad reply and the problem
// appended to the conversation. A second rejection is an *Error of type
// ErrorJudgeParse, or ErrorJudgeTruncated when the reply was cut at the
// token limit.
func (x exchange) ask(step string, schema *Schema, msgs []Message, parse func(string) error) error {
	resp, err := x.call(step, schema, msgs)
	if err != nil {
		return err
	}
	problem := check(resp, parse)
	if problem == nil {
		return nil
	}
	retry := append(slices.Clip(msgs),
		Message{Role: "assistant", Content: resp.Content},
		Message{Role: "user", Content: reaskText(problem)},
	)
	resp, err = x.call(step, schema, retry)
	if err != nil {
		return err
	}
	problem = check(resp, parse)
	if problem == nil {
		return nil
	}
	typ := ErrorJudgeParse
	if resp.FinishReason == finishLength {
		typ = ErrorJudgeTruncated
	}
	return &Error{Type: typ, Step: step, Err: fmt.Errorf("judge reply unusable after one re-ask: %w", problem)}
}

// check parses a reply, naming truncation as the likely cause of failure.
func check(resp Response, parse func(string) error) error {
	err := parse(resp.Content)
	if err != nil && resp.FinishReason == finishLength {
		return fmt.Errorf("the reply was cut off at the token limit: %w", err)
	}
	return err
}

// reaskText is the user message that follows an unusable reply.
func reaskText(problem error) string {
	return "Your previous reply could not be used: " + problem.Error() + ".\n" +
		"Reply again with only the JSON object the instructions describe, with no other text, " +
		"and keep each reason to one short sentence."
}

// call makes one judge call and adds its cost to usage, whether or not it
// succeeded. A call a guard refused counts as NotSent, not as an LLM call.
func (x exchange) call(step string, schema *Schema, msgs []Message) (Response, error) {
	if err := x.ctx.Err(); err != nil {
		return Response{}, judgeError(x.ctx, step, err)
	}
	req := Request{Messages: slices.Clone(msgs), Schema: schemaFor(schema), Step: step}
	start := x.now()
	resp, err := safeComplete(x.ctx, x.judge, req)
	u := Usage{
		LLMCalls:         1,
		PromptTokens:     resp.PromptTokens,
		CompletionTokens: resp.CompletionTokens,
		Retries:          resp.Retries,
		Latency:          x.now().Sub(start),
	}
	if te, ok := errors.AsType[*Error](err); ok && te.NotSent {
		u.LLMCalls, u.NotSent = 0, 1
	}
	x.usage.Add(u)
	if err != nil {
		return resp, judgeError(x.ctx, step, err)
	}
	return resp, nil
}

// safeComplete calls the judge, turning a panic in it into an error.
func safeComplete(ctx context.Context, j Judge, req Request) (resp Response, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("judge panicked: %v", r)
		}
	}()
	return j.Complete(ctx, req)
}

// judgeError types an error returned by a judge call. An *Error keeps its
// type; cancellation and deadlines are typed from the context; anything
// else means the judge could not be reached.
func judgeError(ctx context.Context, step string, err error) *Error {
	if te, ok := errors.AsType[*Error](err); ok {
		c := *te
		if c.Step == "" {
			c.Step = step
		}
		return &c
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &Error{Type: ErrorCanceled, Step: step, Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Type: ErrorJudgeTimeout, Step: step, Err: err}
	}
	switch ctx.Err() {
	case context.Canceled:
		return &Error{Type: ErrorCanceled, Step: step, Err: err}
	case context.DeadlineExceeded:
		return &Error{Type: ErrorJudgeTimeout, Step: step, Err: err}
	}
	return &Error{Type: ErrorJudgeUnavailable, Step: step, Err: err}
}

// keepPrompt records a step's prompt when the scorer is verbose.
func (e *evaluation) keepPrompt(step string, msgs []Message) {
	if !e.s.opts.Verbose {
		return
	}
	p := promptText(msgs)
	switch step {
	case StepPreprocess:
		e.res.Steps.PreprocessPrompt = p
	case StepAnalyze:
		e.res.Steps.AnalyzePrompt = p
	case StepReason:
		e.res.Steps.ReasonPrompt = p
	}
}

// fail ends the evaluation with an error. Completed steps stay in Steps.
func (e *evaluation) fail(err error) {
	e.res.Label = LabelError
	e.res.Score = 0
	e.res.Reason = ""
	e.res.Err = err
}

// notScorable ends the evaluation without a score.
func (e *evaluation) notScorable(why string) {
	e.res.Label = LabelNotScorable
	e.res.Score = 0
	e.res.Reason = why
}

// scoreRatio is the scorers' arithmetic, Mastra's: count / total × scale,
// rounded to two decimals (roundScore), then made binary in strict mode
// and labelled against the threshold in the scorer's fixed direction. The
// counts decide the ends: none is exactly 0 and all is exactly the scale,
// so a scale with more than two decimals (0.125) is still reached by a
// perfect result and strict mode never turns it into the other end.
func (e *evaluation) scoreRatio(count, total int) {
	scale := e.s.opts.Scale
	var score float64
	switch {
	case count <= 0:
		score = 0
	case count >= total:
		score = scale
	case e.s.opts.StrictMode:
		// Decided on the counts: rounding can bring 1 of 300 to 0 or
		// 299 of 300 to the scale, and strict mode must still see them.
		score = 0
		if e.s.spec.lowerIsBetter {
			score = scale
		}
	default:
		score = roundScore(float64(count) / float64(total) * scale)
	}
	e.setScore(score)
}

// setScore applies strict mode and labels score against the threshold.
// The score is already rounded (scoreRatio), so a score equal to the
// threshold on paper is equal in the comparison too. Strict mode keeps
// only the exact ends: any score above 0 (lower is better) or below the
// scale (higher is better) becomes the other end.
func (e *evaluation) setScore(score float64) {
	scale := e.s.opts.Scale
	if e.s.spec.lowerIsBetter {
		if e.s.opts.StrictMode && score > 0 {
			score = scale
		}
		e.res.Label = passIf(score <= e.s.threshold)
	} else {
		if e.s.opts.StrictMode && score < scale {
			score = 0
		}
		e.res.Label = passIf(score >= e.s.threshold)
	}
	e.res.Score = score
}

func passIf(ok bool) Label {
	if ok {
		return LabelPass
	}
	return LabelFail
}

// reason runs the reason step after a score was set: an LLM call over the
// verdicts, or a summary composed from them. verdicts are what the judge
// sees; summary builds the no-call reason.
func (e *evaluation) reason(verdicts []any, summary func() string) {
	if e.s.opts.OmitReason {
		return
	}
	if e.s.opts.ReasonMode == ReasonSummary {
		e.res.Reason = summary()
		return
	}
	msgs, err := render("reason", promptData{
		Scorer:   e.s.spec.name,
		Score:    formatScore(e.res.Score),
		Scale:    formatScore(e.s.opts.Scale),
		Verdicts: verdicts,
	})
	if err != nil {
		e.reasonFailed(&Error{Type: ErrorInvalidCase, Step: StepReason, Err: err}, summary)
		return
	}
	var text string
	err = e.ask(StepReason, schemaReason, msgs, func(reply string) error {
		var perr error
		text, perr = parseReason(reply)
		return perr
	})
	if err != nil {
		e.reasonFailed(err, summary)
		return
	}
	e.res.Steps.Reason = ReasonResult{Reason: text}
	e.res.Reason = text
}

// reasonFailed keeps the score and label of a result whose reason step
// failed: the reason falls back to the summary and the failure is reported
// in ReasonErr and Steps.ReasonError, not as the result's error.
func (e *evaluation) reasonFailed(err error, summary func() string) {
	e.res.Reason = summary()
	e.res.ReasonErr = err
	e.res.Steps.ReasonError = err.Error()
}

// setReason sets a reason composed in Go, unless reasons are off.
func (e *evaluation) setReason(text string) {
	if !e.s.opts.OmitReason {
		e.res.Reason = text
	}
}

// joinReasons lists verdict reasons for a summary sentence, without their
// own final full stops.
func joinReasons(reasons []string) string {
	trimmed := make([]string, len(reasons))
	for i, r := range reasons {
		trimmed[i] = strings.TrimRight(r, ". ")
	}
	return strings.Join(trimmed, "; ")
}

// plural picks the singular or plural form for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
