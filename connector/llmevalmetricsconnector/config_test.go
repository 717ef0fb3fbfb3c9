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
				NewSeriesHold:        2 * time.Minute,
				MaxSeries:            50,
				ResourceAttributes:   []string{"service.name", "deployment.environment.name"},
				Exemplars:            ExemplarsConfig{Enabled: false, MaxPerDataPoint: 5},
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "bad"),
			wantErr: []string{
				"buckets: bounds must be strictly increasing",
				"metrics_flush_interval: must be at least 1ms, got 0s",
				"metrics_expiration: must be at least 1ms, got -1s (or 0 for never)",
				"new_series_hold: must be at least 1ms, got -1s (or 0 for one flush at zero)",
				"max_series: must be positive",
				"exemplars: max_per_data_point: must be positive",
				"resource_attributes::0: empty attribute name",
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "short_expiration"),
			wantErr: []string{
				"metrics_expiration: must be 0 (never) or at least 2 x (new_series_hold + metrics_flush_interval) = 3m30s",
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "typos"),
			wantErr: []string{
				"metrics_flush_intervall: unknown key (did you mean metrics_flush_interval?)",
				"flush_interval: unknown key (did you mean metrics_flush_interval?)",
				"exemplar: unknown key (did you mean exemplars?)",
				"exemplars::max_per_datapoint: unknown key (did you mean max_per_data_point?)",
				"scrape_interval: unknown key (known keys here: buckets, exemplars, max_series, metrics_expiration, metrics_flush_interval, new_series_hold, resource_attributes)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			err = sub.Unmarshal(cfg)
			if err == nil {
				err = confmap.Validate(cfg)
			}
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

// TestUnknownKeysOnce: a key is reported once, at its first unknown
// level, however many keys lie below it.
func TestUnknownKeysOnce(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{
		"exemplar": map[string]any{"enabled": true, "max_per_data_point": 2},
		"buckets":  []any{0.5, 1},
	})
	err := NewFactory().CreateDefaultConfig().(*Config).Unmarshal(conf)
	require.Error(t, err)
	assert.Equal(t, "exemplar: unknown key (did you mean exemplars?)", err.Error())
}

// TestKnownKeysDecode: every key of the default Config, written out, is
// accepted and decodes to the same Config.
func TestKnownKeysDecode(t *testing.T) {
	conf := confmap.New()
	require.NoError(t, conf.Marshal(createDefaultConfig()))
	cfg := &Config{}
	require.NoError(t, cfg.Unmarshal(conf))
	assert.Equal(t, createDefaultConfig(), cfg)
}
