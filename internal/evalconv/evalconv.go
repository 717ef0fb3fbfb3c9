// Package evalconv is the evaluation contract of llm_eval: the names under
// which a result is written (by the processor) and read back (by the
// connectors, the CLI and the load harness). The attribute keys come from
// the OpenTelemetry semantic conventions; the rest are llm_eval's own.
package evalconv // import "github.com/llm-eval/llm_eval/internal/evalconv"

import (
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// EventName is the name of the evaluation event: a span event, or a log
// record's event name.
const EventName = "gen_ai.evaluation.result"

// Attribute keys of an evaluation result (semantic conventions v1.40).
const (
	AttrName          = string(semconv.GenAIEvaluationNameKey)
	AttrScoreValue    = string(semconv.GenAIEvaluationScoreValueKey)
	AttrScoreLabel    = string(semconv.GenAIEvaluationScoreLabelKey)
	AttrExplanation   = string(semconv.GenAIEvaluationExplanationKey)
	AttrResponseID    = string(semconv.GenAIResponseIDKey)
	AttrErrorType     = string(semconv.ErrorTypeKey)
	AttrRequestModel  = string(semconv.GenAIRequestModelKey)
	AttrResponseModel = string(semconv.GenAIResponseModelKey)
	AttrOperationName = string(semconv.GenAIOperationNameKey)
	AttrAgentName     = string(semconv.GenAIAgentNameKey)
	// AttrConversationID names the conversation a result of a
	// conversation scorer is about.
	AttrConversationID = string(semconv.GenAIConversationIDKey)
)

// AttrLegacyEventName is the attribute that named an event before log
// records had an event name field (semantic conventions before v1.32).
// Readers accept it as well as the field.
const AttrLegacyEventName = "event.name"

// ModelKeys are the attributes that name the evaluated model, in order of
// preference: GenAI request and response model, then the OpenInference and
// Vercel AI SDK spellings.
var ModelKeys = [...]string{AttrRequestModel, AttrResponseModel, "llm.model_name", "ai.model.id"}

// llm_eval's own names.
const (
	// FlatPrefix starts the flat llm_eval.<scorer>.{score,label,reason}
	// span attributes, for backends that search attributes only.
	FlatPrefix = "llm_eval."
	// LateSpanName names the child span that carries a result which
	// arrived after its span had been forwarded.
	LateSpanName = "gen_ai.evaluation"
	// OperationEvaluation is the gen_ai.operation.name of such a span.
	OperationEvaluation = "evaluation"
	// AttrOnSpan (true) marks a result record whose result was also
	// written on the evaluated span as a span event: a call whose span and
	// GenAI log events both went through llm_eval, evaluated once. A reader
	// that counts results from traces and logs skips such records, so each
	// result is counted once.
	AttrOnSpan = FlatPrefix + "on_span"
	// AttrConversationMessages is the number of messages of the
	// conversation the results of a conversation span are about, those
	// left out to keep it bounded included.
	AttrConversationMessages = FlatPrefix + "conversation.messages"
	// AttrConversationOmitted is how many of them the judge did not see.
	AttrConversationOmitted = FlatPrefix + "conversation.omitted"
	// AttrJudgeModel names the model that judged a result (the evaluator),
	// as judge.model names it; models of a primary and a fallback judge
	// that both answered are joined by commas. gen_ai.request.model on a
	// result record names the evaluated model, not this one.
	AttrJudgeModel = FlatPrefix + "judge.model"
	// AttrPromptVersion identifies the scorer's prompts (a hash of its step
	// templates and reply schemas) a result was judged with.
	AttrPromptVersion = FlatPrefix + "prompt.version"
)

// FlatScore, FlatLabel and FlatReason are the flat attribute keys of one
// scorer's result.
func FlatScore(scorer string) string  { return FlatPrefix + scorer + ".score" }
func FlatLabel(scorer string) string  { return FlatPrefix + scorer + ".label" }
func FlatReason(scorer string) string { return FlatPrefix + scorer + ".reason" }
