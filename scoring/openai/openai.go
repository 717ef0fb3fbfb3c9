package openai

import (
	"bytes"
	"cmp"
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

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/redact"
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
	// Their values are treated as secrets and never appear in errors.
	Headers map[string]string
	// Secrets are more values that must never appear in errors, such as
	// headers HTTPClient adds on its own. The API key, Headers values and
	// the password and query values of BaseURL are always scrubbed.
	Secrets []string
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

// Judge is a scoring.Judge on an OpenAI-compatible chat completions
// endpoint. It is safe for concurrent use.
//
// It speaks the wire format with net/http and encoding/json rather than
// through an SDK: the judge must send temperature 0 (a zero value SDKs
// omit), needs the HTTP status and Retry-After of every failure, and reads
// a bounded body. go-openai gave none of these without rewriting its
// request bodies and passing the status back through a context value, and
// the one endpoint used is a handful of JSON fields.
type Judge struct {
	client          *http.Client
	cfg             Config
	url             string // the chat completions URL
	scrub           *redact.SecretScrubber
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
	secrets := append([]string{cfg.APIKey}, redact.URLSecrets(cfg.BaseURL)...)
	for _, v := range cfg.Headers {
		secrets = append(secrets, v)
	}
	scrub := redact.NewSecretScrubber(append(secrets, cfg.Secrets...)...)
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("judge endpoint %q: want an http or https URL", redact.ScrubURL(cfg.BaseURL))
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/chat/completions")
	u.RawPath = ""
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("judge model is required")
	}
	mode, err := ParseStructuredOutputs(string(cfg.StructuredOutputs))
	if err != nil {
		return nil, err
	}
	cfg.BaseURL, cfg.StructuredOutputs = u.String(), mode
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("judge max tokens %d: must not be negative", cfg.MaxTokens)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Azure {
		// The configured model is the deployment name, used as given.
		u = u.JoinPath("openai", "deployments", cfg.Model)
		q := u.Query()
		q.Set("api-version", cmp.Or(cfg.AzureAPIVersion, DefaultAzureAPIVersion))
		u.RawQuery = q.Encode()
	}
	u = u.JoinPath("chat", "completions")

	j := &Judge{client: cfg.HTTPClient, cfg: cfg, url: u.String(), scrub: scrub, reasoning: isReasoningModel(cfg.Model)}
	j.sendTemperature = !j.reasoning && !cfg.OmitTemperature
	start := StructuredOutputsJSONSchema
	if mode != StructuredOutputsAuto {
		start = mode
	}
	j.mode.Store(int32(modeIndex(start)))
	return j, nil
}

// Endpoint returns the normalised base URL, as configured: it may hold
// secrets, so log redact.ScrubURL(Endpoint()).
func (j *Judge) Endpoint() string { return j.cfg.BaseURL }

// StructuredOutputs returns the mode now in use: the configured one, or
// for auto the mode left after any fallbacks.
func (j *Judge) StructuredOutputs() StructuredOutputs {
	return modeOrder[j.mode.Load()]
}

// Complete sends req and returns the first choice. A reply cut at the
// token limit is returned with FinishReason "length"; the caller decides.
// Failures are *scoring.Error.
func (j *Judge) Complete(ctx context.Context, req scoring.Request) (scoring.Response, error) {
	if len(req.Messages) == 0 {
		return scoring.Response{}, &scoring.Error{Type: scoring.ErrorJudgeBadRequest, Step: req.Step, NotSent: true, Err: errors.New("request has no messages")}
	}
	retries := 0
	for {
		idx := j.mode.Load()
		mode := modeOrder[idx]
		body, withFormat, err := j.buildRequest(req, mode)
		if err != nil {
			return scoring.Response{}, &scoring.Error{Type: scoring.ErrorJudgeBadRequest, Step: req.Step, NotSent: true, Err: err}
		}
		var out scoring.Response
		sent := false
		n, f := j.cfg.Retry.run(ctx, j.cfg.OnRetry, func(actx context.Context) *attemptFailure {
			r, f := j.attempt(ctx, actx, body, withFormat)
			out = r
			sent = sent || f == nil || !f.notSent
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
		// No attempt reached the endpoint: the call cost nothing and is
		// counted as refused, not as a judge call.
		f.err.NotSent = f.err.NotSent || !sent
		return scoring.Response{Retries: retries}, f.err
	}
}

// errorResponse is an OpenAI error body.
type errorResponse struct {
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

// attempt makes one HTTP call. callerCtx tells the caller's deadline apart
// from the attempt's own.
func (j *Judge) attempt(callerCtx, actx context.Context, body []byte, withFormat bool) (scoring.Response, *attemptFailure) {
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, j.url, bytes.NewReader(body))
	if err != nil {
		return scoring.Response{}, &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeBadRequest, Err: errors.New(j.scrub.Scrub(err.Error()))}}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	switch {
	case j.cfg.APIKey == "":
	case j.cfg.Azure:
		hreq.Header.Set("api-key", j.cfg.APIKey)
	default:
		hreq.Header.Set("Authorization", "Bearer "+j.cfg.APIKey)
	}
	for k, v := range j.cfg.Headers {
		hreq.Header.Set(k, v)
	}
	resp, err := j.client.Do(hreq)
	if err != nil {
		return scoring.Response{}, j.transportFailure(callerCtx, actx, err)
	}
	defer resp.Body.Close()
	data, err := j.readBody(resp)
	if err != nil {
		return scoring.Response{}, j.transportFailure(callerCtx, actx, err)
	}
	if int64(len(data)) > j.cfg.MaxResponseBytes {
		return scoring.Response{}, &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeParse, Status: resp.StatusCode,
			Err: fmt.Errorf("judge reply exceeds %d bytes", j.cfg.MaxResponseBytes)}}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return scoring.Response{}, j.statusFailure(resp, data, withFormat)
	}
	cr, err := decodeReply(data)
	if err != nil {
		return scoring.Response{}, &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeParse, Status: resp.StatusCode,
			Err: fmt.Errorf("judge reply is not a chat completion: %s", j.bounded(err.Error()))}}
	}
	if len(cr.Choices) == 0 {
		return scoring.Response{}, &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Status: resp.StatusCode, Err: errors.New("judge reply has no choices")}}
	}
	c := cr.Choices[0]
	content := c.Message.Content
	if content == "" && c.Message.Refusal != "" {
		content = c.Message.Refusal
	}
	return scoring.Response{
		Content:          content,
		FinishReason:     c.FinishReason,
		PromptTokens:     cr.Usage.PromptTokens,
		CompletionTokens: cr.Usage.CompletionTokens,
	}, nil
}

// readBody reads at most MaxResponseBytes+1 bytes of the reply. A body of
// known length is read into one buffer of that size rather than one grown
// by doubling, which for replies of a few KB was most of the copying.
func (j *Judge) readBody(resp *http.Response) ([]byte, error) {
	limit := j.cfg.MaxResponseBytes + 1
	r := io.LimitReader(resp.Body, limit)
	n := resp.ContentLength
	if n < 0 || n >= limit {
		return io.ReadAll(r)
	}
	data := make([]byte, 0, n+1) // +1: room to see EOF without growing
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		m, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+m]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
	}
}

// statusFailure types a reply with an error status. The message holds
// only the endpoint's own error.message, scrubbed and bounded, never the
// raw body: endpoints and proxies echo the request in error bodies, and
// that is the evaluated text and the headers that carry the credentials.
func (j *Judge) statusFailure(resp *http.Response, body []byte, withFormat bool) *attemptFailure {
	status := resp.StatusCode
	var er errorResponse
	_ = json.Unmarshal(body, &er) // a body that is not an OpenAI error leaves the message empty
	msg := cmp.Or(j.bounded(er.Error.Message), http.StatusText(status), "unknown status")
	retryAfter := parseRetryAfter(resp.Header.Get("Retry-After"), j.cfg.Retry.clock())
	newErr := func(t scoring.ErrorType) *scoring.Error {
		return &scoring.Error{Type: t, Status: status, RetryAfter: retryAfter, Err: fmt.Errorf("judge returned HTTP %d: %s", status, msg)}
	}
	switch {
	case status == http.StatusTooManyRequests:
		return &attemptFailure{retryable: true, retryAfter: retryAfter, err: newErr(scoring.ErrorJudgeRateLimited)}
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &attemptFailure{err: newErr(scoring.ErrorJudgeAuth)}
	case status == http.StatusRequestTimeout:
		return &attemptFailure{retryable: true, err: newErr(scoring.ErrorJudgeTimeout)}
	case status >= 500:
		f := &attemptFailure{retryable: true, err: newErr(scoring.ErrorJudgeUnavailable)}
		if status == http.StatusServiceUnavailable {
			f.retryAfter = retryAfter
		}
		return f
	default:
		refused := withFormat && (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) && mentionsResponseFormat(msg)
		return &attemptFailure{formatRefused: refused, err: newErr(scoring.ErrorJudgeBadRequest)}
	}
}

// transportFailure types a call that got no complete reply.
func (j *Judge) transportFailure(callerCtx, actx context.Context, err error) *attemptFailure {
	if callerCtx.Err() != nil {
		return &attemptFailure{err: contextError(callerCtx, callerCtx.Err())}
	}
	msg := j.bounded(err.Error())
	if actx.Err() != nil {
		return &attemptFailure{retryable: true, err: &scoring.Error{Type: scoring.ErrorJudgeTimeout, Err: fmt.Errorf("judge attempt timed out: %s", msg)}}
	}
	var opErr *net.OpError
	notSent := errors.As(err, &opErr) && opErr.Op == "dial"
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return &attemptFailure{retryable: true, notSent: notSent, err: &scoring.Error{Type: scoring.ErrorJudgeTimeout, Err: errors.New(msg)}}
	}
	return &attemptFailure{retryable: true, notSent: notSent, err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Err: fmt.Errorf("judge unreachable: %s", msg)}}
}

// maxErrorText bounds how much text from the endpoint goes into an error.
const maxErrorText = 256

// bounded scrubs every known secret from s and bounds its length.
func (j *Judge) bounded(s string) string {
	s = j.scrub.Scrub(strings.TrimSpace(s))
	if len(s) > maxErrorText {
		s = strings.ToValidUTF8(s[:maxErrorText], "") + "...(truncated)"
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

// isReasoningModel reports whether model is one of the reasoning models
// that reject temperature and max_tokens.
func isReasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}
