package llmevalmetricsconnector

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	tests := []struct {
		id      component.ID
		want    *Config
		wantErr []string
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig()},
		{
			id: component.NewIDWithName(metadata.Type, "custom"),
			want: &Config{
				Buckets:              []float64{0.25, 0.5, 0.75, 1, 2},
				MetricsFlushInterval: 5 * time.Second,
				MetricsExpiration:    10 * time.Minute,
				MaxSeries:            50,
				ResourceAttributes:   []string{"service.name", "deployment.environment.name"},
				Exemplars:            ExemplarsConfig{Enabled: false, MaxPerDataPoint: 5},
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "bad"),
			wantErr: []string{
				"buckets: bounds must be strictly increasing",
				"metrics_flush_interval: must be positive",
				"metrics_expiration: must not be negative",
				"max_series: must be positive",
				"exemplars: max_per_data_point: must be positive",
				"resource_attributes::0: empty attribute name",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, msg := range tt.wantErr {
					assert.ErrorContains(t, err, msg)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestValidateRejectsEmptyBuckets(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Buckets = nil
	assert.ErrorContains(t, cfg.Validate(), "at least one bucket bound")
}
