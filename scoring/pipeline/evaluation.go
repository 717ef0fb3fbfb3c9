package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
)

// finishLength is the finish reason of a reply cut at the token limit.
const finishLength = "length"

// Evaluation is one run of a scorer's steps over one prepared case. A
// Definition's Run reads Case, asks the judge (Ask), fills in Result.Steps
// and ends with a score, as not scorable or as failed.
type Evaluation struct {
	// Case is the case as the judge may see it: redacted, cut to
	// MaxInputChars, its trajectory bounded, without metadata.
	Case scoring.Case
	// Result is the result so far.
	Result scoring.Result

	s   *scorer
	ctx context.Context
	// cut holds the case fields prepare cut to MaxInputChars.
	cut map[scoring.Field]bool
	// run is what bounding the trajectory left out.
	run bounded
	// limits are what the scorer left out to stay within a bound, said
	// at the end of every reason (Limit).
	limits []string
}

// Context is the context of the Score call.
func (e *Evaluation) Context() context.Context { return e.ctx }

// Options are the scorer's options, with their defaults filled in.
func (e *Evaluation) Options() scoring.Options { return e.s.opts }

// Judge is the scorer's judge.
func (e *Evaluation) Judge() scoring.Judge { return e.s.judge }

// Now reads the scorer's clock, which times judge calls.
func (e *Evaluation) Now() time.Time { return e.s.now() }

// Cut reports whether the case field f was cut to MaxInputChars.
func (e *Evaluation) Cut(f scoring.Field) bool { return e.cut[f] }

// Ask renders p with d (Scorer set to the scorer's name) and runs one
// judge step with it (see Exchange.Ask), keeping its prompt when the
// scorer is verbose.
func (e *Evaluation) Ask(step string, p *Prompt, d PromptData, parse func(reply string) error) error {
	d.Scorer = e.s.def.Name
	msgs, err := p.Render(d)
	if err != nil {
		return &scoring.Error{Type: scoring.ErrorInvalidCase, Step: step, Err: err}
	}
	e.KeepPrompt(step, msgs)
	return e.exchange().ask(e.ctx, step, p.Schema, msgs, parse)
}

// exchange is the evaluation's conversation with its judge.
func (e *Evaluation) exchange() Exchange {
	return Exchange{Judge: e.s.judge, Now: e.s.now, Usage: &e.Result.Usage, Model: &e.Result.JudgeModel}
}

// KeepPrompt records a step's prompt when the scorer is verbose.
func (e *Evaluation) KeepPrompt(step string, msgs []scoring.Message) {
	if !e.s.opts.Verbose {
		return
	}
	p := PromptText(msgs)
	switch step {
	case scoring.StepPreprocess:
		e.Result.Steps.PreprocessPrompt = p
	case scoring.StepAnalyze:
		e.Result.Steps.AnalyzePrompt = p
	case scoring.StepReason:
		e.Result.Steps.ReasonPrompt = p
	}
}

// Limit records that the scorer judged only part of the case to stay
// within a bound (items past a cap, context past the chunk bound): the
// result is marked truncated, and every reason it gets, written by the
// judge or composed here, ends by saying what was left out. what is a
// clause such as "only the first 100 claims were judged; 7 more were
// left out".
func (e *Evaluation) Limit(what string) {
	e.Result.Truncated = true
	e.limits = append(e.limits, what)
}

// withLimits ends a reason with what the scorer left out, if anything.
func (e *Evaluation) withLimits(reason string) string {
	if len(e.limits) == 0 {
		return reason
	}
	return strings.TrimSpace(reason) + " Scored on part of the text: " + strings.Join(e.limits, "; ") + "."
}

// Fail ends the evaluation with an error. Completed steps stay in Steps.
func (e *Evaluation) Fail(err error) {
	e.Result.Label = scoring.LabelError
	e.Result.Score = 0
	e.Result.Reason = ""
	e.Result.Err = err
}

// FailCall ends the evaluation with the error of a call to a judge or to
// a helper in front of one, typed as a judge call's error is (Exchange).
func (e *Evaluation) FailCall(step string, err error) {
	e.Fail(judgeError(e.ctx, step, err))
}

// NotScorable ends the evaluation without a score; why is its reason.
func (e *Evaluation) NotScorable(why string) {
	e.Result.Label = scoring.LabelNotScorable
	e.Result.Score = 0
	e.Result.Reason = why
}

// ScoreRatio is the scorers' arithmetic, Mastra's: count / total × scale,
// rounded to two decimals (Round), the ends included (all of them at scale
// 0.125 is 0.13, as Mastra's roundToTwoDecimals gives), then made binary in
// strict mode and labelled against the threshold in the scorer's fixed
// direction. Strict mode decides on the counts: rounding can bring 1 of
// 300 to 0 or 299 of 300 to the scale, and strict mode must still see them.
func (e *Evaluation) ScoreRatio(count, total int) {
	var score float64
	switch {
	case !e.s.opts.StrictMode || count <= 0 || count >= total:
		score = Round(float64(max(count, 0)) / float64(total) * e.s.opts.Scale)
	case e.s.def.LowerIsBetter:
		score = e.s.top
	default:
		score = 0
	}
	e.SetScore(score)
}

// ScoreAll scores the case as if every item judged had passed: the top of
// the scale, as ScoreRatio scores all of a count. deepeval's conversation
// metrics score a conversation with nothing to judge so.
func (e *Evaluation) ScoreAll() { e.ScoreRatio(1, 1) }

// SetFraction scores raw, a share of the scale that is not a plain count
// ratio (answer_relevancy's weighted count, context_relevance's penalised
// mean): rounded to two decimals as Mastra rounds, then labelled. Strict
// mode decides on the unrounded value, so 0.999 of the scale, which rounds
// to the scale, is still not perfect.
func (e *Evaluation) SetFraction(raw float64) {
	if !e.s.opts.StrictMode {
		e.SetScore(Round(raw))
		return
	}
	perfect := raw >= e.s.opts.Scale
	if e.s.def.LowerIsBetter {
		perfect = raw <= 0
	}
	score := 0.0
	if perfect != e.s.def.LowerIsBetter {
		score = e.s.top
	}
	e.SetScore(score)
}

// SetScore applies strict mode and labels score against the threshold.
// The score is already rounded (ScoreRatio), as is the threshold, so a
// score equal to the threshold on paper is equal in the comparison too.
// Strict mode keeps only the exact ends, 0 and the rounded scale: any
// score above 0 (lower is better) or below the top (higher is better)
// becomes the other end.
func (e *Evaluation) SetScore(score float64) {
	top := e.s.top
	if e.s.def.LowerIsBetter {
		if e.s.opts.StrictMode && score > 0 {
			score = top
		}
		e.Result.Label = passIf(score <= e.s.threshold)
	} else {
		if e.s.opts.StrictMode && score < top {
			score = 0
		}
		e.Result.Label = passIf(score >= e.s.threshold)
	}
	e.Result.Score = score
}

func passIf(ok bool) scoring.Label {
	if ok {
		return scoring.LabelPass
	}
	return scoring.LabelFail
}

// Reason runs the reason step after a score was set: an LLM call over the
// verdicts, or a summary composed from them. verdicts are what the judge
// sees; summary builds the no-call reason.
func (e *Evaluation) Reason(verdicts []any, summary func() string) {
	if e.s.opts.OmitReason {
		return
	}
	if e.s.opts.ReasonMode == scoring.ReasonSummary {
		e.Result.Reason = e.withLimits(summary())
		return
	}
	var text string
	err := e.Ask(scoring.StepReason, e.s.def.Prompts.Lookup(scoring.SchemaReason), PromptData{
		Score:    FormatScore(e.Result.Score),
		Scale:    FormatScore(e.s.opts.Scale),
		Verdicts: verdicts,
	}, func(reply string) error {
		var perr error
		text, perr = parseReason(reply)
		return perr
	})
	if err != nil {
		// The score and label stand: the reason falls back to the
		// summary and the failure is reported in ReasonErr and
		// Steps.ReasonError, not as the result's error.
		e.Result.Reason = e.withLimits(summary())
		e.Result.ReasonErr = err
		e.Result.Steps.ReasonError = err.Error()
		return
	}
	e.Result.Steps.Reason = scoring.ReasonResult{Reason: text}
	e.Result.Reason = e.withLimits(text)
}

// SetReason sets a reason composed in Go, unless reasons are off.
func (e *Evaluation) SetReason(text string) {
	if !e.s.opts.OmitReason {
		e.Result.Reason = e.withLimits(text)
	}
}

// JoinReasons lists verdict reasons for a summary sentence, without their
// own final full stops.
func JoinReasons(reasons []string) string {
	trimmed := make([]string, len(reasons))
	for i, r := range reasons {
		trimmed[i] = strings.TrimRight(r, ". ")
	}
	return strings.Join(trimmed, "; ")
}

// Plural picks the singular or plural form for n.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Exchange sends the judge calls of one evaluation, or of one helper step
// outside a scorer (an instruction split, a task's requirements), and adds
// their cost to Usage.
type Exchange struct {
	Judge scoring.Judge
	// Now is the clock that times the calls.
	Now   func() time.Time
	Usage *scoring.Usage
	// Reasked, when not nil, is set when a reply could not be used and
	// the judge was asked again.
	Reasked *bool
	// Model, when set, collects the models that answered (Result.JudgeModel).
	Model *string
}

// Ask renders p with d and runs one judge step with it: it sends the
// prompt, hands the reply to parse and, if parse rejects it, re-asks once
// with the bad reply and the problem appended to the conversation. A
// second rejection is an *scoring.Error of type ErrorJudgeParse, or
// ErrorJudgeTruncated when the reply was cut at the token limit; a prompt
// that does not render is an ErrorInvalidCase.
func (x Exchange) Ask(ctx context.Context, step string, p *Prompt, d PromptData, parse func(reply string) error) error {
	msgs, err := p.Render(d)
	if err != nil {
		return &scoring.Error{Type: scoring.ErrorInvalidCase, Step: step, Err: err}
	}
	return x.ask(ctx, step, p.Schema, msgs, parse)
}

func (x Exchange) ask(ctx context.Context, step string, schema *scoring.Schema, msgs []scoring.Message, parse func(string) error) error {
	resp, err := x.call(ctx, step, schema, msgs)
	if err != nil {
		return err
	}
	problem := check(resp, parse)
	if problem == nil {
		return nil
	}
	if x.Reasked != nil {
		*x.Reasked = true
	}
	retry := append(slices.Clip(msgs),
		scoring.Message{Role: "assistant", Content: resp.Content},
		scoring.Message{Role: "user", Content: reaskText(problem)},
	)
	resp, err = x.call(ctx, step, schema, retry)
	if err != nil {
		return err
	}
	problem = check(resp, parse)
	if problem == nil {
		return nil
	}
	typ := scoring.ErrorJudgeParse
	if resp.FinishReason == finishLength {
		typ = scoring.ErrorJudgeTruncated
	}
	return &scoring.Error{Type: typ, Step: step, Err: fmt.Errorf("judge reply unusable after one re-ask: %w", problem)}
}

// check parses a reply, naming truncation as the likely cause of failure.
func check(resp scoring.Response, parse func(string) error) error {
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

// call makes one judge call and adds its cost to Usage, whether or not it
// succeeded. A call a guard refused counts as NotSent, not as an LLM call.
func (x Exchange) call(ctx context.Context, step string, schema *scoring.Schema, msgs []scoring.Message) (scoring.Response, error) {
	if err := ctx.Err(); err != nil {
		return scoring.Response{}, judgeError(ctx, step, err)
	}
	req := scoring.Request{Messages: slices.Clone(msgs), Schema: schemaFor(schema), Step: step}
	start := x.Now()
	resp, err := safeComplete(ctx, x.Judge, req)
	u := scoring.Usage{
		LLMCalls:         1,
		PromptTokens:     resp.PromptTokens,
		CompletionTokens: resp.CompletionTokens,
		Retries:          resp.Retries,
		Latency:          x.Now().Sub(start),
	}
	if te, ok := errors.AsType[*scoring.Error](err); ok && te.NotSent {
		u.LLMCalls, u.NotSent = 0, 1
	}
	x.Usage.Add(u)
	if err != nil {
		return resp, judgeError(ctx, step, err)
	}
	if x.Model != nil {
		addModel(x.Model, resp.Model)
	}
	return resp, nil
}

// addModel adds model to the comma-separated models in *models, once.
func addModel(models *string, model string) {
	switch {
	case model == "" || slices.Contains(strings.Split(*models, ","), model):
	case *models == "":
		*models = model
	default:
		*models += "," + model
	}
}

// safeComplete calls the judge, turning a panic in it into an error.
func safeComplete(ctx context.Context, j scoring.Judge, req scoring.Request) (resp scoring.Response, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("judge panicked: %v", r)
		}
	}()
	return j.Complete(ctx, req)
}

// judgeError types an error returned by a judge call. An *scoring.Error
// keeps its type; cancellation and deadlines are typed from the context;
// anything else means the judge could not be reached.
func judgeError(ctx context.Context, step string, err error) *scoring.Error {
	if te, ok := errors.AsType[*scoring.Error](err); ok {
		c := *te
		if c.Step == "" {
			c.Step = step
		}
		return &c
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &scoring.Error{Type: scoring.ErrorCanceled, Step: step, Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &scoring.Error{Type: scoring.ErrorJudgeTimeout, Step: step, Err: err}
	}
	switch ctx.Err() {
	case context.Canceled:
		return &scoring.Error{Type: scoring.ErrorCanceled, Step: step, Err: err}
	case context.DeadlineExceeded:
		return &scoring.Error{Type: scoring.ErrorJudgeTimeout, Step: step, Err: err}
	}
	return &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Step: step, Err: err}
}
