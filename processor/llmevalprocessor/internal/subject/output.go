package subject // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"

import (
	"context"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/scoring"
)

// Telemetry is what subjects count.
type Telemetry interface {
	// LateResult counts a result that finished after its item left and
	// was emitted; LateResultDropped one that late_results drops.
	LateResult(ctx context.Context, scorer string)
	LateResultDropped(ctx context.Context, scorer string)
	// RecordResult counts one scorer's result.
	RecordResult(ctx context.Context, r evalstore.Result)
	// SpanUnscored counts an item that left without any score.
	SpanUnscored(ctx context.Context, reason string)
	// ContextJoined counts where a dispatched case's context came from
	// (JoinSourceSpan, JoinSourceTrace, JoinSourceNone).
	ContextJoined(source string)
}

// SpanSink sends annotated spans and late result spans on; a failure can
// only be logged.
type SpanSink interface {
	ForwardLater(ctx context.Context, td ptrace.Traces)
}

// LogSink sends result records on; a failure can only be logged.
type LogSink interface {
	Emit(ctx context.Context, ld plog.Logs)
}

// Policy is what the configuration says of the results written.
type Policy interface {
	// Redact scrubs the judge's secrets from what is written.
	Redact(string) string
	// EmitsLate says whether late_results emits a late result of label.
	EmitsLate(scoring.Label) bool
}

// SpanOut is where held spans go when they leave, and what they need for
// it.
type SpanOut struct {
	Sink   SpanSink
	Tel    Telemetry
	Policy Policy
}

// LogOut is where log calls' result records go, and what they need for it.
type LogOut struct {
	Sink   LogSink
	Tel    Telemetry
	Policy Policy
	// Scorers are the configured scorers, for results written without
	// evaluating (LogCall.MarkAll).
	Scorers []evalstore.Scorer
}
