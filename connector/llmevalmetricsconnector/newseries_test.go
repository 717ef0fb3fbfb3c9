package llmevalmetricsconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
)

// labelled returns traces with one result per label, all of scorer name,
// with a score of 1 for fail and 0 otherwise.
func labelled(name string, labels ...string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "chat")
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.Attributes().PutStr(evalconv.AttrRequestModel, "gpt-4o")
	for _, l := range labels {
		ev := span.Events().AppendEmpty()
		ev.SetName(evalconv.EventName)
		ev.Attributes().PutStr(evalconv.AttrName, name)
		ev.Attributes().PutStr(evalconv.AttrScoreLabel, l)
		score := 0.0
		if l == labelFail {
			score = 1
		}
		ev.Attributes().PutDouble(evalconv.AttrScoreValue, score)
	}
	return td
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// counts returns the results count of every label of scorer name in md,
// and the histogram count of every label that has a histogram point.
func counts(md pmetric.Metrics, name string) (results map[string]int64, scores map[string]uint64) {
	results, scores = map[string]int64{}, map[string]uint64{}
	for _, label := range []string{labelPass, labelFail, labelNotScorable, labelError, "relevant"} {
		r, h := findPoints(md, name, label)
		if len(r) == 1 {
			results[label] = r[0].IntValue()
		}
		if len(h) == 1 {
			scores[label] = h[0].Count()
		}
	}
	return results, scores
}

// TestNewSeriesStartAtZero follows one set through the flushes that the
// alert rules need: Prometheus' increase() ignores a series' first sample,
// so every series is exported at zero, for new_series_hold, before its
// first count; the results counted meanwhile are exported in full.
func TestNewSeriesStartAtZero(t *testing.T) {
	zeros := map[string]int64{labelPass: 0, labelFail: 0, labelNotScorable: 0, labelError: 0}
	steps := []struct {
		name        string
		at          time.Duration  // after the first flush
		in          *ptrace.Traces // consumed before the flush; nil for none
		final       bool
		wantResults map[string]int64
		wantScores  map[string]uint64
	}{
		{
			name: "first results of a set: every outcome at zero, the passes held back",
			in:   ptr(labelled("bias", repeat(labelPass, 2)...)), wantResults: zeros, wantScores: map[string]uint64{labelPass: 0},
		},
		{
			name: "held for new_series_hold: more passes are counted, not sent",
			at:   75 * time.Second, in: ptr(labelled("bias", labelPass)), wantResults: zeros, wantScores: map[string]uint64{labelPass: 0},
		},
		{
			name:        "new_series_hold has passed: every pass counted meanwhile",
			at:          90 * time.Second,
			wantResults: map[string]int64{labelPass: 3, labelFail: 0, labelNotScorable: 0, labelError: 0}, wantScores: map[string]uint64{labelPass: 3},
		},
		{
			name:        "a burst of failures on a fail series that was long at zero counts at once; its new histogram starts at zero",
			at:          105 * time.Second,
			in:          ptr(labelled("bias", repeat(labelFail, 3)...)),
			wantResults: map[string]int64{labelPass: 3, labelFail: 3, labelNotScorable: 0, labelError: 0},
			wantScores:  map[string]uint64{labelPass: 3, labelFail: 0},
		},
		{
			name:        "the failures' histogram, still held",
			at:          190 * time.Second,
			wantResults: map[string]int64{labelPass: 3, labelFail: 3, labelNotScorable: 0, labelError: 0},
			wantScores:  map[string]uint64{labelPass: 3, labelFail: 0},
		},
		{
			name:        "the failures' scores, new_series_hold after their first zero",
			at:          195 * time.Second,
			wantResults: map[string]int64{labelPass: 3, labelFail: 3, labelNotScorable: 0, labelError: 0},
			wantScores:  map[string]uint64{labelPass: 3, labelFail: 3},
		},
		{
			name:        "a label outside the outcomes is held back alone",
			at:          210 * time.Second,
			in:          ptr(labelled("bias", "relevant")),
			wantResults: map[string]int64{labelPass: 3, labelFail: 3, labelNotScorable: 0, labelError: 0, "relevant": 0},
			wantScores:  map[string]uint64{labelPass: 3, labelFail: 3, "relevant": 0},
		},
		{
			name: "the shutdown flush holds nothing back",
			at:   225 * time.Second, in: ptr(labelled("bias", labelError)), final: true,
			wantResults: map[string]int64{labelPass: 3, labelFail: 3, labelNotScorable: 0, labelError: 1, "relevant": 1},
			wantScores:  map[string]uint64{labelPass: 3, labelFail: 3, labelError: 1, "relevant": 1},
		},
	}
	cfg := createDefaultConfig()
	require.Equal(t, 90*time.Second, cfg.NewSeriesHold, "the documented default")
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, cfg, sink)
	ctx := context.Background()
	for i, st := range steps {
		c.now = func() time.Time { return seriesStart.Add(st.at) }
		if st.in != nil {
			require.NoError(t, c.ConsumeTraces(ctx, *st.in))
		}
		require.NoError(t, c.flush(ctx, st.final), st.name)
		require.Len(t, sink.AllMetrics(), i+1, st.name)
		results, scores := counts(sink.AllMetrics()[i], "bias")
		assert.Equal(t, st.wantResults, results, st.name)
		assert.Equal(t, st.wantScores, scores, st.name)
	}
}

// TestZeroHoldOfNoneIsOneFlush: new_series_hold 0 still exports a new
// series at zero once.
func TestZeroHoldOfNoneIsOneFlush(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.NewSeriesHold = 0
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, cfg, sink)
	ctx := context.Background()
	require.NoError(t, c.ConsumeTraces(ctx, labelled("bias", labelFail)))
	require.NoError(t, c.flush(ctx, false))
	require.NoError(t, c.flush(ctx, false))
	first, _ := counts(sink.AllMetrics()[0], "bias")
	second, _ := counts(sink.AllMetrics()[1], "bias")
	assert.Equal(t, int64(0), first[labelFail])
	assert.Equal(t, int64(1), second[labelFail])
}

// TestScrapeRarerThanFlushSeesTheZero scrapes the flushed state every 3s
// while the connector flushes every second, at every phase between the
// two clocks: with new_series_hold at the scrape interval, the first
// sample of a new model's fail series is always 0, so increase() counts
// its burst. Held for one flush only (new_series_hold 0), most phases
// never see the zero.
func TestScrapeRarerThanFlushSeesTheZero(t *testing.T) {
	const (
		flush  = time.Second
		scrape = 3 * time.Second
		phases = 30 // scrape offsets 0, 100ms, ..., 2.9s
	)
	firstScraped := func(t *testing.T, hold time.Duration, phase time.Duration) int64 {
		cfg := createDefaultConfig()
		cfg.MetricsFlushInterval = flush
		cfg.NewSeriesHold = hold
		sink := &consumertest.MetricsSink{}
		c := newTestConnector(t, cfg, sink)
		ctx := context.Background()
		// The burst arrives just before a flush: the worst case.
		c.now = func() time.Time { return seriesStart.Add(-time.Millisecond) }
		require.NoError(t, c.ConsumeTraces(ctx, labelled("bias", repeat(labelFail, 10)...)))
		exported := func(at time.Duration) (int64, bool) { // what a scrape at `at` reads
			n := int(at / flush) // flushes at 0, 1s, ... up to at
			if n >= len(sink.AllMetrics()) {
				return 0, false
			}
			r, _ := counts(sink.AllMetrics()[n], "bias")
			v, ok := r[labelFail]
			return v, ok
		}
		for i := 0; i < 20; i++ {
			c.now = func() time.Time { return seriesStart.Add(time.Duration(i) * flush) }
			require.NoError(t, c.flush(ctx, false))
		}
		for at := phase; at < 19*flush; at += scrape {
			if v, ok := exported(at); ok {
				return v
			}
		}
		t.Fatalf("phase %s: the fail series was never scraped", phase)
		return -1
	}
	missed := 0
	for p := range phases {
		phase := time.Duration(p) * 100 * time.Millisecond
		assert.Equal(t, int64(0), firstScraped(t, scrape, phase), "new_series_hold = scrape interval, scrape phase %s", phase)
		if firstScraped(t, 0, phase) != 0 {
			missed++
		}
	}
	assert.Greater(t, missed, phases/2, "held for one flush, most scrape phases miss the zero")
}

func TestHeldBackExemplarsGoWithTheirValues(t *testing.T) {
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, createDefaultConfig(), sink)
	ctx := context.Background()
	require.NoError(t, c.ConsumeTraces(ctx, labelled("bias", labelPass)))
	require.NoError(t, c.flush(ctx, false))
	c.now = func() time.Time { return seriesStart.Add(c.cfg.NewSeriesHold) }
	require.NoError(t, c.flush(ctx, false))

	held, heldScores := findPoints(sink.AllMetrics()[0], "bias", labelPass)
	sent, sentScores := findPoints(sink.AllMetrics()[1], "bias", labelPass)
	require.Len(t, held, 1)
	require.Len(t, sent, 1)
	assert.Equal(t, 0, held[0].Exemplars().Len())
	assert.Equal(t, 0, heldScores[0].Exemplars().Len())
	assert.Equal(t, 1, sent[0].Exemplars().Len())
	assert.Equal(t, 1, sentScores[0].Exemplars().Len())
}

// The zero series of a set's other outcomes do not use up max_series, and
// they expire with their set, not on their own.
func TestOutcomeSeriesLimitAndExpiry(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.MaxSeries = 2
	cfg.NewSeriesHold = 0 // expiration, not the hold, is under test
	cfg.MetricsExpiration = time.Minute
	sink := &consumertest.MetricsSink{}
	c := newTestConnector(t, cfg, sink)
	ctx := context.Background()

	c.now = func() time.Time { return seriesStart }
	require.NoError(t, c.ConsumeTraces(ctx, labelled("bias", labelPass)))
	require.NoError(t, c.ConsumeTraces(ctx, labelled("hallucination", labelPass)))
	c.now = func() time.Time { return seriesStart.Add(50 * time.Second) }
	require.NoError(t, c.ConsumeTraces(ctx, labelled("prompt_alignment", labelPass))) // third set: overflow
	require.NoError(t, c.ConsumeTraces(ctx, labelled("bias", labelFail)))             // its zero series exists: counted
	require.NoError(t, c.ConsumeTraces(ctx, labelled("bias", labelPass)))
	c.now = func() time.Time { return seriesStart.Add(90 * time.Second) }
	require.NoError(t, c.flush(ctx, true))

	md := sink.AllMetrics()[0]
	results, _ := counts(md, "bias")
	assert.Equal(t, map[string]int64{labelPass: 2, labelFail: 1, labelNotScorable: 0, labelError: 0}, results,
		"the set was active 40s ago: all its series stay, the never-counted ones too")
	results, _ = counts(md, "hallucination")
	assert.Empty(t, results, "expired together")
	overflow, _ := findPoints(md, "", "")
	require.Len(t, overflow, 1)
	assert.Equal(t, int64(1), overflow[0].IntValue())
}

func ptr[T any](v T) *T { return &v }
