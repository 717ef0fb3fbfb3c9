package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/llm-eval/llm_eval/scoring"
)

// StructuredOutputs selects how the judge is made to answer in JSON.
type StructuredOutputs string

// Structured output modes.
const (
	// StructuredOutputsAuto starts with json_schema and falls back to
	// json_object, then to off, when the endpoint refuses a mode. The
	// refusal is remembered for the judge's lifetime.
	StructuredOutputsAuto StructuredOutputs = "auto"
	// StructuredOutputsJSONSchema sends response_format json_schema, strict.
	StructuredOutputsJSONSchema StructuredOutputs = "json_schema"
	// StructuredOutputsJSONObject sends response_format json_object and
	// spells the schema out in the prompt.
	StructuredOutputsJSONObject StructuredOutputs = "json_object"
	// StructuredOutputsOff sends no response_format and spells the schema
	// out in the prompt.
	StructuredOutputsOff StructuredOutputs = "off"
)

// ParseStructuredOutputs checks a structured_outputs setting; "" is auto.
func ParseStructuredOutputs(s string) (StructuredOutputs, error) {
	switch m := StructuredOutputs(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return StructuredOutputsAuto, nil
	case StructuredOutputsAuto, StructuredOutputsJSONSchema, StructuredOutputsJSONObject, StructuredOutputsOff:
		return m, nil
	}
	return "", fmt.Errorf("structured_outputs %q: want auto, json_schema, json_object or off", s)
}

// Defaults of Config.
const (
	DefaultAzureAPIVersion  = "2024-10-21" // first GA version with json_schema
	DefaultMaxResponseBytes = 1 << 20
)

// Config configures a judge on an OpenAI-compatible chat completions
// endpoint: OpenAI, Azure OpenAI, vLLM, Ollama, LiteLLM, llama.cpp server.
type Config struct {
	// BaseURL is the API root that ".../chat/completions" is appended to,
	// e.g. https://api.openai.com/v1 or http://localhost:11434/v1. A URL
	// that already ends in /chat/completions is accepted. For Azure it is
	// the resource endpoint, e.g. https://NAME.openai.azure.com.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer" (Azure: the api-key
	// header). Empty sends none. It never appears in errors.
	APIKey string
	// Model is the model name; for Azure, the deployment name.
	Model string
	// HTTPClient carries TLS, proxy and timeout settings (nil: a plain client).
	HTTPClient *http.Client
	// Headers are set on every request, after the authentication header.
	Headers map[string]string
	// MaxTokens caps the reply (0: not sent). Sent as max_tokens, or as
	// max_completion_tokens for reasoning models (o1, o3, o4, gpt-5).
	MaxTokens int
	// Seed is sent when set, for endpoints that make sampling repeatable.
	Seed *int
	// OmitTemperature stops sending temperature 0, for deployments of
	// reasoning models whose names do not show it. Reasoning models known
	// by name (o1, o3, o4, gpt-5) never get a temperature.
	OmitTemperature bool
	// StructuredOutputs is the JSON mode ("" is auto).
	StructuredOutputs StructuredOutputs
	// Retry is the retry policy (zero value: defaults).
	Retry RetryPolicy
	// OnRetry, if set, is called before each retry's wait, e.g. to count retries.
	OnRetry func(retry int, err error, wait time.Duration)
	// Azure selects Azure OpenAI: deployment in the path, api-version query.
	Azure bool
	// AzureAPIVersion is the api-version query value (default DefaultAzureAPIVersion).
	AzureAPIVersion string
	// MaxResponseBytes caps a reply body (default 1 MiB). A larger reply
	// is a judge_parse_error and is not retried.
	MaxResponseBytes int64
}

// Judge is a Judge on an OpenAI-compatible chat completions endpoint.
// It is safe for concurrent use.
type Judge struct {
	client          *openai.Client
	cfg             Config
	reasoning       bool
	sendTemperature bool
	// mode is the structured output mode in use; in auto it only ever
	// steps down, once per refusal, and is shared by all calls because the
	// judge talks to a single endpoint.
	mode atomic.Int32
}

// modes in fallback order.
var modeOrder = []StructuredOutputs{StructuredOutputsJSONSchema, StructuredOutputsJSONObject, StructuredOutputsOff}

// NewJudge validates cfg and returns a judge.
func NewJudge(cfg Config) (*Judge, error) {
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	base = strings.TrimSuffix(base, "/chat/completions")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("judge endpoint %q: want an http or https URL", cfg.BaseURL)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("judge model is required")
	}
	mode, err := ParseStructuredOutputs(string(cfg.StructuredOutputs))
	if err != nil {
		return nil, err
	}
	cfg.BaseURL, cfg.StructuredOutputs = base, mode
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("judge max tokens %d: must not be negative", cfg.MaxTokens)
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}

	var oc openai.ClientConfig
	if cfg.Azure {
		oc = openai.DefaultAzureConfig(cfg.APIKey, base)
		oc.APIVersion = cfg.AzureAPIVersion
		if oc.APIVersion == "" {
			oc.APIVersion = DefaultAzureAPIVersion
		}
		// The configured model is the deployment name, used as given.
		oc.AzureModelMapperFunc = func(model string) string { return model }
	} else {
		oc = openai.DefaultConfig(cfg.APIKey)
		oc.BaseURL = base
	}
	oc.HTTPClient = &judgeTransport{client: httpClient, headers: cfg.Headers, maxBody: cfg.MaxResponseBytes}

	j := &Judge{client: openai.NewClientWithConfig(oc), cfg: cfg, reasoning: isReasoningModel(cfg.Model)}
	j.sendTemperature = !j.reasoning && !cfg.OmitTemperature
	start := StructuredOutputsJSONSchema
	if mode != StructuredOutputsAuto {
		start = mode
	}
	j.mode.Store(int32(modeIndex(start)))
	return j, nil
}

// Endpoint returns the normalised base URL.
func (j *Judge) Endpoint() string { return j.cfg.BaseURL }

// StructuredOutputs returns the mode now in use: the configured one, or
// for auto the mode left after any fallbacks.
func (j *Judge) StructuredOutputs() StructuredOutputs {
	return modeOrder[j.mode.Load()]
}

// Complete sends req and returns the first choice. A reply cut at the
// token limit is returned with FinishReason "length"; the caller decides.
// Failures are *Error.
func (j *Judge) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	if len(req.Messages) == 0 {
		return scoring.Response{}, &scoring.Error{Type: scoring.ErrorJudgeBadRequest, Step: req.Step, Err: errors.New("request has no messages")}
	}
	retries := 0
	for {
		idx := j.mode.Load()
		mode := modeOrder[idx]
		creq, withFormat := j.buildRequest(req, mode)
		var out scoring.Response
		n, f := j.cfg.Retry.run(ctx, j.cfg.OnRetry, func(actx context.Context) *attemptFailure {
			r, f := j.attempt(ctx, actx, creq, withFormat)
			out = r
			return f
		})
		retries += n
		if f == nil {
			out.Retries = retries
			return out, nil
		}
		if f.formatRefused && j.cfg.StructuredOutputs == StructuredOutputsAuto && int(idx) < len(modeOrder)-1 {
			// Fall back at once; a lost race means another call already did.
			j.mode.CompareAndSwap(idx, idx+1)
			continue
		}
		f.err.Step = req.Step
		return scoring.Response{Retries: retries}, f.err
	}
}

// buildRequest turns req into the wire request for mode and says whether it
// carries a response_format.
func (j *Judge) buildRequest(req scoring.Request, mode StructuredOutputs) (openai.ChatCompletionRequest, bool) {
	msgs := make([]openai.ChatCompletionMessage, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	creq := openai.ChatCompletionRequest{Model: j.cfg.Model, Seed: j.cfg.Seed}
	if j.reasoning {
		creq.MaxCompletionTokens = j.cfg.MaxTokens
	} else {
		creq.MaxTokens = j.cfg.MaxTokens
	}
	hasSchema := req.Schema != nil && len(bytes.TrimSpace(req.Schema.Schema)) > 0
	switch {
	case !hasSchema:
		// Nothing to enforce.
	case mode == StructuredOutputsJSONSchema:
		creq.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name:   req.Schema.Name,
				Strict: true,
				Schema: req.Schema.Schema,
			},
		}
	default:
		if mode == StructuredOutputsJSONObject {
			creq.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
		}
		msgs = withSchemaInstruction(msgs, req.Schema)
	}
	creq.Messages = msgs
	return creq, creq.ResponseFormat != nil
}

// SchemaInstruction is the sentence that spells a schema out when the
// endpoint does not enforce it. It names the schema as "(name: X)".
func SchemaInstruction(s *scoring.Schema) string {
	var compact bytes.Buffer
	if err := json.Compact(&compact, s.Schema); err != nil {
		compact.Reset()
		compact.Write(s.Schema)
	}
	return fmt.Sprintf("Reply with only a JSON object matching this JSON Schema (name: %s): %s", s.Name, compact.String())
}

// withSchemaInstruction appends the schema to the last system message, or
// adds a final system message when there is none. msgs is not modified.
func withSchemaInstruction(msgs []openai.ChatCompletionMessage, s *scoring.Schema) []openai.ChatCompletionMessage {
	out := append([]openai.ChatCompletionMessage(nil), msgs...)
	instr := SchemaInstruction(s)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == openai.ChatMessageRoleSystem {
			out[i].Content = strings.TrimRight(out[i].Content, "\n") + "\n\n" + instr
			return out
		}
	}
	return append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: instr})
}

// attempt makes one HTTP call. callerCtx tells the caller's deadline apart
// from the attempt's own.
func (j *Judge) attempt(callerCtx, actx context.Context, creq openai.ChatCompletionRequest, withFormat bool) (scoring.Response, *attemptFailure) {
	info := &attemptInfo{temperatureZero: j.sendTemperature}
	resp, err := j.client.CreateChatCompletion(context.WithValue(actx, attemptInfoKey{}, info), creq)
	if err != nil {
		return scoring.Response{}, j.classify(callerCtx, actx, err, info, withFormat)
	}
	if len(resp.Choices) == 0 {
		return scoring.Response{}, &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: errors.New("judge reply has no choices")}}
	}
	c := resp.Choices[0]
	content := c.Message.Content
	if content == "" && c.Message.Refusal != "" {
		content = c.Message.Refusal
	}
	return scoring.Response{
		Content:          content,
		FinishReason:     string(c.FinishReason),
		PromptTokens:     resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens,
	}, nil
}

// classify types a failed attempt and decides whether it is retried.
func (j *Judge) classify(callerCtx, actx context.Context, err error, info *attemptInfo, withFormat bool) *attemptFailure {
	if callerCtx.Err() != nil {
		return &attemptFailure{err: contextError(callerCtx, callerCtx.Err())}
	}
	msg := j.describe(err)
	if actx.Err() != nil {
		return &attemptFailure{retryable: true, err: &scoring.Error{Type: scoring.ErrorJudgeTimeout, Err: fmt.Errorf("judge attempt timed out: %s", msg)}}
	}
	if errors.Is(err, errResponseTooLarge) {
		return &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeParse, Err: fmt.Errorf("judge reply exceeds %d bytes", j.cfg.MaxResponseBytes)}}
	}
	status := info.status
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		status = max(status, apiErr.HTTPStatusCode)
		msg = j.redact(apiErr.Message)
	case errors.As(err, &reqErr):
		status = max(status, reqErr.HTTPStatusCode)
		msg = j.redact(strings.TrimSpace(string(reqErr.Body)))
	}
	if status >= 400 {
		if msg == "" {
			msg = http.StatusText(status)
		}
		e := fmt.Errorf("judge returned HTTP %d: %s", status, msg)
		switch {
		case status == http.StatusTooManyRequests:
			return &attemptFailure{retryable: true, retryAfter: info.retryAfter(j.cfg.Retry), err: &scoring.Error{Type: scoring.ErrorJudgeRateLimited, Err: e}}
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeAuth, Err: e}}
		case status == http.StatusRequestTimeout:
			return &attemptFailure{retryable: true, err: &scoring.Error{Type: scoring.ErrorJudgeTimeout, Err: e}}
		case status >= 500:
			f := &attemptFailure{retryable: true, err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: e}}
			if status == http.StatusServiceUnavailable {
				f.retryAfter = info.retryAfter(j.cfg.Retry)
			}
			return f
		default:
			refused := withFormat && (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) && mentionsResponseFormat(msg)
			return &attemptFailure{formatRefused: refused, err: &scoring.Error{Type: scoring.ErrorJudgeBadRequest, Err: e}}
		}
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) {
		return &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeParse, Err: fmt.Errorf("judge reply is not a chat completion: %s", msg)}}
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return &attemptFailure{retryable: true, err: &scoring.Error{Type: scoring.ErrorJudgeTimeout, Err: errors.New(msg)}}
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &attemptFailure{retryable: true, err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: fmt.Errorf("judge unreachable: %s", msg)}}
	}
	// Anything else was refused before it was sent.
	return &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeBadRequest, Err: errors.New(msg)}}
}

// maxErrorText bounds how much of a judge's error body goes into an error.
const maxErrorText = 512

// describe renders err without the API key and without huge bodies.
func (j *Judge) describe(err error) string { return j.redact(err.Error()) }

// redact removes the API key from s and bounds its length.
func (j *Judge) redact(s string) string {
	if j.cfg.APIKey != "" {
		s = strings.ReplaceAll(s, j.cfg.APIKey, "[REDACTED]")
	}
	if len(s) > maxErrorText {
		s = s[:maxErrorText] + "...(truncated)"
	}
	return s
}

// mentionsResponseFormat reports whether an error text says the structured
// output mode was not accepted.
func mentionsResponseFormat(s string) bool {
	s = strings.ToLower(s)
	for _, w := range []string{"response_format", "response format", "json_schema", "json_object", "structured output", "not supported", "unsupported"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func modeIndex(m StructuredOutputs) int {
	for i, o := range modeOrder {
		if o == m {
			return i
		}
	}
	return 0
}

// isReasoningModel mirrors go-openai's list of models that reject
// temperature and max_tokens.
func isReasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// attemptInfo passes per-attempt details between the judge and its
// transport through the request context.
type attemptInfo struct {
	temperatureZero bool
	status          int
	retryAfterRaw   string
}

type attemptInfoKey struct{}

func (a *attemptInfo) retryAfter(p RetryPolicy) time.Duration {
	now := time.Now
	if p.now != nil {
		now = p.now
	}
	return parseRetryAfter(a.retryAfterRaw, now())
}

// errResponseTooLarge ends the read of a reply over MaxResponseBytes.
var errResponseTooLarge = errors.New("judge reply exceeds the size limit")

// judgeTransport sits between go-openai and the caller's client: it adds
// headers and temperature 0 (which go-openai omits as a zero value),
// records the status and Retry-After, and caps the body read.
type judgeTransport struct {
	client  *http.Client
	headers map[string]string
	maxBody int64
}

func (t *judgeTransport) Do(req *http.Request) (*http.Response, error) {
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	info, _ := req.Context().Value(attemptInfoKey{}).(*attemptInfo)
	if info != nil && info.temperatureZero && req.Body != nil {
		if err := addTemperatureZero(req); err != nil {
			return nil, err
		}
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	if info != nil {
		info.status = resp.StatusCode
		info.retryAfterRaw = resp.Header.Get("Retry-After")
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.maxBody}
	return resp, nil
}

// addTemperatureZero puts "temperature":0 first in the JSON body.
func addTemperatureZero(req *http.Request) error {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return fmt.Errorf("reading judge request body: %w", err)
	}
	if len(body) > 1 && body[0] == '{' && !bytes.Contains(body, []byte(`"temperature":`)) {
		sep := ","
		if bytes.HasPrefix(bytes.TrimSpace(body[1:]), []byte("}")) {
			sep = ""
		}
		body = append([]byte(`{"temperature":0`+sep), body[1:]...)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return nil
}

// limitedBody fails a read that goes past left bytes.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errResponseTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errResponseTooLarge
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
