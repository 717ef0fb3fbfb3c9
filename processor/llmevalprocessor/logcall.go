package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"context"
	"time"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/heldrecord"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/resultwrite"
	"github.com/llm-eval/llm_eval/scoring"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// logCall is one GenAI call read from log records; it is the evalSubject
// of the logs signal. Its results leave as new records under the resource
// and scope of the call's first record.
type logCall struct {
	out   *logOutput
	of    evaluatedSpan
	gen   genai.Generation
	group logjoin.Group // read-only once admitted
	// excluded are the scorers whose include/exclude the call fails.
	excluded map[string]bool
	// onSpan: the call's span carries the same results (pair.go, internal/evalstore).
	onSpan bool
}

// callAttributes are what filters match a log call's own attributes
// against: each key as the first of its records to carry it has it.
func callAttributes(recs plog.LogRecordSlice) pcommon.Map {
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

func (c *logCall) Case(cfg ScorerConfig) scoring.Case {
	return caseFromGeneration(c.gen, c.of, cfg)
}

// skips implements scorerSkipper: a log call is a generation.
func (c *logCall) Skips(sc ScorerConfig) bool {
	if !sc.appliesTo(targetGeneration, c.excluded) {
		return true
	}
	return sc.When.ContextPresent && len(ownContext(c.gen, sc)) == 0
}

// leave emits one result record per scorer that applies to the call.
func (c *logCall) Leave(ctx context.Context, results []evalResult) {
	ld, recs := resultwrite.NewResultLogs(c.group.Resource(), c.group.Scope())
	for _, r := range results {
		if r.Skipped {
			continue
		}
		rec := resultwrite.AppendResultRecord(recs, c.of, r.Scorer, r.Result, r.At, c.out.redact)
		if c.onSpan {
			rec.Attributes().PutBool(evalconv.AttrOnSpan, true)
		}
	}
	if recs.Len() > 0 {
		c.out.emit(ctx, ld)
	}
}

// late emits a result that finished after the others left, or only counts
// it, as late_results says.
func (c *logCall) Late(ctx context.Context, r evalResult) {
	tel := c.out.tel
	if !lateEmitted(c.out.lateResults, r.Label()) {
		tel.lateResultDropped(ctx, r.Scorer)
		return
	}
	tel.lateResult(ctx, r.Scorer)
	c.Leave(ctx, []evalResult{r})
}

// markAll emits the same result for every scorer without running any
// (not scorable, queue full, shut down) and counts the call unscored.
func (c *logCall) markAll(ctx context.Context, res scoring.Result, reason string, record bool) {
	now := c.out.now()
	results := make([]evalResult, 0, len(c.out.scorers))
	for _, sc := range c.out.scorers {
		if !sc.appliesTo(targetGeneration, c.excluded) {
			continue
		}
		r := res
		r.Scorer = sc.Name
		results = append(results, evalResult{Scorer: sc.Name, At: now, Result: r})
		if record {
			c.out.tel.recordResult(ctx, results[len(results)-1])
		}
	}
	c.out.tel.spanUnscored(ctx, reason)
	c.Leave(ctx, results)
}

// Record implements itemstore.Stored for a log call.
func (c *logCall) Record(admitted time.Time) ([]byte, error) {
	return heldrecord.EncodeLogCall(c.group.Logs, admitted)
}
