package subject // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/persistence"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/scoring"
)

// LogCall is one GenAI call read from log records; it is the subject of
// the logs signal. Its results leave as new records under the resource
// and scope of the call's first record.
type LogCall struct {
	out   *LogOut
	of    resultwrite.Evaluated
	gen   genai.Generation
	group logjoin.Group // read-only once admitted
	// excluded are the scorers whose include/exclude the call fails.
	excluded map[string]bool
	// onSpan: the call's span carries the same results (Pair).
	onSpan bool
}

var _ evalstore.Pairable = (*LogCall)(nil)

// NewLogCall is the subject of the call g, whose records read as gen and
// whose include/exclude left out the excluded scorers.
func NewLogCall(out *LogOut, g logjoin.Group, gen genai.Generation, excluded map[string]bool) *LogCall {
	return &LogCall{out: out, gen: gen, group: g, excluded: excluded, of: resultwrite.Evaluated{
		TraceID: g.Key.TraceID, SpanID: g.Key.SpanID, Model: gen.Model, ResponseID: gen.ResponseID,
	}}
}

// CallAttributes are what filters match a log call's own attributes
// against: each key as the first of its records to carry it has it.
func CallAttributes(recs plog.LogRecordSlice) pcommon.Map {
	attrs := pcommon.NewMap()
	for i := 0; i < recs.Len(); i++ {
		for k, v := range recs.At(i).Attributes().All() {
			if _, ok := attrs.Get(k); !ok {
				v.CopyTo(attrs.PutEmpty(k))
			}
		}
	}
	return attrs
}

// NewPair is the subject of the call, its span to join it.
func (c *LogCall) NewPair() evalstore.Pair { return pairOf(c) }

// Case builds what the scorer evaluates.
func (c *LogCall) Case(sc evalstore.Scorer) scoring.Case {
	return caseFromGeneration(c.gen, c.of, sc)
}

// Skips says whether the scorer is left out for the call: a log call is a
// generation.
func (c *LogCall) Skips(sc evalstore.Scorer) bool {
	if !sc.AppliesTo(false, c.excluded) {
		return true
	}
	return sc.ContextPresent && len(ownContext(c.gen, sc)) == 0
}

// Leave emits one result record per scorer that applies to the call.
func (c *LogCall) Leave(ctx context.Context, results []evalstore.Result) {
	ld, recs := logjoin.NewLogsUnder(c.group.Resource(), c.group.Scope())
	for _, r := range results {
		if r.Skipped {
			continue
		}
		rec := resultwrite.AppendResultRecord(recs, c.of, r, c.out.Policy.Redact)
		if c.onSpan {
			rec.Attributes().PutBool(evalconv.AttrOnSpan, true)
		}
	}
	if recs.Len() > 0 {
		c.out.Sink.Emit(ctx, ld)
	}
}

// Late emits a result that finished after the others left, or only counts
// it, as late_results says.
func (c *LogCall) Late(ctx context.Context, r evalstore.Result) {
	tel := c.out.Tel
	if !c.out.Policy.EmitsLate(r.Label()) {
		tel.LateResultDropped(ctx, r.Scorer)
		return
	}
	tel.LateResult(ctx, r.Scorer)
	c.Leave(ctx, []evalstore.Result{r})
}

// MarkAll emits the same result for every scorer without running any
// (not scorable, queue full, shut down) and counts the call unscored; with
// record the results are counted too.
func (c *LogCall) MarkAll(ctx context.Context, res scoring.Result, reason string, record bool) {
	now := time.Now()
	results := make([]evalstore.Result, 0, len(c.out.Scorers))
	for _, sc := range c.out.Scorers {
		if !sc.AppliesTo(false, c.excluded) {
			continue
		}
		r := res
		r.Scorer = sc.Name
		results = append(results, evalstore.Result{Scorer: sc.Name, At: now, Result: r})
		if record {
			c.out.Tel.RecordResult(ctx, results[len(results)-1])
		}
	}
	c.out.Tel.SpanUnscored(ctx, reason)
	c.Leave(ctx, results)
}

// Record implements persistence.Stored for a log call.
func (c *LogCall) Record(admitted time.Time) ([]byte, error) {
	return persistence.EncodeLogCall(c.group.Logs, admitted)
}
