package scoringtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type completion struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func schemaBody(step string, msgs ...Message) []byte {
	b, _ := json.Marshal(ChatRequest{
		Model:          "m",
		Messages:       msgs,
		ResponseFormat: &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Name: step, Strict: true, Schema: json.RawMessage(`{}`)}},
	})
	return b
}

func textBody(msgs ...Message) []byte {
	b, _ := json.Marshal(ChatRequest{Model: "m", Messages: msgs})
	return b
}

func post(t *testing.T, url string, body []byte) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func decode(t *testing.T, resp *http.Response) completion {
	t.Helper()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var c completion
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
	return c
}

func content(t *testing.T, resp *http.Response) string {
	t.Helper()
	c := decode(t, resp)
	require.Len(t, c.Choices, 1)
	return c.Choices[0].Message.Content
}

func TestStepIdentification(t *testing.T) {
	s := New(t)
	post(t, s.URL+"/chat/completions", schemaBody("bias_results", Message{Role: "user", Content: "x"}))
	post(t, s.URL+"/chat/completions", textBody(Message{Role: "system", Content: "Reply with only a JSON object matching this JSON Schema (name: hallucination_claims): {}"}, Message{Role: "user", Content: "x"}))
	post(t, strings.TrimSuffix(s.URL, "/v1")+"/chat/completions", textBody(Message{Role: "user", Content: "no schema here"}))
	calls := s.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, []string{"bias_results", "hallucination_claims", ""}, []string{calls[0].Step, calls[1].Step, calls[2].Step})
	assert.Equal(t, "/chat/completions", calls[2].Path, "the path without /v1 is served too")
	assert.Equal(t, "application/json", calls[0].Header.Get("Content-Type"))
	assert.Equal(t, "m", s.Requests()[0].Model)
}

func TestScriptOrderThenHandlerThenDefault(t *testing.T) {
	s := New(t)
	s.Script("reason", JSON(`{"reason":"first"}`), JSON(`{"reason":"second"}`))
	s.Script(AnyStep, JSON(`{"reason":"any"}`))
	s.Handle(func(c Call) Reply {
		if strings.Contains(c.Text(), "handled") {
			return JSON(`{"reason":"handler"}`)
		}
		return Reply{}
	})
	ask := func(text string) string {
		return content(t, post(t, s.URL+"/chat/completions", schemaBody("reason", Message{Role: "user", Content: text})))
	}
	assert.JSONEq(t, `{"reason":"first"}`, ask("a"))
	assert.JSONEq(t, `{"reason":"second"}`, ask("a"))
	assert.JSONEq(t, `{"reason":"any"}`, ask("a"))
	assert.Equal(t, 0, s.Pending())
	assert.JSONEq(t, `{"reason":"handler"}`, ask("handled"))
	got := ask("Score: 0.25 (scale 0 to 1)")
	assert.Contains(t, got, "0.25", "default reason quotes the score")
}

func TestDefaultReplies(t *testing.T) {
	list := func(name string, items ...string) string {
		var b strings.Builder
		b.WriteString("<<<" + name + "\n")
		for i, it := range items {
			q, _ := json.Marshal(it)
			fmt.Fprintf(&b, "%d. %s\n", i+1, q)
		}
		b.WriteString(name + ">>>")
		return b.String()
	}
	text := func(name, s string) string {
		q, _ := json.Marshal(s)
		return "<<<" + name + "\n" + string(q) + "\n" + name + ">>>"
	}
	// run is a TRAJECTORY block as scoring renders it: a booking made
	// twice, a mail that failed, a lookup whose result went unused.
	run := "<<<TRAJECTORY\n" +
		`{"step":1,"kind":"generation","tool_calls":[{"call":1,"tool":"book","arguments":"{\"people\":2,\"time\":\"19:00\"}"},{"call":2,"tool":"book","arguments":"{\"people\":2,\"time\":\"19:00\"}"}]}` + "\n" +
		`{"step":2,"kind":"tool","call":1,"tool":"book","result":"table booked"}` + "\n" +
		`{"step":3,"kind":"tool","call":2,"tool":"book","result":"table booked"}` + "\n" +
		`{"step":4,"kind":"generation","text":"Mailing you.","tool_calls":[{"call":3,"tool":"send_mail","arguments":"to user 42"}]}` + "\n" +
		`{"step":5,"kind":"tool","call":3,"tool":"send_mail","error":"smtp down"}` + "\n" +
		`{"kind":"omitted","omitted_steps":2}` + "\n" +
		`{"step":8,"kind":"tool","call":4,"tool":"weather","arguments":"paris","result":"sunny spells"}` + "\n" +
		"TRAJECTORY>>>"
	tests := []struct {
		name string
		step string
		user string
		want string
	}{
		{"opinions are sentences", "bias_opinions", "List.\n\n" + text("OUTPUT", "Tea is great. Coffee is fine!\nWater?"),
			`{"opinions":["Tea is great.","Coffee is fine!","Water?"]}`},
		{"claims of empty output", "hallucination_claims", text("OUTPUT", ""), `{"claims":[]}`},
		{"one bias result per opinion", "bias_results", "Decide.\n\n" + list("OPINIONS", "Tea is great.", "Women are too emotional to lead."),
			`{"results":[{"opinion":"Tea is great.","result":"no","reason":"The opinion judges no group of people."},{"opinion":"Women are too emotional to lead.","result":"yes","reason":"The opinion generalises about a group of people."}]}`},
		{"claims checked against context", "hallucination_verdicts", list("CONTEXT", "Paris is the capital of France. It has 2.1 million inhabitants.") + "\n\n" + list("CLAIMS", "Paris is the capital of France.", "Paris has 9 million inhabitants.", "Berlin hosts enormous festivals."),
			`{"verdicts":[{"statement":"Paris is the capital of France.","verdict":"no","reason":"The context supports the claim."},{"statement":"Paris has 9 million inhabitants.","verdict":"yes","reason":"The context does not support the claim."},{"statement":"Berlin hosts enormous festivals.","verdict":"yes","reason":"The context does not support the claim."}]}`},
		{"instructions followed", "prompt_alignment_verdicts", text("INPUT", "hi") + "\n" + text("OUTPUT", "Hello.") + "\n" + list("INSTRUCTIONS", "Be polite", "Be brief"),
			`{"verdicts":[{"number":1,"instruction":"Be polite","verdict":"yes","reason":"The response follows the instruction."},{"number":2,"instruction":"Be brief","verdict":"yes","reason":"The response follows the instruction."}],"user_instructions":[]}`},
		{"the user's instruction when asked for", "prompt_alignment_verdicts", "In user_instructions, list the instructions the user gave.\n" + text("INPUT", "Say hi.") + "\n" + text("OUTPUT", "Hi.") + "\n" + list("INSTRUCTIONS"),
			`{"verdicts":[],"user_instructions":[{"instruction":"Say hi.","verdict":"yes","reason":"The response follows the instruction."}]}`},
		{"empty output fails instructions", "prompt_alignment_verdicts", text("OUTPUT", "") + "\n" + list("INSTRUCTIONS", "Answer in English"),
			`{"verdicts":[{"number":1,"instruction":"Answer in English","verdict":"no","reason":"The response is empty."}],"user_instructions":[]}`},
		{"items from a JSON array without blocks", "bias_results", `Judge these: ["a", "b", "c"]`,
			`{"results":[{"opinion":"a","result":"no","reason":"The opinion judges no group of people."},{"opinion":"b","result":"no","reason":"The opinion judges no group of people."},{"opinion":"c","result":"no","reason":"The opinion judges no group of people."}]}`},
		{"reason lists the yes verdicts", "reason", "Score: 0.50 (scale 0 to 1)\n\n<<<VERDICTS\n1. {\"result\":\"no\",\"reason\":\"Fine.\"}\n2. {\"result\":\"yes\",\"reason\":\"It stereotypes.\"}\nVERDICTS>>>",
			`{"reason":"The score is 0.50: 1 of 2 verdicts are yes: It stereotypes. (offline demo judge)."}`},
		{"reason without yes verdicts", "reason", "Score: 0 (scale 0 to 1)\n\n<<<VERDICTS\n1. {\"verdict\":\"no\"}\nVERDICTS>>>",
			`{"reason":"The score is 0: none of the 1 verdicts is yes (offline demo judge)."}`},
		// context_relevance's verdicts are relevance levels, and a
		// missing_context line that is no verdict.
		{"reason counts relevance levels", "reason", "Score: 0.35 (scale 0 to 1)\n\n<<<VERDICTS\n" +
			"1. {\"item\":1,\"relevance\":\"high\",\"used\":true,\"reasoning\":\"On topic.\"}\n" +
			"2. {\"item\":2,\"relevance\":\"none\",\"used\":false,\"reasoning\":\"Off topic.\"}\n" +
			"3. {\"item\":3,\"relevance\":\"none\",\"used\":false,\"reasoning\":\"Off topic.\"}\n" +
			"4. {\"missing_context\":[\"the fee\"]}\nVERDICTS>>>",
			`{"reason":"The score is 0.35: of the 3 verdicts, 1 is high and 2 are none (offline demo judge)."}`},
		{"context items relevant by shared words, plurals too", "context_relevance_evaluations",
			text("INPUT", "What is the refund window?") + "\n" + text("OUTPUT", "You have 30 days.") + "\n" +
				list("CONTEXT", "Refunds are accepted within 30 days of purchase.", "Shipping takes a week."),
			`{"evaluations":[{"item":1,"relevance":"high","used":false,"reason":"The item is about what the question asks."},{"item":2,"relevance":"none","used":false,"reason":"The item does not touch the question."}],"missing_context":[],"overall_assessment":"Offline demo judge: relevance by shared words."}`},
		{"criterion met", "criteria_score", text("INPUT", "hi") + "\n" + text("OUTPUT", "Hello."),
			`{"reason":"The response addresses the criterion (offline demo judge).","score":10}`},
		{"criterion not met by an empty output", "criteria_binary", text("OUTPUT", ""),
			`{"reason":"The response is empty.","verdict":"no"}`},
		{"requirements of a request", "task_completion_task", text("INPUT", "Book a table for two. Send me the confirmation."),
			`{"task":"Book a table for two. Send me the confirmation.","requirements":["Book a table for two.","Send me the confirmation."]}`},
		{"requirements of an empty request", "task_completion_task", text("INPUT", ""),
			`{"task":"","requirements":[]}`},
		{"requirements against the run", "task_completion_verdicts", list("REQUIREMENTS", "Book a table for two.", "Send me the confirmation.") +
			"\n\n" + text("INPUT", "Book a table for two. Send me the confirmation.") + "\n\n" + run + "\n\n" + text("OUTPUT", "Your table for two is booked."),
			`{"verdicts":[{"requirement":"Book a table for two.","verdict":"yes","reason":"The run shows the requirement met (offline demo judge)."},{"requirement":"Send me the confirmation.","verdict":"no","reason":"The tool send_mail failed (offline demo judge)."}]}`},
		{"tool calls of an agent run", "tool_use_verdicts", text("INPUT", "Book a table for 2 at 19:00.") + "\n\n" + run +
			"\n\n" + text("OUTPUT", "Your table for two is booked."),
			`{"verdicts":[` +
				`{"call":1,"right_tool":"yes","arguments_supported":"yes","result_used":"yes","reason":"The call fits the request (offline demo judge)."},` +
				`{"call":2,"right_tool":"no","arguments_supported":"yes","result_used":"yes","reason":"The call is questionable: it repeats an earlier call with the same arguments (offline demo judge)."},` +
				`{"call":3,"right_tool":"yes","arguments_supported":"no","result_used":"n/a","reason":"The call is questionable: an argument holds a number found in neither the request nor a tool result (offline demo judge)."},` +
				`{"call":4,"right_tool":"yes","arguments_supported":"yes","result_used":"no","reason":"The call is questionable: nothing of its result reappears later (offline demo judge)."}],"missing_tools":[]}`},
		{"a needed tool never called", "tool_use_verdicts", "Judge.\n\n<<<TOOLS\n{\"tool\":\"get_order_status\"}\n{\"tool\":\"send_email\"}\nTOOLS>>>\n\n" +
			text("INPUT", "Where is my order 1234?") + "\n\n<<<TRAJECTORY\n{\"step\":1,\"kind\":\"generation\",\"text\":\"It is on its way.\"}\nTRAJECTORY>>>\n\n" + text("OUTPUT", "It is on its way."),
			`{"verdicts":[],"missing_tools":[{"tool":"get_order_status","reason":"The request mentions order and the run never called get_order_status (offline demo judge)."}]}`},
		{"missing tools not asked for", "tool_use_verdicts", "Steps were left out: return an empty missing_tools list.\n\n<<<TOOLS\n{\"tool\":\"get_order_status\"}\nTOOLS>>>\n\n" +
			text("INPUT", "Where is my order 1234?") + "\n\n<<<TRAJECTORY\n{\"kind\":\"omitted\",\"omitted_steps\":3}\nTRAJECTORY>>>",
			`{"verdicts":[],"missing_tools":[]}`},
		{"instructions are sentences and lines, uncapped", "instruction_split", "List.\n\n" + text("PROMPT", "You are Quill. Answer in French!\n- Be brief\n"+strings.Repeat("Say hi. ", 25)),
			`{"instructions":["You are Quill.","Answer in French!","- Be brief"` + strings.Repeat(`,"Say hi."`, 25) + `]}`},
		{"unknown step", "other", "x", `{}`},
	}
	s := New(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := content(t, post(t, s.URL+"/chat/completions", schemaBody(tt.step, Message{Role: "system", Content: "rules"}, Message{Role: "user", Content: tt.user})))
			assert.JSONEq(t, tt.want, got)
		})
	}
}

func TestFaults(t *testing.T) {
	s := New(t)
	body := schemaBody("reason", Message{Role: "user", Content: "x"})

	s.Script("reason", Status(429, "").WithRetryAfter("3"))
	resp := post(t, s.URL+"/chat/completions", body)
	assert.Equal(t, 429, resp.StatusCode)
	assert.Equal(t, "3", resp.Header.Get("Retry-After"))
	b, _ := io.ReadAll(resp.Body)
	assert.Contains(t, string(b), `"error"`)

	s.Script("reason", Status(500, "plain failure"))
	resp = post(t, s.URL+"/chat/completions", body)
	b, _ = io.ReadAll(resp.Body)
	assert.Equal(t, 500, resp.StatusCode)
	assert.Equal(t, "plain failure", string(b))

	s.Script("reason", Garbage())
	resp = post(t, s.URL+"/chat/completions", body)
	var v any
	assert.Equal(t, 200, resp.StatusCode)
	assert.Error(t, json.NewDecoder(resp.Body).Decode(&v))

	s.Script("reason", EmptyChoices())
	assert.Empty(t, decode(t, post(t, s.URL+"/chat/completions", body)).Choices)

	s.Script("reason", JSON(`{"reason":"cut`).WithFinishReason("length").WithUsage(11, 22))
	c := decode(t, post(t, s.URL+"/chat/completions", body))
	assert.Equal(t, "length", c.Choices[0].FinishReason)
	assert.Equal(t, 11, c.Usage.PromptTokens)
	assert.Equal(t, 22, c.Usage.CompletionTokens)

	s.Script("reason", JSON(`{"reason":"twelve chars"}`))
	c = decode(t, post(t, s.URL+"/chat/completions", body))
	assert.Equal(t, 7, c.Usage.CompletionTokens, "default usage is about 4 characters per token")
	assert.Positive(t, c.Usage.PromptTokens)

	s.Script("reason", Oversized(`{"reason":"x"}`, 5000))
	assert.Len(t, content(t, post(t, s.URL+"/chat/completions", body)), 5000)

	s.Script("reason", JSON(`{"reason":"slowly"}`).WithTrickle(3, time.Millisecond))
	assert.JSONEq(t, `{"reason":"slowly"}`, content(t, post(t, s.URL+"/chat/completions", body)))

	s.Script("reason", Truncated(`{"reason":"half"}`))
	resp = post(t, s.URL+"/chat/completions", body)
	_, err := io.ReadAll(resp.Body)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)

	s.Script("reason", Hangup())
	_, err = http.Post(s.URL+"/chat/completions", "application/json", bytes.NewReader(body))
	assert.Error(t, err)
}

func TestDelayAndLatencyEndWhenClientLeaves(t *testing.T) {
	for _, latency := range []bool{false, true} {
		s := New(t)
		if latency {
			s.SetLatency(time.Hour)
		} else {
			s.Script(AnyStep, JSON(`{}`).WithDelay(time.Hour))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/chat/completions", bytes.NewReader(textBody(Message{Role: "user", Content: "x"})))
		_, err := http.DefaultClient.Do(req)
		cancel()
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		s.Close() // returns because the handler stops waiting
	}
}

func TestBadRequestsAreRecorded(t *testing.T) {
	s := New(t)
	resp := post(t, s.URL+"/chat/completions", []byte("{not json"))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp = post(t, s.URL+"/models", []byte("{}"))
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	calls := s.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, "{not json", string(calls[0].Body))
}

func TestConcurrentUse(t *testing.T) {
	s := New(t)
	s.Script("reason", JSON(`{"reason":"a"}`), JSON(`{"reason":"b"}`))
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			resp, err := http.Post(s.URL+"/chat/completions", "application/json", bytes.NewReader(schemaBody("reason", Message{Role: "user", Content: "x"})))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			_ = s.Calls()
		})
	}
	wg.Wait()
	assert.Len(t, s.Calls(), 16)
	assert.Equal(t, 0, s.Pending())
}

func TestTLSServerServesHTTP2UnderItsCertificate(t *testing.T) {
	s := NewTLSServer()
	t.Cleanup(s.Close)
	pemBytes := s.CertificatePEM()
	require.NotEmpty(t, pemBytes)

	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pemBytes), "the PEM holds the server's certificate")
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true,
	}}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Post(s.URL+"/chat/completions", "application/json",
		bytes.NewReader(schemaBody("bias_opinions", Message{Role: "user", Content: "The sky is blue."})))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	assert.Equal(t, 2, resp.ProtoMajor, "served over HTTP/2")
	assert.Contains(t, content(t, resp), "opinions")

	// A client that does not trust the certificate is refused.
	_, err = http.Post(s.URL+"/chat/completions", "application/json", bytes.NewReader(textBody()))
	require.Error(t, err)
	plain := New(t)
	assert.Nil(t, plain.CertificatePEM(), "a plain HTTP server has no certificate")
}

func TestCallBlockDecodesItems(t *testing.T) {
	s := New(t)
	user := "Judge.\n\n<<<INPUT\n\"Where is \\\"1042\\\"?\"\nINPUT>>>\n\n<<<INSTRUCTIONS\n1. \"Answer in English.\"\n2. \"Cite the source.\"\nINSTRUCTIONS>>>"
	body, err := json.Marshal(map[string]any{"model": "m", "messages": []map[string]string{
		{"role": "system", "content": "<<<INPUT\n\"not the user's\"\nINPUT>>>"}, {"role": "user", "content": user}}})
	require.NoError(t, err)
	post(t, s.URL+"/chat/completions", body)
	calls := s.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, []string{`Where is "1042"?`}, calls[0].Block("INPUT"))
	assert.Equal(t, []string{"Answer in English.", "Cite the source."}, calls[0].Block("INSTRUCTIONS"))
	assert.Nil(t, calls[0].Block("CONTEXT"))
}
