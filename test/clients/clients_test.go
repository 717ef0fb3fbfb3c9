//go:build clients

// Package clients runs real instrumentation libraries (Node apps under
// apps/, installed by `make clients-install`) against the built
// otelcol-llmeval, a fake app model (appmodel) and the fake judge
// (scoring/scoringtest), and checks that each LLM call is scored exactly
// once, with what the judge must see. Run with `make e2e-clients`.
//
// With -update-samples it also stores what each library sent, as OTLP/JSON,
// in testdata/otlp/clients/<app>/ at the repository root.
package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-eval/llm_eval/scoring/scoringtest"
	"github.com/llm-eval/llm_eval/test/clients/appmodel"
)

var (
	updateSamples = flag.Bool("update-samples", false, "store what each library sends in testdata/otlp/clients/<app>/")
	defaultConfig = flag.Bool("default-config", false, "run every app with the default scorers, ignoring an app's own collector settings")
)

// flow is what an app does, and so what it must be scored on.
type flow string

const (
	// toolFlow: a system prompt, the order question, one tool call, the
	// answer grounded in the tool result.
	toolFlow flow = "tool"
	// ragFlow: a system prompt, the warranty question, retrieved documents,
	// the answer grounded in the first.
	ragFlow flow = "rag"
	// plainFlow: a system prompt and a question; no context.
	plainFlow flow = "plain"
)

// clientApp is one Node app under apps/.
type clientApp struct {
	name string
	node int // Node major version the app runs on
	flow flow
	// scorers replaces the default scorer list in the collector config.
	scorers string
	// agent: an agent loop, whose agent span the trajectory scorers
	// (agentScorers) judge on the run the processor assembles.
	agent bool
	// agentSpan is the name of that agent span.
	agentSpan string
	// captureOff runs the app without content capture turned on.
	captureOff bool
	// scenario, when set, is CLIENT_SCENARIO: conversation runs the
	// multi-turn conversation of scenario.json (conversations_test.go).
	scenario string
}

// agentScorers are the default scorers and the trajectory scorers.
const agentScorers = defaultScorers + `
      - name: task_completion
      - name: tool_use
      - name: tool_errors
        rules: [{type: tool_errors}]`

var clientApps = []clientApp{
	{name: "otel-openai", node: 22, flow: toolFlow},
	{name: "elastic-openai", node: 20, flow: toolFlow},
	{name: "openinference-openai", node: 20, flow: toolFlow},
	{name: "traceloop-openai", node: 20, flow: toolFlow},
	{name: "openinference-langchain", node: 20, flow: ragFlow},
	// The retrieved documents are only in the system message.
	{name: "traceloop-langchain", node: 20, flow: ragFlow, scorers: `
      - name: bias
      - name: hallucination
        context_sources: [trace, tool_messages, system]
      - name: prompt_alignment`},
	{name: "mastra-agent", node: 22, flow: toolFlow, scorers: agentScorers, agent: true, agentSpan: "invoke_agent support-agent"},
	{name: "aisdk-agent", node: 22, flow: toolFlow, scorers: agentScorers, agent: true, agentSpan: "invoke_agent gpt-4o-mini"},
	{name: "aisdk-generate", node: 22, flow: plainFlow},
	{name: "traceloop-anthropic", node: 20, flow: toolFlow},
	{name: "openinference-anthropic", node: 20, flow: toolFlow},
	// The graph's root CHAIN span is the agent run; its tool retrieves.
	{name: "langgraph-agent", node: 20, flow: ragFlow, scorers: agentScorers, agent: true, agentSpan: "LangGraph"},
	{name: "traceloop-llamaindex", node: 20, flow: ragFlow},
	{name: "langfuse-openai", node: 20, flow: toolFlow},
	// The root generate loop is the agent run.
	{name: "genkit-openai", node: 20, flow: toolFlow, scorers: agentScorers, agent: true, agentSpan: "generate"},
}

// scenario is scenario.json, the conversation the apps share.
type scenario struct {
	System         string   `json:"system"`
	Instructions   []string `json:"instructions"`
	Model          string   `json:"model"`
	AnthropicModel string   `json:"anthropicModel"`
	EmbeddingModel string   `json:"embeddingModel"`
	Tool           struct {
		Question  string            `json:"question"`
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
		Result    string            `json:"result"`
		Answer    string            `json:"answer"`
	} `json:"tool"`
	RAG struct {
		Question  string   `json:"question"`
		Documents []string `json:"documents"`
		Retrieved int      `json:"retrieved"`
		Answer    string   `json:"answer"`
		// Tool is the retrieval tool of the agent apps that search the
		// documents (langgraph-agent).
		Tool struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		} `json:"tool"`
	} `json:"rag"`
	Plain struct {
		Question string `json:"question"`
		Answer   string `json:"answer"`
	} `json:"plain"`
	// Conversation is the multi-turn conversation of the apps run with
	// CLIENT_SCENARIO=conversation, under one conversation id.
	Conversation struct {
		ID    string `json:"id"`
		Turns []struct {
			Question string `json:"question"`
			Answer   string `json:"answer"`
		} `json:"turns"`
	} `json:"conversation"`
}

func loadScenario(t *testing.T) scenario {
	t.Helper()
	b, err := os.ReadFile("scenario.json")
	require.NoError(t, err)
	var s scenario
	require.NoError(t, json.Unmarshal(b, &s))
	return s
}

func (s scenario) script() appmodel.Script {
	args, _ := json.Marshal(s.Tool.Arguments)
	searchArgs, _ := json.Marshal(s.RAG.Tool.Arguments)
	answers := map[string]string{
		s.Tool.Question:  s.Tool.Answer,
		s.RAG.Question:   s.RAG.Answer,
		s.Plain.Question: s.Plain.Answer,
	}
	for _, t := range s.Conversation.Turns {
		answers[t.Question] = t.Answer
	}
	return appmodel.Script{
		Answers:       answers,
		ToolArguments: map[string]string{s.Tool.Name: string(args), s.RAG.Tool.Name: string(searchArgs)},
	}
}

// expect is what the judge must see for an app's answer.
type expect struct {
	question, answer string
	document         string // "" when the call has no context
	// tool is the tool an agent app calls and toolResult (part of) what it
	// returns.
	tool, toolResult string
}

func (s scenario) expect(f flow) expect {
	switch f {
	case toolFlow:
		return expect{s.Tool.Question, s.Tool.Answer, s.Tool.Result, s.Tool.Name, s.Tool.Result}
	case ragFlow:
		return expect{s.RAG.Question, s.RAG.Answer, s.RAG.Documents[0], s.RAG.Tool.Name, s.RAG.Documents[0]}
	default:
		return expect{s.Plain.Question, s.Plain.Answer, "", "", ""}
	}
}

// nodeBinary is the node executable of a major version: Node 20 is the
// machine's `node`, Node 22 the one the npm package node@22 installs.
func nodeBinary(t *testing.T, major int) string {
	t.Helper()
	var bin string
	switch major {
	case 20:
		var err error
		bin, err = exec.LookPath("node")
		require.NoError(t, err, "node (20) not on PATH")
	case 22:
		bin, _ = filepath.Abs(filepath.Join("node_modules", "node", "bin", "node"))
	default:
		t.Fatalf("no node %d", major)
	}
	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err, "%s: run `make clients-install` first", bin)
	require.True(t, strings.HasPrefix(string(out), fmt.Sprintf("v%d.", major)), "%s is %s, want Node %d", bin, out, major)
	return bin
}

// runApp runs apps/<name>/index.js until it exits and returns its stdout.
func runApp(t *testing.T, a clientApp, modelURL, otlpURL string) string {
	t.Helper()
	_, err := os.Stat(filepath.Join("node_modules", ".package-lock.json"))
	require.NoError(t, err, "node_modules missing: run `make clients-install` first")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBinary(t, a.node), "index.js")
	cmd.Dir = filepath.Join("apps", a.name)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"OPENAI_API_KEY=sk-fake-app-model",
		"OPENAI_BASE_URL=" + modelURL,
		// The Anthropic SDK adds /v1 itself.
		"ANTHROPIC_API_KEY=sk-ant-fake-app-model",
		"ANTHROPIC_BASE_URL=" + strings.TrimSuffix(modelURL, "/v1"),
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlpURL,
		"OTEL_SERVICE_NAME=" + a.name,
		// Opt-outs of the libraries that phone home.
		"MASTRA_TELEMETRY_DISABLED=1",
		"TRACELOOP_TELEMETRY=false",
		"DO_NOT_TRACK=1",
	}
	if !a.captureOff {
		cmd.Env = append(cmd.Env, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true")
	}
	if a.scenario != "" {
		cmd.Env = append(cmd.Env, "CLIENT_SCENARIO="+a.scenario)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	require.NoError(t, err, "app %s failed:\nstdout:\n%s\nstderr:\n%s", a.name, stdout.String(), stderr.String())
	if stderr.Len() > 0 {
		t.Logf("%s stderr:\n%s", a.name, tail(stderr.Bytes(), 40))
	}
	return stdout.String()
}

func TestClients(t *testing.T) {
	sc := loadScenario(t)
	for _, a := range clientApps {
		t.Run(a.name, func(t *testing.T) { testClient(t, sc, a) })
	}
}

func testClient(t *testing.T, sc scenario, a clientApp) {
	model := appmodel.New(sc.script())
	t.Cleanup(model.Close)
	judge := scoringtest.New(t)
	want := sc.expect(a.flow)

	var col *collector
	forward := ""
	if !*updateSamples {
		scorers := a.scorers
		if *defaultConfig {
			scorers = ""
		}
		col = startCollector(t, judge.URL, scorers)
		forward = col.otlpURL
	}
	rec := newRecorder(t, forward)
	stdout := runApp(t, a, model.URL, rec.url)
	require.Contains(t, stdout, want.answer, "the app did not print the fake model's answer")

	sentTraces, sentLogs, recErrs := rec.sent()
	require.Empty(t, recErrs, "OTLP requests the recorder or collector refused")
	if *updateSamples {
		rec.writeSamples(t, filepath.Join("..", "..", "testdata", "otlp", "clients", a.name))
		return
	}
	sent := index(sentTraces, sentLogs)
	require.NotEmpty(t, sent.spans, "the app sent no spans")

	// Wait until every sent span came out and the judge is idle, then stop
	// the collector so that everything it holds is flushed.
	waitSettled(t, col, judge, sent)
	col.stop()
	outTraces, outLogs := col.output(t)
	out := index(outTraces, outLogs)
	results := collectResults(outTraces, outLogs)
	answers := answerCount(model.Exchanges())
	require.Positive(t, answers, "the fake model gave no answer")
	t.Logf("%s: %d spans and %d log records sent; %d model answers; results:\n%s",
		a.name, len(sent.spans), len(sent.logs), answers, describe(results, out))

	t.Run("every_span_passes_once", func(t *testing.T) {
		for id, s := range sent.spans {
			assert.Len(t, out.spansByID[id], 1, "span %s %q", id, s.Name())
		}
	})
	if len(sent.logs) > 0 {
		t.Run("every_log_record_passes_once", func(t *testing.T) {
			assert.Equal(t, len(sent.logs), len(out.logs)-countResultRecords(outLogs), "log records out (less result records) against log records in")
		})
	}
	t.Run("results_only_for_answers", func(t *testing.T) {
		for _, r := range results {
			assert.True(t, sent.carries(r.key, want.answer),
				"%s result %s on %s: the evaluated call does not carry the answer (a tool-call-only step or an aggregate without the answer?)", r.scorer, r.label, out.describe(r.key))
		}
	})
	t.Run("one_evaluation_per_answer", func(t *testing.T) {
		for _, scorer := range []string{"bias", "hallucination", "prompt_alignment"} {
			keys := map[resultKey]bool{}
			for _, r := range results {
				if r.key.scorer == scorer {
					keys[r.key] = true
				}
			}
			assert.Len(t, keys, answers, "%s: evaluations (distinct calls with a result) against model answers", scorer)
		}
	})
	t.Run("signals_agree", func(t *testing.T) {
		byKey := map[resultKey][]result{}
		for _, r := range results {
			byKey[r.key] = append(byKey[r.key], r)
		}
		for k, rs := range byKey {
			for _, r := range rs[1:] {
				assert.Equal(t, rs[0].label, r.label, "%s on %s: the %s and %s copies of one evaluation differ", k.scorer, out.describe(k), rs[0].source, r.source)
			}
		}
	})
	t.Run("scored", func(t *testing.T) {
		for _, r := range results {
			assert.Empty(t, r.errorType, "%s on %s: error %s", r.scorer, out.describe(r.key), r.explanation)
			if a.flow == plainFlow && r.scorer == "hallucination" {
				assert.Equal(t, "not_scorable", r.label, "hallucination of a call without context")
				assert.Contains(t, r.explanation, "no context")
				continue
			}
			assert.Contains(t, []string{"pass", "fail"}, r.label, "%s on %s (%s): %s", r.scorer, out.describe(r.key), r.source, r.explanation)
		}
	})
	if len(sent.logs) > 0 && sent.contentInLogsOnly(want.answer) {
		// Item 1 of issue 21: the span whose content the logs hold gets the
		// results, and the logs side still writes its result records.
		t.Run("results_on_span_and_log_records", func(t *testing.T) {
			for _, scorer := range []string{"bias", "hallucination", "prompt_alignment"} {
				var onSpan, inLogs bool
				for _, r := range results {
					if r.scorer == scorer {
						onSpan = onSpan || r.source != "log"
						inLogs = inLogs || r.source == "log"
					}
				}
				assert.True(t, onSpan, "%s: no result on the span", scorer)
				assert.True(t, inLogs, "%s: no result record in the logs", scorer)
			}
		})
	}

	calls := judge.Calls()
	t.Run("judge_sees_question_and_answer", func(t *testing.T) {
		assert.True(t, anyCall(calls, "bias_opinions", func(c scoringtest.Call) bool { return oneOf(c.Block("OUTPUT"), want.answer) }),
			"no bias_opinions call with the answer as OUTPUT")
		assert.True(t, anyCall(calls, "prompt_alignment_verdicts", func(c scoringtest.Call) bool {
			return oneOf(c.Block("OUTPUT"), want.answer) && oneOf(c.Block("INPUT"), want.question)
		}), "no prompt_alignment_verdicts call with the question as INPUT and the answer as OUTPUT")
		for _, c := range calls {
			for _, block := range []string{"OUTPUT", "INPUT"} {
				for _, text := range c.Block(block) {
					assert.NotEmpty(t, strings.TrimSpace(text), "%s call with an empty %s", c.Step, block)
				}
			}
		}
	})
	t.Run("judge_sees_instructions", func(t *testing.T) {
		assert.True(t, anyCall(calls, "prompt_alignment_verdicts", func(c scoringtest.Call) bool {
			text := strings.Join(c.Block("INSTRUCTIONS"), "\n")
			for _, ins := range sc.Instructions {
				if !strings.Contains(text, ins) {
					return false
				}
			}
			return true
		}), "no prompt_alignment_verdicts call whose INSTRUCTIONS hold every instruction of the system prompt %q", sc.Instructions)
	})
	t.Run("judge_sees_instructions_one_by_one", func(t *testing.T) {
		// Item 6 of issue 21: the system prompt split into its instructions.
		assert.True(t, anyCall(calls, "prompt_alignment_verdicts", func(c scoringtest.Call) bool {
			items := c.Block("INSTRUCTIONS")
			for _, ins := range sc.Instructions {
				n := 0
				for _, it := range items {
					if strings.Contains(it, ins) {
						n++
						if len(it) > 2*len(ins)+40 {
							return false // the instruction came with the rest of the prompt
						}
					}
				}
				if n != 1 {
					return false
				}
			}
			return true
		}), "no prompt_alignment_verdicts call with each instruction as an item of its own: %q", sc.Instructions)
	})
	if want.document != "" {
		t.Run("judge_sees_documents", func(t *testing.T) {
			assert.True(t, anyCall(calls, "hallucination_claims", func(c scoringtest.Call) bool { return oneOf(c.Block("OUTPUT"), want.answer) }),
				"no hallucination_claims call with the answer as OUTPUT")
			assert.True(t, anyCall(calls, "hallucination_verdicts", func(c scoringtest.Call) bool {
				return strings.Contains(strings.Join(c.Block("CONTEXT"), "\n"), want.document)
			}), "no hallucination_verdicts call whose CONTEXT holds %q", want.document)
		})
	}
	if a.agent && !*defaultConfig {
		t.Run("agent_run_judged_on_its_steps", func(t *testing.T) {
			// Issue 24: the agent span is judged on the trajectory the
			// processor assembled from the spans the library sent.
			judged := map[string]string{}
			for _, r := range results {
				switch r.scorer {
				case "task_completion", "tool_use", "tool_errors":
					judged[r.scorer] = r.label
					assert.Equal(t, a.agentSpan, out.spansByID[r.key.spanID][0].Name(),
						"%s on %s: only the agent span is judged on its run", r.scorer, out.describe(r.key))
				}
			}
			assert.Equal(t, "pass", judged["tool_errors"], "the run's tool did not fail")
			for _, scorer := range []string{"task_completion", "tool_use"} {
				assert.Contains(t, []string{"pass", "fail"}, judged[scorer], scorer)
			}
			for _, step := range []string{"task_completion_verdicts", "tool_use_verdicts"} {
				assert.True(t, anyCall(calls, step, func(c scoringtest.Call) bool {
					run := strings.Join(c.Block("TRAJECTORY"), "\n")
					return strings.Contains(run, `"tool":"`+want.tool+`"`) && strings.Contains(run, want.toolResult)
				}), "no %s call whose TRAJECTORY holds the %s call and its result", step, want.tool)
			}
		})
	}
	logBytes, err := os.ReadFile(col.logPath)
	require.NoError(t, err)
	assert.NotContains(t, string(logBytes), judgeAPIKey, "the judge API key appeared in the collector log")
}

// waitSettled waits until every sent span is in the collector's output and
// the judge got no call for two seconds, at most 90 seconds.
func waitSettled(t *testing.T, col *collector, judge *scoringtest.Server, sent *telemetry) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	lastCalls, quietSince := -1, time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		n := len(judge.Calls())
		if n != lastCalls {
			lastCalls, quietSince = n, time.Now()
			continue
		}
		if time.Since(quietSince) < 2*time.Second {
			continue
		}
		traces, logs := col.output(t)
		out := index(traces, logs)
		all := true
		for id := range sent.spans {
			all = all && len(out.spansByID[id]) > 0
		}
		if all {
			return
		}
	}
	t.Logf("not every span came out within 90s; stopping the collector to flush")
}

func anyCall(calls []scoringtest.Call, step string, ok func(scoringtest.Call) bool) bool {
	for _, c := range calls {
		if c.Step == step && ok(c) {
			return true
		}
	}
	return false
}

func oneOf(items []string, s string) bool {
	for _, it := range items {
		if strings.TrimSpace(it) == s {
			return true
		}
	}
	return false
}

// answerCount is how many chat or responses requests the fake model
// answered with text rather than a tool call.
func answerCount(xs []appmodel.Exchange) int {
	n := 0
	for _, x := range xs {
		if (x.Kind == appmodel.Chat || x.Kind == appmodel.Responses || x.Kind == appmodel.Messages) && x.Err == "" && x.Answer != "" {
			n++
		}
	}
	return n
}
