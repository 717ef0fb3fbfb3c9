package scoring

import (
	"context"
	"sync"
	"testing"
	"time"
)

// scriptedReply is one scripted judge answer.
type scriptedReply struct {
	resp Response
	err  error
}

// scriptedJudge answers by Request.Schema.Name from a script, in order;
// the last reply of a schema repeats. It records every request.
type scriptedJudge struct {
	mu     sync.Mutex
	script map[string][]scriptedReply
	calls  []Request
	next   map[string]int
	onCall func(Request)
}

func newJudge(replies map[string][]string) *scriptedJudge {
	j := &scriptedJudge{script: map[string][]scriptedReply{}, next: map[string]int{}}
	for name, rs := range replies {
		for _, r := range rs {
			j.script[name] = append(j.script[name], scriptedReply{resp: Response{Content: r, FinishReason: "stop", PromptTokens: 10, CompletionTokens: 5}})
		}
	}
	return j
}

func (j *scriptedJudge) add(schema string, r scriptedReply) *scriptedJudge {
	j.script[schema] = append(j.script[schema], r)
	return j
}

func (j *scriptedJudge) Complete(ctx context.Context, req Request) (Response, error) {
	j.mu.Lock()
	j.calls = append(j.calls, req)
	onCall := j.onCall
	var r scriptedReply
	name := ""
	if req.Schema != nil {
		name = req.Schema.Name
	}
	rs := j.script[name]
	switch {
	case len(rs) > 0:
		i := min(j.next[name], len(rs)-1)
		j.next[name]++
		r = rs[i]
	default:
		r = scriptedReply{resp: Response{Content: "no script for " + name}}
	}
	j.mu.Unlock()
	if onCall != nil {
		onCall(req)
	}
	return r.resp, r.err
}

func (j *scriptedJudge) requests() []Request {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Request(nil), j.calls...)
}

func (j *scriptedJudge) schemas() []string {
	var out []string
	for _, r := range j.requests() {
		out = append(out, r.Schema.Name)
	}
	return out
}

// mustNew builds a scorer with a clock that advances one second per read,
// so latency is deterministic.
func mustNew(t *testing.T, name string, j Judge, opts Options) *scorer {
	t.Helper()
	sc, err := New(name, j, opts)
	if err != nil {
		t.Fatalf("New(%q): %v", name, err)
	}
	s := sc.(*scorer)
	var mu sync.Mutex
	clock := time.Unix(0, 0)
	s.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	return s
}

func ptr[T any](v T) *T { return &v }
