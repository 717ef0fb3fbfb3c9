package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/redact"
)

// StructuredOutputs selects how the judge is made to answer in JSON.
type StructuredOutputs string

// Structured output modes.
const (
	// StructuredOutputsAuto starts with json_schema and falls back to
	// json_object, then to off, when the endpoint refuses a mode, or
	// accepts it and answers with something else than a JSON object (an
	// endpoint that ignores response_format). The fallback is remembered
	// for the judge's lifetime.
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

// AzureV1 is the AzureAPIVersion of Azure OpenAI's v1 API, which takes no
// api-version query and the deployment name as the model.
const AzureV1 = "v1"

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
	// max_completion_tokens for reasoning models (o1, o3, o4, gpt-5, gpt-6).
	MaxTokens int
	// Seed is sent when set, for endpoints that make sampling repeatable.
	Seed *int
	// OmitTemperature stops sending temperature 0, for deployments of
	// reasoning models whose names do not show it. Reasoning models known
	// by name (o1, o3, o4, gpt-5, gpt-6) never get a temperature.
	OmitTemperature bool
	// StructuredOutputs is the JSON mode ("" is auto).
	StructuredOutputs StructuredOutputs
	// Retry is the retry policy (zero value: defaults).
	Retry RetryPolicy
	// OnRetry, if set, is called before each retry's wait, e.g. to count retries.
	OnRetry func(retry int, err error, wait time.Duration)
	// ReasoningEffort is sent as reasoning_effort when set: OpenAI's and
	// Azure's reasoning models take minimal, low, medium or high; Ollama's
	// thinking models take "none" to stop thinking; Bedrock's gpt-oss
	// models take low, medium or high.
	ReasoningEffort string
	// ChatTemplateKwargs is sent as chat_template_kwargs when set: vLLM and
	// SGLang hand it to the model's chat template, e.g.
	// {"enable_thinking": false} for Qwen3.
	ChatTemplateKwargs map[string]any
	// ExtraBody holds fields added to the top level of every request body,
	// for endpoint parameters that have no setting of their own (Anthropic's
	// "thinking", LiteLLM's "metadata", vLLM's "top_k"). A field the judge
	// sets itself is refused by NewJudge (see CheckExtraBody).
	ExtraBody map[string]any
	// Azure selects Azure OpenAI. With AzureAPIVersion "v1" requests go to
	// {BaseURL}/openai/v1/chat/completions with the deployment as the
	// model; with a dated version, to the classic
	// {BaseURL}/openai/deployments/{deployment}/chat/completions?api-version=.
	// Either way the API key goes in the api-key header.
	Azure bool
	// AzureAPIVersion is "v1" or the dated api-version query value
	// (default DefaultAzureAPIVersion).
	AzureAPIVersion string
	// AzureDeployment is the deployment name (default: Model).
	AzureDeployment string
	// MaxResponseBytes caps a reply body (default 1 MiB). A larger reply
	// is a judge_parse_error and is not retried.
	MaxResponseBytes int64
}

// Judge is a scoring.Judge on an OpenAI-compatible chat completions
// endpoint. It is safe for concurrent use.
//
// It calls the endpoint through github.com/sashabaranov/go-openai, whose
// requests go out on Config.HTTPClient. What the judge needs beyond the
// SDK is done around it: temperature 0 is sent as the smallest float32
// (the SDK omits a zero), a doer records each reply's status and
// Retry-After and bounds its body, and errors are built here from the
// status and the endpoint's own error message, never from the SDK's error
// text, which can quote the whole reply body.
type Judge struct {
	client *goopenai.Client
	cfg    Config
	// wireModel is the model the body names: the deployment on Azure's v1
	// API, else Model.
	wireModel       string
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
	extra, err := encodeExtraBody(cfg.ExtraBody)
	if err != nil {
		return nil, err
	}
	if strings.ContainsFunc(cfg.ReasoningEffort, unicode.IsSpace) {
		return nil, fmt.Errorf("judge reasoning effort %q: must be one word", cfg.ReasoningEffort)
	}
	if _, err := json.Marshal(cfg.ChatTemplateKwargs); err != nil {
		return nil, fmt.Errorf("judge chat_template_kwargs: %w", err)
	}
	wireModel := cfg.Model
	// go-openai appends its path to BaseURL as a string, so the base URL's
	// query goes on through the doer instead.
	sdkBase := *u
	sdkBase.RawQuery, sdkBase.ForceQuery = "", false
	sdk := goopenai.DefaultConfig(cfg.APIKey)
	sdk.BaseURL = sdkBase.String()
	d := &doer{client: cfg.HTTPClient, headers: cfg.Headers, query: u.RawQuery, limit: cfg.MaxResponseBytes, extraBody: extra}
	if cfg.Azure {
		deployment := cmp.Or(cfg.AzureDeployment, cfg.Model)
		if strings.TrimSpace(cfg.AzureAPIVersion) == AzureV1 {
			// The v1 API is OpenAI's own shape under /openai/v1, keyed by
			// the api-key header.
			if !strings.HasSuffix(sdkBase.Path, "/openai/v1") {
				sdkBase.Path += "/openai/v1"
			}
			sdk.BaseURL = sdkBase.String()
			wireModel = deployment
			d.apiKeyHeader = true
		} else {
			sdk.APIType = goopenai.APITypeAzure
			sdk.APIVersion = cmp.Or(cfg.AzureAPIVersion, DefaultAzureAPIVersion)
			sdk.AzureModelMapperFunc = func(string) string { return url.PathEscape(deployment) }
		}
	}
	sdk.HTTPClient = d

	j := &Judge{client: goopenai.NewClientWithConfig(sdk), cfg: cfg, wireModel: wireModel, scrub: scrub, reasoning: isReasoningModel(wireModel) || isReasoningModel(cfg.Model)}
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
		creq, withFormat := j.chatRequest(req, modeOrder[idx])
		var out scoring.Response
		sent, ignored := false, false
		n, f := j.cfg.Retry.run(ctx, j.cfg.OnRetry, func(actx context.Context) *attemptFailure {
			r, ign, f := j.attempt(ctx, actx, creq, withFormat)
			out, ignored = r, ign
			sent = sent || f == nil || !f.notSent
			return f
		})
		retries += n
		if f == nil {
			if ignored && j.cfg.StructuredOutputs == StructuredOutputsAuto && int(idx) < len(modeOrder)-1 {
				// The endpoint took response_format without an error and
				// did not follow it (Anthropic's compatible endpoint does
				// so): later calls step down to a mode that spells the
				// schema out. This reply goes back as it is; the scorer
				// reads what it can and re-asks.
				j.mode.CompareAndSwap(idx, idx+1)
			}
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

// attempt makes one call and says whether the reply ignored the
// response_format it carried. callerCtx tells the caller's deadline apart
// from the attempt's own.
func (j *Judge) attempt(callerCtx, actx context.Context, creq goopenai.ChatCompletionRequest, withFormat bool) (scoring.Response, bool, *attemptFailure) {
	ex := &exchange{}
	cr, err := j.client.CreateChatCompletion(withExchange(actx, ex), creq)
	switch {
	case ex.tooLarge:
		return scoring.Response{}, false, &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeParse, Status: ex.status,
			Err: fmt.Errorf("judge reply exceeds %d bytes", j.cfg.MaxResponseBytes)}}
	case err == nil && (ex.status < 200 || ex.status > 299):
		// A status go-openai does not treat as a failure (1xx, 3xx).
		return scoring.Response{}, false, j.statusFailure(ex, "", creq, withFormat)
	case err != nil:
		return scoring.Response{}, false, j.failure(callerCtx, actx, ex, err, creq, withFormat)
	case len(cr.Choices) == 0:
		return scoring.Response{}, false, &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeUnavailable, Status: ex.status, Err: errors.New("judge reply has no choices")}}
	}
	return j.response(cr), withFormat && formatIgnored(cr.Choices[0]), nil
}

// formatIgnored reports whether a finished reply to a request with a
// response_format is not the JSON object the format asks for. An endpoint
// that enforces json_schema or json_object answers with nothing else; a
// refusal or a reply cut at the token limit says nothing about the format.
func formatIgnored(c goopenai.ChatCompletionChoice) bool {
	if c.Message.Refusal != "" || (c.FinishReason != goopenai.FinishReasonStop && c.FinishReason != "") {
		return false
	}
	content := bytes.TrimSpace([]byte(c.Message.Content))
	return len(content) == 0 || content[0] != '{' || !json.Valid(content)
}

// failure types an error of go-openai's CreateChatCompletion by what the
// exchange saw. Only the endpoint's own error message is kept, never the
// SDK's error text: RequestError prints the whole reply body.
func (j *Judge) failure(callerCtx, actx context.Context, ex *exchange, err error, creq goopenai.ChatCompletionRequest, withFormat bool) *attemptFailure {
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case !ex.sent:
		// Refused by go-openai before sending: a model it will not send to
		// this endpoint, parameters it rejects for a reasoning model, or a
		// schema that is not JSON.
		return &attemptFailure{notSent: true, err: &scoring.Error{Type: scoring.ErrorJudgeBadRequest, NotSent: true,
			Err: fmt.Errorf("judge request not sent: %s", j.bounded(err.Error()))}}
	case ex.status == 0 || ex.readErr != nil:
		f := j.transportFailure(callerCtx, actx, cmp.Or(ex.readErr, err))
		// No reply and net/http never wrote the request: it did not reach
		// the judge. A reply status proves it did, whatever the trace saw
		// (a server may answer before the whole request is written, and a
		// transport other than net/http's reports no writes at all).
		f.notSent = f.notSent || (ex.status == 0 && !ex.wrote.Load())
		return f
	case errors.As(err, &apiErr):
		return j.statusFailure(ex, apiErr.Message, creq, withFormat)
	case errors.As(err, &reqErr):
		return j.statusFailure(ex, "", creq, withFormat) // the body is not an OpenAI error: never shown
	case ex.status < 200 || ex.status > 299:
		return j.statusFailure(ex, "", creq, withFormat)
	}
	return &attemptFailure{err: &scoring.Error{Type: scoring.ErrorJudgeParse, Status: ex.status,
		Err: fmt.Errorf("judge reply is not a chat completion: %s", j.bounded(err.Error()))}}
}

// statusFailure types a reply with an error status. The text holds only
// the endpoint's own error message, scrubbed of secrets, cut where it
// quotes the request, and bounded: endpoints and proxies echo the request
// in error replies, and that is the evaluated text and the headers that
// carry the credentials.
func (j *Judge) statusFailure(ex *exchange, message string, creq goopenai.ChatCompletionRequest, withFormat bool) *attemptFailure {
	status := ex.status
	msg := cmp.Or(j.endpointMessage(message, creq.Messages), http.StatusText(status), "unknown status")
	retryAfter := parseRetryAfter(ex.retryAfter, j.cfg.Retry.clock())
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
		refused := withFormat && (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) && mentionsResponseFormat(message)
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
	return truncate(j.scrub.Scrub(strings.TrimSpace(s)), maxErrorText)
}

// endpointMessage is the endpoint's error message as an error may show
// it: secrets scrubbed, every run it shares with the request's messages
// cut out (see withoutEcho), bounded.
func (j *Judge) endpointMessage(message string, msgs []goopenai.ChatCompletionMessage) string {
	s := truncate(j.scrub.Scrub(strings.TrimSpace(message)), maxEchoScan)
	return truncate(withoutEcho(s, msgs), maxErrorText)
}

func truncate(s string, n int) string {
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "...(truncated)"
	}
	return s
}

// Echoes of the request in an endpoint's error message: runs of at least
// echoRun bytes found in a request message are cut, in the first
// maxEchoScan bytes of the message.
const (
	echoRun     = 16
	maxEchoScan = 4 << 10
	echoCut     = "[...]"
)

// withoutEcho replaces every run of at least echoRun bytes that s shares
// with one of msgs by echoCut. Servers quote the request in their error
// messages (vLLM's and LiteLLM's validation errors do), and its messages
// hold the evaluated text. Shorter fragments between escapes may remain.
func withoutEcho(s string, msgs []goopenai.ChatCompletionMessage) string {
	if len(s) < echoRun {
		return s
	}
	var cut []bool
	for i := 0; i+echoRun <= len(s); i++ {
		w := s[i : i+echoRun]
		for _, m := range msgs {
			if strings.Contains(m.Content, w) {
				if cut == nil {
					cut = make([]bool, len(s))
				}
				for k := i; k < i+echoRun; k++ {
					cut[k] = true
				}
				break
			}
		}
	}
	if cut == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case !cut[i]:
			b.WriteByte(s[i])
		case i == 0 || !cut[i-1]:
			b.WriteString(echoCut)
		}
	}
	return strings.ToValidUTF8(b.String(), "")
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
