//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-eval/llm_eval/test/internal/collectortest"
)

// TestExampleConfigsValidate: every configuration in examples/ that runs
// on otelcol-llmeval passes the built collector's validate command, as a
// user would check it. examples/loadbalancing-tier.yaml needs a Collector
// with the loadbalancing exporter (otelcol-contrib) and is not checked here.
func TestExampleConfigsValidate(t *testing.T) {
	bin := collectortest.Binary(t)
	examples := filepath.Join("..", "..", "examples")
	tests := []struct {
		name    string
		configs []string
		env     []string
	}{
		{name: "collector", configs: []string{"collector.yaml"}},
		{name: "collector_judge_writes_every_reason", configs: []string{"collector.yaml"}, env: []string{"LLMEVAL_REASON_MODE=llm"}},
		{name: "collector_with_otlp_export", configs: []string{"collector.yaml", "otlp-export.yaml"}, env: []string{"OTLP_EXPORT_ENDPOINT=tempo:4317"}},
		{name: "demo", configs: []string{"demo.yaml"}},
		{name: "evaluation_tier", configs: []string{"evaluation-tier.yaml"}},
		{name: "kafka_tier1", configs: []string{"kafka-tier1.yaml"}},
		{name: "kafka_evaluation_tier", configs: []string{"collector.yaml", "otlp-export.yaml", "kafka-evaluation-tier.yaml"},
			env: []string{"OTLP_EXPORT_ENDPOINT=tempo:4317", "LLMEVAL_REPLICA=otelcol-llmeval-0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"validate"}
			for _, c := range tt.configs {
				args = append(args, "--config", filepath.Join(examples, c))
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), tt.env...)
			out, err := cmd.CombinedOutput()
			assert.NoError(t, err, "%s", strings.TrimSpace(string(out)))
		})
	}
}
