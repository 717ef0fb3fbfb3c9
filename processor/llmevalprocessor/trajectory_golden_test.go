package llmevalprocessor

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
	"github.com/llm-eval/llm_eval/scoring"
)

// trajectoryInput is an agent trace as OTLP export requests, in arrival
// order.
type trajectoryInput struct {
	name    string
	batches func(t *testing.T) []ptrace.Traces
}

// trajectoryInputs are the traces whose trajectories are golden: what the
// real Mastra and Vercel AI SDK agent loops sent (test/clients), and
// hand-built traces of the other conventions in testdata/otlp/trajectories.
func trajectoryInputs(t *testing.T) []trajectoryInput {
	client := func(app string) func(t *testing.T) []ptrace.Traces {
		return func(t *testing.T) []ptrace.Traces {
			var out []ptrace.Traces
			for _, line := range clientBatches(t, app, "traces") {
				out = append(out, clientTraces(t, line))
			}
			require.NotEmpty(t, out, app)
			return out
		}
	}
	inputs := []trajectoryInput{
		{"mastra-agent", client("mastra-agent")},
		{"aisdk-agent", client("aisdk-agent")},
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "otlp", "trajectories", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		inputs = append(inputs, trajectoryInput{strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) []ptrace.Traces {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
			require.NoError(t, err)
			return []ptrace.Traces{td}
		}})
	}
	return inputs
}

// agentsFirst reorders a trace's requests so that its agent spans arrive
// first, alone, and every other span after them in one request: the order
// in which an agent span's scorers must wait for its run.
func agentsFirst(batches []ptrace.Traces) []ptrace.Traces {
	agents, rest := ptrace.NewTraces(), ptrace.NewTraces()
	for _, td := range batches {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					to := rest
					if genai.Classify(rs.Resource(), span) == genai.KindAggregate && genai.IsAgent(span) {
						to = agents
					}
					outRS := to.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(outRS.Resource())
					outSS := outRS.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(outSS.Scope())
					span.CopyTo(outSS.Spans().AppendEmpty())
				}
			}
		}
	}
	return []ptrace.Traces{agents, rest}
}

// trajectoryCase is what a trajectory scorer got for one agent span.
type trajectoryCase struct {
	Input      string              `json:"input"`
	Output     string              `json:"output"`
	Trajectory *scoring.Trajectory `json:"trajectory"`
}

// runTrajectoryScorer sends the batches through a processor whose only
// scorer is a recording task_completion and returns its cases by agent
// span name, once every span has left exactly once.
func runTrajectoryScorer(t *testing.T, cfg *Config, batches []ptrace.Traces) map[string]trajectoryCase {
	t.Helper()
	var rec caseRecorder
	h := newHarness(t, cfg, rec.scorers(scoring.TaskCompletion)...)
	names := map[string]string{} // span id -> name
	for id, s := range h.runOnce(batches...) {
		names[id.String()] = s.span.Name()
	}
	out := map[string]trajectoryCase{}
	for _, c := range rec.get(scoring.TaskCompletion) {
		name := names[c.Metadata["span_id"]]
		_, dup := out[name]
		require.False(t, dup, "one case per agent span name (%s)", name)
		out[name] = trajectoryCase{Input: c.Input, Output: c.Output, Trajectory: c.Trajectory}
	}
	return out
}

// trajectoryConfig scores agent spans with task_completion only.
func trajectoryConfig() *Config {
	cfg := testConfig(scoring.TaskCompletion)
	cfg.Scorers[0].Targets = []string{targetAgent}
	return cfg
}

// TestGoldenTrajectories assembles the trajectory of every agent span of
// each input, sent as exported and with its agent spans first (they then
// wait for their runs), and compares it with
// testdata/golden/trajectories/<input>.json (-update rewrites them).
func TestGoldenTrajectories(t *testing.T) {
	for _, in := range trajectoryInputs(t) {
		t.Run(in.name, func(t *testing.T) {
			exported := runTrajectoryScorer(t, trajectoryConfig(), in.batches(t))
			require.NotEmpty(t, exported, "an agent span is judged")
			got, err := json.MarshalIndent(exported, "", "  ")
			require.NoError(t, err)
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", "trajectories", in.name+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, got, 0o600))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))

			reordered := runTrajectoryScorer(t, trajectoryConfig(), agentsFirst(in.batches(t)))
			again, err := json.MarshalIndent(reordered, "", "  ")
			require.NoError(t, err)
			assert.Equal(t, string(bytes.TrimSpace(want)), string(again), "the same trajectory when the agent spans arrive first")
		})
	}
}
