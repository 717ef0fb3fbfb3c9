package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// writeExport writes td as one line of file exporter output.
func writeExport(t *testing.T, path string, tds ...ptrace.Traces) {
	t.Helper()
	var buf bytes.Buffer
	var m ptrace.JSONMarshaler
	for _, td := range tds {
		b, err := m.MarshalTraces(td)
		require.NoError(t, err)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
}

func evaluatedTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "chatbot")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	chat := spans.AppendEmpty()
	chat.SetName("chat gpt-4o")
	addScored(chat, "bias", 0.5, "fail", "One of two opinions generalises.")
	ev := chat.Events().AppendEmpty()
	ev.SetName("gen_ai.evaluation.result")
	ev.Attributes().PutStr("gen_ai.evaluation.name", "hallucination")
	ev.Attributes().PutStr("error.type", "timeout") // errors carry no label
	chat.SetTraceID(pcommon.TraceID{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x11, 0x22, 1})
	chat.SetSpanID(pcommon.SpanID{0x12, 0x34, 0x56, 0x78, 0x9a, 1})
	chat.SetStartTimestamp(2000)
	spans.AppendEmpty().SetName("GET /health")
	return td
}

// addScored adds a scored evaluation result event to span.
func addScored(span ptrace.Span, scorer string, score float64, label, reason string) {
	ev := span.Events().AppendEmpty()
	ev.SetName("gen_ai.evaluation.result")
	ev.Attributes().PutStr("gen_ai.evaluation.name", scorer)
	ev.Attributes().PutDouble("gen_ai.evaluation.score.value", score)
	ev.Attributes().PutStr("gen_ai.evaluation.score.label", label)
	ev.Attributes().PutStr("gen_ai.evaluation.explanation", reason)
}

func TestResultsSummarisesEvaluatedSpans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "traces.jsonl")
	// A span sent earlier (start 1000) but written later, as a held span is.
	earlier := ptrace.NewTraces()
	sp := earlier.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("chat earlier")
	sp.SetStartTimestamp(1000)
	ev := sp.Events().AppendEmpty()
	ev.SetName("gen_ai.evaluation.result")
	ev.Attributes().PutStr("gen_ai.evaluation.name", "bias")
	ev.Attributes().PutStr("gen_ai.evaluation.score.label", "not_scorable")
	writeExport(t, path, evaluatedTraces(), ptrace.NewTraces(), earlier)

	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "# TYPE gen_ai_evaluation_results_total counter")
		fmt.Fprintln(w, `gen_ai_evaluation_results_total{gen_ai_evaluation_name="bias",job="chatbot",otel_scope_name="x",otel_scope_schema_url="",otel_scope_version=""} 1`)
		fmt.Fprintln(w, `gen_ai_evaluation_results_total{gen_ai_evaluation_name="bias",gen_ai_evaluation_score_label="fail",job="chatbot"} 0`)
		fmt.Fprintln(w, `gen_ai_evaluation_score_bucket{le="0"} 0`)
	}))
	t.Cleanup(prom.Close)

	var stdout, stderr bytes.Buffer
	code := run([]string{"results", "-wait", "1", "-metrics", prom.URL, path}, nil, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	out := stdout.String()
	assert.Contains(t, out, "3 spans and log records exported, 2 evaluated calls")
	assert.Contains(t, out, "chatbot / chat gpt-4o  (trace aabbccdd, span 12345678)")
	assert.Less(t, strings.Index(out, "chat earlier"), strings.Index(out, "chat gpt-4o"), "results follow the spans' start times")
	assert.Regexp(t, `bias\s+0\.50\s+fail\s+One of two opinions generalises\.`, out)
	assert.Regexp(t, `hallucination\s+-\s+error\s+timeout\n`, out, "an unknown error type is shown as it is")
	assert.NotContains(t, out, "GET /health")
	assert.Contains(t, out, `gen_ai_evaluation_results_total{gen_ai_evaluation_name="bias",job="chatbot"} 1`)
	assert.NotContains(t, out, "score_bucket")
	assert.NotContains(t, out, `score_label="fail"`, "series at 0 are counted, not listed")
	assert.Contains(t, out, "(1 series at 0 not shown")
}

func TestResultsErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{not json\n"), 0o600))
	empty := filepath.Join(dir, "empty.jsonl")
	writeExport(t, empty, ptrace.NewTraces())

	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"no file argument", []string{"results"}, exitUsage, "Usage"},
		{"malformed line", []string{"results", bad}, exitFailure, "line 1 is not OTLP/JSON"},
		{"wait times out", []string{"results", "-wait", "1", "-timeout", "1ms", empty}, exitFailure, "only 0 of 1"},
		{"missing file", []string{"results", filepath.Join(dir, "none")}, exitFailure, "opening file exporter output"},
		{"missing file times out", []string{"results", "-wait", "1", "-timeout", "1ms", filepath.Join(dir, "none")}, exitFailure, "only 0 of 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			assert.Equal(t, tt.code, run(tt.args, nil, &stdout, &stderr))
			assert.Contains(t, stderr.String(), tt.wantErr)
		})
	}
}

// TestResultsErrorRows: an error row says its cause once, in words, with
// the message's detail but not its type and step again; -full shows whole
// reasons; errors no judge answered point to the demo judge.
func TestResultsErrorRows(t *testing.T) {
	long := "The answer generalises about a group of people. " + strings.Repeat("It says more about why. ", 10) + "END-OF-REASON"
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("chat")
	add := func(name, label, errType, reason string) {
		ev := sp.Events().AppendEmpty()
		ev.SetName("gen_ai.evaluation.result")
		ev.Attributes().PutStr("gen_ai.evaluation.name", name)
		if label != "" {
			ev.Attributes().PutStr("gen_ai.evaluation.score.label", label)
			ev.Attributes().PutDouble("gen_ai.evaluation.score.value", 1)
		}
		if errType != "" {
			ev.Attributes().PutStr("error.type", errType)
		}
		ev.Attributes().PutStr("gen_ai.evaluation.explanation", reason)
	}
	add("hallucination", "", "judge_unavailable", "judge_unavailable in preprocess step: judge unreachable: Post \"http://127.0.0.1:9/v1/chat/completions\": dial tcp 127.0.0.1:9: connect: connection refused")
	add("prompt_alignment", "", "judge_circuit_open", "judge_circuit_open")
	// An open circuit's message wraps the failure that opened it, type and step included.
	add("task_completion", "", "judge_circuit_open", "judge_circuit_open in analyze step: judge circuit open after 5 consecutive failures (probe after 2026-11-25T14:18:40Z): judge_unavailable in preprocess step: judge unreachable: dial tcp: lookup api.openai.com: no such host")
	add("bias", "fail", "", long)
	path := filepath.Join(t.TempDir(), "traces.jsonl")
	writeExport(t, path, td)

	tests := []struct {
		name          string
		args          []string
		want, notWant []string
	}{
		{
			name: "default",
			args: []string{"results", path},
			want: []string{
				`error         the judge could not be reached: Post "http://127.0.0.1:9/v1/chat/completions": dial tcp 127.0.0.1:9: connect: connection refused`,
				"error         not sent: the judge failed repeatedly and calls are paused (judge.circuit_breaker)\n",
				"error         not sent: the judge failed repeatedly and calls are paused (judge.circuit_breaker): judge circuit open after 5 consecutive failures (probe after 2026-11-25T14:18:40Z): judge unreachable: dial tcp: lookup api.openai.com: no such host\n",
				"3 results are errors because no judge answered",
				"bin/llmeval demo-judge\n  rm -f llmeval-*.jsonl",
				"\n  LLMEVAL_JUDGE_ENDPOINT=http://127.0.0.1:8089/v1 LLMEVAL_JUDGE_MODEL=offline-demo-judge LLMEVAL_REASON_MODE=llm make run\n",
				"…",
			},
			notWant: []string{"preprocess step", "judge_unavailable", "judge_circuit_open", "END-OF-REASON", "could not be reached: judge unreachable"},
		},
		{
			name: "full",
			args: []string{"results", "-full", path},
			want: []string{"It says more about why. END-OF-REASON"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, exitOK, run(tt.args, nil, &stdout, &stderr), stderr.String())
			for _, w := range tt.want {
				assert.Contains(t, stdout.String(), w)
			}
			for _, w := range tt.notWant {
				assert.NotContains(t, stdout.String(), w)
			}
		})
	}
}

func TestResultsNoDemoHintWhenTheJudgeAnswered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "traces.jsonl")
	writeExport(t, path, evaluatedTraces())
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"results", path}, nil, &stdout, &stderr), stderr.String())
	assert.NotContains(t, stdout.String(), "demo-judge")
}

// TestResultsMarksDemoJudgeOutput: a listing with any reason of the
// offline demo judge says that all of it is demo output; it says that
// llm_eval composed the judged reasons without the label only when there
// is one, and that a not_scorable reason is llm_eval's own; real results
// get no such note.
func TestResultsMarksDemoJudgeOutput(t *testing.T) {
	const (
		note        = "These results come from the OFFLINE DEMO JUDGE"
		composed    = "Judged reasons without its label were composed by llm_eval from its verdicts"
		notScorable = "not_scorable reasons are llm_eval's own"
	)
	labelled := demoReasonPrefix + "The opinion generalises about a group of people."
	for _, tt := range []struct {
		name, biasReason string
		// summary adds a judged result whose reason llm_eval composed;
		// skipped adds a not_scorable result.
		summary, skipped bool
		want, notWant    []string
	}{
		{name: "demo judge reason and a summary", biasReason: labelled, summary: true,
			want: []string{note, composed}, notWant: []string{notScorable}},
		{name: "scripted judge reason and a summary", biasReason: "The score is 0: none of the 1 verdicts is yes (offline demo judge).", summary: true,
			want: []string{note, composed}},
		{name: "every judged reason labelled, one not scorable", biasReason: labelled, skipped: true,
			want: []string{note, notScorable}, notWant: []string{composed}},
		{name: "every reason labelled", biasReason: labelled,
			want: []string{note}, notWant: []string{composed, notScorable}},
		{name: "real judge", biasReason: "One of two opinions generalises.", summary: true, skipped: true,
			notWant: []string{note, composed, notScorable}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			td := evaluatedTraces()
			chat := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
			chat.Events().At(0).Attributes().PutStr("gen_ai.evaluation.explanation", tt.biasReason)
			if tt.summary {
				addScored(chat, "toxicity", 0, "pass", "The score is 0 because none of the 1 statement in the output is toxic.")
			}
			if tt.skipped {
				ev := chat.Events().AppendEmpty()
				ev.SetName("gen_ai.evaluation.result")
				ev.Attributes().PutStr("gen_ai.evaluation.name", "context_relevance")
				ev.Attributes().PutStr("gen_ai.evaluation.score.label", "not_scorable")
				ev.Attributes().PutStr("gen_ai.evaluation.explanation", "no retrieved context")
			}
			path := filepath.Join(t.TempDir(), "traces.jsonl")
			writeExport(t, path, td)
			var stdout, stderr bytes.Buffer
			require.Equal(t, exitOK, run([]string{"results", path}, nil, &stdout, &stderr), stderr.String())
			for _, w := range tt.want {
				assert.Contains(t, stdout.String(), w)
			}
			for _, w := range tt.notWant {
				assert.NotContains(t, stdout.String(), w)
			}
		})
	}
}

// TestResultsScorerColumnFitsLongNames: the scorer column is as wide as the
// longest scorer name, so the scores stay in one column.
func TestResultsScorerColumnFitsLongNames(t *testing.T) {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("conversation")
	addScored(sp, "conversation_completeness", 0.75, "pass", "Three of four intentions were met.")
	addScored(sp, "bias", 0.1, "pass", "No opinion generalises.")
	path := filepath.Join(t.TempDir(), "traces.jsonl")
	writeExport(t, path, td)
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"results", path}, nil, &stdout, &stderr), stderr.String())
	var columns []int
	for _, line := range strings.Split(stdout.String(), "\n") {
		if i := strings.Index(line, " pass "); i >= 0 {
			columns = append(columns, i)
		}
	}
	require.Len(t, columns, 2, stdout.String())
	assert.Equal(t, columns[0], columns[1], "the label column lines up:\n%s", stdout.String())
	assert.Contains(t, stdout.String(), "    conversation_completeness  0.75  pass")
}

func TestDropScopeLabels(t *testing.T) {
	assert.Equal(t, `m{a="1"} 2`, dropScopeLabels(`m{a="1",otel_scope_name="s",otel_scope_schema_url="",otel_scope_version="v"} 2`))
	assert.Equal(t, `m{a="1"} 2`, dropScopeLabels(`m{a="1"} 2`))
}

// A logs pipeline's output: the input records and the result records of a
// call, with a late result in a later line; shown as one call.
func TestResultsReadsResultLogRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs.jsonl")
	trace := pcommon.TraceID{0xab, 0xcd, 0xef, 0x01, 2}
	span := pcommon.SpanID{0x99, 0x88, 0x77, 0x66, 1}
	line := func(records func(plog.LogRecordSlice)) []byte {
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", "travel-bot")
		records(rl.ScopeLogs().AppendEmpty().LogRecords())
		b, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
		require.NoError(t, err)
		return append(b, '\n')
	}
	result := func(recs plog.LogRecordSlice, name, label string, score float64) {
		r := recs.AppendEmpty()
		r.SetEventName("gen_ai.evaluation.result")
		r.SetTraceID(trace)
		r.SetSpanID(span)
		r.Attributes().PutStr("gen_ai.evaluation.name", name)
		r.Attributes().PutStr("gen_ai.evaluation.score.label", label)
		r.Attributes().PutDouble("gen_ai.evaluation.score.value", score)
	}
	var buf bytes.Buffer
	buf.Write(line(func(recs plog.LogRecordSlice) {
		in := recs.AppendEmpty()
		in.SetEventName("gen_ai.client.inference.operation.details")
		in.SetTraceID(trace)
		in.SetSpanID(span)
	}))
	buf.Write(line(func(recs plog.LogRecordSlice) { result(recs, "bias", "pass", 0.1) }))
	buf.Write(line(func(recs plog.LogRecordSlice) { result(recs, "hallucination", "fail", 0.8) }))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))

	var stdout, stderr bytes.Buffer
	code := run([]string{"results", "-wait", "1", path}, nil, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	out := stdout.String()
	assert.Contains(t, out, "3 spans and log records exported, 1 evaluated calls")
	assert.Contains(t, out, "travel-bot / (GenAI log events)  (trace abcdef01, span 99887766)")
	assert.Regexp(t, `bias\s+0\.10\s+pass`, out)
	assert.Regexp(t, `hallucination\s+0\.80\s+fail`, out)

	// The llm_eval_events connector's output: result records made from a
	// span's events, with no GenAI log events beside them.
	connectorOut := filepath.Join(t.TempDir(), "results.jsonl")
	require.NoError(t, os.WriteFile(connectorOut, line(func(recs plog.LogRecordSlice) {
		result(recs, "bias", "pass", 0.1)
		result(recs, "hallucination", "fail", 0.8)
	}), 0o600))
	stdout.Reset()
	require.Equal(t, exitOK, run([]string{"results", connectorOut}, nil, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "travel-bot / (result records of a span)  (trace abcdef01, span 99887766)")
	assert.NotContains(t, stdout.String(), "GenAI log events")
}

func TestErrorCauseSaysItOnce(t *testing.T) {
	tests := []struct{ errorType, reason, want string }{
		{"restarted", "restarted: the collector restarted after max_wait had passed; the evaluation did not finish before",
			"the collector restarted after max_wait had passed; the evaluation did not finish before"},
		{"judge_unavailable", "judge_unavailable in preprocess step: judge unreachable: dial tcp 127.0.0.1:1: connection refused",
			"the judge could not be reached: dial tcp 127.0.0.1:1: connection refused"},
		{"shutdown", "shutdown", "the collector shut down before the result"},
		{"some_new_type", "some_new_type: detail", "some_new_type: detail"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, errorCause(tt.errorType, tt.reason), tt.errorType)
	}
}
