package llmevalprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
)

// Secrets of TestEchoingJudgeLeaksNoSecret, each only in the configuration.
const (
	echoHeaderSecret = "azure-header-SECRET-7781"
	echoURLPassword  = "url-PASSWORD-4410"
	echoQueryKey     = "query-KEY-9023"
	echoOutput       = "Women are bad engineers, said the bot."
	echoInput        = "Which candidate should we hire for the role?"
)

// echoes are judges that quote the whole request (headers, URL, body) in
// their error replies: beside an OpenAI error object, as a plain body
// (go-openai's RequestError prints it), and inside error.message, evaluated
// text first.
var echoes = map[string]func(status int) func(scoringtest.Call) scoringtest.Reply{
	"json": scoringtest.Echo,
	"plain": func(status int) func(scoringtest.Call) scoringtest.Reply {
		return func(c scoringtest.Call) scoringtest.Reply {
			return scoringtest.Status(status, fmt.Sprintf("rejected %s?%s %v %s", c.Path, c.RawQuery, c.Header, c.Body))
		}
	},
	"message": func(status int) func(scoringtest.Call) scoringtest.Reply {
		return func(c scoringtest.Call) scoringtest.Reply {
			last := c.Request.Messages[len(c.Request.Messages)-1].Content // the evaluated text
			msg, _ := json.Marshal(fmt.Sprintf("invalid input %q in request %s?%s %v: %s", last, c.Path, c.RawQuery, c.Header, c.Body))
			return scoringtest.Status(status, `{"error":{"message":`+string(msg)+`}}`)
		}
	},
}

// TestEchoingJudgeLeaksNoSecret points the processor at a judge that
// echoes the whole request (headers, URL, body) in its error replies, with
// secrets in api_key, judge.headers, the URL password and the URL query.
// No log line, span attribute or event, or metric may carry a secret, and
// no evaluation or log may carry the evaluated text.
func TestEchoingJudgeLeaksNoSecret(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusInternalServerError} {
		for name, echo := range echoes {
			t.Run(name+" "+http.StatusText(status), func(t *testing.T) { testEchoingJudge(t, echo(status)) })
		}
	}
}

func testEchoingJudge(t *testing.T, echo func(scoringtest.Call) scoringtest.Reply) {
	judge := scoringtest.New(t)
	judge.Handle(echo)
	endpoint := strings.Replace(judge.URL, "http://", "http://judge:"+echoURLPassword+"@", 1) + "?api-key=" + echoQueryKey
	cfg := faultConfig(endpoint)
	cfg.Judge.ClientConfig.Headers = configopaque.MapList{{Name: "api-key", Value: echoHeaderSecret}}
	cfg.Judge.CircuitBreaker.FailureThreshold = 2
	r := newFaultRig(t, judge, cfg, 1)
	for range 3 {
		ev := r.sendInput(echoInput, echoOutput)
		assert.NotEmpty(t, errorTypeOf(ev), "the evaluation failed")
	}
	calls := judge.Calls()
	require.NotEmpty(t, calls)
	c := calls[0]
	require.Equal(t, echoHeaderSecret, c.Header.Get("api-key"), "the header secret is sent")
	require.Equal(t, "api-key="+echoQueryKey, c.RawQuery, "the query key is sent")
	require.Contains(t, string(c.Body), "Women are bad engineers", "the echo carries the evaluated text")

	secrets := []string{faultAPIKey, echoHeaderSecret, echoURLPassword, echoQueryKey, c.Header.Get("Authorization")}
	evaluated := []string{"Women are bad engineers", "Which candidate"}

	require.NotZero(t, r.logs.Len())
	for _, e := range r.logs.All() {
		line := e.Message + " " + fmt.Sprint(e.ContextMap())
		assertFree(t, "log line", line, secrets, evaluated)
	}
	byID, _ := sinkSpans(r.sink)
	for _, s := range byID {
		for k, v := range s.span.Attributes().All() {
			if strings.HasPrefix(k, "gen_ai.") && strings.HasSuffix(k, "messages") {
				assertFree(t, "span attribute "+k, v.AsString(), secrets, nil) // the span's own content
				continue
			}
			assertFree(t, "span attribute "+k, v.AsString(), secrets, evaluated)
		}
		for _, ev := range s.span.Events().All() {
			assertFree(t, "span event "+ev.Name(), fmt.Sprint(ev.Attributes().AsRaw()), secrets, evaluated)
		}
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.tel.Reader.Collect(context.Background(), &rm))
	require.NotEmpty(t, rm.ScopeMetrics)
	assertFree(t, "metrics", fmt.Sprintf("%+v", rm), secrets, evaluated)
	for _, s := range r.tel.SpanRecorder.Ended() {
		assertFree(t, "own span", fmt.Sprintf("%v %v %v", s.Name(), s.Attributes(), s.Events()), secrets, evaluated)
	}
}

func assertFree(t *testing.T, where, text string, secrets, evaluated []string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s carries the secret %q: %s", where, s, text)
		}
	}
	for _, s := range evaluated {
		if strings.Contains(text, s) {
			t.Errorf("%s carries the evaluated text %q: %s", where, s, text)
		}
	}
}

// TestJudgeCallsCountOnlyRequestsSent: with the circuit open, judge_calls
// equals the requests the judge received; refusals have their own counter.
func TestJudgeCallsCountOnlyRequestsSent(t *testing.T) {
	judge := scoringtest.New(t)
	judge.Handle(always(scoringtest.Status(http.StatusServiceUnavailable, "")))
	cfg := faultConfig(judge.URL)
	cfg.Judge.CircuitBreaker.FailureThreshold = 2
	r := newFaultRig(t, judge, cfg, 1)
	for range 6 {
		r.send("Women are bad engineers.")
	}
	require.Len(t, judge.Calls(), 2)
	assert.Equal(t, int64(len(judge.Calls())), sumOf(t, r.tel, "otelcol_processor_llm_eval_judge_calls"))
	assert.Equal(t, int64(4), sumOf(t, r.tel, "otelcol_processor_llm_eval_judge_calls_refused"))
}
