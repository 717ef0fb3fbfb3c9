package resultwrite // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"

import (
	"errors"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring"
)

// Names written for a failed evaluation.
const (
	otherErrorType       = "_OTHER"
	missingLabelErrorMsg = "scorer returned no verdict"
)

// outcome is what one scorer's result says, decided once for every place
// it is written: the gen_ai.evaluation.result span event and log record,
// and the flat llm_eval.<scorer>.* span attributes.
type outcome struct {
	scorer      string
	label       scoring.Label // pass, fail, not_scorable or error
	score       float64       // written only for pass and fail
	explanation string        // redacted; empty writes nothing
	errorType   string        // error.type; set only for error
	// judgeModel and promptVersion say who judged, "" when unknown.
	judgeModel    string
	promptVersion string
}

func newOutcome(scorer string, r scoring.Result, redact func(string) string) outcome {
	v := outcome{
		scorer:        scorer,
		label:         Label(r),
		score:         r.Score,
		explanation:   Explanation(r, redact),
		judgeModel:    r.JudgeModel,
		promptVersion: r.PromptVersion,
	}
	if v.label == scoring.LabelError {
		v.errorType = ResultErrorType(r)
	}
	return v
}

// scored reports a pass or fail verdict, the only ones with a score.
func (v outcome) scored() bool {
	return v.label == scoring.LabelPass || v.label == scoring.LabelFail
}

// putEventAttributes writes the attributes of a gen_ai.evaluation.result
// event: the score only when scored, the label unless the evaluation
// failed, error.type only when it did.
func (v outcome) putEventAttributes(attrs pcommon.Map, responseID string) {
	attrs.PutStr(evalconv.AttrName, v.scorer)
	if v.scored() {
		attrs.PutDouble(evalconv.AttrScoreValue, v.score)
	}
	if v.label != scoring.LabelError {
		attrs.PutStr(evalconv.AttrScoreLabel, string(v.label))
	}
	if v.explanation != "" {
		attrs.PutStr(evalconv.AttrExplanation, v.explanation)
	}
	if responseID != "" {
		attrs.PutStr(evalconv.AttrResponseID, responseID)
	}
	if v.errorType != "" {
		attrs.PutStr(evalconv.AttrErrorType, v.errorType)
	}
	if v.judgeModel != "" {
		attrs.PutStr(evalconv.AttrJudgeModel, v.judgeModel)
	}
	if v.promptVersion != "" {
		attrs.PutStr(evalconv.AttrPromptVersion, v.promptVersion)
	}
}

// putFlatAttributes writes llm_eval.<scorer>.{score,label,reason}: the
// label always, error included.
func (v outcome) putFlatAttributes(attrs pcommon.Map) {
	if v.scored() {
		attrs.PutDouble(evalconv.FlatScore(v.scorer), v.score)
	}
	attrs.PutStr(evalconv.FlatLabel(v.scorer), string(v.label))
	if v.explanation != "" {
		attrs.PutStr(evalconv.FlatReason(v.scorer), v.explanation)
	}
}

// Label is the result's verdict; anything unknown counts as an error.
func Label(r scoring.Result) scoring.Label {
	switch r.Label {
	case scoring.LabelPass, scoring.LabelFail, scoring.LabelNotScorable:
		return r.Label
	}
	return scoring.LabelError
}

// ResultErrorType is the error.type of a failed evaluation.
func ResultErrorType(r scoring.Result) string { return ErrorType(r.Err) }

// ErrorType is the scoring error type of err, or _OTHER.
func ErrorType(err error) string {
	var se *scoring.Error
	if errors.As(err, &se) && se.Type != "" {
		return string(se.Type)
	}
	return otherErrorType
}

// Explanation is the reason of a verdict, or the message of a failure.
func Explanation(r scoring.Result, redact func(string) string) string {
	if Label(r) != scoring.LabelError {
		return redact(r.Reason)
	}
	if r.Err != nil {
		return redact(r.Err.Error())
	}
	if r.Reason != "" {
		return redact(r.Reason)
	}
	return missingLabelErrorMsg
}
