package scoringtest

import (
	"encoding/json"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
	"github.com/llm-eval/llm_eval/scoring/scorers"
)

// DefaultReply is the answer the server gives when nothing is scripted: a
// valid reply of the step's shape, so the offline demo and load tests run
// without scripts. Each scorer's package writes the replies to its own
// prompts (its demo.go), from the data blocks of the prompt (a line
// <<<NAME, one JSON string per line, optionally numbered "1. ", a line
// NAME>>>): extracted items are the sentences of the OUTPUT block, and
// verdicts come from a few string heuristics, such as "yes" (biased) for
// an opinion holding "women are", or "yes" (unsupported) for a claim with
// a number missing from the CONTEXT block. A step no scorer has gets {}.
//
// These are string heuristics for demos, not judgements.
func DefaultReply(c Call) Reply {
	v, ok := scorers.DemoReply(c.Step, c.request())
	if !ok {
		v = map[string]any{}
	}
	out, _ := json.Marshal(v)
	return JSON(string(out))
}

// request is the call as the judge client sent it.
func (c Call) request() scoring.Request {
	req := scoring.Request{Step: c.Step, Messages: make([]scoring.Message, len(c.Request.Messages))}
	for i, m := range c.Request.Messages {
		req.Messages[i] = scoring.Message{Role: m.Role, Content: m.Content}
	}
	return req
}

// Block returns the items of the data block NAME of the call's user
// messages (a line <<<NAME, one JSON string per line, optionally numbered, a
// line NAME>>>), decoded; nil when the prompt has no such block.
func (c Call) Block(name string) []string { return demo.Read(c.request()).Lines(name) }
