package llmevalprocessor

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"context"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
	"github.com/llm-eval/llm_eval/scoring"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.yaml from the processor's output")

// otlpTestdata is the repository's testdata/otlp: the OTLP/JSON inputs,
// one sample per convention. The goldens the processor writes from them
// stay here, in testdata/golden.
var otlpTestdata = filepath.Join("..", "..", "testdata", "otlp")

// echoScorer is a deterministic stand-in for a judge-backed scorer: its
// result is derived from the Case, so the golden files show what the
// processor read from each span.
func echoScorer(name string) *fakeScorer {
	return &fakeScorer{name: name, fn: func(_ context.Context, c scoring.Case) scoring.Result {
		switch {
		case name == scoring.Hallucination && len(c.Context) == 0:
			return scoring.Result{Label: scoring.LabelNotScorable, Reason: "no context to check claims against"}
		case name == scoring.PromptAlignment && len(c.Instructions) == 0:
			return scoring.Result{Label: scoring.LabelNotScorable, Reason: "no instructions"}
		}
		score := float64(len(c.Output)%10) / 10
		pass := score <= 0.5
		if name == scoring.PromptAlignment {
			pass = score >= 0.5
		}
		label := scoring.LabelFail
		if pass {
			label = scoring.LabelPass
		}
		words := strings.Fields(c.Input)
		words = words[:min(5, len(words))]
		return scoring.Result{Score: score, Label: label, Reason: fmt.Sprintf(
			"input starts %q; output %d chars; %d context items; %d instructions",
			strings.Join(words, " "), len(c.Output), len(c.Context), len(c.Instructions))}
	}}
}

func TestGoldenConventions(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join(otlpTestdata, "conventions", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			require.NoError(t, err)
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
			require.NoError(t, err)
			spans := td.SpanCount()

			h := newHarness(t, testConfig(scoring.Bias, scoring.Hallucination, scoring.PromptAlignment),
				echoScorer(scoring.Bias), echoScorer(scoring.Hallucination), echoScorer(scoring.PromptAlignment))
			h.consume(td)
			h.waitSpans(spans)
			h.waitIdle()
			h.shutdown()
			require.Equal(t, spans, h.sink.SpanCount(), "every span leaves exactly once, no late spans")

			actual := canonicalTraces(h.sink.AllTraces())
			path := filepath.Join("testdata", "golden", name+".yaml")
			if *update {
				require.NoError(t, golden.WriteTraces(t, path, actual))
			}
			expected, err := golden.ReadTraces(path)
			require.NoError(t, err)
			require.NoError(t, ptracetest.CompareTraces(expected, actual,
				ptracetest.IgnoreResourceSpansOrder(), ptracetest.IgnoreScopeSpansOrder(), ptracetest.IgnoreSpansOrder()))
		})
	}
}

// canonicalTraces merges forwarded batches into one Traces grouped by
// resource and scope, spans in id order, event timestamps zeroed.
func canonicalTraces(batches []ptrace.Traces) ptrace.Traces {
	type item struct {
		rs   ptrace.ResourceSpans
		ss   ptrace.ScopeSpans
		span ptrace.Span
	}
	var items []item
	for _, td := range batches {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					items = append(items, item{rs, ss, s})
				}
			}
		}
	}
	slices.SortFunc(items, func(a, b item) int {
		if c := cmp.Compare(a.span.TraceID().String(), b.span.TraceID().String()); c != 0 {
			return c
		}
		return cmp.Compare(a.span.SpanID().String(), b.span.SpanID().String())
	})
	out := ptrace.NewTraces()
	for _, it := range items {
		var rs ptrace.ResourceSpans
		found := false
		for _, r := range out.ResourceSpans().All() {
			if r.SchemaUrl() == it.rs.SchemaUrl() && reflect.DeepEqual(r.Resource().Attributes().AsRaw(), it.rs.Resource().Attributes().AsRaw()) {
				rs, found = r, true
				break
			}
		}
		if !found {
			rs = out.ResourceSpans().AppendEmpty()
			it.rs.Resource().CopyTo(rs.Resource())
			rs.SetSchemaUrl(it.rs.SchemaUrl())
		}
		var ss ptrace.ScopeSpans
		found = false
		for _, s := range rs.ScopeSpans().All() {
			if s.Scope().Name() == it.ss.Scope().Name() && s.Scope().Version() == it.ss.Scope().Version() {
				ss, found = s, true
				break
			}
		}
		if !found {
			ss = rs.ScopeSpans().AppendEmpty()
			it.ss.Scope().CopyTo(ss.Scope())
			ss.SetSchemaUrl(it.ss.SchemaUrl())
		}
		span := ss.Spans().AppendEmpty()
		it.span.CopyTo(span)
		for _, ev := range span.Events().All() {
			if ev.Name() == evalconv.EventName {
				ev.SetTimestamp(pcommon.Timestamp(0))
			}
		}
	}
	return out
}
