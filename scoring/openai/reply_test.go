package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replies are chat completions as endpoints write them.
var replies = map[string]string{
	"openai": `{"id":"chatcmpl-abc","object":"chat.completion","created":1731000000,"model":"gpt-4o-mini-2024-07-18",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"{\"verdicts\":[{\"verdict\":\"yes\",\"reason\":\"Follows \\\"x\\\"/y.\"}]}",` +
		`"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":1412,"completion_tokens":118,"total_tokens":1530,"prompt_tokens_details":{"cached_tokens":0},` +
		`"completion_tokens_details":{"reasoning_tokens":0}},"service_tier":"default","system_fingerprint":"fp_0ba0d124f1"}`,
	"refusal":  `{"choices":[{"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`,
	"length":   "{\n  \"choices\": [\n    {\"message\": {\"content\": \"{\\\"claims\\\": [\\\"caf\u00e9 \u65e5\"}, \"finish_reason\": \"length\"}\n  ],\n  \"usage\": {\"prompt_tokens\": 7, \"completion_tokens\": -0}\n}\n",
	"two":      `{"choices":[{"message":{"content":"a"}},{"message":{"content":"b"},"finish_reason":null,"extra":[1,-2.5e+3,true,false,null,{"k":[]}]}]}`,
	"empty":    `{"choices":[],"usage":null}`,
	"no usage": `{"choices":null}`,
}

// TestDecodeReplyDirectPath checks that replies as endpoints write them
// take the direct path, and decode as json.Unmarshal decodes them.
func TestDecodeReplyDirectPath(t *testing.T) {
	for name, r := range replies {
		t.Run(name, func(t *testing.T) {
			var direct chatResponse
			p := replyParser{b: []byte(r)}
			require.True(t, p.response(&direct), "left the direct path")
			var want chatResponse
			require.NoError(t, json.Unmarshal([]byte(r), &want))
			assert.Equal(t, want, direct)
		})
	}
}

// TestDecodeReplyHandsOver checks replies the direct path leaves to
// encoding/json, which then decodes or rejects them as before.
func TestDecodeReplyHandsOver(t *testing.T) {
	tests := []struct {
		name, reply string
		content     string
		wantErr     bool
	}{
		{"unicode escape", `{"choices":[{"message":{"content":"\u00e9\ud83d\ude00"}}]}`, "é😀", false},
		{"key in other case", `{"Choices":[{"Message":{"CONTENT":"x"}}]}`, "x", false},
		{"repeated key", `{"choices":[{"message":{"content":"a","content":"b"}}]}`, "b", false},
		{"invalid utf-8", "{\"choices\":[{\"message\":{\"content\":\"a\xffb\"}}]}", "a\ufffdb", false},
		{"float tokens", `{"choices":[],"usage":{"prompt_tokens":1.5}}`, "", true},
		{"string tokens", `{"usage":{"prompt_tokens":"7"}}`, "", true},
		{"content number", `{"choices":[{"message":{"content":7}}]}`, "", true},
		{"garbled", `{"choices":[{"message":{"content":"x"}}]`, "", true},
		{"trailing text", `{"choices":[]} and more`, "", true},
		{"not json", `Service Unavailable`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var direct chatResponse
			p := replyParser{b: []byte(tt.reply)}
			require.False(t, p.response(&direct), "took the direct path")
			cr, err := decodeReply([]byte(tt.reply))
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, cr.Choices)
			assert.Equal(t, tt.content, cr.Choices[0].Message.Content)
		})
	}
}

// FuzzDecodeReply checks that whatever the direct path accepts,
// json.Unmarshal accepts too, with the same values.
func FuzzDecodeReply(f *testing.F) {
	for _, r := range replies {
		f.Add([]byte(r))
	}
	f.Add([]byte(`{"choices":[{"message":{"content":"\"\\\/\b\f\n\r\t"}}],"usage":{"prompt_tokens":0,"completion_tokens":123456789012345678}}`))
	f.Add([]byte(`{"a":{"b":[[[[{"c":"d"}]]]]},"choices":[{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var direct chatResponse
		p := replyParser{b: data}
		if !p.response(&direct) {
			return
		}
		var want chatResponse
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("direct path accepted %q, json.Unmarshal: %v", data, err)
		}
		if !reflect.DeepEqual(direct, want) {
			t.Fatalf("direct path decoded %q as %+v, json.Unmarshal as %+v", data, direct, want)
		}
	})
}

func BenchmarkDecodeReply(b *testing.B) {
	data := []byte(replies["openai"])
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeReply(data); err != nil {
			b.Fatal(err)
		}
	}
}
