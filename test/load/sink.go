package main

import (
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"sync"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/llm-eval/llm_eval/internal/evalconv"
)

// sink is an OTLP/HTTP traces endpoint that counts what the collector
// forwards: every original span id once, late evaluation spans and
// evaluation events apart.
type sink struct {
	srv *http.Server
	ln  net.Listener

	mu         sync.Mutex
	seen       map[[8]byte]int // original span id -> times received
	lateSpans  int
	evalEvents int
	received   int
	// scored counts, by evaluated span id, the results that carry a score
	// and no error; unscored lists the error.type of the others.
	scored   map[[8]byte]int
	unscored map[[8]byte][]string
}

func newSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{ln: ln, seen: make(map[[8]byte]int, 1<<20), scored: map[[8]byte]int{}, unscored: map[[8]byte][]string{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle)}
	go s.srv.Serve(ln) //nolint:errcheck // ends with Close
	return s, nil
}

func (s *sink) endpoint() string { return "http://" + s.ln.Addr().String() }

func (s *sink) close() { _ = s.srv.Close() }

func (s *sink) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.URL.Path == "/v1/logs" {
		// The logs pipeline of the contentless scenario: nothing is counted.
		resp, _ := plogotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	td := req.Traces()
	s.mu.Lock()
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				s.received++
				late := false
				if op, ok := span.Attributes().Get("gen_ai.operation.name"); ok && op.Str() == "evaluation" {
					late = true
				}
				evaluated := [8]byte(span.SpanID())
				if late {
					evaluated = span.ParentSpanID()
				}
				for e := 0; e < span.Events().Len(); e++ {
					ev := span.Events().At(e)
					if ev.Name() != evalconv.EventName {
						continue
					}
					s.evalEvents++
					_, hasScore := ev.Attributes().Get(evalconv.AttrScoreValue)
					errType, hasErr := ev.Attributes().Get(evalconv.AttrErrorType)
					switch {
					case hasScore && !hasErr:
						s.scored[evaluated]++
					case hasErr:
						s.unscored[evaluated] = append(s.unscored[evaluated], errType.Str())
					default:
						s.unscored[evaluated] = append(s.unscored[evaluated], "none")
					}
				}
				if late {
					s.lateSpans++
					continue
				}
				s.seen[span.SpanID()]++
			}
		}
	}
	s.mu.Unlock()
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

// counts is what the sink saw.
type counts struct {
	Unique, Duplicated, Received, LateSpans, EvalEvents int
}

func (s *sink) counts() counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := counts{Unique: len(s.seen), Received: s.received, LateSpans: s.lateSpans, EvalEvents: s.evalEvents}
	for _, n := range s.seen {
		if n > 1 {
			c.Duplicated++
		}
	}
	return c
}

// scoredSpans counts the spans of ids whose results include at least
// scorers scores, and tallies the error types of the other results on them.
func (s *sink) scoredSpans(ids map[[8]byte]struct{}, scorers int) (int, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, errs := 0, map[string]int{}
	for id := range ids {
		if s.scored[id] >= scorers {
			n++
		}
		for _, e := range s.unscored[id] {
			errs[e]++
		}
	}
	return n, errs
}

// missing returns up to n span ids that were sent but never received.
func (s *sink) missing(sent map[[8]byte]struct{}, n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id := range sent {
		if s.seen[id] == 0 {
			out = append(out, hex.EncodeToString(id[:]))
			if len(out) == n {
				break
			}
		}
	}
	return out
}
