package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
)

// exchange is what the HTTP layer saw of one attempt and go-openai's
// results do not carry: whether the request was handed to the HTTP client
// (sent) and written out whole (wrote), the reply's status and Retry-After
// header, whether its body ran past the cap, and an error reading it. The
// attempt puts one in the request's context for the doer to fill.
type exchange struct {
	sent       bool
	wrote      atomic.Bool // set by net/http's writer, see withExchange
	status     int
	retryAfter string
	tooLarge   bool
	readErr    error
}

type exchangeKey struct{}

// withExchange returns ctx carrying ex, and an httptrace hook that records
// when net/http has written the request: an attempt that ends before that
// (its deadline or the caller's cancellation came first) never reached the
// judge.
func withExchange(ctx context.Context, ex *exchange) context.Context {
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				ex.wrote.Store(true)
			}
		},
	})
	return context.WithValue(ctx, exchangeKey{}, ex)
}

// goOpenAIZeroTemperature is how go-openai encodes zeroTemperature, and
// wireZeroTemperature what the doer sends instead. llama.cpp's server
// decodes greedily only for a temperature <= 0 and otherwise divides the
// logits by it, which 1e-45 overflows to infinities; every
// OpenAI-compatible server takes an exact 0 as greedy decoding. Only the
// top-level key can match: inside a JSON string a quote is escaped.
var (
	goOpenAIZeroTemperature = []byte(`"temperature":1e-45`)
	wireZeroTemperature     = []byte(`"temperature":0`)
)

// errReplyTooLarge ends the read of a reply body longer than the cap.
var errReplyTooLarge = errors.New("judge reply exceeds the size limit")

// doer is the HTTPDoer go-openai sends through. Every request goes out on
// the configured *http.Client, so its TLS, proxy, timeout and transport
// settings apply. It sets the configured headers (after go-openai's
// authentication header, so they may replace it) and the base URL's query,
// which go-openai would put in front of the path, and reads the reply body
// up to the cap before go-openai sees it.
type doer struct {
	client  *http.Client
	headers map[string]string
	query   string // raw query of the configured base URL
	limit   int64  // bytes of reply body read at most
	// extraBody is spliced into every body (encodeExtraBody), nil for none.
	extraBody []byte
	// apiKeyHeader moves go-openai's bearer token to the api-key header,
	// as Azure's v1 API takes an API key.
	apiKeyHeader bool
}

func (d *doer) Do(req *http.Request) (*http.Response, error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		ex = &exchange{} // a call from outside Judge.Complete: nothing to report
	}
	// go-openai's Azure mode sets api-key even when there is no key.
	if v, ok := req.Header["Api-Key"]; ok && len(v) == 1 && v[0] == "" {
		req.Header.Del("Api-Key")
	}
	if d.apiKeyHeader {
		if key, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
			req.Header.Del("Authorization")
			req.Header.Set("Api-Key", key)
		}
	}
	for k, v := range d.headers {
		req.Header.Set(k, v)
	}
	if d.query != "" {
		if req.URL.RawQuery == "" {
			req.URL.RawQuery = d.query
		} else {
			req.URL.RawQuery += "&" + d.query
		}
	}
	if err := rewriteBody(req, d.extraBody); err != nil {
		return nil, err
	}
	ex.sent = true
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	ex.status = resp.StatusCode
	ex.retryAfter = resp.Header.Get("Retry-After")
	data, err := readBody(resp, d.limit)
	resp.Body.Close()
	switch {
	case errors.Is(err, errReplyTooLarge):
		ex.tooLarge = true
		return nil, err
	case err != nil:
		ex.readErr = err
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

// rewriteBody replaces go-openai's stand-in for temperature 0 in the
// request body by an exact 0 and adds the extra body fields.
func rewriteBody(req *http.Request, extra []byte) error {
	if req.Body == nil {
		return nil
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return err
	}
	body = withExtraBody(bytes.Replace(body, goOpenAIZeroTemperature, wireZeroTemperature, 1), extra)
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return nil
}

// readBody reads a whole reply body of at most limit bytes, or fails with
// errReplyTooLarge. Reading it to the end before go-openai decodes it lets
// net/http reuse the connection (a JSON decoder stops at the end of the
// value and may leave the body's last bytes unread) and tells a reply cut
// short in transit apart from one that is not JSON. A body of known length
// is read into one buffer of that size rather than one grown by doubling.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	n := resp.ContentLength
	if n > limit {
		return nil, errReplyTooLarge // not worth reading, nor the connection keeping
	}
	if n < 0 {
		n = 512
	}
	data := make([]byte, 0, n+1) // +1: room to see EOF without growing
	r := io.LimitReader(resp.Body, limit+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		m, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+m]
		if int64(len(data)) > limit {
			return nil, errReplyTooLarge
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
