package genai

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// readLogFile unmarshals an OTLP/JSON logs file of testdata/otlp/logs.
func readLogFile(t testing.TB, file string) plog.Logs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../../../testdata/otlp/logs", file))
	require.NoError(t, err)
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(b)
	require.NoError(t, err)
	return ld
}

// callsOf groups the GenAI log events of the given batches by span id, in
// arrival order, the way the joiner does for one call.
func callsOf(batches ...plog.Logs) map[string]plog.LogRecordSlice {
	calls := map[string]plog.LogRecordSlice{}
	for _, ld := range batches {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, rec := range sl.LogRecords().All() {
					if ClassifyLog(rl.Resource(), rec) == LogOther {
						continue
					}
					key := rec.SpanID().String()
					s, ok := calls[key]
					if !ok {
						s = plog.NewLogRecordSlice()
						calls[key] = s
					}
					rec.CopyTo(s.AppendEmpty())
				}
			}
		}
	}
	return calls
}

func logsGen(input, conversation, output string, o ...func(*Generation)) Generation {
	return gen(ConventionGenAILogs, input, conversation, output, o...)
}

// TestReadLogFiles reads the calls of the testdata/otlp/logs files, keyed by span id.
func TestReadLogFiles(t *testing.T) {
	tests := []struct {
		name  string
		files []string // batches, in arrival order
		want  map[string]Generation
	}{
		{
			name:  "details event, structured attributes",
			files: []string{"details_structured.json"},
			want: map[string]Generation{
				"eee19b7ec3c1b174": logsGen("Where is my order 1042?",
					"user: Where is my order 1042?\n"+`assistant: [tool call lookup_order({"order_id":"1042"})]`+"\ntool: Order 1042 shipped on 2025-12-18 via DHL.",
					"Order 1042 shipped on 18 December 2025 with DHL.",
					tools("Order 1042 shipped on 2025-12-18 via DHL."),
					system("You are the ACME support assistant. Answer only from the provided context."),
					model("gpt-4o-mini", "chatcmpl-LOGS1")),
			},
		},
		{
			name:  "details event, JSON text body and JSON string attributes",
			files: []string{"details_string_body.json"},
			want: map[string]Generation{
				"b7ad6b7169203331": logsGen("What does HTTP 429 mean?", "user: What does HTTP 429 mean?",
					"The client sent too many requests and is being rate limited.",
					system("Reply in one sentence."), model("claude-sonnet-4", "msg_01LOGSTR")),
				"00f067aa0ba902b7": logsGen("Plan one day in Kyoto.",
					"system: You are a travel agent.\nuser: Plan one day in Kyoto.",
					"Morning: Fushimi Inari. Afternoon: Gion.",
					system("You are a travel agent."), model("gpt-4.1", "chatcmpl-LOGS3")),
			},
		},
		{
			name:  "per-message events of two calls in one batch",
			files: []string{"message_events_one_batch.json"},
			want: map[string]Generation{
				"1e44d14bd3c74269": logsGen("Weather in Rome?",
					"system: You are a weather assistant.\nuser: Weather in Rome?\n"+`assistant: [tool call get_weather({"city":"Rome"})]`+"\ntool: Rome: sunny, 24°C",
					"It is sunny in Rome, 24°C.", tools("Rome: sunny, 24°C"), system("You are a weather assistant.")),
				"8bed2dbecbd446ef": logsGen("Opposite of hot?", "system: Reply with a single word.\nuser: Opposite of hot?", "Cold.",
					system("Reply with a single word.")),
			},
		},
		{
			name:  "per-message events split across two batches",
			files: []string{"message_events_split_1.json", "message_events_split_2.json"},
			want: map[string]Generation{
				"53995c3f42cd8ad8": logsGen("Best time to visit Lisbon?",
					"system: You are a concise travel guide.\nuser: Best time to visit Lisbon?",
					"Spring and autumn: mild weather and fewer crowds.", system("You are a concise travel guide.")),
			},
		},
		{
			name:  "capture off: no content",
			files: []string{"capture_off.json"},
			want: map[string]Generation{
				"0102030405060708": {Convention: ConventionGenAILogs, Missing: MissingOutput},
				"1112131415161718": {Model: "gpt-4o", ResponseID: "chatcmpl-NOCONTENT", Missing: MissingOutput},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var batches []plog.Logs
			for _, f := range tt.files {
				batches = append(batches, readLogFile(t, f))
			}
			calls := callsOf(batches...)
			require.Len(t, calls, len(tt.want))
			for span, want := range tt.want {
				records, ok := calls[span]
				require.True(t, ok, "no call with span id %s", span)
				assert.Equal(t, want, ReadLogs(records), "span %s", span)
			}
		})
	}
}

func TestReadLogsBodies(t *testing.T) {
	record := func(name string, body any, attrs map[string]any) plog.LogRecord {
		rec := plog.NewLogRecord()
		rec.SetEventName(name)
		if body != nil {
			require.NoError(t, rec.Body().FromRaw(body))
		}
		require.NoError(t, rec.Attributes().FromRaw(attrs))
		return rec
	}
	slice := func(recs ...plog.LogRecord) plog.LogRecordSlice {
		s := plog.NewLogRecordSlice()
		for _, r := range recs {
			r.CopyTo(s.AppendEmpty())
		}
		return s
	}
	choice := func(text string) plog.LogRecord {
		return record("gen_ai.choice", map[string]any{"index": int64(0), "finish_reason": "stop",
			"message": map[string]any{"content": text}}, nil)
	}
	tests := []struct {
		name    string
		records plog.LogRecordSlice
		check   func(t *testing.T, g Generation)
	}{
		{
			name: "plain text bodies",
			records: slice(record("gen_ai.user.message", "Hi there", nil),
				record("gen_ai.choice", "Hello!", nil)),
			check: func(t *testing.T, g Generation) {
				assert.Equal(t, "Hi there", g.Input)
				assert.Equal(t, "Hello!", g.Output)
				assert.Empty(t, g.Missing)
			},
		},
		{
			name: "body fields recorded as attributes",
			records: slice(record("gen_ai.user.message", nil, map[string]any{"content": "2+2?"}),
				record("gen_ai.choice", nil, map[string]any{"index": int64(0), "message.content": "4"})),
			check: func(t *testing.T, g Generation) {
				assert.Equal(t, "2+2?", g.Input)
				assert.Equal(t, "4", g.Output)
			},
		},
		{
			name: "content as a list of parts",
			records: slice(record("gen_ai.user.message", map[string]any{"content": []any{
				map[string]any{"type": "text", "text": "Describe this picture."},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}},
			}}, nil), choice("A cat.")),
			check: func(t *testing.T, g Generation) {
				assert.Equal(t, "Describe this picture.", g.Input)
				assert.Equal(t, "A cat.", g.Output)
			},
		},
		{
			name: "lowest choice index is the output",
			records: slice(record("gen_ai.user.message", map[string]any{"content": "Name a colour."}, nil),
				record("gen_ai.choice", `{"index":1,"finish_reason":"stop","message":{"content":"Blue"}}`, nil),
				record("gen_ai.choice", `{"index":0,"finish_reason":"stop","message":{"content":"Red"}}`, nil)),
			check: func(t *testing.T, g Generation) {
				assert.Equal(t, "Red", g.Output)
			},
		},
		{
			name:    "tool calls only",
			records: slice(record("gen_ai.user.message", map[string]any{"content": "Weather?"}, nil), record("gen_ai.choice", map[string]any{"index": int64(0), "finish_reason": "tool_calls", "message": map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "get_weather"}}}}}, nil)),
			check: func(t *testing.T, g Generation) {
				assert.Equal(t, MissingToolCalls, g.Missing)
			},
		},
		{
			name: "truncated JSON text body keeps the answer read so far",
			records: slice(record("gen_ai.client.inference.operation.details",
				`{"gen_ai.input.messages":[{"role":"user","parts":[{"type":"text","content":"Summarise."}]}],"gen_ai.output.messages":[{"role":"assistant","parts":[{"type":"text","content":"The team will sh`,
				nil)),
			check: func(t *testing.T, g Generation) {
				assert.Equal(t, "Summarise.", g.Input)
				assert.Equal(t, "The team will sh", g.Output)
			},
		},
		{
			name: "details wins over per-message events",
			records: slice(record("gen_ai.user.message", map[string]any{"content": "old question"}, nil), choice("old answer"),
				record("gen_ai.client.inference.operation.details", nil, map[string]any{
					"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"new question"}]}]`,
					"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"new answer"}],"finish_reason":"stop"}]`,
				})),
			check: func(t *testing.T, g Generation) {
				assert.Equal(t, "new question", g.Input)
				assert.Equal(t, "new answer", g.Output)
			},
		},
		{
			name:    "redacted output",
			records: slice(record("gen_ai.user.message", map[string]any{"content": "Balance?"}, nil), choice(redacted)),
			check: func(t *testing.T, g Generation) {
				assert.Equal(t, MissingRedacted, g.Missing)
			},
		},
		{
			name:    "binary body is not content",
			records: slice(record("gen_ai.user.message", map[string]any{"content": "Hi"}, nil), record("gen_ai.choice", []byte("\x00\x01"), nil)),
			check: func(t *testing.T, g Generation) {
				assert.Equal(t, MissingOutput, g.Missing)
				assert.Empty(t, g.Output)
			},
		},
		{
			name:    "other records are ignored",
			records: slice(record("", "GET /health 200", nil), record("gen_ai.evaluation.result", nil, map[string]any{"gen_ai.evaluation.name": "bias"})),
			check: func(t *testing.T, g Generation) {
				assert.Equal(t, Generation{Missing: MissingOutput}, g)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, ReadLogs(tt.records))
		})
	}
}

func TestClassifyLog(t *testing.T) {
	tests := []struct {
		name     string
		event    string // EventName field
		attrs    map[string]any
		resource map[string]any
		want     LogEvent
	}{
		{name: "details", event: "gen_ai.client.inference.operation.details", want: LogDetails},
		{name: "choice", event: "gen_ai.choice", want: LogChoice},
		{name: "system message", event: "gen_ai.system.message", want: LogMessage},
		{name: "user message", event: "gen_ai.user.message", want: LogMessage},
		{name: "assistant message", event: "gen_ai.assistant.message", want: LogMessage},
		{name: "tool message", event: "gen_ai.tool.message", want: LogMessage},
		{name: "event.name attribute", attrs: map[string]any{"event.name": "gen_ai.user.message"}, want: LogMessage},
		{name: "EventName wins over the attribute", event: "gen_ai.choice", attrs: map[string]any{"event.name": "gen_ai.user.message"}, want: LogChoice},
		{name: "unknown role", event: "gen_ai.robot.message", want: LogOther},
		{name: "evaluation result", event: "gen_ai.evaluation.result", want: LogOther},
		{name: "plain log", want: LogOther},
		{name: "non-string event.name", attrs: map[string]any{"event.name": int64(3)}, want: LogOther},
		{name: "judge record", event: "gen_ai.choice", attrs: map[string]any{JudgeAttribute: true}, want: LogOther},
		{name: "judge resource", event: "gen_ai.choice", resource: map[string]any{JudgeAttribute: true}, want: LogOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := plog.NewLogRecord()
			rec.SetEventName(tt.event)
			require.NoError(t, rec.Attributes().FromRaw(tt.attrs))
			res := pcommon.NewResource()
			require.NoError(t, res.Attributes().FromRaw(tt.resource))
			assert.Equal(t, tt.want, ClassifyLog(res, rec))
		})
	}
}

// BenchmarkReadLogs reads one call: a details record, and the five
// per-message events of a tool round trip.
func BenchmarkReadLogs(b *testing.B) {
	for _, bc := range []struct {
		name, file string
		span       string
	}{
		{"details", "details_structured.json", "eee19b7ec3c1b174"},
		{"details_json_body", "details_string_body.json", "b7ad6b7169203331"},
		{"message_events", "message_events_one_batch.json", "1e44d14bd3c74269"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			records := callsOf(readLogFile(b, bc.file))[bc.span]
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if g := ReadLogs(records); g.Output == "" {
					b.Fatal("no output read")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(records.Len()), "ns/record")
		})
	}
}

// BenchmarkClassifyLog classifies every record of a batch of per-message
// events with a plain log record among them; it must not allocate.
func BenchmarkClassifyLog(b *testing.B) {
	ld := readLogFile(b, "message_events_one_batch.json")
	rl := ld.ResourceLogs().At(0)
	records := rl.ScopeLogs().At(0).LogRecords()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, rec := range records.All() {
			if ClassifyLog(rl.Resource(), rec) != LogOther {
				n++
			}
		}
		if n != records.Len()-1 {
			b.Fatalf("%d GenAI events", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(records.Len()), "ns/record")
}

// FuzzReadLogs feeds arbitrary text as the bodies of per-message events and
// of an operation-details record: ReadLogs must neither panic nor exceed
// its bounds.
func FuzzReadLogs(f *testing.F) {
	f.Add(`{"content":"hi"}`, `{"index":0,"finish_reason":"stop","message":{"content":"hello"}}`,
		`{"gen_ai.input.messages":[{"role":"user","parts":[{"type":"text","content":"q"}]}]}`)
	f.Add("plain question", "plain answer", `{"gen_ai.output.messages":"[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"a\"}]}]"}`)
	f.Add(`{"content":[{"type":"text","text":"x"},{"type":"image_url"}]}`, `{"message":"{\"content\":\"nested\"}","index":"7"}`, `{"gen_ai.system_instructions":`)
	f.Add(`[[[[[[`, `{"index":1e999,"message":{"tool_calls":"[{]"}}`, "\xff\xfe")
	f.Fuzz(func(t *testing.T, user, choice, details string) {
		records := plog.NewLogRecordSlice()
		for _, r := range []struct{ name, body string }{
			{"gen_ai.user.message", user}, {"gen_ai.choice", choice},
		} {
			rec := records.AppendEmpty()
			rec.SetEventName(r.name)
			rec.Body().SetStr(r.body)
		}
		checkGeneration(t, ReadLogs(records))

		d := plog.NewLogRecordSlice()
		rec := d.AppendEmpty()
		rec.SetEventName(eventOperationDetails)
		rec.Body().SetStr(details)
		checkGeneration(t, ReadLogs(d))
	})
}
