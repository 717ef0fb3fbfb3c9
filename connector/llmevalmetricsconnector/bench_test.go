package llmevalmetricsconnector

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector/internal/metadata"
)

// BenchmarkConsumeTraces counts the results of the mixed golden input
// (two services, three scorers, several labels) into existing series: the
// per-batch cost on the traces path, keying each result included.
func BenchmarkConsumeTraces(b *testing.B) {
	td, err := golden.ReadTraces(filepath.Join("testdata", "mixed", "input.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	c, err := newConnector(connectortest.NewNopSettings(metadata.Type), createDefaultConfig(), &consumertest.MetricsSink{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.ConsumeTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
	}
}
