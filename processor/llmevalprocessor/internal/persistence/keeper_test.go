package persistence

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"
	"github.com/llm-eval/llm_eval/scoring"
)

// TestRecoveredResultsWriteAsBefore: a result read back from storage is
// written onto its item (error.type, the explanation) as it would have
// been before the crash, secrets already scrubbed.
func TestRecoveredResultsWriteAsBefore(t *testing.T) {
	k := &Keeper{redact: func(s string) string { return s }}
	at := time.Unix(1_760_000_000, 0)
	for _, r := range []scoring.Result{
		{Label: scoring.LabelPass, Score: 0.1, Reason: "fair"},
		{Label: scoring.LabelNotScorable, Reason: "no answer"},
		{Label: scoring.LabelError, Err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("connection refused")}},
		{Label: scoring.LabelError, Err: fmt.Errorf("wrapped: %w", &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("503")})},
		{Label: scoring.LabelError, Err: errors.New("not a scoring error")},
		{Label: scoring.LabelError, Err: errors.New("")},
		{Label: scoring.LabelError, Reason: "a reason and no error"},
		{Label: scoring.LabelError},
		{Label: "unknown", Reason: "an unknown label"},
	} {
		t.Run(fmt.Sprintf("%s_%v", r.Label, r.Err), func(t *testing.T) {
			r.Scorer = "bias"
			res := evalstore.Result{Scorer: "bias", Result: r, At: at, Ran: true}
			b, err := EncodeResult(k.resultRecord(res))
			require.NoError(t, err)
			rec, err := DecodeResult(b)
			require.NoError(t, err)
			back := recoveredResult(rec)
			assert.Equal(t, res.Label(), back.Label())
			assert.Equal(t, res.Explanation(k.redact), back.Explanation(k.redact))
			if res.Label() == scoring.LabelError {
				assert.Equal(t, res.ErrorType(), back.ErrorType())
			}
			assert.Equal(t, r.Score, back.Result.Score)
			assert.True(t, back.At.Equal(at))
			assert.True(t, back.Ran)
		})
	}
}

// TestResultsOfTheReleaseBeforeAreRead: a result record written by the
// release before (error type always set for a failure, no Failed flag)
// reads back as it was written.
func TestResultsOfTheReleaseBeforeAreRead(t *testing.T) {
	b, err := EncodeResult(Result{Scorer: "bias", Label: "error", ErrorType: "_OTHER", ErrorMessage: "boom", At: time.Unix(1, 0)})
	require.NoError(t, err)
	rec, err := DecodeResult(b)
	require.NoError(t, err)
	assert.False(t, rec.Failed)
	back := recoveredResult(rec)
	assert.Equal(t, "_OTHER", back.ErrorType())
	assert.Equal(t, "boom", back.Explanation(func(s string) string { return s }))
}
