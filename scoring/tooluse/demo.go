package tooluse

import (
	"encoding/json"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/internal/demo"
)

// demoVerdicts is the offline demo judge's reply: one verdict per call
// numbered in the TRAJECTORY block. right_tool is "no" when the call
// repeats an earlier call of the same tool with the same arguments that
// did not fail; arguments_supported is "no" when the arguments hold a
// number found neither in the INPUT block nor in any tool result;
// result_used is "n/a" for a call that failed or returned nothing, else
// "yes" when a longer word of the result reappears in the OUTPUT block or
// a generation step's text. missing_tools lists each tool of the TOOLS
// block that no call used and whose name holds a word of five letters or
// more found in the INPUT block, unless the user message asks for an
// empty list.
func demoVerdicts(req scoring.Request) any {
	b := demo.Read(req)
	return map[string]any{"verdicts": demoCalls(b), "missing_tools": demoMissing(req, b)}
}

// demoCall is one call of the TRAJECTORY block as demoCalls reads it.
type demoCall struct {
	number             int
	tool, args, result string
	failed, executed   bool
}

// demoCalls judges the calls of the TRAJECTORY block.
func demoCalls(b demo.Blocks) []map[string]any {
	steps := b.Steps()
	var calls []*demoCall
	byNumber := map[int]*demoCall{}
	get := func(n int, tool string) *demoCall {
		if c, ok := byNumber[n]; ok {
			return c
		}
		c := &demoCall{number: n, tool: tool}
		byNumber[n] = c
		calls = append(calls, c)
		return c
	}
	known := strings.ToLower(b.Text("INPUT"))
	var used strings.Builder
	used.WriteString(strings.ToLower(b.Text("OUTPUT")))
	for _, s := range steps {
		switch s.Kind {
		case "generation":
			used.WriteString("\n" + strings.ToLower(s.Text))
			for _, tc := range s.ToolCalls {
				get(tc.Call, tc.Tool).args = tc.Arguments
			}
		case "tool":
			c := get(s.Call, s.Tool)
			if s.Arguments != nil {
				c.args = *s.Arguments
			}
			c.executed, c.result, c.failed = true, s.Result, s.Error != ""
			known += "\n" + strings.ToLower(s.Result)
		}
	}
	out := make([]map[string]any, len(calls))
	for i, c := range calls {
		right, args, result := "yes", "yes", "yes"
		var why []string
		for _, prev := range calls[:i] {
			if prev.tool == c.tool && prev.args == c.args && !prev.failed {
				right = "no"
				why = append(why, "it repeats an earlier call with the same arguments")
				break
			}
		}
		for _, n := range demo.Numbers(c.args) {
			if !strings.Contains(known, n) {
				args = "no"
				why = append(why, "an argument holds a number found in neither the request nor a tool result")
				break
			}
		}
		switch {
		case c.failed || strings.TrimSpace(c.result) == "":
			result = "n/a"
		case !demo.SharesLongWord(strings.ToLower(c.result), used.String()):
			result = "no"
			why = append(why, "nothing of its result reappears later")
		}
		reason := "The call fits the request (offline demo judge)."
		if len(why) > 0 {
			reason = "The call is questionable: " + strings.Join(why, "; ") + " (offline demo judge)."
		}
		out[i] = map[string]any{"call": c.number, "right_tool": right, "arguments_supported": args, "result_used": result, "reason": reason}
	}
	return out
}

// demoMissing lists the tools of the TOOLS block the request names and
// the run never called.
func demoMissing(req scoring.Request, b demo.Blocks) []map[string]string {
	out := []map[string]string{}
	if strings.Contains(demo.Text(req), "return an empty missing_tools list") {
		return out
	}
	called := map[string]bool{}
	for _, s := range b.Steps() {
		called[s.Tool] = true
		for _, tc := range s.ToolCalls {
			called[tc.Tool] = true
		}
	}
	input := strings.ToLower(b.Text("INPUT"))
	for _, l := range b.Lines("TOOLS") {
		var t struct {
			Tool string `json:"tool"`
		}
		if json.Unmarshal([]byte(l), &t) != nil || t.Tool == "" || called[t.Tool] {
			continue
		}
		for _, w := range demo.Words(t.Tool) {
			if len(w) >= 5 && strings.Contains(input, w) {
				out = append(out, map[string]string{"tool": t.Tool, "reason": "The request mentions " + w + " and the run never called " + t.Tool + " (offline demo judge)."})
				break
			}
		}
	}
	return out
}
